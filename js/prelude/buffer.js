// Part of the isolate prelude (js/prelude/begin.js): node's Buffer (and the
// buffer module), a Uint8Array subclass.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// Encodings

// node's canonical name of an encoding, or undefined if node has none.
function normalizeBufferEncoding(enc) {
  if (enc === undefined || enc === null) return 'utf8';
  switch (String(enc).toLowerCase()) {
    case 'utf8': case 'utf-8': return 'utf8';
    case 'ucs2': case 'ucs-2': case 'utf16le': case 'utf-16le': return 'utf16le';
    case 'latin1': case 'binary': return 'latin1';
    case 'ascii': return 'ascii';
    case 'hex': return 'hex';
    case 'base64': return 'base64';
    case 'base64url': return 'base64url';
  }
  return undefined;
}
function bufferEncodingOrThrow(enc) {
  const e = normalizeBufferEncoding(enc);
  if (e === undefined) {
    const err = new TypeError('Unknown encoding: ' + enc);
    err.code = 'ERR_UNKNOWN_ENCODING';
    throw err;
  }
  return e;
}

// A string's bytes in an encoding (a Uint8Array).
function encodeString(str, enc) {
  switch (enc) {
    case 'utf8': return native.utf8Encode(str);
    case 'base64': case 'base64url': return Uint8Array.from(base64Decode(str));
    case 'hex': {
      // node stops at the first pair that is not hex.
      const out = new Uint8Array(str.length >> 1);
      let n = 0;
      for (; n < out.length; n++) {
        const byte = parseInt(str.substr(2 * n, 2), 16);
        if (!/^[0-9a-fA-F]{2}$/.test(str.substr(2 * n, 2)) || Number.isNaN(byte)) break;
        out[n] = byte;
      }
      return out.subarray(0, n);
    }
    case 'latin1': case 'ascii': {
      const out = new Uint8Array(str.length);
      for (let i = 0; i < str.length; i++) out[i] = str.charCodeAt(i) & 255;
      return out;
    }
    case 'utf16le': {
      const out = new Uint8Array(str.length * 2);
      for (let i = 0; i < str.length; i++) {
        const c = str.charCodeAt(i);
        out[2 * i] = c & 255;
        out[2 * i + 1] = c >> 8;
      }
      return out;
    }
  }
  throw new TypeError('Unknown encoding: ' + enc);
}

// Bytes as a string in an encoding.
function decodeBytes(view, enc) {
  switch (enc) {
    case 'utf8': return native.utf8Decode(view, false);
    case 'hex': {
      let s = '';
      for (let i = 0; i < view.length; i++) s += (view[i] < 16 ? '0' : '') + view[i].toString(16);
      return s;
    }
    case 'base64': return base64Encode(view);
    case 'base64url': return base64Encode(view).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    case 'latin1': case 'ascii': {
      let s = '';
      for (let i = 0; i < view.length; i += 8192) {
        const chunk = view.subarray(i, i + 8192);
        s += String.fromCharCode.apply(null, enc === 'ascii' ? chunk.map((x) => x & 127) : chunk);
      }
      return s;
    }
    case 'utf16le': {
      let s = '';
      for (let i = 0; i + 1 < view.length; i += 2) s += String.fromCharCode(view[i] | (view[i + 1] << 8));
      return s;
    }
  }
  throw new TypeError('Unknown encoding: ' + enc);
}

