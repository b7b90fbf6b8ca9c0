// The PouchDB-compatible API against the engine: promises and callbacks,
// document CRUD, revisions and conflicts, bulk operations, allDocs, changes
// (one-shot and live), local docs, revsDiff, bulkGet, info, compact, destroy.
// Run by `settee run`; any failed assertion exits non-zero.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const dbName = 'api_' + settee.threadId;

check('constructor and settee.db give usable handles', async () => {
  const db = new PouchDB(dbName);
  assert.strictEqual(db.name, dbName);
  const same = settee.db(dbName);
  const info = await same.info();
  assert.strictEqual(info.db_name, dbName);
  assert.strictEqual(info.doc_count, 0);
  assert.strictEqual(info.update_seq, 0);
});

check('any name PouchDB takes opens a database of its own', async () => {
  // PouchDB in node takes any string (a LevelDB directory's path there);
  // settee stores the names CouchDB would not take in an escaped form.
  const t = settee.threadId;
  const names = ['MyDB' + t, './data/todos' + t, '/tmp/abs/db' + t, 'with space ' + t, 'ünï ☃ ' + t, '_x' + t,
    '1abc' + t, 'js$(4d)y' + t, 'plain_' + t];
  const dbs = names.map((n) => new PouchDB(n));
  for (let i = 0; i < dbs.length; i++) await dbs[i].put({ _id: 'only-' + i });
  for (let i = 0; i < dbs.length; i++) {
    const info = await dbs[i].info();
    assert.strictEqual(info.db_name, names[i]);
    assert.strictEqual(dbs[i].name, names[i]);
    assert.deepStrictEqual((await dbs[i].allDocs()).rows.map((r) => r.id), ['only-' + i]);
  }
  // A second handle by the same name is the same database; the escaped
  // form of one name is not another name's database.
  assert.strictEqual((await new PouchDB('MyDB' + t).get('only-0'))._id, 'only-0');
  const escapedForm = new PouchDB('js$(4d)y(44)(42)' + t);
  assert.strictEqual((await escapedForm.info()).doc_count, 0);
  // Replication by name and by object.
  const r = await PouchDB.replicate('MyDB' + t, 'Copy Of ' + t);
  assert.strictEqual(r.docs_written, 1);
  assert.strictEqual((await new PouchDB('Copy Of ' + t).info()).doc_count, 1);
  await dbs[4].replicate.to(dbs[0]);
  assert.strictEqual((await dbs[0].info()).doc_count, 2);
  // Too long once escaped: PouchDB's error shape, at the first call.
  const long = new PouchDB('X'.repeat(100));
  await assert.rejects(long.info(), { status: 400, name: 'illegal_database_name' });
  // CouchDB's longest name (238) is stored as it is, one more is escaped
  // and then too long; _users is a CouchDB name.
  const longest = new PouchDB('a'.repeat(237) + t);
  await longest.put({ _id: 'x' });
  assert.strictEqual((await settee.db('a'.repeat(237) + t).get('x'))._id, 'x');
  await longest.destroy();
  await assert.rejects(new PouchDB('a'.repeat(238) + t).info(), { status: 400, name: 'illegal_database_name' });
  for (const db of [...dbs, escapedForm, new PouchDB('Copy Of ' + t)]) await db.destroy();
});

check('put / get / update / remove with promises', async () => {
  const db = new PouchDB(dbName);
  const r1 = await db.put({ _id: 'doc1', title: 'hello', n: 1, nested: { list: [1, 'two', null, true] } });
  assert.strictEqual(r1.ok, true);
  assert.strictEqual(r1.id, 'doc1');
  assert.match(r1.rev, /^1-[0-9a-f]{32}$/);

  const doc = await db.get('doc1');
  assert.deepStrictEqual(doc, { _id: 'doc1', _rev: r1.rev, title: 'hello', n: 1, nested: { list: [1, 'two', null, true] } });

  doc.n = 2;
  const r2 = await db.put(doc);
  assert.match(r2.rev, /^2-/);

  // Stale rev: 409 conflict, PouchDB-shaped.
  const err = await db.put({ _id: 'doc1', _rev: r1.rev, n: 3 }).then(() => null, (e) => e);
  assert.ok(err instanceof Error);
  assert.strictEqual(err.status, 409);
  assert.strictEqual(err.name, 'conflict');
  assert.strictEqual(err.error, true);
  assert.strictEqual(err.message, 'Document update conflict');
  // PouchDB's conflict has no reason (pouchdb-errors' REV_CONFLICT used
  // bare); the refused row's id and the document's docId instead.
  assert.strictEqual('reason' in err, false);
  assert.deepStrictEqual([err.id, err.docId], ['doc1', 'doc1']);

  // Missing _rev on an existing doc: conflict as well.
  await assert.rejects(db.put({ _id: 'doc1', n: 4 }), { status: 409, name: 'conflict' });

  const old = await db.get('doc1', { rev: r1.rev });
  assert.strictEqual(old.n, 1);

  const withRevs = await db.get('doc1', { revs: true, revs_info: true });
  assert.strictEqual(withRevs._revisions.start, 2);
  assert.strictEqual(withRevs._revisions.ids.length, 2);
  assert.strictEqual(withRevs._revisions.ids[0], r2.rev.split('-')[1]);
  assert.deepStrictEqual(withRevs._revs_info.map((r) => r.rev), [r2.rev, r1.rev]);
  assert.strictEqual(withRevs._revs_info[0].status, 'available');

  // remove() without a rev, as PouchDB 9 reads its arguments: a bare id
  // (or an id with {rev}) is a document without an _id, 404 "deleted"
  // whatever `id` names; {_id} of a live document is a conflict, of a
  // never-written one 404 "deleted"; the errors carry docId (yankError).
  // Nothing is written.
  const bareId = { status: 404, name: 'not_found', message: 'missing', reason: 'deleted', id: undefined, docId: undefined };
  await assert.rejects(db.remove('doc1'), bareId);
  await assert.rejects(db.remove('doc1', { rev: r2.rev }), bareId);
  await assert.rejects(db.remove('no-such-doc'), bareId);
  await assert.rejects(db.remove({ _id: 'doc1' }), { status: 409, name: 'conflict', docId: 'doc1' });
  await assert.rejects(db.remove({ _id: 'no-such-doc' }), { status: 404, reason: 'deleted', docId: 'no-such-doc' });
  await assert.rejects(db.remove('no-such-doc', '1-abc'), { status: 404, reason: 'deleted', docId: 'no-such-doc' });
  await assert.rejects(db.remove('doc1', '1-abc'), { status: 409, docId: 'doc1' });
  assert.strictEqual((await db.get('doc1'))._rev, r2.rev);
  await new Promise((resolve) => db.remove('doc1', (err) => { assert.strictEqual(err.status, 404); resolve(); }));

  const del = await db.remove('doc1', r2.rev);
  assert.strictEqual(del.ok, true);
  assert.match(del.rev, /^3-/);
  // A deleted document: {_id} without a rev, or a stale rev, is a conflict.
  await assert.rejects(db.remove({ _id: 'doc1' }), { status: 409, name: 'conflict', docId: 'doc1' });
  await assert.rejects(db.remove('doc1', r2.rev), { status: 409, docId: 'doc1' });
  // PouchDB's messages (pouchdb-errors), not CouchDB's reasons.
  await assert.rejects(db.get('doc1'), { status: 404, name: 'not_found', message: 'missing', reason: 'deleted' });
  await assert.rejects(db.get('nope'), { status: 404, name: 'not_found', message: 'missing', reason: 'missing' });
  await assert.rejects(db.get(''), { status: 404, name: 'not_found', message: 'missing' });
  await assert.rejects(db.put({ _id: 'doc1', _rev: r2.rev }), { status: 409, name: 'conflict', message: 'Document update conflict' });
  const rows = await db.bulkDocs([{ _id: 'doc1', _rev: r2.rev }]);
  assert.deepStrictEqual([rows[0].name, rows[0].message], ['conflict', 'Document update conflict']);
  await assert.rejects(db.put({ _id: 5 }), { status: 400, name: 'bad_request', message: '_id field must contain a string' });
  await assert.rejects(db.put({ _id: '_x' }), { status: 400, name: 'bad_request' });

  // The deleted revision is still readable by rev.
  const tomb = await db.get('doc1', { rev: del.rev });
  assert.strictEqual(tomb._deleted, true);

  // remove(doc) form, and remove({_id}, {rev}) (PouchDB takes opts.rev).
  const r = await db.put({ _id: 'doc2' });
  const d2 = await db.get('doc2');
  assert.strictEqual((await db.remove(d2)).ok, true);
  const r3 = await db.put({ _id: 'doc3' });
  assert.strictEqual((await db.remove({ _id: 'doc3' }, { rev: r3.rev })).ok, true);
  assert.ok(r.ok);
});

