// Part of the isolate prelude (js/prelude/begin.js): the web platform's
// DOMException, Event, CustomEvent, EventTarget, AbortController/AbortSignal
// and structuredClone, as node provides them as globals.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// DOMException

const kDomExceptionCodes = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
  SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
  TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
  QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};
class DOMException extends Error {
  constructor(message = '', options = 'Error') {
    super(String(message));
    let name = options;
    if (options !== null && typeof options === 'object') {
      name = 'name' in options ? options.name : 'Error';
      if ('cause' in options) Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
    }
    Object.defineProperty(this, 'name', { value: String(name), writable: true, configurable: true });
  }
  get code() { return kDomExceptionCodes[this.name] || 0; }
}

// ---------------------------------------------------------------------------
// Event and EventTarget (no DOM tree: dispatch reaches the target only)

class Event {
  constructor(type, options = {}) {
    if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
    this._type = String(type);
    this._cancelable = Boolean(options && options.cancelable);
    this._bubbles = Boolean(options && options.bubbles);
    this._composed = Boolean(options && options.composed);
    this._defaultPrevented = false;
    this._stop = false;
    this._target = null;
    this._current = null;
    this._timeStamp = native.now();
  }
  get type() { return this._type; }
  get target() { return this._target; }
  get currentTarget() { return this._current; }
  get srcElement() { return this._target; }
  get cancelable() { return this._cancelable; }
  get bubbles() { return this._bubbles; }
  get composed() { return this._composed; }
  get defaultPrevented() { return this._cancelable && this._defaultPrevented; }
  get returnValue() { return !this.defaultPrevented; }
  get timeStamp() { return this._timeStamp; }
  get isTrusted() { return false; }
  get eventPhase() { return this._current ? Event.AT_TARGET : Event.NONE; }
  get cancelBubble() { return this._stop; }
  set cancelBubble(v) { if (v) this._stop = true; }
  composedPath() { return this._current ? [this._current] : []; }
  preventDefault() { this._defaultPrevented = true; }
  stopPropagation() {}
  stopImmediatePropagation() { this._stop = true; }
  get [Symbol.toStringTag]() { return 'Event'; }
}
Object.assign(Event, { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 });

class CustomEvent extends Event {
  constructor(type, options = {}) {
    super(type, options);
    this._detail = options && options.detail !== undefined ? options.detail : null;
  }
  get detail() { return this._detail; }
  get [Symbol.toStringTag]() { return 'CustomEvent'; }
}

const kTargetListeners = Symbol('listeners');
function eventTargetListeners(target, type) {
  const l = target[kTargetListeners] && target[kTargetListeners].get(type);
  return l ? l.map((r) => r.listener) : [];
}
class EventTarget {
  constructor() { this[kTargetListeners] = new Map(); }
  addEventListener(type, listener, options = {}) {
    if (listener === null || listener === undefined) return;
    const o = typeof options === 'boolean' ? { capture: options } : (options || {});
    const signal = o.signal;
    if (signal && signal.aborted) return;
    const capture = Boolean(o.capture);
    let list = this[kTargetListeners].get(type);
    if (!list) this[kTargetListeners].set(type, (list = []));
    // The same listener with the same capture flag is registered once.
    if (list.some((r) => r.listener === listener && r.capture === capture)) return;
    const record = { listener, capture, once: Boolean(o.once), removed: false };
    list.push(record);
    if (signal) signal.addEventListener('abort', () => this.removeEventListener(type, listener, { capture }), { once: true });
  }
  removeEventListener(type, listener, options = {}) {
    const capture = typeof options === 'boolean' ? options : Boolean(options && options.capture);
    const list = this[kTargetListeners].get(type);
    if (!list) return;
    const i = list.findIndex((r) => r.listener === listener && r.capture === capture);
    if (i >= 0) {
      list[i].removed = true;
      list.splice(i, 1);
    }
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError('The "event" argument must be an instance of Event. Received ' + inspect(event));
    if (event._current) throw new DOMException('The event is already being dispatched', 'InvalidStateError');
    event._target = this;
    event._current = this;
    event._stop = false;
    const list = this[kTargetListeners].get(event.type);
    // Listeners added during dispatch wait for the next event; a listener
    // that throws is reported as uncaught, and the others still run.
    for (const r of list ? list.slice() : []) {
      if (r.removed) continue;
      if (r.once) this.removeEventListener(event.type, r.listener, { capture: r.capture });
      try {
        if (typeof r.listener === 'function') r.listener.call(this, event);
        else if (r.listener && typeof r.listener.handleEvent === 'function') r.listener.handleEvent(event);
      } catch (e) {
        nextTick(() => { throw e; });
      }
      if (event._stop) break;
    }
    event._current = null;
    return !event.defaultPrevented;
  }
  get [Symbol.toStringTag]() { return 'EventTarget'; }
}

