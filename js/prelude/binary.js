// Part of the isolate prelude (js/prelude/begin.js): TextEncoder, TextDecoder and base64
// (Buffer, which uses them, is buffer.js).
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// TextEncoder / TextDecoder / base64

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
