// Part of the isolate prelude (js/prelude/begin.js): plain documents
// encoded to the engine's stored form in JS, for bulkDocs.
//
// The engine stores a document's body as compact JSON. The other ways to it
// walk the objects through the V8 API (js/doc_split.h: several API calls
// per property, a key array allocated per object) or through JSON.stringify
// (one huge heap string, then a parse). This walk runs as JIT-compiled JS,
// where reading a property costs a few nanoseconds, and writes each body
// into one reused byte buffer, byte for byte what the engine's parsers write
// for JSON.stringify's text (members in order, json::AppendQuoted's escapes,
// safe integers as digits). Numbers that are not safe integers are written
// as the byte 0x01 (never found raw in JSON text, whose control characters
// are escaped) with their values in `nums`, in order: the engine prints
// them with its own dtoa (js/doc_split.h, BuildEncodedDocs).
//
// It takes exactly what js/doc_split.h's SplitPlainDocs takes (plain
// objects and arrays, no toJSON on their prototypes, no cycles, nesting at
// most 500, strings without lone surrogates, finite numbers; at the top
// level a string _id, a string _rev and a boolean _deleted) and answers -1
// for anything else, having written nothing the engine will see; the caller
// then takes SplitPlainDocs and the JSON paths, which give the rest its exact
// treatment. A getter of a document so declined runs again there. (Unlike
// SplitPlainDocs it also takes proxies, read through their traps, which
// JSON.stringify would read as for-in does.)
const docEncoder = (() => {
  const OP = Object.prototype;
  const AP = Array.prototype;
  const getProto = Object.getPrototypeOf;
  const isArray = Array.isArray;
  const isSafeInteger = Number.isSafeInteger;
  const HEX = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 65, 66, 67, 68, 69, 70];
  // A buffer grown past this is let go after the call, so one huge bulkDocs
  // does not keep its size held by the isolate for good.
  const kKeepBytes = 64 << 20;
  const kMaxDepth = 500;
  let buf = new Uint8Array(1 << 16);
  let nums = new Float64Array(64);
  let nnum = 0;
  let meta = new Int32Array(192);  // per document: body start, body end, flags
  const strs = [];                 // per document: _id, _rev (or undefined)
  const stack = [];                // the containers being written (cycles)

  // Doubles the buffer until `need` more bytes fit after `p`; returns it.
  function grow(p, need) {
    let cap = buf.length * 2;
    while (cap < p + need) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(buf.subarray(0, p));
    buf = nb;
    return nb;
  }

  // Each writer takes the end `p` and returns the new end, or -1.
  function str(s, p) {
    const n = s.length;
    let b = buf;
    if (p + 6 * n + 2 > b.length) b = grow(p, 6 * n + 2);  // \u00XX is six bytes
    b[p++] = 34;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 34 && c !== 92) {
          b[p++] = c;
          continue;
        }
        b[p++] = 92;
        switch (c) {
          case 34: b[p++] = 34; break;
          case 92: b[p++] = 92; break;
          case 8: b[p++] = 98; break;
          case 9: b[p++] = 116; break;
          case 10: b[p++] = 110; break;
          case 12: b[p++] = 102; break;
          case 13: b[p++] = 114; break;
          default:
            b[p++] = 117; b[p++] = 48; b[p++] = 48; b[p++] = HEX[c >> 4]; b[p++] = HEX[c & 15];
        }
      } else if (c < 0x800) {
        b[p++] = 0xC0 | (c >> 6);
        b[p++] = 0x80 | (c & 0x3F);
      } else if (c < 0xD800 || c > 0xDFFF) {
        b[p++] = 0xE0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 0x3F);
        b[p++] = 0x80 | (c & 0x3F);
      } else {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c > 0xDBFF || d < 0xDC00 || d > 0xDFFF) return -1;  // a lone surrogate
        const u = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
        ++i;
        b[p++] = 0xF0 | (u >> 18);
        b[p++] = 0x80 | ((u >> 12) & 0x3F);
        b[p++] = 0x80 | ((u >> 6) & 0x3F);
        b[p++] = 0x80 | (u & 0x3F);
      }
    }
    b[p++] = 34;
    return p;
  }

  function num(x, p) {
    let b = buf;
    if (p + 24 > b.length) b = grow(p, 24);
    if (isSafeInteger(x)) {
      if (x < 0) {
        b[p++] = 45;
        x = -x;
      }
      if (x < 10) {
        b[p++] = 48 + x;  // -0 too: JSON.stringify writes it as 0
        return p;
      }
      const s = '' + x;
      for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
      return p;
    }
    if (x !== x || x === Infinity || x === -Infinity) return -1;
    // Integers from 2^53 up to 1e21 the parsers read as 64-bit integers or
    // not, depending on JS's digits: declined, as SplitPlainDocs does.
    if (x === Math.trunc(x) && Math.abs(x) < 1e21) return -1;
    if (nnum === nums.length) {
      const nn = new Float64Array(nnum * 2);
      nn.set(nums);
      nums = nn;
    }
    nums[nnum++] = x;
    b[p++] = 1;
    return p;
  }

  function value(v, p, depth) {
    switch (typeof v) {
      case 'string':
        return str(v, p);
      case 'number':
        return num(v, p);
      case 'boolean': {
        let b = buf;
        if (p + 5 > b.length) b = grow(p, 5);
        if (v) {
          b[p] = 116; b[p + 1] = 114; b[p + 2] = 117; b[p + 3] = 101;
          return p + 4;
        }
        b[p] = 102; b[p + 1] = 97; b[p + 2] = 108; b[p + 3] = 115; b[p + 4] = 101;
        return p + 5;
      }
      case 'object': {
        if (v === null) {
          let b = buf;
          if (p + 4 > b.length) b = grow(p, 4);
          b[p] = 110; b[p + 1] = 117; b[p + 2] = 108; b[p + 3] = 108;
          return p + 4;
        }
        if (depth > kMaxDepth) return -1;
        for (let i = 0; i < stack.length; i++) if (stack[i] === v) return -1;  // a cycle
        return isArray(v) ? array(v, p, depth) : object(v, p, depth);
      }
    }
    return -1;  // undefined, functions, symbols, BigInts
  }

  function array(v, p, depth) {
    if (getProto(v) !== AP) return -1;
    stack.push(v);
    if (p + 1 > buf.length) grow(p, 1);
    buf[p++] = 91;
    const n = v.length;
    for (let i = 0; i < n; i++) {
      if (i) {
        if (p + 1 > buf.length) grow(p, 1);
        buf[p++] = 44;
      }
      p = value(v[i], p, depth + 1);
      if (p < 0) return -1;
    }
    if (p + 1 > buf.length) grow(p, 1);
    buf[p++] = 93;
    stack.pop();
    return p;
  }

  // for-in sees own enumerable string keys in JSON.stringify's order, and
  // nothing inherited: encode() checks that Object.prototype has no
  // enumerable properties.
  function object(v, p, depth) {
    if (getProto(v) !== OP) return -1;
    stack.push(v);
    if (p + 1 > buf.length) grow(p, 1);
    buf[p++] = 123;
    let first = true;
    for (const k in v) {
      if (!first) {
        if (p + 1 > buf.length) grow(p, 1);
        buf[p++] = 44;
      }
      first = false;
      p = str(k, p);
      if (p < 0) return -1;
      if (p + 1 > buf.length) grow(p, 1);
      buf[p++] = 58;
      p = value(v[k], p, depth + 1);
      if (p < 0) return -1;
    }
    if (p + 1 > buf.length) grow(p, 1);
    buf[p++] = 125;
    stack.pop();
    return p;
  }

  // A document: its body from `p`, its special members into meta and strs.
  function doc(d, p, i) {
    if (typeof d !== 'object' || d === null || isArray(d) || getProto(d) !== OP) return -1;
    stack.length = 0;
    stack.push(d);
    if (p + 1 > buf.length) grow(p, 1);
    const start = p;
    buf[p++] = 123;
    let id;
    let rev;
    let flags = 0;
    for (const k in d) {
      const v = d[k];
      if (k.charCodeAt(0) === 95) {  // '_': the engine's special members
        if (k === '_id' && typeof v === 'string') {
          id = v;
          continue;
        }
        if (k === '_rev' && typeof v === 'string') {
          rev = v;
          continue;
        }
        if (k === '_deleted' && typeof v === 'boolean') {
          if (v) flags |= 1;
          continue;
        }
        return -1;  // the others, and these with other types: the C++ paths
      }
      if (p > start + 1) {
        if (p + 1 > buf.length) grow(p, 1);
        buf[p++] = 44;
      }
      p = str(k, p);
      if (p < 0) return -1;
      if (p + 1 > buf.length) grow(p, 1);
      buf[p++] = 58;
      p = value(v, p, 1);
      if (p < 0) return -1;
    }
    if (p + 1 > buf.length) grow(p, 1);
    buf[p++] = 125;
    meta[3 * i] = start;
    meta[3 * i + 1] = p;
    meta[3 * i + 2] = flags;
    strs[2 * i] = id;
    strs[2 * i + 1] = rev;
    return p;
  }

  // Encodes every document of `docs` and calls write(buf, meta, strs, nums,
  // count) with the result, or returns undefined (nothing called) if some
  // document is not plain.
  function encode(docs, write) {
    if ('toJSON' in AP) return undefined;  // Array.prototype, or Object.prototype behind it
    for (const k in OP) return undefined;  // an enumerable property every object inherits
    const n = docs.length;
    if (meta.length < 3 * n) meta = new Int32Array(3 * n);
    strs.length = 2 * n;
    nnum = 0;
    let p = 0;
    try {
      for (let i = 0; i < n; i++) {
        p = doc(docs[i], p, i);
        if (p < 0) return undefined;
      }
      return write(buf, meta, strs, nums, n);
    } finally {
      stack.length = 0;
      strs.length = 0;
      if (buf.length > kKeepBytes) buf = new Uint8Array(1 << 16);
    }
  }

  return { encode };
})();