check('post generates ids; bad input is rejected clearly', async () => {
  const db = new PouchDB(dbName);
  const r = await db.post({ kind: 'generated' });
  assert.ok(r.ok);
  assert.strictEqual(typeof r.id, 'string');
  assert.ok(r.id.length >= 16);
  assert.strictEqual((await db.get(r.id)).kind, 'generated');

  await assert.rejects(db.put({ no_id: true }), { status: 412, name: 'missing_id' });
  await assert.rejects(db.put('not an object'), { status: 400, name: 'bad_request' });
  await assert.rejects(db.put([1, 2]), { status: 400 });
  const cyclic = { _id: 'cyc' };
  cyclic.self = cyclic;
  await assert.rejects(db.put(cyclic), (e) => e.status === 400 && /cyclic/.test(e.message));
  await assert.rejects(db.put({ _id: 'b', x: 1n }), (e) => e.status === 400 && /BigInt/.test(e.message));
  await assert.rejects(db.put({ _id: 'x', _bogus: 1 }), { status: 400, name: 'doc_validation' });
  // PouchDB 9's get(undefined) (get() with no argument at all fails in its
  // argument handling with a TypeError, which settee does not copy).
  await assert.rejects(db.get(undefined), { status: 400, name: 'bad_request', message: '_id field must contain a string' });
  // None of the above left anything behind.
  await assert.rejects(db.get('cyc'), { status: 404 });
  await assert.rejects(db.get('b'), { status: 404 });
  // What JSON.stringify leaves out PouchDB does not store, and neither does
  // settee: `_rev: undefined` is a new document; undefined members,
  // functions and symbols go (null in arrays); NaN and Infinity are null.
  const dropped = await db.put({ _id: 'u', _rev: undefined, x: undefined, fn() {}, s: Symbol('s'), n: NaN,
    inf: -Infinity, list: [1, undefined, () => 1, NaN], nested: { gone: undefined, kept: 1 } });
  assert.deepStrictEqual(await db.get('u'), { _id: 'u', _rev: dropped.rev, n: null, inf: null, list: [1, null, null, null],
    nested: { kept: 1 } });
  const bulk = await db.bulkDocs([{ _id: 'bu1', _rev: undefined, a: undefined }, { _id: 'bu2', v: [undefined] }]);
  assert.ok(bulk.every((row) => row.ok), JSON.stringify(bulk));
  assert.deepStrictEqual(await db.get('bu1'), { _id: 'bu1', _rev: bulk[0].rev });
  assert.deepStrictEqual((await db.get('bu2')).v, [null]);
  const posted = await db.post({ _id: undefined, at: undefined, k: 1 });
  assert.deepStrictEqual(await db.get(posted.id), { _id: posted.id, _rev: posted.rev, k: 1 });
  // Dates are stored through toJSON like JSON.stringify does.
  await db.put({ _id: 'dated', at: new Date(0) });
  assert.strictEqual((await db.get('dated')).at, '1970-01-01T00:00:00.000Z');
  // Unicode survives: surrogate pairs, NUL, combining marks.
  const text = 'h\u00e9llo \ud83d\ude00 \u0000 e\u0301 \u2028';
  await db.put({ _id: 'uni-\ud83d\ude00', text });
  assert.strictEqual((await db.get('uni-\ud83d\ude00')).text, text);
  // Enormous documents: refused with clear errors, nothing stored.
  await assert.rejects(db.put({ _id: 'huge', s: 'x'.repeat(9 << 20) }), { status: 413, name: 'document_too_large' });
  await assert.rejects(db.get('huge'), { status: 404 });
  // A lone surrogate has no UTF-8 form: refused, nothing stored.
  await assert.rejects(db.put({ _id: 'lone', s: 'a\ud800b' }), { status: 400, name: 'bad_request' });
  await assert.rejects(db.get('lone'), { status: 404 });
});

// db.get(id) builds flat documents from their shape (js/doc_shapes.h) and
// parses the rest: both give what was stored, members in the same order.
check('get returns every kind of document as stored', async () => {
  const db = new PouchDB(dbName);
  const docs = [
    { _id: 'shape-a', foo: 'bar', baz: 'quux' },
    { _id: 'shape-b', foo: 'other', baz: 'values' },  // the same shape again
    { _id: 'shape-c', n: -0, i: 42, f: 1.5, big: 1e300, t: true, no: false, nil: null, e: '' },
    { _id: 'shape-d', 'a b': 1, constructor: 'c', toString: 't', 'caf\u00e9': '\u20ac \ud83d\ude00' },
    { _id: 'shape-e', 2: 'two', x: 1, 1: 'one' },  // integer names: parsed
    { _id: 'shape-f', quote: 'say "hi"\n' },  // escapes: parsed
    { _id: 'shape-g', nested: { a: [1, { b: null }] } },  // nested: parsed
  ];
  for (const doc of docs) {
    const { rev } = await db.put(doc);
    const got = await db.get(doc._id);
    // The stored text: _id, _rev, then the body's members.
    const { _id, ...rest } = doc;
    const body = JSON.stringify(rest);
    const want = JSON.parse('{"_id":' + JSON.stringify(_id) + ',"_rev":' + JSON.stringify(rev) +
      (body === '{}' ? '}' : ',' + body.slice(1)));
    assert.strictEqual(JSON.stringify(got), JSON.stringify(want), doc._id);
    assert.deepStrictEqual(Object.keys(got), Object.keys(want), doc._id);
    assert.strictEqual(Object.getPrototypeOf(got), Object.prototype, doc._id);
    got.mutated = true;  // each get is a fresh object
    assert.strictEqual((await db.get(doc._id)).mutated, undefined, doc._id);
  }
  assert.ok(Object.is((await db.get('shape-c')).n, 0));  // JSON keeps no -0: stored as 0
  // allDocs builds its rows from the same parts; with update_seq it answers
  // through JSON text: the rows must not differ, nor their members' order.
  for (const o of [{}, { include_docs: true }, { include_docs: true, descending: true, limit: 5, skip: 1 },
    { startkey: 'shape-b', endkey: 'shape-f', include_docs: true }, { startkey: 'zzz' },
    { keys: ['shape-c', 'shape-a', 'shape-c'], include_docs: true },
    { keys: ['shape-a', 'no-such-doc', 'shape-g'], include_docs: true }, { keys: [] }]) {
    const built = await db.allDocs(o);
    const parsed = await db.allDocs(Object.assign({ update_seq: true }, o));
    assert.strictEqual(typeof parsed.update_seq, 'number');
    delete parsed.update_seq;
    assert.strictEqual(JSON.stringify(built), JSON.stringify(parsed), JSON.stringify(o));
    assert.deepStrictEqual(built, parsed);
    if (o.include_docs) {
      for (const row of built.rows) {
        if (row.error) continue;  // keys' missing row
        assert.strictEqual(JSON.stringify(row.doc), JSON.stringify(await db.get(row.id)), row.id);
      }
    }
  }
  const rows = (await db.allDocs({ include_docs: true })).rows;
  rows[0].doc.mutated = true;  // fresh objects each call
  assert.strictEqual((await db.allDocs({ include_docs: true })).rows[0].doc.mutated, undefined);
});

