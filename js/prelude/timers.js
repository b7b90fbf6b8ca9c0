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
      hooks.runTicks();
    }
  }
  if (immediates.length === 0) native.immediateStop();
};

