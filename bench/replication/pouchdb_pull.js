// The baseline of scripts/bench_replication.sh: PouchDB 9 in node pulling a
// remote database into a fresh in-memory PouchDB, `runs` times, printing
// each run's milliseconds and the best (the same shape replication_bench
// --pull prints). Uses tests/compat's pinned PouchDB packages.
//
//   NODE_PATH=tests/compat/node_modules node bench/replication/pouchdb_pull.js URL [runs]
'use strict';

const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-http'))
  .plugin(require('pouchdb-adapter-memory'))
  .plugin(require('pouchdb-replication'));

async function main() {
  const url = process.argv[2];
  const runs = Number(process.argv[3] || 5);
  let best = Infinity;
  let written = 0;
  for (let i = 0; i < runs; i++) {
    const local = new PouchDB('pull' + i + '-' + Date.now(), { adapter: 'memory' });
    const remote = new PouchDB(url);
    const start = process.hrtime.bigint();
    const result = await PouchDB.replicate(remote, local);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    written = result.docs_written;
    console.log(`run ${i}: ${ms.toFixed(1)} ms`);
    best = Math.min(best, ms);
    await local.destroy();
  }
  console.log(`pouchdb pull: ${written} docs, best ${best.toFixed(1)} ms`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
