// Part of the isolate prelude (js/prelude/begin.js): node's `crypto` module
// for what scripts and npm packages mostly ask of it (hashes, HMACs, random
// bytes and UUIDs), over OpenSSL (js/bindings_crypto.cc), and the web's
// `crypto.getRandomValues` / `randomUUID` global. No ciphers, keys or
// subtle. A fragment, not a module.

// ---------------------------------------------------------------------------
// crypto

const crypto = (() => {
  const toBytes = (data, enc) => {
    if (typeof data === 'string') return Buffer.from(data, enc || 'utf8');
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    throw new TypeError('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  };
  const asBuffer = (u8) => new Buffer(u8.buffer, u8.byteOffset, u8.length);

  class Hash {
    constructor(algorithm, key) {
      this._algorithm = String(algorithm).toLowerCase();
      if (!native.cryptoHasDigest(this._algorithm)) throw new Error('Digest method not supported');
      this._key = key;
      this._chunks = [];
      this._finished = false;
    }
    update(data, encoding) {
      if (this._finished) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
      // Copied: the caller may reuse its buffer before digest().
      this._chunks.push(Uint8Array.from(toBytes(data, encoding)));
      return this;
    }
    digest(encoding) {
      if (this._finished) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
      this._finished = true;
      const out = asBuffer(native.cryptoDigest(this._algorithm, this._chunks, this._key));
      this._chunks = [];
      return encoding ? out.toString(encoding) : out;
    }
    copy() {
      const h = new Hash(this._algorithm, this._key);
      h._chunks = this._chunks.slice();
      return h;
    }
  }

  function randomBytes(size, callback) {
    if (!Number.isInteger(size) || size < 0) throw new RangeError('The "size" argument must be a non-negative integer');
    const buf = Buffer.alloc(size);
    native.cryptoRandomFill(buf);
    if (typeof callback === 'function') { setImmediate(() => callback(null, buf)); return undefined; }
    return buf;
  }
  // node's randomFillSync(buf[, offset[, size]]) and randomFill(buf[,
  // offset[, size]], callback): fill part of a Buffer, TypedArray, DataView
  // or ArrayBuffer in place (uuid and nanoid fill their pools this way).
  // offset and size count the view's elements, as in node.
  function fillRange(buf, offset, size) {
    if (!ArrayBuffer.isView(buf) && !(buf instanceof ArrayBuffer)) {
      throw new TypeError('The "buf" argument must be an instance of ArrayBuffer or ArrayBufferView.');
    }
    const whole = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    const unit = buf.BYTES_PER_ELEMENT || 1;
    const outOfRange = (name, v, max) => Object.assign(new RangeError(
      'The value of "' + name + '" is out of range. It must be >= 0 && <= ' + max + '. Received ' + v), { code: 'ERR_OUT_OF_RANGE' });
    const start = (offset === undefined ? 0 : offset) * unit;
    if (!Number.isInteger(start) || start < 0 || start > whole.length) throw outOfRange('offset', offset, whole.length);
    const count = size === undefined ? whole.length - start : size * unit;
    if (!Number.isInteger(count) || count < 0 || start + count > whole.length) throw outOfRange('size + offset', count + start, whole.length);
    native.cryptoRandomFill(whole.subarray(start, start + count));
    return buf;
  }
  function randomFillSync(buf, offset, size) {
    return fillRange(buf, offset, size);
  }
  function randomFill(buf, offset, size, callback) {
    if (typeof offset === 'function') { callback = offset; offset = undefined; size = undefined; }
    else if (typeof size === 'function') { callback = size; size = undefined; }
    if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
    fillRange(buf, offset, size);
    setImmediate(() => callback(null, buf));
  }
  function getRandomValues(view) {
    if (!ArrayBuffer.isView(view) || view instanceof Float32Array || view instanceof Float64Array) {
      throw new TypeError('The data argument must be an integer-type TypedArray');
    }
    if (view.byteLength > 65536) throw new RangeError('The ArrayBufferView\'s byte length exceeds 65536');
    native.cryptoRandomFill(view);
    return view;
  }
  function randomUUID() {
    const b = randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toString('hex');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }
  function randomInt(min, max, callback) {
    if (max === undefined || typeof max === 'function') { callback = max; max = min; min = 0; }
    const range = max - min;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || range <= 0 || range > 2 ** 48) {
      throw new RangeError('The "max" argument must be greater than "min" and the range at most 2^48');
    }
    // Rejection sampling over 48 random bits: no modulo bias.
    const limit = 2 ** 48 - (2 ** 48 % range);
    let x;
    do { x = parseInt(randomBytes(6).toString('hex'), 16); } while (x >= limit);
    const n = min + (x % range);
    if (typeof callback === 'function') { setImmediate(() => callback(null, n)); return undefined; }
    return n;
  }
  function timingSafeEqual(a, b) {
    const x = toBytes(a), y = toBytes(b);
    if (x.length !== y.length) throw new RangeError('Input buffers must have the same byte length');
    let d = 0;
    for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i];
    return d === 0;
  }

  const webcrypto = { getRandomValues, randomUUID };
  return {
    createHash: (algorithm) => new Hash(algorithm),
    createHmac: (algorithm, key) => new Hash(algorithm, Uint8Array.from(toBytes(key))),
    getHashes: () => ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'],
    randomBytes,
    randomFillSync,
    randomFill,
    randomUUID,
    randomInt,
    getRandomValues,
    timingSafeEqual,
    webcrypto,
  };
})();