check('node-style callbacks', async () => {
  const db = new PouchDB(dbName);
  const res = await new Promise((resolve, reject) => {
    db.put({ _id: 'cb1', v: 1 }, (err, r) => (err ? reject(err) : resolve(r)));
  });
  assert.ok(res.ok);
  const doc = await new Promise((resolve, reject) => db.get('cb1', (err, d) => (err ? reject(err) : resolve(d))));
  assert.strictEqual(doc.v, 1);
  const err = await new Promise((resolve) => db.get('missing-cb', (e, d) => resolve(e)));
  assert.strictEqual(err.status, 404);
  const all = await new Promise((resolve, reject) => db.allDocs({ keys: ['cb1'] }, (e, r) => (e ? reject(e) : resolve(r))));
  assert.strictEqual(all.rows[0].id, 'cb1');
  const info = await new Promise((resolve) => db.info((e, i) => resolve(i)));
  assert.strictEqual(info.db_name, dbName);
});

check('bulkDocs: array and {docs}, per-doc errors, new_edits=false', async () => {
  const db = new PouchDB(dbName + '_bulk');
  const docs = [];
  for (let i = 0; i < 20; i++) docs.push({ _id: 'b' + String(i).padStart(2, '0'), i });
  const res = await db.bulkDocs(docs);
  assert.strictEqual(res.length, 20);
  assert.ok(res.every((r) => r.ok && /^1-/.test(r.rev)));

  const res2 = await db.bulkDocs({ docs: [{ _id: 'b00', i: 'again' }, { _id: 'b99', i: 99 }] });
  assert.strictEqual(res2[0].status, 409);
  assert.strictEqual(res2[0].name, 'conflict');
  assert.strictEqual(res2[0].error, true);
  assert.strictEqual(res2[0].id, 'b00');
  assert.ok(res2[1].ok);

  // Replicator mode: the given revision history is stored as is.
  const rep = await db.bulkDocs({
    docs: [{ _id: 'rep', _rev: '3-cccccccccccccccccccccccccccccccc', _revisions: { start: 3, ids: ['cccccccccccccccccccccccccccccccc', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'] }, v: 'r' }],
    new_edits: false,
  });
  assert.deepStrictEqual(rep, []);
  const got = await db.get('rep', { revs: true });
  assert.strictEqual(got._rev, '3-cccccccccccccccccccccccccccccccc');
  assert.deepStrictEqual(got._revisions.ids, ['cccccccccccccccccccccccccccccccc', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']);

  // A conflicting branch, then conflicts / open_revs.
  await db.bulkDocs([{ _id: 'rep', _rev: '3-dddddddddddddddddddddddddddddddd', _revisions: { start: 3, ids: ['dddddddddddddddddddddddddddddddd', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'] }, v: 'd' }], { new_edits: false });
  const c = await db.get('rep', { conflicts: true });
  assert.strictEqual(c._rev, '3-dddddddddddddddddddddddddddddddd');
  assert.deepStrictEqual(c._conflicts, ['3-cccccccccccccccccccccccccccccccc']);
  const open = await db.get('rep', { open_revs: 'all' });
  assert.strictEqual(open.length, 2);
  assert.ok(open.every((o) => o.ok && o.ok._id === 'rep'));
  const some = await db.get('rep', { open_revs: ['3-cccccccccccccccccccccccccccccccc', '9-ffffffffffffffffffffffffffffffff'] });
  assert.strictEqual(some[0].ok.v, 'r');
  assert.deepStrictEqual(some[1], { missing: '9-ffffffffffffffffffffffffffffffff' });
  // style: all_docs lists every leaf in changes.
  const ch = await db.changes({ style: 'all_docs', doc_ids: ['rep'] });
  assert.strictEqual(ch.results.length, 1);
  assert.deepStrictEqual(ch.results[0].changes.map((c) => c.rev).sort(),
    ['3-cccccccccccccccccccccccccccccccc', '3-dddddddddddddddddddddddddddddddd']);
  assert.strictEqual((await db.changes({ doc_ids: ['rep'] })).results[0].changes.length, 1);
  // latest: a non-leaf rev resolves to its leaves.
  const latest = await db.get('rep', { rev: '2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', latest: true });
  assert.match(latest._rev, /^3-/);

  await assert.rejects(db.bulkDocs({ nope: 1 }), { status: 400 });
  await assert.rejects(db.bulkDocs([1, 2]), { status: 400 });
});

// A batch past the encoder's 1 MiB parts: its big new bodies are compressed
// and hashed on worker threads while the next part is encoded into the
// other buffer (js/body_jobs.h). Every body and revision is what one put()
// of the same document gives; a batch declined after parts were handed over
// (a member the encoder does not take) is written by the other paths.
check('bulkDocs of big documents in parts: bodies and revisions as put() gives them', async () => {
  const db = new PouchDB(dbName + '_big');
  const one = new PouchDB(dbName + '_big1');
  let x = 12345;
  const letters = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      s += String.fromCharCode(97 + (x >> 16) % 26);
    }
    return s;
  };
  const big = (i) => {
    const d = { _id: 'big' + i, i };
    for (let k = 0; k < 40; k++) d['m' + k] = i % 3 === 0 ? letters(1500) : 'x'.repeat(1500) + k;
    if (i % 4 === 1) d.f = [0.5, i / 7, -1e-9];
    if (i % 9 === 4) d.u = 'caf\u00e9 \u20ac \ud83d\ude00 ' + letters(20);
    return d;
  };
  const docs = Array.from({ length: 40 }, (_, i) => big(i));
  const res = await db.bulkDocs(docs);
  assert.strictEqual(res.length, 40);
  for (let i = 0; i < 40; i++) {
    assert.ok(res[i].ok, JSON.stringify(res[i]));
    const alone = await one.put(docs[i]);
    assert.strictEqual(res[i].rev, alone.rev, 'revision of big' + i);
    const got = await db.get('big' + i);
    assert.deepStrictEqual(got, Object.assign({}, docs[i], { _rev: res[i].rev }));
  }
  const late = Array.from({ length: 30 }, (_, i) => big(100 + i));
  late[29].n = 2 ** 60;  // an integer the encoder declines, after two parts
  const res2 = await db.bulkDocs(late);
  assert.ok(res2.every((r) => r.ok));
  for (let i = 0; i < 30; i += 7) {
    assert.deepStrictEqual(await db.get('big' + (100 + i)), Object.assign({}, late[i], { _rev: res2[i].rev }));
  }
  const back = await db.get('big129');
  assert.strictEqual(back.n, 2 ** 60);
  assert.strictEqual(back.m0, late[29].m0);
  assert.strictEqual((await db.info()).doc_count, 70);
  await db.destroy();
  await one.destroy();
});

check('allDocs: ranges, keys, descending, skip/limit, include_docs', async () => {
  const db = new PouchDB(dbName + '_all');
  await db.bulkDocs(['a', 'b', 'c', 'd', 'e'].map((id) => ({ _id: id, v: id.toUpperCase() })));
  let r = await db.allDocs();
  assert.strictEqual(r.total_rows, 5);
  assert.strictEqual(r.offset, 0);
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['a', 'b', 'c', 'd', 'e']);
  assert.strictEqual(r.rows[0].key, 'a');
  assert.match(r.rows[0].value.rev, /^1-/);
  assert.strictEqual(r.rows[0].doc, undefined);

  r = await db.allDocs({ startkey: 'b', endkey: 'd' });
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['b', 'c', 'd']);
  r = await db.allDocs({ start_key: 'b', end_key: 'd', inclusive_end: false });
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['b', 'c']);
  r = await db.allDocs({ descending: true, startkey: 'd', endkey: 'b' });
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['d', 'c', 'b']);
  r = await db.allDocs({ skip: 1, limit: 2 });
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['b', 'c']);
  r = await db.allDocs({ key: 'c', include_docs: true });
  assert.strictEqual(r.rows.length, 1);
  assert.strictEqual(r.rows[0].doc.v, 'C');
  assert.strictEqual(r.rows[0].doc._id, 'c');

  const c = await db.get('c');
  await db.remove(c);
  r = await db.allDocs({ keys: ['e', 'c', 'zz', 'a'], include_docs: true });
  assert.strictEqual(r.rows.length, 4);
  assert.strictEqual(r.rows[0].id, 'e');
  assert.strictEqual(r.rows[1].value.deleted, true);
  assert.strictEqual(r.rows[1].doc, null);
  assert.deepStrictEqual(r.rows[2], { key: 'zz', error: 'not_found' });
  assert.strictEqual(r.rows[3].doc.v, 'A');
  r = await db.allDocs();
  assert.strictEqual(r.total_rows, 4);
  await assert.rejects(db.allDocs({ keys: ['a'], startkey: 'a' }), { status: 400 });
});

check('changes: one-shot options, events and promise', async () => {
  const db = new PouchDB(dbName + '_changes');
  await db.bulkDocs([{ _id: 'x', v: 1 }, { _id: 'y', v: 2 }, { _id: 'z', v: 3 }]);
  const x = await db.get('x');
  x.v = 10;
  await db.put(x);

  let r = await db.changes();
  assert.deepStrictEqual(r.results.map((c) => c.id), ['y', 'z', 'x']);  // each doc once, at its latest seq
  assert.strictEqual(r.last_seq, 4);
  assert.deepStrictEqual(r.results.map((c) => c.seq), [2, 3, 4]);
  assert.match(r.results[2].changes[0].rev, /^2-/);

  r = await db.changes({ since: 2, include_docs: true });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['z', 'x']);
  assert.strictEqual(r.results[1].doc.v, 10);
  r = await db.changes({ limit: 1 });
  assert.strictEqual(r.results.length, 1);
  r = await db.changes({ descending: true });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['x', 'z', 'y']);
  r = await db.changes({ doc_ids: ['z', 'nope'] });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['z']);
  r = await db.changes({ filter: (doc) => doc.v >= 3 });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['z', 'x']);
  assert.strictEqual(r.results[0].doc, undefined);
  // PouchDB's selector option: a Mango selector on the winning revision;
  // the limit counts matching rows.
  r = await db.changes({ selector: { v: { $gte: 2 } } });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['y', 'z', 'x']);
  assert.strictEqual(r.results[0].doc, undefined);
  r = await db.changes({ selector: { v: { $gte: 3 } }, limit: 1, include_docs: true });
  assert.deepStrictEqual(r.results.map((c) => [c.id, c.doc.v]), [['z', 3]]);
  assert.strictEqual(r.last_seq, 3);
  await assert.rejects(db.changes({ selector: { v: { $bogus: 1 } } }), { status: 400, name: 'invalid_operator' });
  r = await db.changes({ doc_ids: ['y', 'z'], selector: { v: 3 } });  // doc_ids alone, as PouchDB
  assert.deepStrictEqual(r.results.map((c) => c.id), ['y', 'z']);

  const z = await db.get('z');
  await db.remove(z);
  r = await db.changes({ since: 4 });
  assert.strictEqual(r.results[0].deleted, true);

  // Event form with the 'complete' callback.
  const seen = [];
  const info = await new Promise((resolve, reject) => {
    db.changes({ since: 0 }).on('change', (c) => seen.push(c.id)).on('complete', resolve).on('error', reject);
  });
  assert.deepStrictEqual(seen, ['y', 'x', 'z']);
  assert.strictEqual(info.last_seq, 5);
});

