// PouchDB's http adapter in settee's JS runtime (js/prelude/http_adapter.js
// over js/bindings_http.cc): `new PouchDB(url)` against a CouchDB-compatible
// server given as the first argument (a `settee serve`, started by
// tests/replication/remote_pouchdb_test.cc), and replication to and from it
// through settee's replicator. Run by `settee run script.js URL`.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const server = process.argv[2].replace(/\/$/, '');
const tag = 'h' + settee.threadId + '_' + Date.now() + '_';

check('PouchDB.adapters.http exists and a URL makes a remote database', async () => {
  assert.ok(PouchDB.adapters && PouchDB.adapters.http);
  const db = new PouchDB(server + '/' + tag + 'a');
  assert.ok(db instanceof PouchDB);
  assert.strictEqual(db.adapter, 'http');
  const info = await db.info();  // created on first use
  assert.strictEqual(info.db_name, tag + 'a');
  assert.strictEqual(info.doc_count, 0);
  await db.destroy();
});

check('put, post, get, remove, conflicts and errors', async () => {
  const db = new PouchDB(server + '/' + tag + 'b');
  const r1 = await db.put({ _id: 'x/y z', n: 1 });
  assert.strictEqual(r1.ok, true);
  assert.strictEqual(r1.id, 'x/y z');
  const doc = await db.get('x/y z');
  assert.strictEqual(doc.n, 1);
  assert.strictEqual(doc._rev, r1.rev);
  await assert.rejects(db.put({ _id: 'x/y z', n: 2 }), (e) => e.status === 409 && e.name === 'conflict');
  const r2 = await db.put({ _id: 'x/y z', _rev: r1.rev, n: 2 });
  const withRevs = await db.get('x/y z', { revs: true, open_revs: 'all' });
  assert.strictEqual(withRevs.length, 1);
  assert.strictEqual(withRevs[0].ok._revisions.start, 2);
  const posted = await db.post({ p: true });
  assert.ok(posted.id.length > 0);
  assert.strictEqual((await db.get(posted.id)).p, true);
  const removed = await db.remove('x/y z', r2.rev);
  assert.strictEqual(removed.ok, true);
  await assert.rejects(db.get('x/y z'), (e) => e.status === 404 && e.name === 'not_found');
  await db.put({ _id: '_design/d', views: {} });
  assert.ok((await db.get('_design/d'))._rev);
  await db.destroy();
  await assert.rejects(new PouchDB(server + '/' + tag + 'b', { skip_setup: true }).info(), (e) => e.status === 404);
});

