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
  // A batch is handed to the engine in parts of about this many bytes (a
  // document is never split), so the buffer stays this small however big
  // the batch: the engine copies each part's bodies out as it takes it.
  // A whole batch in one buffer held its size twice over while growing
  // (50 massive documents: 40 MB, a 64 MB buffer and the 32 MB one it grew
  // from) and kept it afterwards. Parts of 4 MiB still grew it to 8 (a
  // part ends after the document that crosses the mark); 1 MiB parts keep
  // it at 2 and lowered the basics suite's peak RSS by ~7 MB at no cost
  // measurable in the massive-docs case (25 parts a batch). (Parts now
  // alternate between two buffers, below: two of 2 MiB at most.)
  const kPartBytes = 1 << 20;
  // A buffer grown past this (by one document bigger than a part) is let
  // go after the call, so it is not held by the isolate for good.
  const kKeepBytes = 2 << 20;
  const kMaxDepth = 500;
  // Every writer checks its own room and leaves at least kSlack bytes free
  // after its end, and containers check on opening and closing, so the
  // separators between two writers (',' and ':') need no check of their
  // own. The bound is a plain number beside the buffer: reading
  // buf.length per byte was a call in V8's optimized code.
  const kSlack = 8;
  let buf = new Uint8Array(1 << 16);
  let dv = new DataView(buf.buffer);  // buf's bytes, for the key memo's 4-byte writes
  let room = buf.length - kSlack;  // the end a writer may reach
  // The buffer of the part before, which the engine may still be reading
  // (it compresses a part's big bodies on another thread while the next
  // part is encoded, js/body_jobs.h) until the next part's write returns:
  // consecutive parts take the two buffers in turn.
  let other = null;
  let otherDv = null;
  // The key memo: a member name's encoding with its colon ('"sovery0":'),
  // up to 12 bytes kept as three 32-bit words, in a slot picked by the
  // name's length and end characters. Documents repeat their member names
  // (every object of a shape has the same ones), and for-in hands the same
  // interned strings out each time, so a hit is one identity compare and
  // three stores instead of a loop over the characters: the massive-docs
  // batch (2.3 million members) encodes ~10% faster. A slot holds the
  // last name that took it; a name that is not the slot's is encoded and
  // takes it.
  //
  // The memos' names start as '' (with its encoding), not undefined: a
  // compare of a name with a slot that had ever held undefined took V8's
  // generic strict-equality call (5-7% of the massive-docs walk); with
  // strings only it is inlined.
  const kMemoSlots = 256;
  const kMemoBytes = 12;
  const memoName = new Array(kMemoSlots).fill('');
  const memoWords = new Int32Array(kMemoSlots * 3);
  const memoLen = new Int32Array(kMemoSlots);
  // In front of the memo, the same encodings by the member's position in
  // its object: objects of one shape list the same names in the same order
  // (and a shape that extends another starts with its names), so the name
  // at position i is usually the one the last object had there, and a hit
  // is an identity compare with no hash of the name's characters (the
  // massive-docs walk ~8% faster, alternating with the memo alone in one
  // process). Objects of other shapes at a position take it over. The
  // documents' own members go through it too, and 128 positions cover wide
  // documents: 100 documents of 100 members `hello0..99` (bulk-inserts-
  // large-docs) spread over ~20 of the hashed memo's slots and evicted one
  // another there; with 16 positions and the top level's names encoded
  // character by character, that batch encoded ~15% slower (alternating
  // in one process). The slots cost ~2 KB.
  //
  // A member after the first is preceded by a comma, so its position's
  // encoding starts with it (',"sovery1":', names of up to 8 characters
  // there): one store fewer per member, and no test for the first one
  // (the massive-docs walk ~5% faster).
  const kPosSlots = 128;
  const posName = new Array(kPosSlots).fill('');
  const posWords = new Int32Array(kPosSlots * 3);
  const posLen = new Int32Array(kPosSlots);
  // Both memos empty: every slot holds '' and its encoding.
  function clearMemos() {
    memoName.fill('');
    memoLen.fill(3);
    for (let i = 0; i < kMemoSlots; i++) memoWords[3 * i] = 0x3A2222;  // '"":'
    posName.fill('');
    for (let i = 0; i < kPosSlots; i++) {
      posWords[3 * i] = i === 0 ? 0x3A2222 : 0x3A22222C;  // '"":', ',"":'
      posLen[i] = i === 0 ? 3 : 4;
    }
  }
  let nums = new Float64Array(64);
  let nnum = 0;
  let meta = new Int32Array(192);  // per document: body start, body end, flags
  const strs = [];                 // per document: _id, _rev (or undefined)

  // Grows the buffer until `need` more bytes fit after `p`.
  function grow(p, need) {
    if (warming) return;  // warm(), below: room stays -1
    let cap = buf.length * 2;
    while (cap - kSlack < p + need) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(buf.subarray(0, p));
    buf = nb;
    dv = new DataView(nb.buffer);
    room = cap - kSlack;
  }

  // Each writer takes the end `p` and returns the new end, or -1.
  //
  // Strings of printable ASCII without quotes or backslashes (nearly every
  // key and most values) are copied in a loop small enough for V8 to inline
  // into its callers; the first other character hands over to strRest.
  function str(s, p) {
    const n = s.length;
    if (p + 6 * n + 2 > room) grow(p, 6 * n + 2);  // \u00XX is six bytes
    const b = buf;
    b[p++] = 34;
    // One running index (not p + 1 + i: two overflow-checked adds a
    // character in V8's code; the massive-docs walk ~3% faster).
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7E || c === 34 || c === 92) return strRest(s, i, p);
      b[p++] = c;
    }
    b[p++] = 34;
    return p;
  }

  // The rest of `s` from index `i`, at `p` (room is checked by str).
  function strRest(s, i, p) {
    const n = s.length;
    const b = buf;
    for (; i < n; i++) {
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

  // A member name and its colon, through the memo (names of up to 9
  // characters: with the quotes and colon at most 12 bytes when ASCII).
  function key(k, p) {
    const n = k.length;
    if (n === 0 || n > kMemoBytes - 3) {
      p = str(k, p);
      if (p >= 0) buf[p++] = 58;
      return p;
    }
    const slot = (n * 31 + k.charCodeAt(n - 1) + (k.charCodeAt(0) << 3)) & (kMemoSlots - 1);
    const j = 3 * slot;
    if (memoName[slot] === k) {
      if (p + kMemoBytes > room) grow(p, kMemoBytes);
      const d = dv;
      d.setInt32(p, memoWords[j], true);
      d.setInt32(p + 4, memoWords[j + 1], true);
      d.setInt32(p + 8, memoWords[j + 2], true);
      return p + memoLen[slot];
    }
    const end = str(k, p);
    if (end < 0) return -1;
    buf[end] = 58;
    // str left room for 6 bytes a character, at least 12 here: the words
    // read past a shorter name are never written out past its length.
    if (end + 1 - p <= kMemoBytes) {
      const d = dv;
      memoName[slot] = k;
      memoWords[j] = d.getInt32(p, true);
      memoWords[j + 1] = d.getInt32(p + 4, true);
      memoWords[j + 2] = d.getInt32(p + 8, true);
      memoLen[slot] = end + 1 - p;
    }
    return end + 1;
  }

  function num(x, p) {
    if (p + 24 > room) grow(p, 24);
    const b = buf;
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

  // Objects and arrays nested deeper than kMaxDepth are declined, which
  // also ends a cycle (JSON.stringify's TypeError is the other paths'):
  // keeping the containers on a stack to find cycles cost a scan of it per
  // object.
  function value(v, p, depth) {
    switch (typeof v) {
      case 'string':
        return str(v, p);
      case 'number':
        return num(v, p);
      case 'boolean': {
        if (p + 5 > room) grow(p, 5);
        const b = buf;
        if (v) {
          b[p] = 116; b[p + 1] = 114; b[p + 2] = 117; b[p + 3] = 101;
          return p + 4;
        }
        b[p] = 102; b[p + 1] = 97; b[p + 2] = 108; b[p + 3] = 115; b[p + 4] = 101;
        return p + 5;
      }
      case 'object': {
        if (v === null) {
          if (p + 4 > room) grow(p, 4);
          const b = buf;
          b[p] = 110; b[p + 1] = 117; b[p + 2] = 108; b[p + 3] = 108;
          return p + 4;
        }
        if (depth > kMaxDepth) return -1;
        return isArray(v) ? array(v, p, depth) : object(v, p, depth);
      }
    }
    return -1;  // undefined, functions, symbols, BigInts
  }

  function array(v, p, depth) {
    if (getProto(v) !== AP) return -1;
    if (p + 1 > room) grow(p, 1);
    buf[p++] = 91;
    const n = v.length;
    for (let i = 0; i < n; i++) {
      if (i) buf[p++] = 44;
      const x = v[i];
      p = typeof x === 'string' ? str(x, p) : value(x, p, depth + 1);
      if (p < 0) return -1;
    }
    if (p + 1 > room) grow(p, 1);
    buf[p++] = 93;
    return p;
  }

  // A member name and its colon at `p`, for the member at position `at`
  // of its object, with the comma before it unless it is the first: from
  // the position memo, else through key() (which fills the position's slot
  // when the encoding fits one).
  function member(k, p, at) {
    if (at < kPosSlots && posName[at] === k && p + kMemoBytes <= room) {
      const j = 3 * at;
      const d = dv;
      d.setInt32(p, posWords[j], true);
      d.setInt32(p + 4, posWords[j + 1], true);
      d.setInt32(p + 8, posWords[j + 2], true);
      return p + posLen[at];
    }
    // Room for the 12 bytes read back below, whatever key() checks (an
    // empty name needs only 3).
    if (p + kMemoBytes + 1 > room) grow(p, kMemoBytes + 1);
    const start = p;
    if (at !== 0) buf[p++] = 44;
    p = key(k, p);
    if (p >= 0 && at < kPosSlots && p - start <= kMemoBytes) {
      const d = dv;
      const j = 3 * at;
      posName[at] = k;
      posWords[j] = d.getInt32(start, true);
      posWords[j + 1] = d.getInt32(start + 4, true);
      posWords[j + 2] = d.getInt32(start + 8, true);
      posLen[at] = p - start;
    }
    return p;
  }

  // for-in sees own enumerable string keys in JSON.stringify's order, and
  // nothing inherited: encode() checks that Object.prototype has no
  // enumerable properties.
  function object(v, p, depth) {
    if (getProto(v) !== OP) return -1;
    if (p + 1 > room) grow(p, 1);
    buf[p++] = 123;
    let at = 0;  // the member's position in its object
    for (const k in v) {
      p = member(k, p, at++);
      if (p < 0) return -1;
      const x = v[k];
      p = typeof x === 'string' ? str(x, p) : value(x, p, depth + 1);
      if (p < 0) return -1;
    }
    if (p + 1 > room) grow(p, 1);
    buf[p++] = 125;
    return p;
  }

  // A document: its body from `p`, its special members into meta and strs.
  function doc(d, p, i) {
    if (typeof d !== 'object' || d === null || isArray(d) || getProto(d) !== OP) return -1;
    if (p + 1 > room) grow(p, 1);
    const start = p;
    buf[p++] = 123;
    let id;
    let rev;
    let flags = 0;
    let at = 0;  // the member's position among the body's members
    // The document's own names as one list (JSON.stringify's own order and
    // snapshot), not for-in: documents of many members are dictionary-mode
    // objects, where for-in checks each name again before handing it out
    // (bulk-inserts-large-docs' encoding 0.40-0.42 -> 0.34-0.35 ms a batch).
    // One list per document; nested objects keep for-in, which allocates
    // nothing for the fast-mode objects most of them are.
    const keys = Object.keys(d);
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j];
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
      p = member(k, p, at++);
      if (p < 0) return -1;
      p = typeof v === 'string' ? str(v, p) : value(v, p, 1);
      if (p < 0) return -1;
    }
    if (p + 1 > room) grow(p, 1);
    buf[p++] = 125;
    meta[3 * i] = start;
    meta[3 * i + 1] = p;
    meta[3 * i + 2] = flags;
    strs[2 * i] = id;
    strs[2 * i + 1] = rev;
    return p;
  }

  // Part flags of write()'s last argument.
  const kFirst = 1;  // the first part: the engine drops what an abandoned batch left
  const kLast = 2;   // the last part: the engine writes the batch and answers
  let busy = false;

  // Encodes every document of `docs` and hands the result to the engine in
  // parts: write(buf, meta, strs, nums, count, flags) for each, `meta` and
  // `strs` indexed from the part's first document. A part that is not the
  // last must answer true (taken); the last answers with the batch's
  // results, which encode returns. Returns undefined, the engine holding
  // nothing, if some document is not plain or the engine declines a part.
  // `partBytes` is for tests.
  function encode(docs, write, partBytes = kPartBytes) {
    if ('toJSON' in AP) return undefined;  // Array.prototype, or Object.prototype behind it
    for (const k in OP) return undefined;  // an enumerable property every object inherits
    // A getter that writes to a database re-enters here: it gets the other
    // paths, this call's buffer being in use.
    if (busy) return undefined;
    busy = true;
    const n = docs.length;
    if (meta.length < 3 * n) meta = new Int32Array(3 * n);
    strs.length = 2 * n;
    nnum = 0;
    let p = 0;
    let first = 0;       // the index of the part's first document
    let handed = false;  // a part is with the engine
    let done = false;
    try {
      for (let i = 0; i < n; i++) {
        if (p >= partBytes) {
          if (write(buf, meta, strs, nums, i - first, handed ? 0 : kFirst) !== true) {
            handed = false;  // the engine dropped the parts
            return undefined;
          }
          handed = true;
          first = i;
          p = 0;
          nnum = 0;
          const b = buf;
          const d = dv;
          if (other === null) {
            other = new Uint8Array(1 << 16);
            otherDv = new DataView(other.buffer);
          }
          buf = other;
          dv = otherDv;
          room = buf.length - kSlack;
          other = b;
          otherDv = d;
        }
        p = doc(docs[i], p, i - first);
        if (p < 0) return undefined;
      }
      done = true;
      return write(buf, meta, strs, nums, n - first, (handed ? 0 : kFirst) | kLast);
    } finally {
      // Declined (or a getter threw) after a part was handed over: the
      // engine drops it now rather than hold it until the next batch.
      if (handed && !done) write(buf, meta, strs, nums, 0, kFirst);
      busy = false;
      strs.length = 0;
      if (buf.length > kKeepBytes) {
        buf = new Uint8Array(1 << 16);
        dv = new DataView(buf.buffer);
        room = buf.length - kSlack;
      }
      if (other !== null && other.length > kKeepBytes) {
        other = null;
        otherDv = null;
      }
    }
  }

  // Every writer's room check is `if (end > room) grow(...)`, and TurboFan
  // compiles a branch that has never run (no type feedback for its
  // arithmetic or its call) to a deoptimization. Batches of small documents
  // never outgrow the first buffer, so the first batch that did threw the
  // optimized code away: bulk-inserts-large-docs (190 KB a batch) right
  // after bulk-inserts deoptimized str() and doc() ("Insufficient type
  // feedback for binary operation" at str's check, inlined in doc), which
  // ran unoptimized while TurboFan compiled them again (~25-30 ms of
  // compile): the case's first batches took 2.5-4 ms (median over runs)
  // where the later ones take 0.6, its first ten 1.15 ms a batch against
  // 0.81 with this warming (settee bench, LevelDB). So each check's grow
  // branch runs once here, while the prelude runs: with room at -1 every
  // check fails and grow() returns at once, on a document and values that
  // take every writer (the engine's feedback vectors are allocated eagerly,
  // js/v8_init.cc, so one pass records it). doc() sees only a string
  // member, as most documents' members are: its value() call stays without
  // feedback, as it was. The memos and room are reset afterwards.
  let warming = false;
  function warm() {
    warming = true;
    room = -1;
    strs.length = 2;
    const nested = { w: 'x' };
    for (let i = 0; i < 2; i++) {  // the second pass takes the key memo's hits
      doc(nested, 0, 0);
      value([7, 'y', true, null, nested], 0, 1);
    }
    strs.length = 0;
    warming = false;
    room = buf.length - kSlack;
    clearMemos();
  }
  warm();

  return { encode };
})();
