// The baseline side of `settee bench --baseline pouchdb`: runs the workload
// (runner.js and the group files, unchanged) in node on the real PouchDB 9
// installed in bench/node_modules (bench/package.json).
//
//   node node_main.js '{"backend":"memory","remote":"","cases":[{"suite":"basics","name":"basic-gets","iterations":0}]}'
//
// The cases run one after another in this process, as PouchDB's suite runs
// them. It writes one line per event to stdout for the harness
// (bench/harness/pouchdb_baseline.cc), each `@@bench ` and a JSON object:
//   {"versions": {...}}                                  first
//   {"progress": {"case": i, "iteration": k}}            while a case runs
//   {"result": {"suite", "name", "status", "error", "samples"}}  per case
//   {"peak_rss_mb": N}                                   last: VmHWM, which
//     the parent cannot get from wait4 (Linux carries the forking parent's
//     high-water mark over exec into the child's ru_maxrss)
// LevelDB databases go into the working directory.
'use strict';

const runner = require('./runner');

function emit(obj) {
  process.stdout.write('@@bench ' + JSON.stringify(obj) + '\n');
}

async function main() {
  const spec = JSON.parse(process.argv[2] || '{}');
  emit({ versions: { node: process.versions.node, v8: process.versions.v8,
    pouchdb: require('pouchdb/package.json').version } });
  const cases = spec.cases || [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    emit({ progress: { case: i, iteration: 0 } });
    const base = { suite: c.suite, name: c.name, status: 'failed', error: '', samples: [], wall_ms: 0 };
    try {
      const ready = await runner.prepare({
        suite: c.suite, name: c.name, iterations: c.iterations, backend: spec.backend, remote: spec.remote,
        progress: (k) => emit({ progress: { case: i, iteration: k } }),
      });
      if (ready.status !== 'ready') {
        await runner.finish();
        emit({ result: Object.assign(base, ready) });
        continue;
      }
      const t0 = performance.now();
      const t = await runner.timed();
      // The loop's own span, as settee's threads report it.
      base.wall_ms = t.end_ms > t.start_ms ? t.end_ms - t.start_ms : performance.now() - t0;
      const f = await runner.finish();
      base.samples = t.samples;
      base.error = t.error || f.error;
      base.status = base.error ? 'failed' : 'ok';
    } catch (e) {
      base.error = String(e && e.stack || e);
    }
    emit({ result: base });
  }
  const status = require('fs').readFileSync('/proc/self/status', 'utf8');
  const hwm = /VmHWM:\s*(\d+)\s*kB/.exec(status);
  if (hwm) emit({ peak_rss_mb: Number(hwm[1]) / 1024 });
}

main().then(() => process.exit(0), (e) => {
  console.error(e && e.stack || e);
  process.exit(1);
});
