// PouchDB 9's query() (pouchdb-mapreduce) and find()/createIndex()
// (pouchdb-find) over HTTP against a live settee: persisted views with
// options and reduces, temporary views (POST _temp_view), Mango indexes,
// queries, explain and their errors.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { startSettee } = require('./settee_server');

let server;
let db;

before(async () => {
  server = await startSettee();
  db = new PouchDB(`${server.url}/views-find`);
  const docs = [];
  for (let i = 0; i < 50; i++) docs.push({ _id: `p${String(i).padStart(2, '0')}`, age: i % 10, team: i % 2 ? 'red' : 'blue', score: i });
  await db.bulkDocs(docs);
});
after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, 'settee exits cleanly on SIGTERM');
});

test('query: a persisted view with options and reduces', async () => {
  await db.put({
    _id: '_design/stats',
    views: {
      by_age: { map: 'function (doc) { emit(doc.age, doc.score); }', reduce: '_sum' },
      by_team: { map: 'function (doc) { emit([doc.team, doc.age], 1); }', reduce: 'function (k, v, re) { return sum(v); }' },
    },
  });
  const rows = await db.query('stats/by_age', { reduce: false, key: 3 });
  assert.equal(rows.total_rows, 50);
  assert.deepEqual(rows.rows.map((r) => r.id), ['p03', 'p13', 'p23', 'p33', 'p43']);
  assert.deepEqual((await db.query('stats/by_age')).rows, [{ key: null, value: 1225 }]);
  const grouped = await db.query('stats/by_team', { group_level: 1 });
  assert.deepEqual(grouped.rows, [{ key: ['blue'], value: 25 }, { key: ['red'], value: 25 }]);
  const keys = await db.query('stats/by_age', { keys: [9, 0], group: true });
  assert.deepEqual(keys.rows, [{ key: 9, value: 145 }, { key: 0, value: 100 }]);
  const docs = await db.query('stats/by_age', { reduce: false, startkey: 8, descending: true, limit: 2, include_docs: true });
  assert.deepEqual(docs.rows.map((r) => r.doc._id), ['p48', 'p38']);
  await assert.rejects(db.query('stats/nope'), (e) => e.status === 404);
  await assert.rejects(db.query('stats/by_age', { startkey: 5, endkey: 1 }), (e) => e.status === 400 && e.name === 'query_parse_error');
});

test('query: temporary views go to _temp_view', async () => {
  const r = await db.query(function (doc) { if (doc.score > 45) emit(doc.score); });
  assert.deepEqual(r.rows.map((x) => x.key), [46, 47, 48, 49]);
  const c = await db.query({ map: function (doc) { emit(doc.team); }, reduce: '_count' }, { group: true });
  assert.deepEqual(c.rows, [{ key: 'blue', value: 25 }, { key: 'red', value: 25 }]);
  assert.deepEqual(await db.viewCleanup(), { ok: true });
});

test('find without and with an index, sort, fields, explain', async () => {
  const q = { selector: { age: { $gte: 7 }, team: 'red' }, fields: ['_id', 'age'] };
  const scan = await db.find(q);
  assert.match(scan.warning, /No matching index/);
  assert.equal(scan.docs.length, 10);  // ages 7 and 9, red
  const made = await db.createIndex({ index: { fields: ['age'] }, ddoc: 'ages', name: 'age' });
  assert.equal(made.result, 'created');
  assert.equal((await db.createIndex({ index: { fields: ['age'] }, ddoc: 'ages', name: 'age' })).result, 'exists');
  const found = await db.find({ ...q, sort: [{ age: 'desc' }], limit: 3 });
  assert.equal(found.warning, undefined);
  assert.deepEqual(found.docs.map((d) => d.age), [9, 9, 9]);
  const idx = await db.getIndexes();
  assert.equal(idx.total_rows, 2);
  assert.equal(idx.indexes[1].name, 'age');
  const plan = await db.explain(q);
  assert.equal(plan.index.name, 'age');
  await assert.rejects(db.find({ selector: { team: 'red' }, sort: ['team'] }), (e) => e.status === 400);
  await assert.rejects(db.find({ selector: { team: { $nope: 1 } } }), (e) => e.status === 400);
  assert.deepEqual(await db.deleteIndex({ ddoc: '_design/ages', name: 'age' }), { ok: true });
  assert.equal((await db.getIndexes()).total_rows, 1);
});

test('validate_doc_update refuses writes from the PouchDB client, and replication counts them', async () => {
  const v = new PouchDB(`${server.url}/views-vdu`);
  await v.put({
    _id: '_design/guard',
    validate_doc_update: 'function (newDoc, oldDoc, userCtx) { if (newDoc.bad) throw({forbidden: "bad " + newDoc._id}); }',
  });
  await assert.rejects(v.put({ _id: 'x', bad: true }), (e) => e.status === 403 && e.name === 'forbidden' && e.message === 'bad x');
  const r = await v.bulkDocs([{ _id: 'a' }, { _id: 'b', bad: true }]);
  assert.equal(r[0].ok, true);
  assert.equal(r[1].error === true ? r[1].name : r[1].error, 'forbidden');
  const local = new PouchDB('vdu-source', { adapter: 'memory' });
  await local.bulkDocs([{ _id: 'ok1' }, { _id: 'no1', bad: true }, { _id: 'ok2' }]);
  const result = await local.replicate.to(v);
  assert.equal(result.docs_written, 2);
  assert.equal(result.doc_write_failures, 1);
  await assert.rejects(v.get('no1'), (e) => e.status === 404);
  await v.destroy();
  await local.destroy();
});
