// Part of the isolate prelude (js/prelude/begin.js): console and process (nextTick queue, hrtime, exit).
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// console

const counts = new Map();
const timersStarted = new Map();
const console = {
  log: (...a) => native.print(1, format(...a) + '\n'),
  info: (...a) => native.print(1, format(...a) + '\n'),
  debug: (...a) => native.print(1, format(...a) + '\n'),
  warn: (...a) => native.print(2, format(...a) + '\n'),
  error: (...a) => native.print(2, format(...a) + '\n'),
  trace: (...a) => {
    const e = new Error(format(...a));
    native.print(2, 'Trace: ' + String(e.stack).split('\n').slice(1).join('\n').replace(/^/, format(...a) + '\n') + '\n');
  },
  dir: (v, o) => native.print(1, inspect(v, Object.assign({ customInspect: false }, o)) + '\n'),
  assert: (c, ...a) => { if (!c) native.print(2, 'Assertion failed' + (a.length ? ': ' + format(...a) : '') + '\n'); },
  count: (label = 'default') => {
    const n = (counts.get(label) || 0) + 1;
    counts.set(label, n);
    native.print(1, label + ': ' + n + '\n');
  },
  time: (label = 'default') => { timersStarted.set(label, native.now()); },
  timeEnd: (label = 'default') => {
    const t = timersStarted.get(label);
    if (t === undefined) return;
    timersStarted.delete(label);
    native.print(1, label + ': ' + (native.now() - t).toFixed(3) + 'ms\n');
  },
};

// ---------------------------------------------------------------------------
// process, nextTick, microtasks

const tickQueue = [];
let tickHead = 0;
function nextTick(fn, ...args) {
  if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
  tickQueue.push(fn, args);
}
// Runs queued ticks; C++ runs the microtask checkpoint after this returns
// and calls again while ticks remain (node's order: ticks, then promises).
hooks.runTicks = function () {
  while (tickHead < tickQueue.length) {
    const fn = tickQueue[tickHead];
    const args = tickQueue[tickHead + 1];
    tickQueue[tickHead] = tickQueue[tickHead + 1] = undefined;
    tickHead += 2;
    if (tickHead === tickQueue.length) { tickQueue.length = 0; tickHead = 0; }
    fn(...args);
  }
};
hooks.hasTicks = () => tickHead < tickQueue.length;

const processEmitter = {};
function hrtime(prev) {
  const ns = native.hrtime();
  let s = Number(ns / 1000000000n);
  let n = Number(ns % 1000000000n);
  if (prev) {
    s -= prev[0];
    n -= prev[1];
    if (n < 0) { s--; n += 1e9; }
  }
  return [s, n];
}
hrtime.bigint = () => native.hrtime();

const process = {
  argv: native.argv,
  execArgv: [],
  execPath: native.argv[0],
  env: native.env,
  pid: native.pid,
  ppid: native.ppid,
  platform: native.platform,
  arch: native.arch,
  version: 'v' + native.nodeVersion,
  versions: { settee: native.version, v8: native.v8Version },
  release: { name: 'settee' },
  threadId: native.threadId,
  exitCode: undefined,
  title: 'settee',
  nextTick,
  hrtime,
  memoryUsage: () => native.memoryUsage(),
  cpuUsage: (prev) => {
    const u = native.cpuUsage();
    return prev ? { user: u.user - prev.user, system: u.system - prev.system } : u;
  },
  threadCpuUsage: (prev) => {
    const u = native.threadCpuUsage();
    return prev ? { user: u.user - prev.user, system: u.system - prev.system } : u;
  },
  uptime: () => native.now() / 1000,
  cwd: () => native.cwd(),
  exit: (code) => {
    if (code === undefined) code = process.exitCode || 0;
    native.exit(Number(code) | 0);
  },
  on: (ev, fn) => { (processEmitter[ev] = processEmitter[ev] || []).push(fn); return process; },
  once: (ev, fn) => {
    const w = (...args) => { process.off(ev, w); return fn(...args); };
    w.listener = fn;
    return process.on(ev, w);
  },
  off: (ev, fn) => {
    const l = processEmitter[ev];
    if (l) { const i = l.findIndex((x) => x === fn || x.listener === fn); if (i >= 0) l.splice(i, 1); }
    return process;
  },
  emit: (ev, ...args) => hooks.emitProcess(ev, ...args),
  listenerCount: (ev) => (processEmitter[ev] || []).length,
  listeners: (ev) => (processEmitter[ev] || []).map((x) => x.listener || x),
  // node's emitWarning(warning[, type[, code]]) or (warning, {type, code,
  // detail}): 'warning' listeners get the Error; stderr gets node's line.
  emitWarning: (warning, type, code) => {
    let detail;
    if (type !== null && typeof type === 'object') ({ type, code, detail } = type);
    const w = warning instanceof Error ? warning : new Error(String(warning));
    if (!(warning instanceof Error)) {
      w.name = typeof type === 'string' && type ? type : 'Warning';
      if (code !== undefined) w.code = code;
      if (detail !== undefined) w.detail = detail;
    }
    process.emit('warning', w);
    native.print(2, '(settee:' + native.pid + ') ' + (w.code !== undefined ? '[' + w.code + '] ' : '') + w.name + ': ' +
      w.message + (w.detail !== undefined ? '\n' + w.detail : '') + '\n');
  },
  stdout: { write: (s) => { native.print(1, String(s)); return true; }, isTTY: false, fd: 1 },
  stderr: { write: (s) => { native.print(2, String(s)); return true; }, isTTY: false, fd: 2 },
};
// node's tty module: isatty (supports-color, chalk and debug ask it before
// colouring). Its streams are not offered: constructing one throws.
const tty = (() => {
  const unsupported = (name) => class {
    constructor() { throw new Error('tty.' + name + ' is not supported by settee run'); }
  };
  return {
    isatty: (fd) => Number.isInteger(fd) && fd >= 0 && fd <= 2147483647 && native.isatty(fd),
    ReadStream: unsupported('ReadStream'),
    WriteStream: unsupported('WriteStream'),
  };
})();
process.removeListener = process.off;
process.addListener = process.on;
// Listeners of 'uncaughtException' / 'unhandledRejection' take over the
// report (C++ asks here first); 'exit' runs at process.exit and on idle exit.
hooks.emitProcess = function (ev, ...args) {
  const l = processEmitter[ev];
  if (!l || l.length === 0) return false;
  for (const fn of l.slice()) fn(...args);
  return true;
};
// node's end of a script, with process.exitCode: 'beforeExit' when the
// thread's loop has emptied (its listeners may schedule more work), 'exit'
// when the thread shuts down. A nonzero exitCode is the process's status.
hooks.processEnd = function (ev) {
  hooks.emitProcess(ev, Number(process.exitCode) | 0);
  native.noteExitCode(Number(process.exitCode) | 0);
};