// Each error as PouchDB 9's http adapter in node gives it for the same
// call against a settee server (compared member by member there): the
// server's answer with error (CouchDB's string) and reason, then status,
// name and message; docId where its get, put and post set it; pouchdb-core's
// own checks (bare, without a reason) before a put or bulkDocs is sent.
// PouchDB's server errors are plain objects; settee's stay Errors.
check('errors carry the members PouchDB 9\'s http adapter gives them', async () => {
  const db = new PouchDB(server + '/' + tag + 'errs');
  const a1 = await db.put({ _id: 'a' });
  const a2 = await db.put({ _id: 'a', _rev: a1.rev });
  const shape = async (p) => {
    const e = await p.then(() => assert.fail('resolved'), (err) => err);
    if (e instanceof TypeError) return ['TypeError', e.message];
    return [Object.keys(e), JSON.parse(JSON.stringify(e))];
  };
  const served = (status, error, reason, more) => [['error', 'reason', 'status', 'name', 'message', ...Object.keys(more || {})],
    Object.assign({ error, reason, status, name: error, message: reason }, more)];
  const conflict = 'Document update conflict.';
  assert.deepStrictEqual(await shape(db.put({ _id: 'a' })), served(409, 'conflict', conflict, { docId: 'a' }));
  assert.deepStrictEqual(await shape(db.get('nope')), served(404, 'not_found', 'missing', { docId: 'nope' }));
  assert.deepStrictEqual(await shape(db.post({ _id: 'a' })), [['id', 'error', 'reason', 'name', 'status', 'message', 'docId'],
    { id: 'a', error: 'conflict', reason: conflict, name: 'conflict', status: 409, message: conflict, docId: 'a' }]);
  const bare = (status, name, message) => [['status', 'name', 'message', 'error'], { status, name, message, error: true }];
  assert.deepStrictEqual(await shape(db.put({ _id: '_foo' })),
    bare(400, 'bad_request', 'Only reserved document ids may start with underscore.'));
  assert.deepStrictEqual(await shape(db.put({ _id: 'c', _rev: 'invalid' })), bare(400, 'bad_request', 'Invalid rev format'));
  assert.deepStrictEqual(await shape(db.put({ _id: 5 })), bare(400, 'bad_request', '_id field must contain a string'));
  assert.deepStrictEqual(await shape(db.bulkDocs([{ _id: 'b', _rev: 'bad' }])), bare(400, 'bad_request', 'Invalid rev format'));

  // remove() sends DELETE ?rev= with whatever rev it was given (none is
  // "undefined", the server's 400, or a never-written document's 404: CouchDB
  // opens the document before it parses the rev); a null doc or a doc
  // without a string _id fails reading it, with that TypeError, callback too.
  const badRev = served(400, 'bad_request', 'Invalid rev format');
  assert.deepStrictEqual(await shape(db.remove('a', a1.rev)), served(409, 'conflict', conflict));
  assert.deepStrictEqual(await shape(db.remove({ _id: 'a' })), badRev);
  assert.deepStrictEqual(await shape(db.remove({ _id: 'x' })), served(404, 'not_found', 'missing'));
  assert.deepStrictEqual(await shape(db.remove('a', 'garbage')), badRev);
  assert.deepStrictEqual(await shape(db.remove({ _id: 'a', _rev: 5 })), badRev);
  assert.deepStrictEqual(await shape(db.remove(null)), ['TypeError', 'Cannot read properties of null (reading \'_rev\')']);
  assert.deepStrictEqual(await shape(db.remove(undefined)), ['TypeError', 'Cannot read properties of undefined (reading \'_rev\')']);
  const noId = ['TypeError', 'Cannot read properties of undefined (reading \'startsWith\')'];
  assert.deepStrictEqual(await shape(db.remove(42)), noId);
  assert.deepStrictEqual(await shape(db.remove({})), noId);
  assert.deepStrictEqual(await shape(db.remove('a')), noId);
  assert.deepStrictEqual(await shape(db.remove({ _id: 5, _rev: '1-abc' })), ['TypeError', 'id.startsWith is not a function']);
  const viaCallback = await new Promise((resolve) => db.remove(null, (err) => resolve(err)));
  assert.ok(viaCallback instanceof TypeError);
  assert.strictEqual((await db.get('a'))._rev, a2.rev);
  assert.strictEqual((await db.remove({ _id: 'a' }, { rev: a2.rev })).ok, true);
  // Deleted: CouchDB's DELETE opens the document first, so any rev is its 404.
  assert.deepStrictEqual(await shape(db.remove('a', a2.rev)), served(404, 'not_found', 'deleted'));
  await db.destroy();
});

check('bulkDocs, allDocs (ranges, keys, include_docs) and changes', async () => {
  const db = new PouchDB(server + '/' + tag + 'c');
  const docs = [];
  for (let i = 0; i < 20; i++) docs.push({ _id: 'd' + String(i).padStart(2, '0'), i });
  const res = await db.bulkDocs({ docs });
  assert.strictEqual(res.length, 20);
  assert.ok(res.every((r) => r.ok));
  // A refused row has PouchDB's http adapter's members beside CouchDB's.
  const [conflict] = await db.bulkDocs([{ _id: 'd00', i: 'again' }]);
  assert.deepStrictEqual([conflict.id, conflict.error, conflict.reason, conflict.name, conflict.status, conflict.message],
    ['d00', 'conflict', 'Document update conflict.', 'conflict', 409, 'Document update conflict.']);
  const all = await db.allDocs({ include_docs: true, startkey: 'd05', endkey: 'd09' });
  assert.deepStrictEqual(all.rows.map((r) => r.doc.i), [5, 6, 7, 8, 9]);
  const byKeys = await db.allDocs({ keys: ['d01', 'nope'] });
  assert.strictEqual(byKeys.rows[0].id, 'd01');
  assert.strictEqual(byKeys.rows[1].error, 'not_found');
  const ch = await db.changes({ since: 0, limit: 5 });
  assert.strictEqual(ch.results.length, 5);
  const more = await db.changes({ since: ch.last_seq, include_docs: true });
  assert.strictEqual(more.results.length, 15);
  assert.strictEqual(typeof more.results[0].doc.i, 'number');
  const ids = await db.changes({ doc_ids: ['d03', 'd04'] });
  assert.deepStrictEqual(ids.results.map((r) => r.id).sort(), ['d03', 'd04']);
  const diff = await db.revsDiff({ d01: ['1-abc'] });
  assert.deepStrictEqual(diff.d01.missing, ['1-abc']);
  await db.destroy();
});

