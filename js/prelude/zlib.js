// Part of the isolate prelude (js/prelude/begin.js): node's zlib module,
// whole buffers at a time (no streams), over native.zlib*
// (js/bindings_zlib.cc): *Sync forms, callback forms run on libuv's thread
// pool (util.promisify makes promise forms of them), crc32 and constants.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// zlib

const zlibConstants = Object.freeze({
  Z_NO_FLUSH: 0, Z_PARTIAL_FLUSH: 1, Z_SYNC_FLUSH: 2, Z_FULL_FLUSH: 3, Z_FINISH: 4, Z_BLOCK: 5,
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3,
  Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1,
  Z_FILTERED: 1, Z_HUFFMAN_ONLY: 2, Z_RLE: 3, Z_FIXED: 4, Z_DEFAULT_STRATEGY: 0, ZLIB_VERNUM: 4784,
  DEFLATE: 1, INFLATE: 2, GZIP: 3, GUNZIP: 4, DEFLATERAW: 5, INFLATERAW: 6, UNZIP: 7,
  Z_MIN_WINDOWBITS: 8, Z_MAX_WINDOWBITS: 15, Z_DEFAULT_WINDOWBITS: 15,
  Z_MIN_CHUNK: 64, Z_MAX_CHUNK: Infinity, Z_DEFAULT_CHUNK: 16384,
  Z_MIN_MEMLEVEL: 1, Z_MAX_MEMLEVEL: 9, Z_DEFAULT_MEMLEVEL: 8,
  Z_MIN_LEVEL: -1, Z_MAX_LEVEL: 9, Z_DEFAULT_LEVEL: -1,
});

function zlibInput(buffer) {
  if (typeof buffer === 'string') return native.utf8Encode(buffer);
  if (ArrayBuffer.isView(buffer)) return buffer;
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  const e = new TypeError('The "buffer" argument must be of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer. Received ' + inspect(buffer));
  e.code = 'ERR_INVALID_ARG_TYPE';
  throw e;
}

// The options as native arguments, range-checked as node checks them.
function zlibArgs(mode, options = {}) {
  const pick = (name, min, max, dflt) => {
    const v = options && options[name];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !(v >= min && v <= max)) {
      const e = new RangeError(`The value of "options.${name}" is out of range. It must be >= ${min} and <= ${max}. Received ${inspect(v)}`);
      e.code = 'ERR_OUT_OF_RANGE';
      throw e;
    }
    return v;
  };
  return [mode, pick('level', -1, 9, -1), pick('windowBits', 8, 15, 15), pick('memLevel', 1, 9, 8), pick('strategy', 0, 4, 0)];
}

function toZlibBuffer(bytes) { return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength); }

class ZlibCall {
  constructor(input, args, callback) {
    this.callback = callback;
    this.id = nextFeedId++;
    feeds.set(this.id, this);
    native.zlibAsync(this.id, input, ...args);
  }
  _poll() {
    const r = native.zlibResult(this.id);
    if (r === undefined) return;
    feeds.delete(this.id);
    if (r instanceof Error) this.callback(r);
    else this.callback(null, toZlibBuffer(r));
  }
  cancel() {}
}

const zlib = { constants: zlibConstants, crc32: (data, value = 0) => native.zlibCrc32(zlibInput(data), value) };
for (const [name, mode] of [['deflate', 1], ['inflate', 2], ['gzip', 3], ['gunzip', 4], ['deflateRaw', 5], ['inflateRaw', 6], ['unzip', 7]]) {
  zlib[name + 'Sync'] = (buffer, options) => toZlibBuffer(native.zlibSync(zlibInput(buffer), ...zlibArgs(mode, options)));
  zlib[name] = (buffer, options, callback) => {
    if (typeof options === 'function') { callback = options; options = {}; }
    if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
    new ZlibCall(zlibInput(buffer), zlibArgs(mode, options), callback);
  };
}
