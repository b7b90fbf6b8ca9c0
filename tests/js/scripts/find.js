// pouchdb-find's API on the engine: createIndex, getIndexes, find (with
// and without an index), explain, deleteIndex, and their errors.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const db = new PouchDB('find_' + settee.threadId);

check('find scans _all_docs without an index, with CouchDB\'s warning', async () => {
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push({ _id: 'd' + String(i).padStart(2, '0'), n: i, kind: i % 3 === 0 ? 'fizz' : 'plain', tags: i % 2 ? ['odd'] : [] });
  await db.bulkDocs(docs);
  const r = await db.find({ selector: { n: { $gt: 25 } }, fields: ['_id'] });
  assert.deepStrictEqual(r.docs, [{ _id: 'd26' }, { _id: 'd27' }, { _id: 'd28' }, { _id: 'd29' }]);
  assert.match(r.warning, /No matching index found/);
});

check('createIndex, getIndexes, find and explain with the index', async () => {
  const made = await db.createIndex({ index: { fields: ['kind', 'n'] }, name: 'kn', ddoc: 'kn' });
  assert.deepStrictEqual(made, { result: 'created', id: '_design/kn', name: 'kn' });
  const idx = await db.getIndexes();
  assert.deepStrictEqual(idx.indexes.map((i) => i.name), ['_all_docs', 'kn']);
  const r = await db.find({ selector: { kind: 'fizz', n: { $lt: 10 } }, sort: [{ kind: 'desc' }, { n: 'desc' }], fields: ['n'] });
  assert.deepStrictEqual(r.docs, [{ n: 9 }, { n: 6 }, { n: 3 }, { n: 0 }]);
  assert.strictEqual(r.warning, undefined);
  const plan = await db.explain({ selector: { kind: 'fizz', n: { $exists: true } } });
  assert.strictEqual(plan.index.ddoc, '_design/kn');
  const odd = await db.find({ selector: { kind: 'plain', tags: { $elemMatch: { $eq: 'odd' } }, n: { $gte: 20 } }, fields: ['n'] });
  assert.deepStrictEqual(odd.docs.map((d) => d.n), [23, 25, 29]);
});

check('createIndex takes pouchdb-find\'s form: name and ddoc inside index', async () => {
  const made = await db.createIndex({ index: { fields: ['n'], name: 'by_n', ddoc: 'byn', type: 'json' } });
  assert.deepStrictEqual(made, { result: 'created', id: '_design/byn', name: 'by_n' });
  assert.deepStrictEqual(await db.deleteIndex({ ddoc: '_design/byn', name: 'by_n' }), { ok: true });
});

check('errors and deleteIndex', async () => {
  await assert.rejects(db.find({ selector: { n: { $bogus: 1 } } }), { status: 400, name: 'invalid_operator' });
  await assert.rejects(db.find({ selector: { n: 1 }, sort: ['n'] }), { status: 400, name: 'no_usable_index' });
  await assert.rejects(db.find({}), { status: 400 });
  await assert.rejects(db.deleteIndex({ ddoc: 'nope', name: 'x' }), { status: 404 });
  assert.deepStrictEqual(await db.deleteIndex({ ddoc: '_design/kn', name: 'kn' }), { ok: true });
  assert.strictEqual((await db.getIndexes()).total_rows, 1);
});

done();