check('live changes deliver a write and cancel() completes', async () => {
  const db = new PouchDB(server + '/' + tag + 'd');
  await db.put({ _id: 'first' });
  const seen = [];
  const feed = db.changes({ live: true, since: 'now' });
  const got = new Promise((resolve) => feed.on('change', (c) => { seen.push(c.id); resolve(); }));
  await new Promise((r) => setTimeout(r, 100));
  await db.put({ _id: 'second' });
  await got;
  feed.cancel();
  const end = await feed;
  assert.strictEqual(end.status, 'cancelled');
  assert.deepStrictEqual(seen, ['second']);
  await db.destroy();
});

check('replicate from and to a remote database, and sync', async () => {
  const remote = new PouchDB(server + '/' + tag + 'e');
  const docs = [];
  for (let i = 0; i < 150; i++) docs.push({ _id: 'r' + String(i).padStart(3, '0'), i });
  await remote.bulkDocs(docs);
  const local = new PouchDB(tag + 'local');
  const pulled = await PouchDB.replicate(remote, local, { batch_size: 100 });
  assert.strictEqual(pulled.ok, true);
  assert.strictEqual(pulled.docs_written, 150);
  assert.strictEqual((await local.info()).doc_count, 150);
  await local.put({ _id: 'from-local' });
  const pushed = await local.replicate.to(remote);
  assert.strictEqual(pushed.docs_written, 1);
  assert.strictEqual((await remote.get('from-local'))._id, 'from-local');
  await remote.put({ _id: 'from-remote' });
  const both = await local.sync(remote);
  assert.strictEqual(both.pull.docs_written, 1);
  assert.strictEqual((await local.get('from-remote'))._id, 'from-remote');
  assert.strictEqual((await remote.info()).doc_count, (await local.info()).doc_count);
  await remote.destroy();
  await local.destroy();
});

check('filtered replication: a design-doc filter with query_params, and a selector', async () => {
  const remote = new PouchDB(server + '/' + tag + 'g');
  await remote.put({ _id: '_design/app', filters: {
    by_kind: 'function (doc, req) { return doc.kind === req.query.kind; }' } });
  const docs = [];
  for (let i = 0; i < 40; i++) docs.push({ _id: 'k' + String(i).padStart(2, '0'), kind: i % 4 === 0 ? 'a' : 'b', i });
  await remote.bulkDocs(docs);
  // Pulled through the server's _changes?filter=app/by_kind&kind=a.
  const local = new PouchDB(tag + 'filtered');
  const pulled = await PouchDB.replicate(remote, local, { filter: 'app/by_kind', query_params: { kind: 'a' }, batch_size: 3 });
  assert.strictEqual(pulled.docs_written, 10);
  assert.strictEqual((await local.info()).doc_count, 10);
  // A selector, server to server.
  const sel = new PouchDB(server + '/' + tag + 'h');
  const pushed = await PouchDB.replicate(remote, sel, { selector: { i: { $gte: 30 } } });
  assert.strictEqual(pushed.docs_written, 10);
  assert.strictEqual((await sel.allDocs()).rows.length, 10);
  // A JS filter function filters a local source, pushed to the server...
  const fnTarget = new PouchDB(server + '/' + tag + 'fn');
  const byFn = await PouchDB.replicate(local, fnTarget,
    { filter: function (doc, req) { return doc.i >= req.query.min; }, query_params: { min: 20 } });
  assert.strictEqual(byFn.docs_written, 5);
  assert.deepStrictEqual((await fnTarget.allDocs()).rows.map((r) => r.id), ['k20', 'k24', 'k28', 'k32', 'k36']);
  // The same replication without the filter is another replication (its
  // own checkpoint): it copies what the filter left behind.
  assert.strictEqual((await PouchDB.replicate(local, fnTarget)).docs_written, 5);
  // ...and runs in the client on a remote source's feed, as in PouchDB:
  // over several pages (batch_size 3) of which some pass nothing.
  const fromRemote = new PouchDB(tag + 'fnlocal');
  const pulledByFn = await PouchDB.replicate(remote, fromRemote,
    { filter: function (doc, req) { return doc.i % req.query.m === 0 && doc.kind === 'a'; }, query_params: { m: 12 }, batch_size: 3 });
  assert.strictEqual(pulledByFn.docs_written, 4);
  assert.deepStrictEqual((await fromRemote.allDocs()).rows.map((r) => r.id), ['k00', 'k12', 'k24', 'k36']);
  await assert.rejects(PouchDB.replicate(remote, fromRemote, { filter: function () { throw new Error('no'); } }),
    (e) => /no/.test(e.message));
  await fromRemote.destroy();
  // A local-to-local filtered replication run by the server itself (its
  // _replicator database), with the server's JS view runtime.
  const reps = new PouchDB(server + '/_replicator');
  await reps.put({ _id: tag + 'job', source: tag + 'g', target: tag + 'i', create_target: true,
    filter: 'app/by_kind', query_params: { kind: 'b' } });
  const target = new PouchDB(server + '/' + tag + 'i', { skip_setup: true });
  let count = 0;
  for (let k = 0; k < 100 && count < 30; k++) {
    await new Promise((r) => setTimeout(r, 50));
    count = await target.info().then((i) => i.doc_count, () => 0);
  }
  assert.strictEqual(count, 30);
  for (const db of [remote, sel, target]) await db.destroy();
  await local.destroy();
});

