// Part of the isolate prelude (js/prelude/begin.js): EventEmitter, path, util and assert.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// EventEmitter

class EventEmitter {
  constructor() { this._events = Object.create(null); }
  on(ev, fn) {
    if (!this._events) this._events = Object.create(null);
    (this._events[ev] = this._events[ev] || []).push(fn);
    return this;
  }
  addListener(ev, fn) { return this.on(ev, fn); }
  prependListener(ev, fn) { this.on(ev, fn); const l = this._events[ev]; l.unshift(l.pop()); return this; }
  once(ev, fn) {
    const self = this;
    function w(...a) { self.removeListener(ev, w); return fn.apply(this, a); }
    w.listener = fn;
    return this.on(ev, w);
  }
  removeListener(ev, fn) {
    const l = this._events && this._events[ev];
    if (!l) return this;
    const i = l.findIndex((x) => x === fn || x.listener === fn);
    if (i >= 0) l.splice(i, 1);
    return this;
  }
  off(ev, fn) { return this.removeListener(ev, fn); }
  removeAllListeners(ev) {
    if (ev === undefined) this._events = Object.create(null);
    else if (this._events) delete this._events[ev];
    return this;
  }
  emit(ev, ...args) {
    const l = this._events && this._events[ev];
    if (!l || l.length === 0) {
      if (ev === 'error') throw args[0] instanceof Error ? args[0] : new Error('Unhandled error: ' + inspect(args[0]));
      return false;
    }
    for (const fn of l.slice()) fn.apply(this, args);
    return true;
  }
  listenerCount(ev) { const l = this._events && this._events[ev]; return l ? l.length : 0; }
  listeners(ev) { const l = this._events && this._events[ev]; return l ? l.map((x) => x.listener || x) : []; }
  eventNames() { return this._events ? Object.keys(this._events).filter((k) => this._events[k].length) : []; }
  setMaxListeners() { return this; }
}
EventEmitter.EventEmitter = EventEmitter;

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
};

// ---------------------------------------------------------------------------
// util and assert

function promisify(fn) {
  return function (...args) {
    return new Promise((res, rej) => fn.call(this, ...args, (err, v) => (err ? rej(err) : res(v))));
  };
}
function isDeepStrictEqual(a, b, seen = []) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (seen.some(([x, y]) => x === a && y === b)) return true;
  seen.push([a, b]);
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Map || a instanceof Set) {
    if (a.size !== b.size) return false;
    if (a instanceof Set) return [...a].every((x) => b.has(x));
    for (const [k, v] of a) if (!b.has(k) || !isDeepStrictEqual(v, b.get(k), seen)) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!hasOwn(b, k) || !isDeepStrictEqual(a[k], b[k], seen)) return false;
  return true;
}
const util = { inspect, format, promisify, isDeepStrictEqual, types: {
  isPromise: (p) => p instanceof Promise, isDate: (d) => d instanceof Date, isRegExp: (r) => r instanceof RegExp } };

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
assert.deepEqual = assert.deepStrictEqual;
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
assert.match = (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', () => `The input did not match ${re}: ${inspect(s)}`); };
assert.strict = assert;

