// PouchDB's query() and viewCleanup() on the engine: persisted views from
// design documents, temporary views from functions, built-in and JS reduces,
// require() of views.lib, and errors in PouchDB's shape. Run by `settee run`.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const db = new PouchDB('views_' + settee.threadId);

check('persisted view: map rows in collation order, ties by doc id', async () => {
  await db.bulkDocs([
    { _id: 'a', n: 2, tags: ['x', 'y'] }, { _id: 'b', n: 1, tags: ['y'] },
    { _id: 'c', n: 2 }, { _id: 'd', name: 'Zed' }, { _id: 'e', name: 'alice' },
  ]);
  await db.put({
    _id: '_design/d',
    views: {
      byn: { map: 'function (doc) { if (doc.n) emit(doc.n, doc.n); }', reduce: '_sum' },
      tags: { map: 'function (doc) { (doc.tags || []).forEach(function (t) { emit([t, doc._id], 1); }); }',
              reduce: 'function (keys, values, rereduce) { return sum(values); }' },
      names: { map: 'function (doc) { if (doc.name) emit(doc.name.toLowerCase(), null); }' },
      lib: { helper: 'exports.double = function (x) { return x * 2; };' },
      withlib: { map: 'function (doc) { if (doc.n) emit(doc._id, require("views/lib/helper").double(doc.n)); }' },
    },
  });
  const r = await db.query('d/byn', { reduce: false });
  assert.deepStrictEqual(r.rows.map((x) => [x.id, x.key]), [['b', 1], ['a', 2], ['c', 2]]);
  assert.strictEqual(r.total_rows, 3);
  assert.strictEqual(r.offset, 0);
  const names = await db.query('d/names');
  assert.deepStrictEqual(names.rows.map((x) => x.key), ['alice', 'zed']);
  const lib = await db.query('d/withlib', { key: 'a' });
  assert.deepStrictEqual(lib.rows[0].value, 4);
});

check('reduce: _sum, group_level, JS reduce with group', async () => {
  assert.deepStrictEqual(await db.query('d/byn'), { rows: [{ key: null, value: 5 }] });
  const g = await db.query('d/tags', { group_level: 1 });
  assert.deepStrictEqual(g.rows, [{ key: ['x'], value: 1 }, { key: ['y'], value: 2 }]);
  const k = await db.query('d/byn', { keys: [2, 1], group: true });
  assert.deepStrictEqual(k.rows, [{ key: 2, value: 4 }, { key: 1, value: 1 }]);
});

check('options: range, descending, skip/limit, include_docs, update_seq', async () => {
  const r = await db.query('d/byn', { reduce: false, startkey: 2, descending: true, limit: 1, include_docs: true, update_seq: true });
  assert.strictEqual(r.rows.length, 1);
  assert.strictEqual(r.rows[0].id, 'c');
  assert.strictEqual(r.rows[0].doc._id, 'c');
  assert.strictEqual(r.update_seq, (await db.info()).update_seq);
});

check('incremental update and stale', async () => {
  const b = await db.get('b');
  await db.put(Object.assign(b, { n: 10 }));
  const stale = await db.query('d/byn', { reduce: false, stale: 'ok' });
  assert.deepStrictEqual(stale.rows.map((x) => x.key), [1, 2, 2]);
  const fresh = await db.query('d/byn', { reduce: false });
  assert.deepStrictEqual(fresh.rows.map((x) => x.key), [2, 2, 10]);
  await db.remove(await db.get('a'));
  assert.deepStrictEqual((await db.query('d/byn')).rows[0].value, 12);
});

check('temporary views: a function, {map, reduce}, strings', async () => {
  const r = await db.query(function (doc) { if (doc.name) emit(doc.name); });
  assert.deepStrictEqual(r.rows.map((x) => x.key), ['alice', 'Zed']);
  const s = await db.query({ map: function (doc) { if (doc.n) emit(null, doc.n); }, reduce: '_count' });
  assert.deepStrictEqual(s.rows, [{ key: null, value: 2 }]);
  const j = await db.query({ map: 'function (doc) { emit(doc._id, 1); }', reduce: function (k, v) { return v.length; } });
  assert.deepStrictEqual(j.rows[0].value, 4);
  // PouchDB's idiom: emit as the map function's second argument.
  const e = await db.query((doc, emit) => { if (doc.name) emit(doc.name); });
  assert.deepStrictEqual(e.rows.map((x) => x.key), ['alice', 'Zed']);
});

check('callbacks work too', async () => {
  const r = await new Promise((resolve, reject) => db.query('d/byn', { reduce: false, limit: 1 }, (e, res) => (e ? reject(e) : resolve(res))));
  assert.strictEqual(r.rows.length, 1);
});

