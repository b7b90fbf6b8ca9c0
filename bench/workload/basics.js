// The basics group of the PouchDB 9 workload (shared/docs/POUCHDB_WORKLOAD.md,
// cases 1-13): writes, reads, _all_docs and pull replication. A case is
// {name, iterations, needs?, setup, test, verify?, finish?, teardown?}
// (bench/workload/runner.js): `test` is the timed work of one iteration,
// `verify` checks its result after the timer stops, `finish` checks the
// database after the loop.
'use strict';

const { docId, expect, expectAllOk, expectDocCount } = require('./util');

function times(n, make) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = make(i);
  return out;
}

// The 1000 docs the _all_docs cases read: {_id: doc_<i>, foo, baz}.
function fooBarDocs(n) {
  return times(n, (i) => ({ _id: docId(i), foo: 'bar', baz: 'quux' }));
}

// Case 4's document: branches of 4 keys for depths 1-6, leaves of 10
// strings at depth 7 (sovery3 first set to false, then to its string).
function massiveDoc(depth) {
  const obj = {};
  if (depth === 7) {
    for (let i = 0; i < 10; i++) obj['sovery' + i] = i === 3 ? false : i + 'cool';
    obj.sovery3 = '3cool';
    return obj;
  }
  for (let i = 0; i < 4; i++) obj['sovery' + i] = massiveDoc(depth + 1);
  return obj;
}

function bulkInsertCase(name, iterations, count, make) {
  return {
    name,
    iterations,
    setup: async () => ({ docs: times(count, make) }),
    test: (db, k, ctx) => db.bulkDocs({ docs: ctx.docs }),
    verify: (res) => expectAllOk(res, count, 'bulkDocs'),
    finish: (db, n) => expectDocCount(db, count * n),
  };
}

// The replication cases need PouchDB.replicate, a remote database object
// (their setup writes the remote through `new PouchDB(url)`: PouchDB's http
// adapter) and an HTTP remote (--remote, else one the harness starts:
// settee serve for settee, pouchdb-server for the PouchDB baseline).
function needsReplication(db, PouchDB, env) {
  if (typeof PouchDB.replicate !== 'function') return 'replication (PouchDB.replicate) is not built yet';
  if (!PouchDB.adapters || !PouchDB.adapters.http) {
    return 'remote databases (new PouchDB(url), the http adapter) are not built yet';
  }
  if (!env.remote) return 'no remote server for replication (--remote URL)';
  return '';
}

function replicationCase(name, generations) {
  return {
    name,
    iterations: 1,
    needs: needsReplication,
    setup: async (db, n, env) => {
      const remote = new env.PouchDB(env.remote.replace(/\/$/, '') + '/' + env.randomName(), { adapter: 'http' });
      const docs = times(1000, (i) => ({ _id: docId(i), foo: Math.random(), bar: Math.random() }));
      let res = await remote.bulkDocs({ docs });
      expectAllOk(res, 1000, 'remote bulkDocs');
      if (generations === 2) {
        const updates = res.map((r) => ({ _id: r.id, _rev: r.rev, foo: Math.random(), bar: Math.random() }));
        res = await remote.bulkDocs({ docs: updates });
        expectAllOk(res, 1000, 'remote update');
      }
      // PouchDB's suite keeps one target; each iteration gets its own here so
      // that --iterations K replicates K times instead of failing.
      const targets = times(n, () => new env.PouchDB(env.randomName()));
      return { remote, targets, PouchDB: env.PouchDB };
    },
    test: (db, k, ctx) => ctx.PouchDB.replicate(ctx.remote, ctx.targets[k], { live: false, batch_size: 100 }),
    verify: (res) => {
      expect(res && res.ok === true, 'replication did not complete: ' + JSON.stringify(res && res.errors));
      expect(res.docs_written === 1000, 'expected 1000 docs written, got ' + res.docs_written);
    },
    teardown: async (ctx) => {
      if (!ctx) return;
      await ctx.remote.destroy();
      for (const t of ctx.targets) await t.destroy();
    },
  };
}

