// Part of the isolate prelude (js/prelude/begin.js): EventEmitter (with events.once/on), path and assert.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// EventEmitter

const kErrorMonitor = Symbol('events.errorMonitor');
// A function, not a class, so that pre-class code can call it on an object
// it is building (EventEmitter.call(this), util.inherits), as node's allows:
// readable-stream, through and many older npm packages do. It keeps the
// listeners an object already has, as node's init does.
function EventEmitter(opts) {
  if (!this._events || this._events === Object.getPrototypeOf(this)._events) this._events = Object.create(null);
  this._maxListeners = this._maxListeners || undefined;
}
class EventEmitterMethods {
  _add(ev, fn, prepend) {
    if (typeof fn !== 'function') throw new TypeError('The "listener" argument must be of type function');
    if (!this._events) this._events = Object.create(null);
    if (this._events.newListener) this.emit('newListener', ev, fn.listener || fn);
    const l = (this._events[ev] = this._events[ev] || []);
    if (prepend) l.unshift(fn); else l.push(fn);
    return this;
  }
  on(ev, fn) { return this._add(ev, fn, false); }
  addListener(ev, fn) { return this._add(ev, fn, false); }
  prependListener(ev, fn) { return this._add(ev, fn, true); }
  _onceWrapper(ev, fn) {
    const self = this;
    function w(...a) { self.removeListener(ev, w); return fn.apply(this, a); }
    w.listener = fn;
    return w;
  }
  once(ev, fn) {
    if (typeof fn !== 'function') throw new TypeError('The "listener" argument must be of type function');
    // Through this.on, as node's: a subclass's on (stream.Readable's starts
    // reading for 'data' and 'readable') sees once-listeners too.
    this.on(ev, this._onceWrapper(ev, fn));
    return this;
  }
  prependOnceListener(ev, fn) {
    if (typeof fn !== 'function') throw new TypeError('The "listener" argument must be of type function');
    this.prependListener(ev, this._onceWrapper(ev, fn));
    return this;
  }
  removeListener(ev, fn) {
    const l = this._events && this._events[ev];
    if (!l) return this;
    // The last registration goes first, as in node.
    let i = l.length - 1;
    while (i >= 0 && l[i] !== fn && l[i].listener !== fn) i--;
    if (i >= 0) {
      l.splice(i, 1);
      if (l.length === 0) delete this._events[ev];
      if (this._events.removeListener) this.emit('removeListener', ev, fn);
    }
    return this;
  }
  off(ev, fn) { return this.removeListener(ev, fn); }
  removeAllListeners(ev) {
    if (ev === undefined) this._events = Object.create(null);
    else if (this._events) delete this._events[ev];
    return this;
  }
  emit(ev, ...args) {
    if (ev === 'error' && this._events && this._events[kErrorMonitor]) {
      for (const fn of this._events[kErrorMonitor].slice()) fn.apply(this, args);
    }
    const l = this._events && this._events[ev];
    if (!l || l.length === 0) {
      if (ev === 'error') throw args[0] instanceof Error ? args[0] : new Error('Unhandled error. (' + inspect(args[0]) + ')');
      return false;
    }
    for (const fn of l.slice()) fn.apply(this, args);
    return true;
  }
  listenerCount(ev) { const l = this._events && this._events[ev]; return l ? l.length : 0; }
  listeners(ev) { const l = this._events && this._events[ev]; return l ? l.map((x) => x.listener || x) : []; }
  rawListeners(ev) { const l = this._events && this._events[ev]; return l ? l.slice() : []; }
  eventNames() { return this._events ? Reflect.ownKeys(this._events).filter((k) => this._events[k].length) : []; }
  // Listener counts are not limited here, so the limit only answers back.
  setMaxListeners(n) {
    if (typeof n !== 'number' || n < 0 || Number.isNaN(n)) throw new RangeError('The value of "n" is out of range. It must be a non-negative number. Received ' + inspect(n));
    this._maxListeners = n;
    return this;
  }
  getMaxListeners() { return this._maxListeners === undefined ? EventEmitter.defaultMaxListeners : this._maxListeners; }
}
EventEmitter.prototype = EventEmitterMethods.prototype;
Object.defineProperty(EventEmitter.prototype, 'constructor', { value: EventEmitter, writable: true, configurable: true });
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.defaultMaxListeners = 10;
EventEmitter.errorMonitor = kErrorMonitor;
EventEmitter.setMaxListeners = (n = EventEmitter.defaultMaxListeners, ...targets) => {
  if (targets.length === 0) EventEmitter.defaultMaxListeners = n;
  for (const t of targets) if (typeof t.setMaxListeners === 'function') t.setMaxListeners(n);
};
// The listeners of an EventEmitter or an EventTarget (web_events.js).
EventEmitter.getEventListeners = (target, ev) =>
  typeof target.listeners === 'function' ? target.listeners(ev) : eventTargetListeners(target, ev);

