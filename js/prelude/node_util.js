// Part of the isolate prelude (js/prelude/begin.js): node's util module.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// util

const kCustomPromisify = Symbol.for('nodejs.util.promisify.custom');

// A function taking a node-style callback as a promise-returning one; a
// function's own promise form (fn[util.promisify.custom]) wins, as
// setTimeout's does.
function promisify(original) {
  if (typeof original !== 'function') throw new TypeError('The "original" argument must be of type function');
  const custom = original[kCustomPromisify];
  if (custom !== undefined) {
    if (typeof custom !== 'function') throw new TypeError('The "util.promisify.custom" argument must be of type function');
    return custom;
  }
  function promisified(...args) {
    return new Promise((resolve, reject) => {
      Reflect.apply(original, this, args.concat((err, value) => (err ? reject(err) : resolve(value))));
    });
  }
  Object.setPrototypeOf(promisified, Object.getPrototypeOf(original));
  Object.defineProperty(promisified, kCustomPromisify, { value: promisified, configurable: true });
  return Object.defineProperties(promisified, Object.getOwnPropertyDescriptors(original));
}
promisify.custom = kCustomPromisify;

// The reverse: an async function as one taking a callback last. A promise
// rejected with a falsy value gets node's ERR_FALSY_VALUE_REJECTION.
function callbackify(original) {
  if (typeof original !== 'function') throw new TypeError('The "original" argument must be of type function');
  function callbackified(...args) {
    const callback = args.pop();
    if (typeof callback !== 'function') throw new TypeError('The last argument must be of type function');
    Reflect.apply(original, this, args).then(
      (value) => nextTick(callback, null, value),
      (reason) => {
        if (!reason) {
          const e = new Error('Promise was rejected with falsy value');
          e.code = 'ERR_FALSY_VALUE_REJECTION';
          e.reason = reason;
          reason = e;
        }
        nextTick(callback, reason);
      });
  }
  Object.defineProperties(callbackified, Object.getOwnPropertyDescriptors(original));
  return callbackified;
}

function inherits(ctor, superCtor) {
  if (typeof ctor !== 'function') throw new TypeError('The "ctor" argument must be of type function');
  if (typeof superCtor !== 'function' || superCtor.prototype === undefined) {
    throw new TypeError('The "superCtor.prototype" property must be of type object');
  }
  Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}

// Warns once per code (or per function without one) on first call.
const warnedDeprecations = new Set();
function deprecate(fn, message, code) {
  let warned = false;
  function deprecated(...args) {
    if (!warned && !(code !== undefined && warnedDeprecations.has(code))) {
      warned = true;
      if (code !== undefined) warnedDeprecations.add(code);
      process.emitWarning(message, 'DeprecationWarning', code);
    }
    return new.target ? Reflect.construct(fn, args, new.target) : Reflect.apply(fn, this, args);
  }
  Object.setPrototypeOf(deprecated, fn);
  if (fn.prototype) deprecated.prototype = fn.prototype;
  return deprecated;
}

// util.debuglog(section): prints to stderr when NODE_DEBUG names the
// section (comma separated, `*` as a wildcard, any case).
function debuglog(section, onEnabled) {
  const wanted = String(native.env.NODE_DEBUG || '').split(/[\s,]+/).filter(Boolean).some((p) => {
    const re = new RegExp('^' + p.replace(/[|\\{}()[\]^$+?.]/g, '\\$&').replace(/\*/g, '.*') + '$', 'i');
    return re.test(section);
  });
  const tag = String(section).toUpperCase() + ' ' + native.pid + ': ';
  const log = wanted ? (...args) => native.print(2, tag + format(...args) + '\n') : () => {};
  Object.defineProperty(log, 'enabled', { value: wanted });
  if (onEnabled) onEnabled(log);
  return log;
}

// ANSI escape sequences (colours, cursor moves) out of a string.
const kAnsiPattern = /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g;
function stripVTControlCharacters(s) {
  if (typeof s !== 'string') throw new TypeError('The "str" argument must be of type string');
  return s.replace(kAnsiPattern, '');
}

const tagOf = (v) => ObjectToString.call(v).slice(8, -1);
// The element type of a typed array ('Uint8Array', ...), read with the
// intrinsic getter, which Buffer's own toStringTag does not hide.
const typedArrayTagGetter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
const typedArrayTag = (v) => typedArrayTagGetter.call(v);
const utilTypes = {
  isPromise: (v) => tagOf(v) === 'Promise',
  isDate: (v) => tagOf(v) === 'Date',
  isRegExp: (v) => tagOf(v) === 'RegExp',
  isMap: (v) => tagOf(v) === 'Map',
  isSet: (v) => tagOf(v) === 'Set',
  isWeakMap: (v) => tagOf(v) === 'WeakMap',
  isWeakSet: (v) => tagOf(v) === 'WeakSet',
  isNativeError: (v) => tagOf(v) === 'Error',
  isAsyncFunction: (v) => typeof v === 'function' && (tagOf(v) === 'AsyncFunction' || tagOf(v) === 'AsyncGeneratorFunction'),
  isGeneratorFunction: (v) => typeof v === 'function' && (tagOf(v) === 'GeneratorFunction' || tagOf(v) === 'AsyncGeneratorFunction'),
  isGeneratorObject: (v) => tagOf(v) === 'Generator',
  isArrayBuffer: (v) => tagOf(v) === 'ArrayBuffer',
  isSharedArrayBuffer: (v) => tagOf(v) === 'SharedArrayBuffer',
  isAnyArrayBuffer: (v) => tagOf(v) === 'ArrayBuffer' || tagOf(v) === 'SharedArrayBuffer',
  isArrayBufferView: (v) => ArrayBuffer.isView(v),
  isDataView: (v) => tagOf(v) === 'DataView',
  isTypedArray: (v) => typedArrayTag(v) !== undefined,
  isUint8Array: (v) => typedArrayTag(v) === 'Uint8Array',
  isFloat64Array: (v) => typedArrayTag(v) === 'Float64Array',
  isBoxedPrimitive: (v) => v instanceof Number || v instanceof String || v instanceof Boolean ||
    v instanceof BigInt || v instanceof Symbol,
  isSymbolObject: (v) => typeof v === 'object' && v instanceof Symbol,
  isProxy: (v) => native.isProxy(v),
};

const util = {
  inspect, format, formatWithOptions, promisify, callbackify, inherits, deprecate, debuglog,
  debug: debuglog, isDeepStrictEqual, stripVTControlCharacters, types: utilTypes,
  TextEncoder, TextDecoder,
  isArray: Array.isArray,
  toUSVString: (s) => String(s).toWellFormed ? String(s).toWellFormed()
    : String(s).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'),
};
