// Part of the isolate prelude (js/prelude/begin.js): TextEncoder, TextDecoder and Buffer.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// TextEncoder / TextDecoder / Buffer

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(s = '') { return native.utf8Encode(String(s)); }
  encodeInto(s, dest) {
    const bytes = native.utf8Encode(String(s));
    const n = Math.min(bytes.length, dest.length);
    dest.set(bytes.subarray(0, n));
    return { read: s.length, written: n };
  }
}
class TextDecoder {
  constructor(label = 'utf-8', options = {}) {
    const l = String(label).toLowerCase();
    if (l !== 'utf-8' && l !== 'utf8') throw new RangeError('The "' + label + '" encoding is not supported');
    this.fatal = !!options.fatal;
    this.ignoreBOM = !!options.ignoreBOM;
  }
  get encoding() { return 'utf-8'; }
  decode(input) {
    if (input === undefined) return '';
    let u8;
    if (input instanceof Uint8Array) u8 = input;
    else if (ArrayBuffer.isView(input)) u8 = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    else if (input instanceof ArrayBuffer) u8 = new Uint8Array(input);
    else throw new TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
    let s = native.utf8Decode(u8, this.fatal);
    if (s === null) throw new TypeError('The encoded data was not valid for encoding utf-8');
    if (!this.ignoreBOM && s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    return s;
  }
}

const kB64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64Encode(u8) {
  let out = '';
  let i = 0;
  for (; i + 2 < u8.length; i += 3) {
    const n = (u8[i] << 16) | (u8[i + 1] << 8) | u8[i + 2];
    out += kB64[n >> 18] + kB64[(n >> 12) & 63] + kB64[(n >> 6) & 63] + kB64[n & 63];
  }
  if (i < u8.length) {
    const n = (u8[i] << 16) | ((i + 1 < u8.length ? u8[i + 1] : 0) << 8);
    out += kB64[n >> 18] + kB64[(n >> 12) & 63] + (i + 1 < u8.length ? kB64[(n >> 6) & 63] : '=') + '=';
  }
  return out;
}
function base64Decode(s) {
  s = String(s).replace(/[^A-Za-z0-9+/\-_]/g, '');
  const bytes = [];
  let acc = 0;
  let bits = 0;
  for (const ch of s) {
    let v = kB64.indexOf(ch);
    if (ch === '-') v = 62;
    else if (ch === '_') v = 63;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((acc >> bits) & 255);
    }
  }
  return bytes;
}

// Buffer: a Uint8Array subclass with node's most used methods.
class Buffer extends Uint8Array {
  static from(v, encOrOffset, length) {
    if (typeof v === 'string') {
      const enc = (encOrOffset || 'utf8').toLowerCase();
      if (enc === 'utf8' || enc === 'utf-8') {
        const u = native.utf8Encode(v);
        return new Buffer(u.buffer, u.byteOffset, u.length);
      }
      if (enc === 'base64' || enc === 'base64url') return Buffer.from(base64Decode(v));
      if (enc === 'hex') {
        const b = new Buffer(v.length >> 1);
        for (let i = 0; i < b.length; i++) b[i] = parseInt(v.substr(i * 2, 2), 16);
        return b;
      }
      if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') {
        const b = new Buffer(v.length);
        for (let i = 0; i < v.length; i++) b[i] = v.charCodeAt(i) & 255;
        return b;
      }
      throw new TypeError('Unknown encoding: ' + encOrOffset);
    }
    if (v instanceof ArrayBuffer) return new Buffer(v, encOrOffset || 0, length === undefined ? v.byteLength - (encOrOffset || 0) : length);
    if (ArrayBuffer.isView(v)) {
      const b = new Buffer(v.byteLength);
      b.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      return b;
    }
    if (Array.isArray(v) || (v && typeof v.length === 'number')) {
      const b = new Buffer(v.length);
      for (let i = 0; i < v.length; i++) b[i] = v[i] & 255;
      return b;
    }
    throw new TypeError('The first argument must be a string, Buffer, ArrayBuffer, Array, or array-like object');
  }
  static alloc(n, fill) {
    const b = new Buffer(n);
    if (fill !== undefined) b.fill(typeof fill === 'string' ? fill.charCodeAt(0) : fill);
    return b;
  }
  static allocUnsafe(n) { return new Buffer(n); }
  static isBuffer(b) { return b instanceof Buffer; }
  static byteLength(s, enc) {
    if (typeof s !== 'string') return s.byteLength;
    return Buffer.from(s, enc).length;
  }
  static concat(list, total) {
    if (total === undefined) total = list.reduce((n, b) => n + b.length, 0);
    const out = Buffer.alloc(total);
    let off = 0;
    for (const b of list) {
      if (off >= total) break;
      out.set(b.subarray(0, total - off), off);
      off += b.length;
    }
    return out;
  }
  toString(enc = 'utf8', start = 0, end = this.length) {
    const view = this.subarray(start, end);
    enc = String(enc).toLowerCase();
    if (enc === 'utf8' || enc === 'utf-8') return native.utf8Decode(view, false);
    if (enc === 'hex') return Array.from(view, (x) => x.toString(16).padStart(2, '0')).join('');
    if (enc === 'base64') return base64Encode(view);
    if (enc === 'base64url') return base64Encode(view).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') {
      let s = '';
      for (const x of view) s += String.fromCharCode(enc === 'ascii' ? x & 127 : x);
      return s;
    }
    throw new TypeError('Unknown encoding: ' + enc);
  }
  toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
  equals(o) { return Buffer.compare(this, o) === 0; }
  static compare(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length === b.length ? 0 : (a.length < b.length ? -1 : 1);
  }
  slice(s, e) { return this.subarray(s, e); }
  write(str, offset = 0) {
    const b = native.utf8Encode(String(str));
    const n = Math.min(b.length, this.length - offset);
    this.set(b.subarray(0, n), offset);
    return n;
  }
}
Object.defineProperty(Buffer.prototype, Symbol.toStringTag, { value: undefined });