function abortErrorFor(signal) {
  const e = new Error('The operation was aborted', { cause: signal && signal.reason });
  e.name = 'AbortError';
  e.code = 'ABORT_ERR';
  return e;
}

// events.once(emitter, name[, {signal}]): a promise of the arguments of the
// next `name` event; an 'error' event (of an EventEmitter) rejects it. An
// async function, as node's is: its promise settles two microtasks after the
// event.
EventEmitter.once = async function (emitter, name, options = {}) {
  const signal = options && options.signal;
  if (signal && signal.aborted) throw abortErrorFor(signal);
  return new Promise((resolve, reject) => {
    const isTarget = typeof emitter.addEventListener === 'function' && typeof emitter.on !== 'function';
    let onAbort;
    const cleanup = () => {
      if (isTarget) emitter.removeEventListener(name, onEvent);
      else {
        emitter.removeListener(name, onEvent);
        if (name !== 'error') emitter.removeListener('error', onError);
      }
      if (signal) signal.removeEventListener('abort', onAbort);
    };
    function onEvent(...args) { cleanup(); resolve(args); }
    function onError(err) { cleanup(); reject(err); }
    onAbort = () => { cleanup(); reject(abortErrorFor(signal)); };
    if (isTarget) emitter.addEventListener(name, onEvent, { once: true });
    else {
      emitter.on(name, onEvent);
      if (name !== 'error') emitter.on('error', onError);
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
};

// events.on(emitter, name[, {signal}]): an async iterator of the argument
// arrays of every `name` event, ended by return(), failed by 'error'.
EventEmitter.on = function (emitter, name, options = {}) {
  const signal = options && options.signal;
  if (signal && signal.aborted) throw abortErrorFor(signal);
  const queued = [];
  const waiting = [];
  let failure = null;
  let finished = false;
  const onEvent = (...args) => {
    if (waiting.length) waiting.shift().resolve({ value: args, done: false });
    else queued.push(args);
  };
  const stop = () => {
    finished = true;
    emitter.removeListener(name, onEvent);
    emitter.removeListener('error', onError);
    if (signal) signal.removeEventListener('abort', onAbort);
  };
  const fail = (err) => {
    stop();
    if (waiting.length) waiting.shift().reject(err);
    else failure = err;
    while (waiting.length) waiting.shift().resolve({ value: undefined, done: true });
  };
  function onError(err) { fail(err); }
  function onAbort() { fail(abortErrorFor(signal)); }
  emitter.on(name, onEvent);
  if (name !== 'error') emitter.on('error', onError);
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  return {
    next() {
      if (queued.length) return Promise.resolve({ value: queued.shift(), done: false });
      if (failure) { const e = failure; failure = null; return Promise.reject(e); }
      if (finished) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      stop();
      while (waiting.length) waiting.shift().resolve({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(err) { fail(err); return Promise.reject(err); },
    [Symbol.asyncIterator]() { return this; },
  };
};

// ---------------------------------------------------------------------------
// path (POSIX)

function normalizeParts(parts, absolute) {
  const out = [];
  for (const p of parts) {
    if (!p || p === '.') continue;
    if (p === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
    } else {
      out.push(p);
    }
  }
  return out;
}
const path = {
  sep: '/',
  delimiter: ':',
  normalize(p) {
    const abs = p.startsWith('/');
    const s = normalizeParts(p.split('/'), abs).join('/');
    return (abs ? '/' : '') + (s || (abs ? '' : '.')) + (p.endsWith('/') && s ? '/' : '');
  },
  join(...ps) { const j = ps.filter((x) => x !== '').join('/'); return j ? path.normalize(j) : '.'; },
  resolve(...ps) {
    let r = '';
    for (let i = ps.length - 1; i >= 0 && !r.startsWith('/'); i--) r = ps[i] + (r ? '/' + r : '');
    if (!r.startsWith('/')) r = native.cwd() + '/' + r;
    return '/' + normalizeParts(r.split('/'), true).join('/');
  },
  isAbsolute: (p) => p.startsWith('/'),
  dirname(p) {
    const i = p.replace(/\/+$/, '').lastIndexOf('/');
    return i < 0 ? '.' : (i === 0 ? '/' : p.slice(0, i));
  },
  basename(p, ext) {
    let b = p.replace(/\/+$/, '');
    b = b.slice(b.lastIndexOf('/') + 1);
    if (ext && b.endsWith(ext) && b !== ext) b = b.slice(0, -ext.length);
    return b;
  },
  extname(p) {
    const b = path.basename(p);
    const i = b.lastIndexOf('.');
    return i <= 0 ? '' : b.slice(i);
  },
  relative(from, to) {
    const a = path.resolve(from).split('/').filter(Boolean);
    const b = path.resolve(to).split('/').filter(Boolean);
    let common = 0;
    while (common < a.length && common < b.length && a[common] === b[common]) common++;
    return a.slice(common).map(() => '..').concat(b.slice(common)).join('/');
  },
  parse(p) {
    const root = p.startsWith('/') ? '/' : '';
    const trimmed = p.replace(/\/+$/, '');
    if (trimmed === '') return { root, dir: root, base: '', ext: '', name: '' };
    const base = path.basename(trimmed);
    const ext = path.extname(base);
    const slash = trimmed.lastIndexOf('/');
    const dir = slash < 0 ? '' : (slash === 0 ? '/' : trimmed.slice(0, slash));
    return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
  },
  format(o) {
    const dir = o.dir || o.root || '';
    const base = o.base || ((o.name || '') + (o.ext ? (o.ext.startsWith('.') ? '' : '.') + o.ext : ''));
    if (!dir) return base;
    return dir === o.root ? dir + base : dir + '/' + base;
  },
  toNamespacedPath: (p) => p,
};
path.posix = path;

// ---------------------------------------------------------------------------
// assert (and the deep equality util shares)

// Deep equality, strict (Object.is for primitives, prototypes must match:
// util.isDeepStrictEqual, assert.deepStrictEqual) or assert's legacy loose
// kind (primitives compared with ==, prototypes ignored).
function isDeepEqual(a, b, strict, seen) {
  if (strict ? Object.is(a, b) : (a === b || (a !== a && b !== b))) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return !strict && (typeof a !== 'object' || a === null) && (typeof b !== 'object' || b === null) && a == b;
  }
  if (strict ? Object.getPrototypeOf(a) !== Object.getPrototypeOf(b) : Array.isArray(a) !== Array.isArray(b)) return false;
  if (seen.some(([x, y]) => x === a && y === b)) return true;
  seen.push([a, b]);
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Map || a instanceof Set) {
    if (!(b instanceof Map || b instanceof Set) || a.size !== b.size) return false;
    if (a instanceof Set) return [...a].every((x) => b.has(x));
    for (const [k, v] of a) if (!b.has(k) || !isDeepEqual(v, b.get(k), strict, seen)) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!hasOwn(b, k) || !isDeepEqual(a[k], b[k], strict, seen)) return false;
  return true;
}
const isDeepStrictEqual = (a, b) => isDeepEqual(a, b, true, []);
const isDeepLooseEqual = (a, b) => isDeepEqual(a, b, false, []);

class AssertionError extends Error {
  constructor(opts) {
    super(opts.message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
    this.actual = opts.actual;
    this.expected = opts.expected;
    this.operator = opts.operator;
  }
}
function fail(actual, expected, message, operator, defaultMsg) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message: message || defaultMsg(), actual, expected, operator });
}
function assert(v, message) {
  if (!v) fail(v, true, message, '==', () => 'The expression evaluated to a falsy value:\n\n  assert(' + inspect(v) + ')\n');
}
assert.ok = assert;
assert.AssertionError = AssertionError;
assert.fail = (message = 'Failed') => fail(undefined, undefined, message, 'fail', () => 'Failed');
assert.equal = (a, b, m) => { if (!(a == b)) fail(a, b, m, '==', () => `${inspect(a)} == ${inspect(b)}`); };
assert.notEqual = (a, b, m) => { if (a == b) fail(a, b, m, '!=', () => `${inspect(a)} != ${inspect(b)}`); };
assert.strictEqual = (a, b, m) => {
  if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', () => `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}\n`);
};
assert.notStrictEqual = (a, b, m) => {
  if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', () => `Expected "actual" to be strictly unequal to: ${inspect(b)}`);
};
assert.deepStrictEqual = (a, b, m) => {
  if (!isDeepStrictEqual(a, b)) fail(a, b, m, 'deepStrictEqual', () => `Expected values to be strictly deep-equal:\n+ actual - expected\n\n+ ${inspect(a)}\n- ${inspect(b)}\n`);
};
assert.deepEqual = (a, b, m) => {
  if (!isDeepLooseEqual(a, b)) fail(a, b, m, 'deepEqual', () => `Expected values to be loosely deep-equal:\n\n${inspect(a)}\n\nshould loosely deep-equal\n\n${inspect(b)}`);
};
assert.notDeepEqual = (a, b, m) => {
  if (isDeepLooseEqual(a, b)) fail(a, b, m, 'notDeepEqual', () => `"actual" deepEqual "expected"`);
};
assert.notDeepStrictEqual = (a, b, m) => {
  if (isDeepStrictEqual(a, b)) fail(a, b, m, 'notDeepStrictEqual', () => `Expected "actual" not to be strictly deep-equal to: ${inspect(b)}`);
};
function matchesError(e, expected) {
  if (expected === undefined) return true;
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && e instanceof expected) return true;
    if (Error.isPrototypeOf(expected) || expected === Error) return false;
    return expected(e) === true;
  }
  if (expected instanceof RegExp) return expected.test(String(e && e.message !== undefined ? e.message : e));
  if (typeof expected === 'object') {
    for (const k of Object.keys(expected)) {
      const ev = expected[k];
      if (ev instanceof RegExp ? !ev.test(e[k]) : !isDeepStrictEqual(e[k], ev)) return false;
    }
    return true;
  }
  return true;
}
assert.throws = (fn, expected, m) => {
  try { fn(); } catch (e) {
    if (!matchesError(e, expected)) fail(e, expected, m, 'throws', () => 'The error did not match: ' + inspect(e));
    return;
  }
  fail(undefined, expected, m, 'throws', () => 'Missing expected exception.');
};
assert.doesNotThrow = (fn, m) => {
  try { fn(); } catch (e) { fail(e, undefined, m, 'doesNotThrow', () => 'Got unwanted exception: ' + inspect(e)); }
};
assert.rejects = async (p, expected, m) => {
  try { await (typeof p === 'function' ? p() : p); } catch (e) {
    if (!matchesError(e, expected)) fail(e, expected, m, 'rejects', () => 'The rejection did not match: ' + inspect(e));
    return;
  }
  fail(undefined, expected, m, 'rejects', () => 'Missing expected rejection.');
};
assert.doesNotReject = async (p, m) => {
  try { await (typeof p === 'function' ? p() : p); } catch (e) {
    fail(e, undefined, m, 'doesNotReject', () => 'Got unwanted rejection: ' + inspect(e));
  }
};
assert.match = (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', () => `The input did not match the regular expression ${re}. Input:\n\n${inspect(s)}\n`); };
assert.doesNotMatch = (s, re, m) => {
  if (re.test(s)) fail(s, re, m, 'doesNotMatch', () => `The input was expected to not match the regular expression ${re}. Input:\n\n${inspect(s)}\n`);
};
assert.ifError = (v) => {
  if (v === null || v === undefined) return;
  const what = v !== null && typeof v === 'object' && typeof v.message === 'string'
    ? (v.message === '' && v.constructor ? v.constructor.name : v.message) : inspect(v);
  throw new AssertionError({ message: 'ifError got unwanted exception: ' + what, actual: v, expected: null, operator: 'ifError' });
};
// assert/strict: the same functions with the loose ones made strict.
const assertStrict = (v, message) => assert(v, message);
Object.assign(assertStrict, assert, {
  equal: assert.strictEqual, notEqual: assert.notStrictEqual,
  deepEqual: assert.deepStrictEqual, notDeepEqual: assert.notDeepStrictEqual,
});
assertStrict.strict = assertStrict;
assert.strict = assertStrict;