check('changes: filters by name, run as PouchDB runs them', async () => {
  // A design document's filter (with req.query), a view's map (filter
  // '_view', or view alone): looked up when the feed starts.
  const db = new PouchDB(dbName + '_filters');
  await db.bulkDocs([{ _id: 'y', v: 2 }, { _id: 'z', v: 3 }, { _id: 'x', v: 10 }]);
  await db.put({ _id: '_design/f', filters: { min: 'function (doc, req) { return doc.v >= Number(req.query.min); }' },
    views: { big: { map: 'function (doc) { if (doc.v > 2) emit(doc.v); }' } } });
  let r = await db.changes({ filter: 'f/min', query_params: { min: 3 }, include_docs: true });
  assert.deepStrictEqual(r.results.map((c) => [c.id, c.doc.v]), [['z', 3], ['x', 10]]);
  r = await db.changes({ filter: '_view', view: 'f/big' });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['z', 'x']);
  assert.strictEqual(r.results[0].doc, undefined);
  r = await db.changes({ view: 'f/big', limit: 1 });
  assert.deepStrictEqual(r.results.map((c) => c.id), ['z']);
  r = await db.changes({ filter: 'f/min', query_params: { min: 3 }, doc_ids: ['y'] });  // doc_ids wins
  assert.deepStrictEqual(r.results.map((c) => c.id), ['y']);
  await assert.rejects(db.changes({ filter: 'f/nope' }), { status: 404, name: 'not_found', reason: 'missing json key: nope' });
  await assert.rejects(db.changes({ filter: '_view', view: 'f/nope' }), { status: 404, reason: 'missing json key: nope' });
  await assert.rejects(db.changes({ filter: 'nope/min' }), { status: 404, name: 'not_found' });
  await assert.rejects(db.changes({ filter: '_view' }), { status: 400, name: 'bad_request' });
  const liveSeen = [];
  const live = db.changes({ live: true, since: 4, filter: 'f/min', query_params: { min: 5 } }).on('change', (c) => liveSeen.push(c.id));
  await db.bulkDocs([{ _id: 'small', v: 1 }, { _id: 'large', v: 50 }]);
  for (let i = 0; i < 100 && liveSeen.length < 1; i++) await new Promise((res) => setTimeout(res, 5));
  live.cancel();
  assert.deepStrictEqual(liveSeen, ['large']);
});

check('errors print as PouchDB\'s: JSON.stringify keeps the message, String() is JSON', async () => {
  const db = new PouchDB(dbName + '_errors');
  await db.put({ _id: 'a' });
  const e = await db.put({ _id: 'a' }).catch((err) => err);
  assert.ok(e instanceof Error);
  assert.deepStrictEqual(Object.keys(e), ['status', 'name', 'message', 'error', 'id', 'docId']);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(e)),
    { status: 409, name: 'conflict', message: 'Document update conflict', error: true, id: 'a', docId: 'a' });
  assert.strictEqual(String(e), '{"status":409,"name":"conflict","message":"Document update conflict"}');
  const missing = await db.get('nope').catch((err) => err);
  assert.strictEqual(JSON.parse(JSON.stringify(missing)).message, 'missing');
  assert.strictEqual(String(missing), '{"status":404,"name":"not_found","message":"missing","reason":"missing"}');
  await db.destroy();
});