check('callbacks, and an unreachable server is an error', async () => {
  const db = new PouchDB(server + '/' + tag + 'f');
  const info = await new Promise((resolve, reject) => db.info((err, i) => (err ? reject(err) : resolve(i))));
  assert.strictEqual(info.db_name, tag + 'f');
  await db.destroy();
  const dead = new PouchDB('http://127.0.0.1:1/nothing');
  await assert.rejects(dead.info(), (e) => e instanceof Error && typeof e.status === 'number');
  await assert.rejects(dead.putAttachment('a', 'b', 'eA==', 'text/plain'), (e) => e instanceof Error && typeof e.status === 'number');
});

check('attachments: put, get and remove bytes of every value, names with slashes and unicode', async () => {
  const db = new PouchDB(server + '/' + tag + 'att');
  const bytes = Buffer.alloc(256 * 40);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 8)) & 255;
  // No rev: the server creates the doc.
  const r1 = await db.putAttachment('doc/1', 'dir/bïn ary.dat', bytes, 'application/octet-stream');
  assert.strictEqual(r1.ok, true);
  assert.strictEqual(r1.id, 'doc/1');
  const back = await db.getAttachment('doc/1', 'dir/bïn ary.dat');
  assert.ok(Buffer.isBuffer(back));
  assert.ok(back.equals(bytes));
  assert.strictEqual(back.type, 'application/octet-stream');  // as PouchDB's Buffer has it
  // A base64 string, and a Uint8Array, on later revisions.
  const r2 = await db.putAttachment('doc/1', 'note.txt', r1.rev, Buffer.from('héllo').toString('base64'), 'text/plain');
  const r3 = await db.putAttachment('doc/1', 'u8', r2.rev, new Uint8Array([0, 255, 1]), 'application/x-thing');
  assert.strictEqual((await db.getAttachment('doc/1', 'note.txt')).toString(), 'héllo');
  assert.deepStrictEqual([...(await db.getAttachment('doc/1', 'u8'))], [0, 255, 1]);
  // An older revision's attachment, by rev.
  await assert.rejects(db.getAttachment('doc/1', 'u8', { rev: r2.rev }), (e) => e.status === 404);
  assert.ok((await db.getAttachment('doc/1', 'dir/bïn ary.dat', { rev: r2.rev })).equals(bytes));
  const doc = await db.get('doc/1', { attachments: true, binary: true });
  assert.ok(doc._attachments['dir/bïn ary.dat'].data.equals(bytes));
  assert.strictEqual(doc._attachments['note.txt'].content_type, 'text/plain');
  await assert.rejects(db.putAttachment('doc/1', 'x', r1.rev, bytes, 'text/plain'), (e) => e.status === 409);
  await assert.rejects(db.putAttachment('doc/1', 'x', r3.rev, 'not base64!', 'text/plain'), (e) => e.status === 400);
  const r4 = await db.removeAttachment('doc/1', 'note.txt', r3.rev);
  assert.strictEqual(r4.ok, true);
  await assert.rejects(db.getAttachment('doc/1', 'note.txt'), (e) => e.status === 404 && e.name === 'not_found');
  assert.deepStrictEqual(Object.keys((await db.get('doc/1'))._attachments).sort(), ['dir/bïn ary.dat', 'u8']);
  await assert.rejects(db.getAttachment('nodoc', 'a'), (e) => e.status === 404);
  // Callbacks.
  const viaCb = await new Promise((resolve, reject) =>
    db.getAttachment('doc/1', 'u8', (err, b) => (err ? reject(err) : resolve(b))));
  assert.deepStrictEqual([...viaCb], [0, 255, 1]);
  await db.destroy();
});