function outOfRange(name, range, value) {
  const e = new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${inspect(value)}`);
  e.code = 'ERR_OUT_OF_RANGE';
  return e;
}
// Throws node's errors for a read or write of `size` bytes at `offset`.
function checkBufferOffset(buf, offset, size) {
  if (typeof offset !== 'number') {
    const e = new TypeError('The "offset" argument must be of type number. Received ' + inspect(offset));
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  if (!Number.isInteger(offset)) throw outOfRange('offset', 'an integer', offset);
  if (buf.length - size < 0) {
    const e = new RangeError('Attempt to access memory outside buffer bounds');
    e.code = 'ERR_BUFFER_OUT_OF_BOUNDS';
    throw e;
  }
  if (offset < 0 || offset > buf.length - size) throw outOfRange('offset', `>= 0 and <= ${buf.length - size}`, offset);
}
function checkIntValue(value, min, max, name = 'value') {
  if (typeof value === 'bigint' ? (value < min || value > max) : !(value >= min && value <= max)) {
    const range = typeof min === 'bigint' ? `>= ${min}n and <= ${max}n` : `>= ${min} and <= ${max}`;
    throw outOfRange(name, range, value);
  }
}

function bytesOf(value, enc) {
  if (typeof value === 'string') return encodeString(value, bufferEncodingOrThrow(enc));
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

// ---------------------------------------------------------------------------
// Buffer

class Buffer extends Uint8Array {
  static from(v, encOrOffset, length) {
    if (typeof v === 'string') {
      const u = encodeString(v, bufferEncodingOrThrow(encOrOffset));
      return new Buffer(u.buffer, u.byteOffset, u.length);
    }
    // An ArrayBuffer is shared, not copied.
    if (v instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && v instanceof SharedArrayBuffer)) {
      const offset = encOrOffset === undefined ? 0 : Number(encOrOffset) || 0;
      if (offset > v.byteLength) throw outOfRange('offset', `<= ${v.byteLength}`, offset);
      return new Buffer(v, offset, length === undefined ? v.byteLength - offset : length);
    }
    if (ArrayBuffer.isView(v)) {
      const b = new Buffer(v.byteLength);
      b.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      return b;
    }
    if (v !== null && typeof v === 'object') {
      if (v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data);
      if (Array.isArray(v) || typeof v.length === 'number') {
        const b = new Buffer(v.length);
        for (let i = 0; i < v.length; i++) b[i] = v[i] & 255;
        return b;
      }
      const prim = typeof v[Symbol.toPrimitive] === 'function' ? v[Symbol.toPrimitive]('string') : v.valueOf();
      if (prim !== v && prim !== null && prim !== undefined) return Buffer.from(prim, encOrOffset, length);
    }
    const e = new TypeError('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object. Received ' + inspect(v));
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  static alloc(size, fill, encoding) {
    checkSize(size);
    const b = new Buffer(size);
    if (fill !== undefined && fill !== 0 && size > 0) b.fill(fill, 0, size, encoding);
    return b;
  }
  static allocUnsafe(size) { checkSize(size); return new Buffer(size); }
  static allocUnsafeSlow(size) { checkSize(size); return new Buffer(size); }
  static isBuffer(b) { return b instanceof Buffer; }
  static isEncoding(enc) { return typeof enc === 'string' && enc !== '' && normalizeBufferEncoding(enc) !== undefined; }
  static byteLength(s, enc) {
    if (typeof s !== 'string') {
      if (ArrayBuffer.isView(s) || s instanceof ArrayBuffer) return s.byteLength;
      const e = new TypeError('The "string" argument must be of type string or an instance of Buffer or ArrayBuffer. Received ' + inspect(s));
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    const e = normalizeBufferEncoding(enc) || 'utf8';
    if (e === 'utf16le') return s.length * 2;
    if (e === 'latin1' || e === 'ascii') return s.length;
    return encodeString(s, e).length;
  }
  static concat(list, total) {
    if (!Array.isArray(list)) throw new TypeError('The "list" argument must be an instance of Array');
    if (total === undefined) total = list.reduce((n, b) => n + b.length, 0);
    const out = Buffer.alloc(total);
    let off = 0;
    for (const b of list) {
      if (!(b instanceof Uint8Array)) throw new TypeError('The "list" argument must contain only Buffer or Uint8Array instances');
      if (off >= total) break;
      out.set(b.subarray(0, total - off), off);
      off += b.length;
    }
    return out;
  }
  static compare(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length === b.length ? 0 : (a.length < b.length ? -1 : 1);
  }

  toString(enc = 'utf8', start = 0, end = this.length) {
    start = Math.max(0, start | 0);
    end = end === undefined ? this.length : Math.min(this.length, end | 0);
    if (end <= start) return '';
    return decodeBytes(this.subarray(start, end), bufferEncodingOrThrow(enc));
  }
  toLocaleString(enc, start, end) { return this.toString(enc, start, end); }
  toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
  equals(o) {
    if (!(o instanceof Uint8Array)) throw new TypeError('The "otherBuffer" argument must be an instance of Buffer or Uint8Array');
    return Buffer.compare(this, o) === 0;
  }
  compare(target, targetStart = 0, targetEnd = target.length, sourceStart = 0, sourceEnd = this.length) {
    return Buffer.compare(this.subarray(sourceStart, sourceEnd), target.subarray(targetStart, targetEnd));
  }
  // node's slice shares memory, unlike Uint8Array's.
  slice(s, e) { return this.subarray(s, e); }
  copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
    if (sourceEnd > this.length) sourceEnd = this.length;
    if (targetStart >= target.length || sourceStart >= sourceEnd) return 0;
    const n = Math.min(sourceEnd - sourceStart, target.length - targetStart);
    target.set(this.subarray(sourceStart, sourceStart + n), targetStart);
    return n;
  }
  // write(string[, offset[, length]][, encoding]) -> bytes written; a
  // character that does not fit whole is not written (UTF-8).
  write(str, offset, length, encoding) {
    if (typeof offset === 'string') { encoding = offset; offset = 0; length = undefined; }
    else if (typeof length === 'string') { encoding = length; length = undefined; }
    offset = offset === undefined ? 0 : offset;
    if (offset < 0 || offset > this.length) throw outOfRange('offset', `>= 0 && <= ${this.length}`, offset);
    const room = Math.min(this.length - offset, length === undefined ? Infinity : length);
    const enc = bufferEncodingOrThrow(encoding);
    let bytes = encodeString(String(str), enc);
    if (bytes.length > room) {
      let n = room;
      if (enc === 'utf8') while (n > 0 && (bytes[n] & 0xc0) === 0x80) n--;
      if (enc === 'utf16le') n -= n % 2;
      bytes = bytes.subarray(0, n);
    }
    this.set(bytes, offset);
    return bytes.length;
  }
  fill(value, offset = 0, end = this.length, encoding = undefined) {
    if (typeof offset === 'string') { encoding = offset; offset = 0; end = this.length; }
    else if (typeof end === 'string') { encoding = end; end = this.length; }
    if (offset < 0 || end > this.length) throw outOfRange(offset < 0 ? 'offset' : 'end', '>= 0 and <= ' + this.length, offset < 0 ? offset : end);
    if (typeof value === 'number' || typeof value === 'boolean') {
      Uint8Array.prototype.fill.call(this, Number(value) & 255, offset, end);
      return this;
    }
    const pattern = bytesOf(value, encoding);
    if (pattern === null || pattern.length === 0) {
      if (typeof value === 'string' && value.length > 0) throw new TypeError('The argument \'value\' is invalid. Received ' + inspect(value));
      Uint8Array.prototype.fill.call(this, 0, offset, end);
      return this;
    }
    for (let i = offset; i < end; i += pattern.length) this.set(pattern.subarray(0, Math.min(pattern.length, end - i)), i);
    return this;
  }
  indexOf(value, byteOffset = 0, encoding = undefined) { return bufferIndexOf(this, value, byteOffset, encoding, false); }
  lastIndexOf(value, byteOffset = undefined, encoding = undefined) { return bufferIndexOf(this, value, byteOffset, encoding, true); }
  includes(value, byteOffset = 0, encoding = undefined) { return this.indexOf(value, byteOffset, encoding) !== -1; }
  swap16() { return swapBytes(this, 2); }
  swap32() { return swapBytes(this, 4); }
  swap64() { return swapBytes(this, 8); }
  _view() { return new DataView(this.buffer, this.byteOffset, this.byteLength); }

  readUIntLE(offset, n) { checkBufferOffset(this, offset, n); let v = 0; for (let i = n - 1; i >= 0; i--) v = v * 256 + this[offset + i]; return v; }
  readUIntBE(offset, n) { checkBufferOffset(this, offset, n); let v = 0; for (let i = 0; i < n; i++) v = v * 256 + this[offset + i]; return v; }
  readIntLE(offset, n) { const v = this.readUIntLE(offset, n); return v >= 2 ** (8 * n - 1) ? v - 2 ** (8 * n) : v; }
  readIntBE(offset, n) { const v = this.readUIntBE(offset, n); return v >= 2 ** (8 * n - 1) ? v - 2 ** (8 * n) : v; }
  writeUIntLE(value, offset, n) {
    checkBufferOffset(this, offset, n);
    checkIntValue(value, 0, 2 ** (8 * n) - 1);
    for (let i = 0; i < n; i++) { this[offset + i] = value & 255; value = Math.floor(value / 256); }
    return offset + n;
  }
  writeUIntBE(value, offset, n) {
    checkBufferOffset(this, offset, n);
    checkIntValue(value, 0, 2 ** (8 * n) - 1);
    for (let i = n - 1; i >= 0; i--) { this[offset + i] = value & 255; value = Math.floor(value / 256); }
    return offset + n;
  }
  writeIntLE(value, offset, n) {
    checkIntValue(value, -(2 ** (8 * n - 1)), 2 ** (8 * n - 1) - 1);
    checkBufferOffset(this, offset, n);
    return this.writeUIntLE(value < 0 ? value + 2 ** (8 * n) : value, offset, n);
  }
  writeIntBE(value, offset, n) {
    checkIntValue(value, -(2 ** (8 * n - 1)), 2 ** (8 * n - 1) - 1);
    checkBufferOffset(this, offset, n);
    return this.writeUIntBE(value < 0 ? value + 2 ** (8 * n) : value, offset, n);
  }
}
Object.defineProperty(Buffer.prototype, Symbol.toStringTag, { value: undefined });
Buffer.poolSize = 8192;

function checkSize(size) {
  if (typeof size !== 'number') {
    const e = new TypeError('The "size" argument must be of type number. Received ' + inspect(size));
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  if (!(size >= 0 && size <= kBufferMaxLength)) throw outOfRange('size', `>= 0 && <= ${kBufferMaxLength}`, size);
}
const kBufferMaxLength = 2 ** 32;

// The fixed-width reads and writes (readUInt32LE, writeDoubleBE, ...) over a
// DataView, with node's aliases (readUint32LE).
const kFixedWidth = [
  ['UInt8', 1, 'Uint8', 0, 255], ['Int8', 1, 'Int8', -128, 127],
  ['UInt16', 2, 'Uint16', 0, 0xffff], ['Int16', 2, 'Int16', -0x8000, 0x7fff],
  ['UInt32', 4, 'Uint32', 0, 0xffffffff], ['Int32', 4, 'Int32', -0x80000000, 0x7fffffff],
  ['BigUInt64', 8, 'BigUint64', 0n, 2n ** 64n - 1n], ['BigInt64', 8, 'BigInt64', -(2n ** 63n), 2n ** 63n - 1n],
  ['Float', 4, 'Float32'], ['Double', 8, 'Float64'],
];
for (const [name, size, view, min, max] of kFixedWidth) {
  const endians = size === 1 ? [''] : ['LE', 'BE'];
  for (const endian of endians) {
    const little = endian === 'LE';
    const read = function (offset = 0) {
      checkBufferOffset(this, offset, size);
      return this._view()['get' + view](offset, little);
    };
    const write = function (value, offset = 0) {
      if (min !== undefined) {
        if (typeof min === 'bigint' && typeof value !== 'bigint') {
          throw new TypeError('Cannot mix BigInt and other types, use explicit conversions');
        }
        checkIntValue(value, min, max);
      }
      checkBufferOffset(this, offset, size);
      this._view()['set' + view](offset, value, little);
      return offset + size;
    };
    for (const spelling of new Set([name, name.replace('UInt', 'Uint')])) {
      Buffer.prototype['read' + spelling + endian] = read;
      Buffer.prototype['write' + spelling + endian] = write;
    }
  }
}
for (const spelling of ['UIntLE', 'UIntBE', 'IntLE', 'IntBE']) {
  if (spelling.startsWith('UInt')) {
    Buffer.prototype['readUint' + spelling.slice(4)] = Buffer.prototype['read' + spelling];
    Buffer.prototype['writeUint' + spelling.slice(4)] = Buffer.prototype['write' + spelling];
  }
}

function swapBytes(buf, size) {
  if (buf.length % size !== 0) {
    const e = new RangeError(`Buffer size must be a multiple of ${size * 8}-bits`);
    e.code = 'ERR_INVALID_BUFFER_SIZE';
    throw e;
  }
  for (let i = 0; i < buf.length; i += size) {
    for (let a = i, b = i + size - 1; a < b; a++, b--) {
      const t = buf[a];
      buf[a] = buf[b];
      buf[b] = t;
    }
  }
  return buf;
}

// indexOf / lastIndexOf of a byte, a string or a byte sequence; a negative
// offset counts from the end.
function bufferIndexOf(buf, value, byteOffset, encoding, last) {
  if (typeof byteOffset === 'string') { encoding = byteOffset; byteOffset = undefined; }
  let from = byteOffset === undefined || byteOffset === null || Number.isNaN(Number(byteOffset))
    ? (last ? buf.length : 0) : Math.trunc(Number(byteOffset));
  if (from < 0) from += buf.length;
  if (typeof value === 'number') {
    const byte = value & 255;
    if (last) {
      for (let i = Math.min(from, buf.length - 1); i >= 0; i--) if (buf[i] === byte) return i;
    } else {
      for (let i = Math.max(from, 0); i < buf.length; i++) if (buf[i] === byte) return i;
    }
    return -1;
  }
  const needle = bytesOf(value, encoding);
  if (needle === null) {
    const e = new TypeError('The "value" argument must be one of type number or string or an instance of Buffer or Uint8Array. Received ' + inspect(value));
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  if (needle.length === 0) return last ? Math.min(Math.max(from, 0), buf.length) : Math.min(Math.max(from, 0), buf.length);
  const matchesAt = (i) => {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) return false;
    return true;
  };
  if (last) {
    for (let i = Math.min(from, buf.length - needle.length); i >= 0; i--) if (matchesAt(i)) return i;
  } else {
    for (let i = Math.max(from, 0); i <= buf.length - needle.length; i++) if (matchesAt(i)) return i;
  }
  return -1;
}

const bufferModule = {
  Buffer,
  constants: { MAX_LENGTH: kBufferMaxLength, MAX_STRING_LENGTH: (1 << 29) - 24 },
  kMaxLength: kBufferMaxLength,
  kStringMaxLength: (1 << 29) - 24,
  isUtf8: (input) => native.utf8Decode(bytesOf(input) || new Uint8Array(input), true) !== null,
};