// Each error as PouchDB 9's memory adapter in node gives it for the same
// call (compared member by member there): its own members in that order
// (the stack aside, which PouchDB's copies to an enumerable one), no
// reason where pouchdb-errors' template is used bare, the refused row's id
// and yankError's docId where put, post, remove and get set them.
check('errors carry the members PouchDB 9 gives them, in its order', async () => {
  const db = new PouchDB(dbName + '_shapes');
  const a1 = await db.put({ _id: 'a' });
  const a2 = await db.put({ _id: 'a', _rev: a1.rev });
  const shape = async (p) => {
    const e = await p.then(() => assert.fail('resolved'), (err) => err);
    assert.ok(e instanceof Error);
    if (e instanceof TypeError) return ['TypeError', e.message];
    return [Object.keys(e), JSON.parse(JSON.stringify(e)), String(e)];
  };
  const conflictKeys = ['status', 'name', 'message', 'error', 'id', 'docId'];
  const conflict = (id) => [conflictKeys,
    { status: 409, name: 'conflict', message: 'Document update conflict', error: true, id, docId: id },
    '{"status":409,"name":"conflict","message":"Document update conflict"}'];
  assert.deepStrictEqual(await shape(db.put({ _id: 'a' })), conflict('a'));
  assert.deepStrictEqual(await shape(db.put({ _id: 'a', _rev: a1.rev })), conflict('a'));
  assert.deepStrictEqual(await shape(db.post({ _id: 'a' })), conflict('a'));
  assert.deepStrictEqual(await shape(db.remove('a', a1.rev)), conflict('a'));
  assert.deepStrictEqual(await shape(db.remove({ _id: 'a' })), conflict('a'));
  const [row, ok] = await db.bulkDocs([{ _id: 'a' }, { _id: 'ok1' }]);
  assert.ok(row instanceof Error);
  assert.deepStrictEqual([Object.keys(row), JSON.parse(JSON.stringify(row))], [['status', 'name', 'message', 'error', 'id'],
    { status: 409, name: 'conflict', message: 'Document update conflict', error: true, id: 'a' }]);
  assert.strictEqual(ok.ok, true);

  const missing = (reason, docId) => [['status', 'name', 'message', 'error', 'reason', 'docId'],
    { status: 404, name: 'not_found', message: 'missing', error: true, reason, docId },
    `{"status":404,"name":"not_found","message":"missing","reason":"${reason}"}`];
  assert.deepStrictEqual(await shape(db.get('nope')), missing('missing', 'nope'));
  assert.deepStrictEqual(await shape(db.get('_foo')), missing('missing', '_foo'));

  const bare = (status, name, message, docId) => [docId === undefined ? ['status', 'name', 'message', 'error']
    : ['status', 'name', 'message', 'error', 'docId'],
    Object.assign({ status, name, message, error: true }, docId === undefined ? {} : { docId }),
    JSON.stringify({ status, name, message })];
  const reserved = 'Only reserved document ids may start with underscore.';
  assert.deepStrictEqual(await shape(db.put({ _id: '_foo' })), bare(400, 'bad_request', reserved));
  assert.deepStrictEqual(await shape(db.post({ _id: '_foo' })), bare(400, 'bad_request', reserved, '_foo'));
  assert.deepStrictEqual(await shape(db.bulkDocs([{ _id: '_foo' }])), bare(400, 'bad_request', reserved));
  assert.deepStrictEqual(await shape(db.remove({ _id: '_foo', _rev: '1-abc' })), bare(400, 'bad_request', reserved, '_foo'));
  assert.deepStrictEqual(await shape(db.put({ _id: 'c', _rev: 'invalid' })), bare(400, 'bad_request', 'Invalid rev format'));
  assert.deepStrictEqual(await shape(db.bulkDocs([{ _id: 'b', _rev: 'bad' }])), bare(400, 'bad_request', 'Invalid rev format'));
  assert.deepStrictEqual(await shape(db.remove('a', 'garbage')), bare(400, 'bad_request', 'Invalid rev format', 'a'));
  assert.deepStrictEqual(await shape(db.remove({ _id: 'a', _rev: 5 })), bare(400, 'bad_request', 'Invalid rev format', 'a'));
  // pouchdb-core's rev pattern (a number, '-', no other '-'), not the
  // engine's: '1-a-b' is malformed, while '1-' and '0-abc' pass and name
  // no revision: a conflict (a never-written document's removal its 404),
  // and for a _local document anything but its stored rev.
  assert.deepStrictEqual(await shape(db.put({ _id: 'a', _rev: '1-a-b' })), bare(400, 'bad_request', 'Invalid rev format'));
  assert.deepStrictEqual(await shape(db.bulkDocs([{ _id: '_foo', _rev: 'x-1' }])), bare(400, 'bad_request', 'Invalid rev format'));
  assert.deepStrictEqual(await shape(db.put({ _id: 'a', _rev: '1-' })), conflict('a'));
  assert.deepStrictEqual(await shape(db.put({ _id: 'never', _rev: '0-abc' })), conflict('never'));
  assert.deepStrictEqual(await shape(db.remove('a', '1-')), conflict('a'));
  {
    const [bad, good] = await db.bulkDocs([{ _id: 'a', _rev: '0-abc' }, { _id: 'ok0' }]);
    assert.deepStrictEqual([Object.keys(bad), JSON.parse(JSON.stringify(bad))], [['status', 'name', 'message', 'error', 'id'],
      { status: 409, name: 'conflict', message: 'Document update conflict', error: true, id: 'a' }]);
    assert.strictEqual(good.ok, true);
  }
  await db.put({ _id: '_local/r' });
  const localConflict = [['status', 'name', 'message', 'error'],
    { status: 409, name: 'conflict', message: 'Document update conflict', error: true },
    '{"status":409,"name":"conflict","message":"Document update conflict"}'];
  assert.deepStrictEqual(await shape(db.put({ _id: '_local/r', _rev: '1-' })), localConflict);
  assert.deepStrictEqual(await shape(db.remove({ _id: '_local/r', _rev: 'x-1' })), localConflict);
  assert.deepStrictEqual(await shape(db.put({ v: 1 })), bare(412, 'missing_id', '_id is required for puts'));
  assert.deepStrictEqual(await shape(db.put({ _id: 5 })), bare(400, 'bad_request', '_id field must contain a string'));
  assert.deepStrictEqual(await shape(db.put(null)), bare(400, 'bad_request', 'Document must be a JSON object'));
  assert.deepStrictEqual(await shape(db.get(null)), bare(400, 'bad_request', '_id field must contain a string'));
  assert.deepStrictEqual(await shape(db.get(42)), bare(400, 'bad_request', '_id field must contain a string'));
  assert.deepStrictEqual(await shape(db.remove({ _id: 5, _rev: '1-abc' })), bare(400, 'bad_request', '_id field must contain a string', 5));

  // remove()'s arguments as pouchdb-core reads them: a null or undefined
  // doc is the TypeError of reading its _id (a rejection, callback too);
  // a doc without an _id (a bare id, 42, {}, a null or '' id with a rev)
  // is a new document's removal, 404 "deleted" with that id.
  assert.deepStrictEqual(await shape(db.remove(null)), ['TypeError', 'Cannot read properties of null (reading \'_id\')']);
  assert.deepStrictEqual(await shape(db.remove(undefined)), ['TypeError', 'Cannot read properties of undefined (reading \'_id\')']);
  const viaCallback = await new Promise((resolve) => db.remove(null, (err, res) => resolve([err, res])));
  assert.ok(viaCallback[0] instanceof TypeError);
  assert.strictEqual(viaCallback[1], undefined);
  const deletedKeys = ['status', 'name', 'message', 'error', 'reason', 'id', 'docId'];
  const newDeleted = (id) => [deletedKeys,
    Object.assign({ status: 404, name: 'not_found', message: 'missing', error: true, reason: 'deleted' },
      id === undefined ? {} : { id, docId: id }),
    '{"status":404,"name":"not_found","message":"missing","reason":"deleted"}'];
  assert.deepStrictEqual(await shape(db.remove(42)), newDeleted(undefined));
  assert.deepStrictEqual(await shape(db.remove({})), newDeleted(undefined));
  assert.deepStrictEqual(await shape(db.remove('a')), newDeleted(undefined));
  assert.deepStrictEqual(await shape(db.remove({ _id: 'x' })), newDeleted('x'));
  assert.deepStrictEqual(await shape(db.remove('', '1-abc')), newDeleted(''));
  assert.deepStrictEqual(await shape(db.remove(null, '1-abc')), newDeleted(null));

  // Local documents: PouchDB's _getLocal, _putLocal and _removeLocal, past
  // bulkDocs and get's wrapping: no id or docId, a 404 without a reason.
  await db.put({ _id: '_local/l' });
  assert.deepStrictEqual(await shape(db.put({ _id: '_local/l' })), bare(409, 'conflict', 'Document update conflict'));
  assert.deepStrictEqual(await shape(db.get('_local/nope')), bare(404, 'not_found', 'missing'));
  assert.deepStrictEqual(await shape(db.remove({ _id: '_local/nope', _rev: '0-1' })), bare(404, 'not_found', 'missing'));
  assert.deepStrictEqual(await shape(db.remove({ _id: '_local/l' })), bare(409, 'conflict', 'Document update conflict'));

  await db.remove('a', a2.rev);
  assert.deepStrictEqual(await shape(db.get('a')), missing('deleted', 'a'));
  assert.deepStrictEqual(await shape(db.remove('a', a2.rev)), conflict('a'));
  assert.deepStrictEqual(await shape(db.remove({ _id: 'a' })), conflict('a'));
  await db.destroy();
});

