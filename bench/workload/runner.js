// The runner of the PouchDB workload (basics.js, views.js, find.js,
// attachments.js), the same file in settee and in node on the real PouchDB.
//
// A case runs as PouchDB 9's performance suite runs it: a fresh database
// named `test<Math.random()>` opened with {size: 3000}, an untimed setup,
// then N timed iterations, each one sample, each after one yielded tick
// (process.nextTick; the yield is not timed), then the database is
// destroyed. Unlike PouchDB's suite, every iteration's result is checked
// after its timer stops (`verify`), and the whole case once more after the
// loop (`finish`), so that a fast wrong answer fails loudly.
//
// The run is split into phases so that settee can start N threads' timed
// loops together (bench/harness/workload_suite.cc): prepare() (open,
// detect the feature, setup), timed() (the loop), finish() (checks after
// the loop, teardown, destroy). One case is prepared at a time per isolate.
// node_main.js drives the same phases in node, one case after another.
'use strict';

const groups = {
  basics: require('./basics'),
  views: require('./views'),
  find: require('./find'),
  attachments: require('./attachments'),
};

// The PouchDB constructor the workload uses, set up the way PouchDB's suite
// sets it up: pouchdb-find, and the memory adapter as the default for
// --backend memory. In settee these resolve to the built-in PouchDB and the
// plugins are no-ops: the store's backend is chosen by the host.
function pouchFor(backend) {
  const PouchDB = require('pouchdb');
  PouchDB.plugin(require('pouchdb-find'));
  if (backend === 'memory') {
    PouchDB.plugin(require('pouchdb-adapter-memory'));
    return PouchDB.defaults({ adapter: 'memory' });
  }
  return PouchDB;
}

// Every case of `suites` (all groups if empty), with its default count.
function list(suites) {
  const out = [];
  for (const suite of Object.keys(groups)) {
    if (suites && suites.length && !suites.includes(suite)) continue;
    for (const c of groups[suite]) out.push({ suite, name: c.name, iterations: c.iterations });
  }
  return out;
}

function findCase(suite, name) {
  const g = groups[suite];
  const c = g && g.find((x) => x.name === name);
  if (!c) throw new Error('no such case: ' + suite + '/' + name);
  return c;
}

function randomName() {
  return 'test' + String(Math.random()).replace('.', '_');
}

function errorText(e) {
  if (e && typeof e === 'object') {
    const head = e.name && e.name !== 'Error' ? e.name + ': ' : '';
    return head + (e.message || e.reason || JSON.stringify(e));
  }
  return String(e);
}

const yieldTick = () => new Promise((resolve) => process.nextTick(resolve));

// The case being run in this isolate.
let current = null;

// Opens the case's database and runs its setup. `spec`: {suite, name,
// iterations (0: the case's own), backend, remote, progress(k) optional}.
// Resolves {status: 'ready' | 'unsupported' | 'failed', error}.
async function prepare(spec) {
  if (current) await finish();
  const c = findCase(spec.suite, spec.name);
  const n = spec.iterations > 0 ? spec.iterations : c.iterations;
  const PouchDB = pouchFor(spec.backend);
  const env = { PouchDB, remote: spec.remote || '', backend: spec.backend, randomName };
  const db = new PouchDB(randomName(), { size: 3000 });
  current = { c, n, env, db, ctx: undefined, samples: [], error: '', progress: spec.progress };
  const missing = c.needs ? c.needs(db, PouchDB, env) : '';
  if (missing) {
    current.status = 'unsupported';
    current.error = missing;
    return { status: 'unsupported', error: missing };
  }
  try {
    current.ctx = await c.setup(db, n, env);
  } catch (e) {
    current.status = 'failed';
    current.error = 'setup: ' + errorText(e);
    return { status: 'failed', error: current.error };
  }
  current.status = 'ready';
  return { status: 'ready', error: '' };
}

// The timed loop of the prepared case. Resolves {samples (ms per
// iteration), error, start_ms, end_ms, wait_cpu_ms, loop_cpu_ms,
// loop_runq_ms, split_ms}; the first failed
// iteration or check ends the loop. start_ms/end_ms bound the loop on
// performance.now()'s clock, which in settee is the process's (one origin
// for every isolate), so the harness takes N threads' aggregate throughput
// over the span in which they actually ran, not over its own dispatch and
// collection of the tasks. wait_cpu_ms (where the runtime has
// process.threadCpuUsage, as settee does): the CPU the thread spent waiting
// for the common start (below), which the harness takes out of the
// process's CPU time. loop_cpu_ms: the thread's own CPU time in the loop;
// loop_runq_ms (Linux): its time runnable but not running in the loop
// (runQueueWaitMs); split_ms: the wall time those two cover (the loop and
// the reads of the clocks), the rest of which the thread was asleep.
//
// `opts.start_at` (settee with several threads, and the one-thread runs of
// a scaling run, so each count starts the same way): the instant, on
// process.hrtime.bigint()'s clock, at which every thread starts its loop.
// The thread spins until then: a thread woken for its task starts a few
// milliseconds after the first one on a VM (1-3.5 ms measured here), which
// is longer than a whole loop of the short cases (basic-gets: 1.5 ms), so
// the loops often did not overlap at all and the 2-thread throughput of one
// run and the next differed twofold. A thread that comes after the instant
// starts at once. It spins rather than sleeps (a thread woken from a sleep
// starts late again, which is what the wait is for: sleeping through all
// but the last 4 ms left 0.1-3.6 ms between the starts on a busy machine),
// on performance.now() (a number, cheaper per call than hrtime.bigint()).
//
// Between two reads of the clock it runs a loop that allocates nothing
// (~1 us): every read makes a heap number, and 15 ms of back-to-back reads
// left megabytes of garbage, which V8's helper threads then marked (CPU
// that the process's clock counted against the loop) and a young-generation
// collection swept inside the timed loop, at 2 threads only.
function waitUntil(startAt) {
  const until = performance.now() + Number(BigInt(startAt) - process.hrtime.bigint()) / 1e6;
  let sink = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 256; i++) sink ^= i;
  }
  return sink;
}