const cases = [
  {
    name: 'basic-inserts',
    iterations: 1000,
    setup: async () => ({ doc: { yo: 'dawg' } }),
    test: (db, k, ctx) => db.post(ctx.doc),
    verify: (res) => expect(res && res.ok === true && typeof res.id === 'string' && /^1-/.test(res.rev),
      'post: ' + JSON.stringify(res)),
    finish: (db, n) => expectDocCount(db, n),
  },
  bulkInsertCase('bulk-inserts', 100, 100, () => ({ much: 'docs', very: 'bulk' })),
  bulkInsertCase('bulk-inserts-large-docs', 100, 100, () => {
    const doc = {};
    for (let i = 0; i < 100; i++) doc['hello' + i] = 'hey' + i;
    return doc;
  }),
  bulkInsertCase('bulk-inserts-massive-docs', 10, 50, () => massiveDoc(1)),
  {
    name: 'basic-updates',
    iterations: 100,
    setup: async (db) => {
      expectAllOk(await db.bulkDocs(times(100, () => ({}))), 100, 'setup bulkDocs');
      return {};
    },
    test: async (db) => {
      const all = await db.allDocs({ include_docs: true });
      const written = await db.bulkDocs(all.rows.map((row) => row.doc));
      return { rows: all.rows.length, written };
    },
    verify: (res, k) => {
      expect(res.rows === 100, 'allDocs: expected 100 rows, got ' + res.rows);
      expectAllOk(res.written, 100, 'bulkDocs');
      const gen = String(k + 2) + '-';
      expect(res.written.every((r) => r.rev.startsWith(gen)), 'expected revisions ' + gen + '*');
    },
    finish: async (db, n) => {
      await expectDocCount(db, 100);
      const all = await db.allDocs();
      expect(all.rows.every((row) => row.value.rev.startsWith(String(n + 1) + '-')),
        'expected every doc at revision ' + (n + 1));
    },
  },
  {
    name: 'basic-gets',
    iterations: 1000,
    setup: async (db, n) => {
      expectAllOk(await db.bulkDocs({ docs: fooBarDocs(n) }), n, 'setup bulkDocs');
      return {};
    },
    test: (db, k) => db.get(docId(k)),
    verify: (doc, k) => expect(doc && doc._id === docId(k) && doc.foo === 'bar' && doc.baz === 'quux',
      'get ' + docId(k) + ': ' + JSON.stringify(doc)),
  },
  {
    name: 'all-docs-skip-limit',
    iterations: 10,
    setup: async (db) => {
      expectAllOk(await db.bulkDocs({ docs: fooBarDocs(1000) }), 1000, 'setup bulkDocs');
      return {};
    },
    test: async (db) => {
      const pages = [];
      for (let j = 0; j < 10; j++) pages.push(await db.allDocs({ skip: j * 100, limit: 10 }));
      return pages;
    },
    verify: (pages) => pages.forEach((p, j) => {
      expect(p.rows.length === 10, 'page ' + j + ': expected 10 rows, got ' + p.rows.length);
      expect(p.rows[0].id === docId(j * 100), 'page ' + j + ' starts at ' + p.rows[0].id);
    }),
  },
  {
    name: 'all-docs-startkey-endkey',
    iterations: 10,
    setup: async (db) => {
      expectAllOk(await db.bulkDocs({ docs: fooBarDocs(1000) }), 1000, 'setup bulkDocs');
      return {};
    },
    test: async (db) => {
      const pages = [];
      for (let j = 0; j < 10; j++) {
        pages.push(await db.allDocs({ startkey: docId(j * 100), endkey: docId(j * 100 + 10) }));
      }
      return pages;
    },
    verify: (pages) => pages.forEach((p, j) => {
      expect(p.rows.length === 11, 'range ' + j + ': expected 11 rows, got ' + p.rows.length);
      expect(p.rows[10].id === docId(j * 100 + 10), 'range ' + j + ' ends at ' + p.rows[10].id);
    }),
  },
  {
    name: 'all-docs-keys',
    iterations: 100,
    setup: async (db) => {
      expectAllOk(await db.bulkDocs({ docs: fooBarDocs(1000) }), 1000, 'setup bulkDocs');
      return {};
    },
    test: async (db) => {
      const keys = times(50, () => docId(Math.floor(Math.random() * 1000)));
      return { keys, res: await db.allDocs({ keys, include_docs: true }) };
    },
    verify: ({ keys, res }) => {
      expect(res.rows.length === 50, 'expected 50 rows, got ' + res.rows.length);
      res.rows.forEach((row, i) => expect(row.id === keys[i] && row.doc && row.doc.foo === 'bar',
        'row ' + i + ' for ' + keys[i] + ': ' + JSON.stringify(row)));
    },
  },
  {
    name: 'all-docs-include-docs',
    iterations: 100,
    setup: async (db) => {
      const docs = times(1000, (i) => ({ _id: docId(i), foo: 'bar', baz: 'quux', _deleted: i % 2 === 1 }));
      expectAllOk(await db.bulkDocs({ docs }), 1000, 'setup bulkDocs');
      return {};
    },
    test: async (db) => {
      const res = await db.allDocs({ include_docs: true, limit: 100 });
      const posted = await db.post({});
      return { res, posted };
    },
    verify: ({ res, posted }) => {
      expect(res.rows.length === 100, 'expected 100 rows, got ' + res.rows.length);
      expect(res.rows.every((row) => row.doc && !row.doc._deleted && row.doc._id === row.id),
        'every row must carry its live doc');
      expect(posted && posted.ok === true, 'post: ' + JSON.stringify(posted));
    },
    finish: (db, n) => expectDocCount(db, 500 + n),
  },
  {
    // Off by default (0 iterations), as in PouchDB's suite; its public
    // mirror no longer answers.
    name: 'pull-replication-perf-skimdb',
    iterations: 0,
    // Like the other replication cases, it reads the remote through
    // PouchDB's remote databases (the http adapter).
    needs: (db, PouchDB, env) => needsReplication(db, PouchDB, Object.assign({}, env, { remote: 'skimdb' })),
    setup: async (db, n, env) => ({ targets: times(n, () => new env.PouchDB(env.randomName())), env }),
    test: (db, k, ctx) => new Promise((resolve, reject) => {
      const rep = ctx.env.PouchDB.replicate('https://skimdb.iriscouch.com/registry', ctx.targets[k],
        { live: false, batch_size: 100 });
      rep.on('change', (info) => {
        if (info.docs_written >= 200) { rep.cancel(); resolve(info); }
      });
      rep.on('error', reject);
      rep.on('complete', (info) => resolve(info));
    }),
    verify: (info) => expect(info && info.docs_written >= 200, 'expected 200 docs written'),
    teardown: async (ctx) => { if (ctx) for (const t of ctx.targets) await t.destroy(); },
  },
  replicationCase('pull-replication-one-generation', 1),
  replicationCase('pull-replication-two-generation', 2),
];

module.exports = cases;