check('errors are PouchDB-shaped; a throwing map skips the document', async () => {
  await assert.rejects(db.query('d/nope'), { status: 404, name: 'not_found', message: 'ddoc _design/d has no view named nope', reason: 'missing_named_view' });
  await assert.rejects(db.query('nodoc/v'), { status: 404, name: 'not_found' });
  await assert.rejects(db.query('d/byn', { startkey: 3, endkey: 1 }), { status: 400, name: 'query_parse_error',
    message: 'No rows can match your key range, reverse your start_key and end_key or set {descending : true}' });
  await assert.rejects(db.query('d/byn', { include_docs: true }),
    { status: 400, name: 'query_parse_error', message: '{include_docs:true} is invalid for reduce' });
  // Counts are checked as PouchDB's query() checks them, in the words of
  // CouchDB's query-string parser (which PouchDB's are); a count as a
  // string of digits is taken.
  await assert.rejects(db.query('d/byn', { reduce: false, skip: 'x' }),
    { status: 400, name: 'query_parse_error', message: 'Invalid value for integer: "x"' });
  await assert.rejects(db.query('d/byn', { reduce: false, limit: -1 }),
    { status: 400, name: 'query_parse_error', message: 'Invalid value for positive integer: "-1"' });
  assert.strictEqual((await db.query('d/byn', { reduce: false, limit: '2' })).rows.length, 2);
  // PouchDB ignores grouping when it does not reduce, and reduce: true on a
  // map-only view (CouchDB refuses both).
  const noReduce = await db.query('d/byn', { reduce: false, group: true });
  assert.deepStrictEqual(noReduce, await db.query('d/byn', { reduce: false }));
  const mapOnly = (doc) => { if (doc.n) emit(doc.n); };
  const plain = await db.query(mapOnly);
  assert.ok(plain.rows.length > 0);
  assert.deepStrictEqual(await db.query(mapOnly, { group_level: 1 }), plain);
  assert.deepStrictEqual(await db.query(mapOnly, { reduce: true, group: true }), plain);
  assert.deepStrictEqual(await db.query(mapOnly, { stale: 'bogus' }), plain);
  // Several of them at once: each is dropped in turn.
  assert.deepStrictEqual(await db.query(mapOnly, { stale: 'bogus', group: true }), plain);
  assert.deepStrictEqual(await db.query(mapOnly, { stale: 'bogus', reduce: true, group_level: 1 }), plain);
  // PouchDB's offset: the skip given, not the rows before startkey.
  const last = plain.rows[plain.rows.length - 1].key;
  assert.notDeepStrictEqual(plain.rows[0].key, last);
  const ranged = await db.query(mapOnly, { startkey: last });
  assert.ok(ranged.rows.length > 0 && ranged.rows.length < plain.rows.length);
  assert.strictEqual(ranged.offset, 0);
  assert.strictEqual((await db.query(mapOnly, { startkey: last, skip: 1 })).offset, 1);
  await assert.rejects(db.query({ map: 'function (doc) { emit( }' }), { status: 400, name: 'compilation_error' });
  // A reduce that throws gives null, as PouchDB's tryReduce and CouchDB's runReduce do.
  assert.deepStrictEqual((await db.query({ map: 'function (doc) { emit(1, 1); }', reduce: 'function (k, v) { throw new Error("boom"); }' })).rows,
    [{ key: null, value: null }]);
  // _sum over what it cannot add: PouchDB's own _sum throws 500 invalid_value
  // (CouchDB answers the group's value as a builtin_reduce_error object).
  await assert.rejects(db.query({ map: 'function (doc) { emit(1, "x"); }', reduce: '_sum' }),
    { status: 500, name: 'invalid_value' });
  // A design document whose views cannot run is refused when written, as CouchDB does.
  await assert.rejects(db.put({ _id: '_design/broken', views: { v: { map: 'function (doc) { emit( }' } } }),
    { status: 400, name: 'compilation_error' });
  await assert.rejects(db.put({ _id: '_design/broken', views: { v: { map: 3 } } }),
    { status: 400, name: 'invalid_design_doc', message: '`views.v.map` field must have string type' });
  await db.put({ _id: '_design/bad', views: { v: { map: 'function (doc) { emit(doc.n.x.y); }' } } });
  const r = await db.query('bad/v');
  assert.strictEqual(r.total_rows, 0);
});

check('viewCleanup', async () => {
  assert.deepStrictEqual(await db.viewCleanup(), { ok: true });
  assert.strictEqual((await db.query('d/byn', { reduce: false })).rows.length, 2);
});

check('validate_doc_update refuses JS API writes', async () => {
  const v = new PouchDB('vdu_' + settee.threadId);
  await v.put({
    _id: '_design/v',
    validate_doc_update: 'function (newDoc, oldDoc, userCtx, secObj) {' +
      ' if (newDoc.forbid) throw({forbidden: "no " + newDoc._id + " " + userCtx.roles.join() + " " + userCtx.db});' +
      ' if (oldDoc && oldDoc.locked) throw({unauthorized: "locked"}); }',
  });
  await assert.rejects(v.put({ _id: 'a', forbid: true }),
                       { status: 403, name: 'forbidden', message: 'no a _admin vdu_' + settee.threadId });
  const r = await v.bulkDocs([{ _id: 'b' }, { _id: 'c', forbid: true }]);
  assert.ok(r[0].ok);
  assert.strictEqual(r[1].name || r[1].error, 'forbidden');
  const l = await v.put({ _id: 'l', locked: true });
  await assert.rejects(v.remove('l', l.rev), { status: 401, name: 'unauthorized' });
  await assert.rejects(v.putAttachment('l', 'f.txt', l.rev, 'aGk=', 'text/plain'), { status: 401 });
  await assert.rejects(v.get('a'), { status: 404 });
  await v.destroy();
});

done();