// The calling thread's time waiting for a CPU while runnable, in ms, from
// Linux's /proc/thread-self/schedstat (its second field: run-queue wait in
// ns, brought up to date whenever the thread is given a CPU, so exact when
// the thread reads it itself); undefined where there is no such file.
// Beside the thread's CPU clock it splits a loop's wall time into running,
// waiting for a CPU (the machine's other work, or the process's other
// threads) and asleep (waiting on something: a lock, another thread's
// work, I/O).
let schedstatReadable = true;
function runQueueWaitMs() {
  if (!schedstatReadable) return undefined;
  try {
    const fields = require('fs').readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
    const ns = Number(fields[1]);
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch (e) { /* not Linux, or no /proc */ }
  schedstatReadable = false;
  return undefined;
}

async function timed(opts) {
  const cur = current;
  if (!cur || cur.status !== 'ready') return { samples: [], error: cur ? cur.error : 'no case prepared' };
  const { c, n, db, ctx } = cur;
  const samples = cur.samples;
  let lastReport = -1e9;
  const threadCpu = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage : null;
  const arrived = threadCpu && threadCpu();
  if (opts && opts.start_at) waitUntil(opts.start_at);
  const waited = threadCpu && threadCpu(arrived);
  // The split's bounds hold the reads of the thread's clocks, and the CPU
  // clock's hold the run-queue reads: a thread preempted between a read and
  // the loop's bound waited in the run queue outside the loop's bounds, and
  // the reads' own CPU time (~10 us) is not time asleep.
  const split0 = performance.now();
  const cpu0 = threadCpu && threadCpu();
  const queued0 = runQueueWaitMs();
  const start = performance.now();
  for (let k = 0; k < n; k++) {
    await yieldTick();
    let result;
    const t0 = performance.now();
    try {
      result = await c.test(db, k, ctx);
    } catch (e) {
      cur.error = 'iteration ' + k + ': ' + errorText(e);
      break;
    }
    samples.push(performance.now() - t0);
    try {
      if (c.verify) c.verify(result, k, ctx, cur.env);
    } catch (e) {
      cur.error = 'check failed at iteration ' + k + ': ' + errorText(e);
      break;
    }
    if (cur.progress) {
      const now = performance.now();
      if (now - lastReport >= 100 || k === n - 1) {
        lastReport = now;
        cur.progress(k + 1);
      }
    }
  }
  const end = performance.now();
  const queued = runQueueWaitMs();
  const cpu = threadCpu && threadCpu(cpu0);
  const split1 = performance.now();
  cur.status = cur.error ? 'failed' : 'timed';
  const out = { samples, error: cur.error, start_ms: start, end_ms: end };
  if (waited) out.wait_cpu_ms = (waited.user + waited.system) / 1000;
  if (cpu) out.loop_cpu_ms = (cpu.user + cpu.system) / 1000;
  if (cpu && queued !== undefined && queued0 !== undefined) {
    out.loop_runq_ms = queued - queued0;
    out.split_ms = split1 - split0;
  }
  return out;
}

// The checks after the loop, the case's teardown and the database's
// destruction. Resolves {error}: the first failure, if any.
async function finish() {
  const cur = current;
  current = null;
  if (!cur) return { error: '' };
  let error = cur.status === 'unsupported' ? '' : cur.error;
  if (cur.status === 'timed' && cur.c.finish) {
    try {
      await cur.c.finish(cur.db, cur.n, cur.ctx, cur.env);
    } catch (e) {
      error = 'check after the loop failed: ' + errorText(e);
    }
  }
  try {
    if (cur.c.teardown && cur.status !== 'unsupported') await cur.c.teardown(cur.ctx, cur.env);
  } catch (e) {
    if (!error) error = 'teardown: ' + errorText(e);
  }
  try {
    await cur.db.destroy();
  } catch (e) {
    if (!error) error = 'destroy: ' + errorText(e);
  }
  return { error };
}

module.exports = { list, prepare, timed, finish, pouchFor };
