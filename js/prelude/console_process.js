// Part of the isolate prelude (js/prelude/begin.js): console and process (nextTick queue, hrtime, exit).
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// console

const counts = new Map();
const timersStarted = new Map();
// console.group's indentation (two spaces a level), put before every line
// any console method writes, as node does. The lines go through
// process.stdout.write / process.stderr.write, which a script may replace to
// capture them (as in node).
let groupIndent = '';
// Above 0 while console writes: process.stdout and process.stderr
// (js/prelude/stdio.js) then drop a failed write's error unless something
// listens for it, as node's console ignores errors on its streams.
let consoleWriting = 0;
const ignoreError = () => {};
const write = (fd, text) => {
  if (groupIndent) text = groupIndent + text.replace(/\n/g, '\n' + groupIndent);
  const stream = fd === 1 ? process.stdout : process.stderr;
  // Another stream a script put there: node's guard against an error
  // emitted within write().
  const guard = !stream._isStdio && typeof stream.listenerCount === 'function' && stream.listenerCount('error') === 0;
  if (guard) stream.once('error', ignoreError);
  consoleWriting++;
  try {
    stream.write(text + '\n');
  } finally {
    consoleWriting--;
    if (guard) stream.removeListener('error', ignoreError);
  }
};
// console's formatting, in colour where node's would be (a terminal,
// FORCE_COLOR: js/prelude/stdio.js's consoleColors).
const colorOptions = { colors: true };
const formatFor = (fd, args) =>
  consoleColors(fd === 1 ? process.stdout : process.stderr) ? formatWithOptions(colorOptions, ...args) : format(...args);