check('PouchDB is an event emitter: created and destroyed, with the name', async () => {
  const events = [];
  const onCreated = (name) => events.push(['created', name]);
  const onDestroyed = (name) => events.push(['destroyed', name]);
  PouchDB.on('created', onCreated);
  PouchDB.once('destroyed', onDestroyed);
  const name = dbName + '_events';
  const db = new PouchDB(name);
  db.on('created', (d) => events.push(['db created', d === db]));
  db.on('destroyed', (fromOther) => events.push(['db destroyed', fromOther]));
  await db.info();
  const Defaulted = PouchDB.defaults({});
  const other = new Defaulted(name + '2');
  await other.info();
  await db.destroy();
  await other.destroy();
  PouchDB.removeListener('created', onCreated);
  new PouchDB(name + '3');
  await db.info().catch(() => {});
  // PouchDB 9's: the destroying handle hears 'destroyed' twice, the second
  // time (with true) as one of the name's open handles.
  assert.deepStrictEqual(events, [['db created', true], ['created', name], ['created', name + '2'],
    ['db destroyed', undefined], ['db destroyed', true], ['destroyed', name]]);
  assert.strictEqual(Defaulted.on, PouchDB.on);
  await new PouchDB(name + '3').destroy();
});

check('destroy() tells the other open handles of the database, as PouchDB 9', async () => {
  const name = dbName + '_shared';
  const events = [];
  const onPouch = (n) => events.push(['PouchDB', n]);
  PouchDB.on('destroyed', onPouch);
  const a = new PouchDB(name);
  const b = new PouchDB(name);
  const c = new PouchDB(name);
  const unrelated = new PouchDB(name + '_other');
  for (const [k, db] of [['a', a], ['b', b], ['c', c], ['unrelated', unrelated]]) {
    db.on('destroyed', (x) => events.push([k, x]));
  }
  await c.close();  // a closed handle is not told
  await a.put({ _id: 'd' });
  const feed = b.changes({ live: true });
  const feedDone = new Promise((resolve) => feed.on('complete', resolve));
  await a.destroy();
  PouchDB.removeListener('destroyed', onPouch);
  // The destroying handle's own event first, PouchDB's last; between them
  // each open handle's (PouchDB's order there is its adapters' opening order).
  assert.deepStrictEqual(events[0], ['a', undefined]);
  assert.deepStrictEqual(events[events.length - 1], ['PouchDB', name]);
  assert.deepStrictEqual(events.slice(1, -1).sort(), [['a', true], ['b', true]]);
  assert.deepStrictEqual(await feedDone, { status: 'cancelled' });
  // The others fail as the destroyed one does (PouchDB 9's never settle).
  const destroyed = (e) => e.constructor === Error && e.message === 'database is destroyed';
  await assert.rejects(b.get('d'), destroyed);
  await assert.rejects(b.put({ _id: 'e' }), destroyed);
  await assert.rejects(b.info(), destroyed);
  await assert.rejects(c.get('d'), { message: 'database is closed' });
  assert.strictEqual((await unrelated.info()).doc_count, 0);
  // A handle opened afterwards has a fresh database, and is told of the next destroy.
  const fresh = new PouchDB(name);
  assert.strictEqual((await fresh.info()).doc_count, 0);
  const later = new PouchDB(name);
  await fresh.destroy();
  await assert.rejects(later.allDocs(), destroyed);
  await unrelated.destroy();
});

check('bulkDocs error rows are instances of PouchDB\'s error class, as its adapters give them', async () => {
  const db = new PouchDB(dbName + '_rows');
  await db.put({ _id: 'd' });
  const rows = await db.bulkDocs([{ _id: 'd' }, { _id: 'e', _rev: '1-abc' }, { _id: 'f' }, { _id: '_local/x', _rev: '0-5' }]);
  for (const [i, id] of [[0, 'd'], [1, 'e'], [3, '_local/x']]) {
    const row = rows[i];
    assert.ok(row instanceof Error, id);
    assert.strictEqual(Object.getPrototypeOf(row), Object.getPrototypeOf(await db.put({ _id: 'd' }).catch((e) => e)));
    assert.deepStrictEqual(Object.keys(row), ['status', 'name', 'message', 'error', 'id'], id);
    assert.deepStrictEqual(JSON.parse(JSON.stringify(row)),
      { status: 409, name: 'conflict', message: 'Document update conflict', error: true, id });
    assert.strictEqual(String(row), '{"status":409,"name":"conflict","message":"Document update conflict"}');
  }
  assert.ok(rows[2].ok && !(rows[2] instanceof Error));
  await db.destroy();
});

check('PouchDB.version is the PouchDB API followed; db.type() the adapter', async () => {
  assert.strictEqual(PouchDB.version, '9.0.0');
  const db = new PouchDB(dbName + '_type');
  assert.strictEqual(db.type(), 'settee');
  assert.strictEqual(db.type(), (await db.info()).adapter);
  assert.strictEqual(new PouchDB('http://127.0.0.1:1/nowhere').type(), 'http');
  await db.destroy();
});