check('temporary views: a map function, {map, reduce}, keys and options', async () => {
  const db = new PouchDB(server + '/' + tag + 'tv');
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push({ _id: 't' + String(i).padStart(2, '0'), n: i, kind: i % 3 === 0 ? 'a' : 'b' });
  await db.bulkDocs(docs);
  const byKind = await db.query(function (doc) { emit(doc.kind, doc.n); }, { key: 'a', include_docs: true });
  assert.strictEqual(byKind.total_rows, 30);
  assert.strictEqual(byKind.rows.length, 10);
  assert.strictEqual(byKind.rows[0].doc.n, 0);
  const counted = await db.query({ map: function (doc) { emit(doc.kind); }, reduce: '_count' }, { group: true });
  assert.deepStrictEqual(counted.rows, [{ key: 'a', value: 10 }, { key: 'b', value: 20 }]);
  const summed = await db.query({ map: 'function (doc) { emit(doc.n % 2, doc.n); }',
    reduce: function (keys, values, rereduce) { return sum(values); } }, { keys: [1] , group: true});
  assert.deepStrictEqual(summed.rows, [{ key: 1, value: 225 }]);
  const noReduce = await db.query({ map: function (doc) { emit(doc.n); }, reduce: '_sum' },
    { reduce: false, descending: true, limit: 2 });
  assert.deepStrictEqual(noReduce.rows.map((r) => r.key), [29, 28]);
  await assert.rejects(db.query({ map: 'function (doc) { emit(doc.n; }' }), (e) => e.status >= 400);
  await assert.rejects(db.query({ reduce: '_count' }), (e) => e.status === 400);
  await db.destroy();
});

check('Mango indexes: create, find, list and delete', async () => {
  const db = new PouchDB(server + '/' + tag + 'mi');
  await db.bulkDocs([{ _id: 'a', k: 3 }, { _id: 'b', k: 1 }, { _id: 'c', k: 2 }]);
  const made = await db.createIndex({ index: { fields: ['k'] }, ddoc: 'by-k', name: 'k-idx' });
  assert.strictEqual(made.result, 'created');
  const found = await db.find({ selector: { k: { $gt: 1 } }, sort: ['k'] });
  assert.deepStrictEqual(found.docs.map((d) => d._id), ['c', 'a']);
  const listed = await db.getIndexes();
  assert.ok(listed.indexes.some((i) => i.name === 'k-idx'));
  assert.deepStrictEqual(await db.deleteIndex({ ddoc: '_design/by-k', name: 'k-idx' }), { ok: true });
  assert.ok(!(await db.getIndexes()).indexes.some((i) => i.name === 'k-idx'));
  await assert.rejects(db.deleteIndex({ ddoc: 'by-k', name: 'k-idx' }), (e) => e.status === 404);
  await db.destroy();
});

check('changes with a filter function run in the client, with query_params and limit', async () => {
  const db = new PouchDB(server + '/' + tag + 'cf');
  const docs = [];
  for (let i = 0; i < 20; i++) docs.push({ _id: 'c' + String(i).padStart(2, '0'), i });
  await db.bulkDocs(docs);
  const filter = (doc, req) => doc.i % req.query.mod === 0;
  const all = await db.changes({ filter, query_params: { mod: 5 } });
  assert.deepStrictEqual(all.results.map((r) => r.id), ['c00', 'c05', 'c10', 'c15']);
  assert.strictEqual(all.results[0].doc, undefined);
  const limited = await db.changes({ filter, query_params: { mod: 5 }, limit: 2, include_docs: true });
  assert.deepStrictEqual(limited.results.map((r) => r.doc.i), [0, 5]);
  assert.strictEqual(limited.last_seq, limited.results[1].seq);
  const seen = [];
  const feed = db.changes({ live: true, since: 'now', filter: (doc) => doc.keep === true });
  const got = new Promise((resolve) => feed.on('change', (c) => { seen.push(c.id); resolve(); }));
  await new Promise((r) => setTimeout(r, 100));
  await db.put({ _id: 'skip', keep: false });
  await db.put({ _id: 'keep', keep: true });
  await got;
  feed.cancel();
  await feed;
  assert.deepStrictEqual(seen, ['keep']);
  await db.destroy();
});

done();