// node's console.table (lib/internal/cli_table.js): columns as wide as their
// widest cell, cells left-aligned, values inspected on one line.
const tableWidth = (s) => [...s.replace(/\u001b\[[0-9;]*m/g, '')].length;
function renderTable(head, columns) {
  const widths = head.map(tableWidth);
  const longest = Math.max(...columns.map((c) => c.length));
  const rows = [];
  for (let i = 0; i < head.length; i++) {
    for (let j = 0; j < longest; j++) {
      if (rows[j] === undefined) rows[j] = [];
      const cell = rows[j][i] = Object.prototype.hasOwnProperty.call(columns[i], j) ? columns[i][j] : '';
      widths[i] = Math.max(widths[i] || 0, tableWidth(cell));
    }
  }
  const row = (cells) => '│ ' + cells.map((c, i) => c + ' '.repeat(widths[i] - tableWidth(c))).join(' │ ') + ' │';
  const line = (l, m, r) => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r;
  return [line('┌', '┬', '┐'), row(head), line('├', '┼', '┤'), ...rows.map(row), line('└', '┴', '┘')].join('\n');
}
function consoleTable(data, properties) {
  if (properties !== undefined && !Array.isArray(properties)) {
    throw Object.assign(new TypeError('The "properties" argument must be an instance of Array'), { code: 'ERR_INVALID_ARG_TYPE' });
  }
  if (data === null || typeof data !== 'object') return console.log(data);
  const cell = (v) => inspect(v, {
    depth: v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 2 ? -1 : 0,
    maxArrayLength: 3, breakLength: Infinity,
  });
  const indexes = (n) => Array.from({ length: n }, (_, i) => cell(i));
  if (data instanceof Map) {
    const keys = [], values = [];
    for (const [k, v] of data) { keys.push(cell(k)); values.push(cell(v)); }
    return write(1, renderTable(['(iteration index)', 'Key', 'Values'], [indexes(keys.length), keys, values]));
  }
  if (data instanceof Set) {
    const values = [...data].map(cell);
    return write(1, renderTable(['(iteration index)', 'Values'], [indexes(values.length), values]));
  }
  const map = Object.create(null);
  const primitives = [];
  let hasPrimitives = false;
  const indexKeys = Object.keys(data);
  indexKeys.forEach((index, i) => {
    const item = data[index];
    const primitive = item === null || (typeof item !== 'function' && typeof item !== 'object');
    if (properties === undefined && primitive) {
      hasPrimitives = true;
      primitives[i] = cell(item);
    } else {
      for (const key of properties || Object.keys(item)) {
        if (map[key] === undefined) map[key] = [];
        map[key][i] = (primitive && properties) || !Object.prototype.hasOwnProperty.call(item, key) ? '' : cell(item[key]);
      }
    }
  });
  const head = ['(index)', ...Object.keys(map)];
  const columns = [indexKeys, ...Object.values(map)];
  if (hasPrimitives) { head.push('Values'); columns.push(primitives); }
  return write(1, renderTable(head, columns));
}
const console = {
  log: (...a) => write(1, formatFor(1, a)),
  info: (...a) => write(1, formatFor(1, a)),
  debug: (...a) => write(1, formatFor(1, a)),
  warn: (...a) => write(2, formatFor(2, a)),
  error: (...a) => write(2, formatFor(2, a)),
  trace: (...a) => {
    const e = new Error(format(...a));
    write(2, 'Trace: ' + String(e.stack).split('\n').slice(1).join('\n').replace(/^/, formatFor(2, a) + '\n'));
  },
  dir: (v, o) => write(1, inspect(v, Object.assign({ customInspect: false, colors: consoleColors(process.stdout) }, o))),
  assert: (c, ...a) => { if (!c) write(2, 'Assertion failed' + (a.length ? ': ' + formatFor(2, a) : '')); },
  count: (label = 'default') => {
    const n = (counts.get(label) || 0) + 1;
    counts.set(label, n);
    write(1, label + ': ' + n);
  },
  countReset: (label = 'default') => {
    if (!counts.has(label)) return process.emitWarning("Count for '" + label + "' does not exist");
    counts.delete(label);
  },
  group: (...a) => {
    if (a.length) console.log(...a);
    groupIndent += '  ';
  },
  groupEnd: () => { groupIndent = groupIndent.slice(0, -2); },
  table: consoleTable,
  time: (label = 'default') => { timersStarted.set(label, native.now()); },
  timeEnd: (label = 'default') => {
    const t = timersStarted.get(label);
    if (t === undefined) return;
    timersStarted.delete(label);
    write(1, label + ': ' + (native.now() - t).toFixed(3) + 'ms');
  },
};
console.groupCollapsed = console.group;

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
// After every macrotask (C++: IsolateThread::AfterCallback) and every
// immediate, as node's processTicksAndRejections: the ticks, then the
// promise jobs, while ticks remain; then the rejections still unhandled, and
// from the top again if there were any.
const runMicrotasks = native.runMicrotasks;
const processRejections = native.processRejections;
hooks.drainTicks = function () {
  do {
    hooks.runTicks();
    if (!runMicrotasks()) return;
  } while (tickHead < tickQueue.length || processRejections());
};

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
  // node's process.exit: the code given becomes process.exitCode, the
  // 'exit' listeners run (once: not again for a process.exit in one of
  // them), and the status is process.exitCode as they leave it.
  exit: (code) => {
    if (code !== undefined) process.exitCode = code;
    emitExitOnce();
    native.exit(Number(process.exitCode) | 0);
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
// node's end of a script that an error nothing handled ends (its
// createOnGlobalUncaughtException): process.exitCode is 1 and the 'exit'
// listeners run with it, before the error is reported; an error in one is
// ignored.
hooks.fatalExit = function () {
  process.exitCode = 1;
  emitExitOnce();
};
// 'exit' is emitted once a thread, whichever way its script ends (node's
// process._exiting): a process.exit() in an 'exit' listener only sets the
// status (it re-emitted 'exit' until the stack overflowed). An error in a
// listener does not stop the exit.
let exitEmitted = false;
function emitExitOnce() {
  if (exitEmitted) return;
  exitEmitted = true;
  try {
    hooks.emitProcess('exit', Number(process.exitCode) | 0);
  } catch (e) {
    // As node's try {} catch {} around its emit.
  }
}
// node's end of a script, with process.exitCode: 'beforeExit' when the
// thread's loop has emptied (its listeners may schedule more work), 'exit'
// when the thread shuts down. A nonzero exitCode is the process's status.
hooks.processEnd = function (ev) {
  if (ev === 'exit') emitExitOnce();
  else hooks.emitProcess(ev, Number(process.exitCode) | 0);
  native.noteExitCode(Number(process.exitCode) | 0);
};

