// The views group of the PouchDB 9 workload (shared/docs/POUCHDB_WORKLOAD.md,
// cases 14-17, section 6): temporary and persisted map queries. Case shape:
// bench/workload/runner.js.
'use strict';

const { expect, expectAllOk } = require('./util');

function needsViews(db) {
  return typeof db.query === 'function' ? '' : 'views (db.query) are not built yet';
}

// The 12-doc set, fresh random parts per call.
function twelveDocs() {
  return [null, true, false, -1, 0, 1, 2, 3, Math.random(),
    'bar' + Math.random(), 'foo' + Math.random(), 'foobar' + Math.random()].map((key) => ({ key }));
}

// 100 batches of the 12-doc set, issued at once: 1200 docs.
async function writeKeyDocs(db) {
  const batches = [];
  for (let i = 0; i < 100; i++) batches.push(db.bulkDocs({ docs: twelveDocs() }));
  for (const res of await Promise.all(batches)) expectAllOk(res, 12, 'setup bulkDocs');
}

const queryOpts = [
  { startkey: 'foo', limit: 5 },
  { startkey: 'foobar', limit: 5 },
  { startkey: 'foo', limit: 5 },
  { startkey: -1, limit: 5 },
  { startkey: null, limit: 5 },
];
// What each option set's 5 rows must hold.
const rowChecks = [
  (k) => typeof k === 'string' && k.startsWith('foo0') ,
  (k) => typeof k === 'string' && k.startsWith('foobar0'),
  (k) => typeof k === 'string' && k.startsWith('foo0'),
  (k) => k === -1,
  (k) => k === null,
];

function verifyFive(results) {
  expect(results.length === 5, 'expected 5 query results');
  results.forEach((res, i) => {
    expect(res.rows.length === 5, 'query ' + i + ': expected 5 rows, got ' + res.rows.length);
    expect(res.total_rows === 1200, 'query ' + i + ': expected total_rows 1200, got ' + res.total_rows);
    for (const row of res.rows) {
      expect(rowChecks[i](row.key) && row.value === null,
        'query ' + i + ' (' + JSON.stringify(queryOpts[i]) + ') returned ' + JSON.stringify(row));
    }
  });
}

function mapKey(doc) {
  emit(doc.key); // eslint-disable-line no-undef
}
function mapId(doc) {
  emit(doc._id); // eslint-disable-line no-undef
}

async function putView(db, map) {
  const res = await db.put({ _id: '_design/myview', views: { myview: { map: map.toString() } } });
  expect(res.ok === true, 'put _design/myview');
}

function persistedCase(name, extra) {
  return {
    name,
    iterations: 10,
    needs: needsViews,
    setup: async (db) => {
      await writeKeyDocs(db);
      await putView(db, mapKey);
      const all = await db.query('myview/myview');
      expect(all.rows.length === 1200, 'the first query must see 1200 rows, got ' + all.rows.length);
      return {};
    },
    test: (db) => Promise.all(queryOpts.map((o) => db.query('myview/myview', Object.assign({}, o, extra)))),
    verify: verifyFive,
  };
}

module.exports = [
  {
    name: 'temp-views',
    iterations: 1,
    needs: needsViews,
    setup: async (db) => { await writeKeyDocs(db); return {}; },
    test: (db) => Promise.all(queryOpts.map((o) => db.query(mapKey, o))),
    verify: verifyFive,
  },
  {
    name: 'build-secondary-index',
    iterations: 1,
    needs: needsViews,
    setup: async (db) => {
      const docs = [];
      for (let i = 0; i < 1000; i++) docs.push({});
      expectAllOk(await db.bulkDocs({ docs }), 1000, 'setup bulkDocs');
      await putView(db, mapId);
      return {};
    },
    test: (db) => db.query('myview/myview', { limit: 0 }),
    verify: (res) => {
      expect(res.rows.length === 0, 'expected 0 rows, got ' + res.rows.length);
      expect(res.total_rows === 1000, 'expected total_rows 1000, got ' + res.total_rows);
    },
  },
  persistedCase('persisted-views', {}),
  persistedCase('persisted-views-stale-ok', { stale: 'ok' }),
];
