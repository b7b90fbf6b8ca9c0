// The find group of the PouchDB 9 workload (shared/docs/POUCHDB_WORKLOAD.md,
// cases 18-23, section 5): Mango indexes and queries over 10,000 docs.
// Case shape: bench/workload/runner.js.
'use strict';

const { expect, expectAllOk } = require('./util');

function needsFind(db) {
  return typeof db.find === 'function' && typeof db.createIndex === 'function'
    ? '' : 'Mango queries (db.find, db.createIndex) are not built yet';
}

const strs = ['foo', 'bar', 'smang', 'foobar'];

async function writeFindDocs(db) {
  const docs = [];
  for (let i = 0; i < 10000; i++) {
    docs.push({ key: i % 1337, even: i % 2 === 0, random: Math.random(), str: strs[i % 3] });
  }
  expectAllOk(await db.bulkDocs(docs), 10000, 'setup bulkDocs');
}

const keyIndex = { index: { fields: ['key'] } };

async function setupDocs(db) { await writeFindDocs(db); return {}; }
async function setupIndexed(db) {
  await writeFindDocs(db);
  await db.createIndex(keyIndex);
  return {};
}

const simple = { selector: { key: 'foo' } };
const complex = { selector: { $and: [{ key: { $gt: 4 } }, { key: { $ne: 7 } }] } };
const multi = { selector: { key: { $gt: 5 }, str: 'foo' } };

function expectNone(res) {
  expect(Array.isArray(res.docs) && res.docs.length === 0, 'expected no docs, got ' + (res.docs && res.docs.length));
}
function expectComplex(res) {
  expect(res.docs.length === 25, 'expected 25 docs (the default limit), got ' + res.docs.length);
  expect(res.docs.every((d) => d.key > 4 && d.key !== 7), 'a doc does not match the selector');
}
function expectSorted(res) {
  for (let i = 1; i < res.docs.length; i++) {
    expect(res.docs[i - 1].key <= res.docs[i].key, 'docs are not in key order');
  }
}

module.exports = [
  {
    name: 'create-index',
    iterations: 1,
    needs: needsFind,
    setup: setupDocs,
    // The index is queried inside the timed work so that an engine that
    // builds lazily (CouchDB) does the same work as PouchDB, which builds
    // it before createIndex resolves.
    test: async (db) => {
      const created = await db.createIndex(keyIndex);
      const res = await db.find({ selector: { key: 0 }, limit: 1 });
      return { created, res };
    },
    verify: ({ created, res }) => {
      expect(created.result === 'created', 'createIndex: ' + JSON.stringify(created));
      expect(res.docs.length === 1 && res.docs[0].key === 0, 'the new index must answer');
    },
  },
  {
    name: 'simple-find-query',
    iterations: 5,
    needs: needsFind,
    setup: setupIndexed,
    test: (db) => db.find(simple),
    verify: expectNone,
  },
  {
    name: 'simple-find-query-no-index',
    iterations: 5,
    needs: needsFind,
    setup: setupDocs,
    test: (db) => db.find(simple),
    verify: expectNone,
  },
  {
    name: 'complex-find-query',
    iterations: 5,
    needs: needsFind,
    setup: setupIndexed,
    test: (db) => db.find(complex),
    verify: (res) => {
      expectComplex(res);
      expectSorted(res);
      expect(res.docs.map((d) => d.key).join() === [5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6,
        8, 8, 8, 8, 8, 8, 8, 8, 9].join(), 'expected keys 5 x8, 6 x8, 8 x8, 9');
    },
  },
  {
    name: 'complex-find-query-no-index',
    iterations: 5,
    needs: needsFind,
    setup: setupDocs,
    test: (db) => db.find(complex),
    verify: expectComplex,
  },
  {
    name: 'multi-field-query',
    iterations: 5,
    needs: needsFind,
    setup: setupIndexed,
    test: (db) => db.find(multi),
    verify: (res) => {
      expect(res.docs.length === 25, 'expected 25 docs, got ' + res.docs.length);
      expect(res.docs.every((d) => d.key > 5 && d.str === 'foo'), 'a doc does not match the selector');
      expectSorted(res);
    },
  },
];