check('auto_compaction: each write drops its documents\' old revision bodies', async () => {
  const db = new PouchDB(dbName + '_auto', { auto_compaction: true });
  assert.strictEqual(db.auto_compaction, true);
  assert.strictEqual((await db.info()).auto_compaction, true);
  const gone = { status: 404, name: 'not_found', message: 'missing' };
  const r1 = await db.put({ _id: 'k', v: 1 });
  const r2 = await db.put({ _id: 'k', _rev: r1.rev, v: 2 });
  await assert.rejects(db.get('k', { rev: r1.rev }), gone);
  const [r3] = await db.bulkDocs([{ _id: 'k', _rev: r2.rev, v: 3 }]);
  await assert.rejects(db.get('k', { rev: r2.rev }), gone);
  const r4 = await db.post({ _id: 'k', _rev: r3.rev, v: 4 });
  await assert.rejects(db.get('k', { rev: r3.rev }), gone);
  const r5 = await db.putAttachment('k', 'a.txt', r4.rev, Buffer.from('hi'), 'text/plain');
  await assert.rejects(db.get('k', { rev: r4.rev }), gone);
  const r6 = await db.removeAttachment('k', 'a.txt', r5.rev);
  await assert.rejects(db.get('k', { rev: r5.rev }), gone);
  const del = await db.remove('k', r6.rev);
  await assert.rejects(db.get('k', { rev: r6.rev }), gone);
  const info = (await db.get('k', { rev: del.rev, revs_info: true }))._revs_info;
  assert.deepStrictEqual(info.slice(1).map((x) => x.status), ['missing', 'missing', 'missing', 'missing', 'missing', 'missing']);
  // Replicated writes too; a conflict's leaves stay.
  await db.bulkDocs([{ _id: 'c', _rev: '1-a', n: 1 }, { _id: 'c', _rev: '2-b', n: 2, _revisions: { start: 2, ids: ['b', 'a'] } },
    { _id: 'c', _rev: '2-x', n: 3, _revisions: { start: 2, ids: ['x', 'a'] } }], { new_edits: false });
  await assert.rejects(db.get('c', { rev: '1-a' }), gone);
  assert.strictEqual((await db.get('c', { rev: '2-b' })).n, 2);
  assert.strictEqual((await db.get('c', { rev: '2-x' })).n, 3);
  // Without the option old bodies stay until compact().
  const plain = new PouchDB(dbName + '_auto');
  assert.strictEqual((await plain.info()).auto_compaction, false);
  const winner = await plain.get('c');
  assert.strictEqual(winner._rev, '2-x');
  await plain.put(Object.assign(winner, { n: 9 }));
  assert.strictEqual((await plain.get('c', { rev: '2-x' })).n, 3);
  await db.destroy();
});

check('changes: live feed delivers writes, also from other threads, until cancel()', async () => {
  const db = new PouchDB(dbName + '_live');
  await db.put({ _id: 'before' });
  const got = [];
  const feed = db.changes({ live: true, since: 'now', include_docs: true });
  const completed = new Promise((resolve) => feed.on('complete', resolve));
  const twoChanges = new Promise((resolve, reject) => {
    feed.on('change', (c) => {
      got.push(c.id);
      if (got.length === 2) resolve();
    });
    feed.on('error', reject);
  });
  await db.put({ _id: 'live1' });
  // A write from another isolate thread (or this one when alone).
  const target = (settee.threadId + 1) % settee.threadCount;
  await settee.tasks.runOn(target, (name) => settee.db(name).put({ _id: 'live2', from: settee.threadId }), db.name);
  await twoChanges;
  assert.deepStrictEqual(got, ['live1', 'live2']);
  feed.cancel();
  const info = await completed;
  assert.deepStrictEqual(info, { status: 'cancelled' });
  await db.put({ _id: 'after-cancel' });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepStrictEqual(got, ['live1', 'live2']);

  // live + limit completes by itself.
  const limited = db.changes({ live: true, since: 0, limit: 2 });
  const res = await limited;
  assert.strictEqual(res.results.length, 2);
});

check('_local documents', async () => {
  const db = new PouchDB(dbName + '_local');
  const r = await db.put({ _id: '_local/ckpt', seq: 5 });
  assert.ok(r.ok);
  assert.strictEqual(r.rev, '0-1');
  const doc = await db.get('_local/ckpt');
  assert.strictEqual(doc.seq, 5);
  doc.seq = 6;
  const r2 = await db.put(doc);
  assert.strictEqual(r2.rev, '0-2');
  assert.strictEqual((await db.get('_local/ckpt')).seq, 6);
  // Never in allDocs or changes.
  assert.strictEqual((await db.allDocs()).rows.length, 0);
  assert.strictEqual((await db.changes()).results.length, 0);
  // PouchDB's rev check (CouchDB has none): a stale, missing or unexpected
  // rev is a conflict, in put, remove and bulkDocs alike.
  const conflict = { status: 409, name: 'conflict', message: 'Document update conflict' };
  await assert.rejects(db.put({ _id: '_local/ckpt', seq: 7 }), conflict);
  await assert.rejects(db.put({ _id: '_local/ckpt', _rev: r.rev, seq: 7 }), conflict);
  await assert.rejects(db.put({ _id: '_local/fresh', _rev: '0-1' }), conflict);
  await assert.rejects(db.remove('_local/ckpt', r.rev), conflict);
  await assert.rejects(db.put({ _id: '_local/ckpt', _rev: 'junk' }), { status: 400 });
  const rows = await db.bulkDocs([{ _id: 'plain' }, { _id: '_local/ckpt', seq: 8 }, { _id: '_local/new', n: 1 }]);
  assert.deepStrictEqual(rows.map((x) => x.ok === true ? x.id : x.name + ' ' + x.id),
    ['plain', 'conflict _local/ckpt', '_local/new']);
  assert.strictEqual((await db.get('_local/ckpt')).seq, 6);
  await db.remove('_local/ckpt', r2.rev);
  await assert.rejects(db.get('_local/ckpt'), { status: 404 });
  assert.strictEqual((await db.put({ _id: '_local/ckpt', seq: 9 })).rev, '0-1');
});

check('revsDiff and bulkGet', async () => {
  const db = new PouchDB(dbName + '_repl');
  const r = await db.put({ _id: 'rd', v: 1 });
  const diff = await db.revsDiff({ rd: [r.rev, '2-ffffffffffffffffffffffffffffffff'], other: ['1-abcabcabcabcabcabcabcabcabcabcab'] });
  assert.deepStrictEqual(diff.rd.missing, ['2-ffffffffffffffffffffffffffffffff']);
  assert.deepStrictEqual(diff.other.missing, ['1-abcabcabcabcabcabcabcabcabcabcab']);
  const none = await db.revsDiff({ rd: [r.rev] });
  assert.deepStrictEqual(none, {});

  const bg = await db.bulkGet({ docs: [{ id: 'rd', rev: r.rev }, { id: 'rd' }, { id: 'ghost' }], revs: true });
  assert.strictEqual(bg.results.length, 3);
  assert.strictEqual(bg.results[0].docs[0].ok.v, 1);
  assert.strictEqual(bg.results[0].docs[0].ok._revisions.start, 1);
  assert.strictEqual(bg.results[1].docs[0].ok._id, 'rd');
  assert.strictEqual(bg.results[2].docs[0].error.error, 'not_found');
  assert.strictEqual(bg.results[2].docs[0].error.id, 'ghost');
});

