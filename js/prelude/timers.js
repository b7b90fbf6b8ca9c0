// Part of the isolate prelude (js/prelude/begin.js): setTimeout/setInterval/setImmediate over libuv timers.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// Timers (libuv timers owned by C++; callbacks live here, keyed by id)

const timers = new Map();
let nextTimerId = 1;
class Timeout {
  constructor(fn, ms, args, repeat) {
    this._id = nextTimerId++;
    this._fn = fn;
    this._args = args;
    this._repeat = repeat;
    this._ms = ms;
    this._ref = true;
  }
  ref() { if (timers.has(this._id)) native.timerRef(this._id, true); this._ref = true; return this; }
  unref() { if (timers.has(this._id)) native.timerRef(this._id, false); this._ref = false; return this; }
  hasRef() { return this._ref; }
  refresh() { if (timers.has(this._id)) native.timerStart(this._id, this._ms, this._repeat); return this; }
  [Symbol.toPrimitive]() { return this._id; }
}
function toMs(ms) {
  ms = Number(ms);
  return !(ms >= 1 && ms <= 2147483647) ? 1 : Math.floor(ms);
}
function setTimer(fn, ms, args, repeat) {
  if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
  const t = new Timeout(fn, toMs(ms), args, repeat);
  timers.set(t._id, t);
  native.timerStart(t._id, t._ms, repeat);
  return t;
}
function clearTimer(t) {
  if (t == null) return;
  const id = typeof t === 'object' ? t._id : Number(t);
  if (timers.delete(id)) native.timerStop(id);
}
hooks.onTimer = function (id) {
  const t = timers.get(id);
  if (!t) return;
  if (!t._repeat) timers.delete(id);
  t._fn(...t._args);
};

const immediates = [];
class Immediate {
  constructor(fn, args) { this._fn = fn; this._args = args; this._cleared = false; }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
}
function setImmediate(fn, ...args) {
  if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
  const im = new Immediate(fn, args);
  if (immediates.length === 0) native.immediateStart();
  immediates.push(im);
  return im;
}
function clearImmediate(im) { if (im instanceof Immediate) im._cleared = true; }
// Runs the immediates queued before this turn; returns true if more are queued.
hooks.onImmediate = function () {
  const batch = immediates.splice(0, immediates.length);
  for (let i = 0; i < batch.length; i++) {
    const im = batch[i];
    if (im._cleared) continue;
    im._cleared = true;
    try {
      im._fn(...im._args);
    } catch (e) {
      // Keep the rest of the batch for the next turn, like node.
      immediates.unshift(...batch.slice(i + 1));
      throw e;
    } finally {
      // node runs the ticks and the promise jobs after each immediate.
      hooks.drainTicks();
    }
  }
  if (immediates.length === 0) native.immediateStop();
};


// ---------------------------------------------------------------------------
// timers/promises (and util.promisify(setTimeout / setImmediate))

function abortedPromise(signal) {
  const e = new Error('The operation was aborted', { cause: signal.reason });
  e.name = 'AbortError';
  e.code = 'ABORT_ERR';
  return Promise.reject(e);
}

// A promise settled by a timer or an immediate, rejected with an AbortError
// if `signal` aborts first; ref: false lets the thread end while it waits.
function timerPromise(schedule, cancel, value, options) {
  const signal = options && options.signal;
  if (signal && signal.aborted) return abortedPromise(signal);
  return new Promise((resolve, reject) => {
    let onAbort;
    const handle = schedule(() => {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
    if (options && options.ref === false && typeof handle.unref === 'function') handle.unref();
    if (signal) {
      onAbort = () => { cancel(handle); abortedPromise(signal).catch(reject); };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}

const timersPromises = {
  setTimeout: (ms, value, options = {}) =>
    timerPromise((fn) => setTimer(fn, ms, [], false), clearTimer, value, options),
  setImmediate: (value, options = {}) => timerPromise((fn) => setImmediate(fn), clearImmediate, value, options),
  // An async iterator yielding `value` every `ms`; return() stops it.
  setInterval(ms, value, options = {}) {
    const signal = options && options.signal;
    let ticks = 0;
    let wake = null;
    let done = false;
    const timer = setTimer(() => {
      ticks++;
      if (wake) { const w = wake; wake = null; w(); }
    }, ms, [], true);
    if (options && options.ref === false) timer.unref();
    const stop = () => { done = true; clearTimer(timer); if (wake) { const w = wake; wake = null; w(); } };
    if (signal) signal.addEventListener('abort', stop, { once: true });
    return {
      async next() {
        if (signal && signal.aborted) { stop(); return abortedPromise(signal); }
        if (done) return { value: undefined, done: true };
        if (ticks === 0) await new Promise((r) => { wake = r; });
        if (signal && signal.aborted) return abortedPromise(signal);
        if (done) return { value: undefined, done: true };
        ticks--;
        return { value, done: false };
      },
      async return() { stop(); return { value: undefined, done: true }; },
      [Symbol.asyncIterator]() { return this; },
    };
  },
  scheduler: {
    wait: (ms, options) => timersPromises.setTimeout(ms, undefined, options),
    yield: () => timersPromises.setImmediate(),
  },
};