// ---------------------------------------------------------------------------
// AbortController and AbortSignal

class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== kAbortSignalKey) throw new TypeError('Illegal constructor');
    super();
    this._aborted = false;
    this._reason = undefined;
    this.onabort = null;
  }
  get aborted() { return this._aborted; }
  get reason() { return this._reason; }
  throwIfAborted() { if (this._aborted) throw this._reason; }
  _abort(reason) {
    if (this._aborted) return;
    this._aborted = true;
    this._reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const event = new Event('abort');
    if (typeof this.onabort === 'function') {
      try { this.onabort.call(this, event); } catch (e) { nextTick(() => { throw e; }); }
    }
    this.dispatchEvent(event);
  }
  static abort(reason) {
    const s = new AbortSignal(kAbortSignalKey);
    s._abort(reason);
    return s;
  }
  // Aborts with a TimeoutError after `ms`; the timer does not keep the
  // thread alive.
  static timeout(ms) {
    if (typeof ms !== 'number' || !(ms >= 0)) throw new RangeError('The value of "delay" is out of range. Received ' + inspect(ms));
    const s = new AbortSignal(kAbortSignalKey);
    setTimer(() => s._abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms, [], false).unref();
    return s;
  }
  // Aborts when the first of `signals` does, with its reason.
  static any(signals) {
    const s = new AbortSignal(kAbortSignalKey);
    for (const other of signals) {
      if (other.aborted) { s._abort(other.reason); return s; }
    }
    for (const other of signals) other.addEventListener('abort', () => s._abort(other.reason), { once: true });
    return s;
  }
  get [Symbol.toStringTag]() { return 'AbortSignal'; }
}
const kAbortSignalKey = Symbol('AbortSignal');

class AbortController {
  constructor() { this._signal = new AbortSignal(kAbortSignalKey); }
  get signal() { return this._signal; }
  abort(reason) { this._signal._abort(reason); }
  get [Symbol.toStringTag]() { return 'AbortController'; }
}

// ---------------------------------------------------------------------------
// structuredClone (V8's serializer: the HTML structured clone algorithm)

function structuredClone(value, options = undefined) {
  if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
  const transfer = options && options.transfer !== undefined ? Array.from(options.transfer) : [];
  for (const t of transfer) {
    if (!(t instanceof ArrayBuffer)) throw new DOMException('Value not transferable', 'DataCloneError');
  }
  let copy;
  try {
    copy = native.structuredClone(value);
  } catch (e) {
    // The serializer's own refusals (a function, a symbol, a host object)
    // become DataCloneError; an error thrown by a getter passes through.
    if (e && e.name === 'DataCloneError' && !(e instanceof DOMException)) throw new DOMException(e.message, 'DataCloneError');
    throw e;
  }
  // The copy has its own bytes; a transferred buffer is then detached.
  for (const t of transfer) native.detachArrayBuffer(t);
  return copy;
}