check('the revs_limit option stems history as PouchDB does', async () => {
  const db = new PouchDB(dbName + '_revs_limit', { revs_limit: 2 });
  let r = await db.put({ _id: 'x', n: 0 });
  for (let i = 1; i < 5; i++) r = await db.put({ _id: 'x', _rev: r.rev, n: i });
  const doc = await db.get('x', { revs: true });
  assert.deepStrictEqual([doc._revisions.start, doc._revisions.ids.length], [5, 2]);
  await db.destroy();
  await assert.rejects(new PouchDB(dbName + '_revs_limit0', { revs_limit: 0 }).info(), { status: 400 });
});

check('info, compact, destroy', async () => {
  const name = dbName + '_gone';
  const db = new PouchDB(name);
  const r1 = await db.put({ _id: 'k', v: 1 });
  await db.put({ _id: 'k', _rev: r1.rev, v: 2 });
  let info = await db.info();
  assert.strictEqual(info.doc_count, 1);
  assert.strictEqual(info.update_seq, 2);
  assert.strictEqual(info.adapter, 'settee');
  assert.strictEqual(info.auto_compaction, false);
  assert.deepStrictEqual(await db.compact(), { ok: true });
  await assert.rejects(db.get('k', { rev: r1.rev }), { status: 404 });  // old body compacted away
  assert.strictEqual((await db.get('k')).v, 2);
  assert.deepStrictEqual(await db.destroy(), { ok: true });
  await assert.rejects(db.get('k'), (e) => e.constructor === Error && e.message === 'database is destroyed');
  await assert.rejects(db.destroy(), { message: 'database is destroyed' });
  // Opening the name again creates a fresh, empty database.
  info = await new PouchDB(name).info();
  assert.strictEqual(info.doc_count, 0);
  await new PouchDB(name).destroy();
});

check('the server\'s rules on the shared path: keys, ranges, bulk validation, local revisions', async () => {
  const db = new PouchDB(dbName + '_rules');
  await db.bulkDocs(['1000', 'null', 'a', 'b', 'c'].map((id) => ({ _id: id })));
  // Keys come back as sent: a string is always an id, other values name none.
  let r = await db.allDocs({ keys: ['1000', 1000, 'null', null, '2', true] });
  assert.deepStrictEqual(r.rows.map((x) => x.key), ['1000', 1000, 'null', null, '2', true]);
  assert.deepStrictEqual(r.rows.map((x) => x.error), [undefined, 'not_found', undefined, 'not_found', 'not_found', 'not_found']);
  // key wins over startkey/endkey, as PouchDB's adapters read it.
  r = await db.allDocs({ key: 'b', startkey: 'a', endkey: 'c' });
  assert.deepStrictEqual(r.rows.map((x) => x.id), ['b']);
  await assert.rejects(db.allDocs({ keys: ['a'], startkey: 'a' }), { status: 400, name: 'query_parse_error' });
  // An inverted range is empty, not an error.
  r = await db.allDocs({ startkey: 'c', endkey: 'a' });
  assert.strictEqual(r.total_rows, 5);
  assert.deepStrictEqual(r.rows, []);
  r = await db.allDocs({ startkey: 'a', endkey: 'c', descending: true });
  assert.deepStrictEqual(r.rows, []);
  // A document that fails its checks refuses the whole batch.
  const before = (await db.info()).update_seq;
  await assert.rejects(db.bulkDocs([{ _id: 'fine' }, { _id: 'x', _zing: 4 }]),
    { status: 400, name: 'doc_validation', message: 'Bad special document member: _zing' });
  await assert.rejects(db.bulkDocs([{ _id: 'fine' }, { _id: '_zing' }]), { status: 400, name: 'bad_request' });
  await assert.rejects(db.bulkDocs([{ _id: 'fine' }, { _id: 5 }]), { status: 400, name: 'bad_request' });
  await assert.rejects(db.bulkDocs([{ _id: 'fine', _rev: '1-a' }, { _id: 'norev' }], { new_edits: false }),
    { status: 400, name: 'bad_request' });
  assert.strictEqual((await db.info()).update_seq, before);
  await assert.rejects(db.get('fine'), { status: 404 });
  // Conflicts stay per document.
  const res = await db.bulkDocs([{ _id: 'a' }, { _id: 'fresh' }]);
  assert.strictEqual(res[0].name, 'conflict');
  assert.ok(res[1].ok);
  // A local document with the _revisions GET ?revs=true would give it.
  await db.put({ _id: '_local/cp', v: 1 });
  const lr = await db.put({ _id: '_local/cp', _revisions: { start: 0, ids: ['1'] }, v: 2 });
  assert.strictEqual(lr.rev, '0-2');
  assert.strictEqual((await db.get('_local/cp')).v, 2);
  // open_revs: malformed values are bad requests; [] asks for nothing.
  await assert.rejects(db.get('a', { open_revs: ['abc'] }), { status: 400, message: 'Invalid rev format' });
  await assert.rejects(db.get('a', { open_revs: [1] }), { status: 400, message: 'Invalid rev format' });
  await assert.rejects(db.get('a', { open_revs: 'some' }), { status: 400, message: 'Invalid list of revisions' });
  assert.deepStrictEqual(await db.get('a', { open_revs: [] }), []);
});

check('many handles to one database share one slot; close() releases', async () => {
  for (let i = 0; i < 2000; i++) {
    const db = new PouchDB(dbName + '_many');
    if (i % 2) await db.close();
  }
  const db = new PouchDB(dbName + '_many');
  await db.put({ _id: 'still-works' });
  await db.close();
  await assert.rejects(db.get('still-works'), (e) => e.constructor === Error && e.message === 'database is closed');
  assert.strictEqual((await new PouchDB(dbName + '_many').get('still-works'))._id, 'still-works');
});

check('purge(docId, rev) as pouchdb-core 9: leaf and unshared ancestors go, views follow', async () => {
  const db = new PouchDB(dbName + '_purge');
  const r1 = await db.put({ _id: 'p', n: 1 });
  const r2 = await db.put({ _id: 'p', _rev: r1.rev, n: 2 });
  await db.put({ _id: 'q', n: 3 });
  await db.put({ _id: '_design/d', views: { byn: { map: 'function (doc) { emit(doc.n); }' } } });
  assert.deepStrictEqual((await db.query('d/byn')).rows.map((r) => r.key), [2, 3]);
  // Refusals, as findPathToLeaf's: plain strings.
  await assert.rejects(db.purge('p', r1.rev), (e) => e === 'The requested revision is not a leaf');
  await assert.rejects(db.purge('p', '9-abc'), (e) => e === 'The requested revision does not exist');
  await assert.rejects(db.purge('nope', r1.rev), { status: 404, name: 'not_found' });
  const r = await db.purge('p', r2.rev);
  assert.deepStrictEqual(r, { ok: true, deletedRevs: [r2.rev, r1.rev], documentWasRemovedCompletely: true });
  await assert.rejects(db.get('p'), { status: 404, message: 'missing' });
  assert.deepStrictEqual((await db.allDocs()).rows.map((row) => row.id), ['_design/d', 'q']);
  assert.ok(!(await db.changes()).results.some((c) => c.id === 'p'));
  assert.deepStrictEqual((await db.query('d/byn')).rows.map((row) => row.key), [3]);
  // A conflict's losing branch: the document stays.
  await db.bulkDocs([{ _id: 'c', _rev: '1-a', n: 1 }, { _id: 'c', _rev: '1-b', n: 2 }], { new_edits: false });
  const partial = await db.purge('c', '1-a');
  assert.deepStrictEqual(partial, { ok: true, deletedRevs: ['1-a'], documentWasRemovedCompletely: false });
  assert.strictEqual((await db.get('c', { conflicts: true }))._conflicts, undefined);
  await db.destroy();
});

done();
