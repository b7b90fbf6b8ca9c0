// Part of the isolate prelude (js/prelude/begin.js): node's string_decoder module.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// string_decoder: bytes arriving in pieces decoded without splitting a
// character (UTF-8, UTF-16LE) or a base64 group across two writes.

function normalizeDecoderEncoding(enc) {
  const e = String(enc === undefined || enc === null ? 'utf8' : enc).toLowerCase();
  switch (e) {
    case 'utf8': case 'utf-8': return 'utf8';
    case 'ucs2': case 'ucs-2': case 'utf16le': case 'utf-16le': return 'utf16le';
    case 'latin1': case 'binary': return 'latin1';
    case 'base64': case 'base64url': case 'hex': case 'ascii': return e;
  }
  throw new TypeError('Unknown encoding: ' + enc);
}

// How many bytes at the end of `b` start a UTF-8 sequence that is not
// complete yet (0 if the end is whole or invalid, which decodes as U+FFFD).
function utf8IncompleteTail(b) {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const byte = b[b.length - back];
    if ((byte & 0xc0) === 0x80) continue;  // a continuation byte: look further back
    const need = byte >= 0xf0 && byte <= 0xf4 ? 4 : (byte >= 0xe0 ? 3 : (byte >= 0xc2 && byte < 0xe0 ? 2 : 1));
    return need > back ? back : 0;
  }
  return 0;
}

class StringDecoder {
  constructor(encoding) {
    this.encoding = normalizeDecoderEncoding(encoding);
    this._pending = new Uint8Array(0);
  }
  write(buf) {
    if (typeof buf === 'string') return buf;
    let bytes = buf instanceof Uint8Array ? buf : new Uint8Array(buf.buffer || buf, buf.byteOffset || 0, buf.byteLength);
    if (this._pending.length) {
      const joined = new Uint8Array(this._pending.length + bytes.length);
      joined.set(this._pending);
      joined.set(bytes, this._pending.length);
      bytes = joined;
    }
    let keep = 0;
    if (this.encoding === 'utf8') keep = utf8IncompleteTail(bytes);
    else if (this.encoding === 'utf16le') {
      keep = bytes.length % 2;
      // A high surrogate waits for its pair.
      if (keep === 0 && bytes.length >= 2 && (bytes[bytes.length - 1] & 0xfc) === 0xd8) keep = 2;
    } else if (this.encoding === 'base64' || this.encoding === 'base64url') keep = bytes.length % 3;
    this._pending = bytes.slice(bytes.length - keep);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length - keep).toString(this.encoding);
  }
  // The rest: an incomplete character decodes as U+FFFD (UTF-8), a lone
  // byte as what the encoding makes of it.
  end(buf) {
    let out = buf === undefined ? '' : this.write(buf);
    if (this._pending.length) {
      const rest = this._pending;
      this._pending = new Uint8Array(0);
      out += this.encoding === 'utf8' ? '\ufffd' : Buffer.from(rest).toString(this.encoding);
    }
    return out;
  }
}
