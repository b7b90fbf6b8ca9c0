// Part of the isolate prelude (js/prelude/begin.js): node's querystring module.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// querystring

// Percent-decoding that never throws: a malformed escape stays as written,
// and the bytes decode as UTF-8 (node's unescapeBuffer, then toString).
function qsUnescape(s) {
  try {
    return decodeURIComponent(s);
  } catch (e) {
    const bytes = [];
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x25 && i + 2 < s.length + 0 && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
        bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
        i += 2;
      } else if (c < 0x80) {
        bytes.push(c);
      } else {
        for (const b of native.utf8Encode(s[i])) bytes.push(b);
      }
    }
    return native.utf8Decode(new Uint8Array(bytes));
  }
}

function qsValue(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return '';
}

const querystring = {
  escape: (s) => encodeURIComponent(typeof s === 'string' ? s : String(s)),
  unescape: qsUnescape,
  // parse('a=1&a=2&b') -> {a: ['1', '2'], b: ''} (a null-prototype object);
  // '+' is a space; at most maxKeys (1000; 0 for no limit) pairs.
  parse(str, sep = '&', eq = '=', options = {}) {
    const out = Object.create(null);
    if (typeof str !== 'string' || str.length === 0) return out;
    sep = sep || '&';
    eq = eq || '=';
    const maxKeys = options && typeof options.maxKeys === 'number' ? options.maxKeys : 1000;
    const decode = options && typeof options.decodeURIComponent === 'function' ? options.decodeURIComponent : qsUnescape;
    let pairs = str.split(sep);
    if (maxKeys > 0) pairs = pairs.slice(0, maxKeys);
    for (const pair of pairs) {
      if (pair === '') continue;
      const at = pair.indexOf(eq);
      const rawKey = at >= 0 ? pair.slice(0, at) : pair;
      const rawValue = at >= 0 ? pair.slice(at + eq.length) : '';
      const key = decode(rawKey.replace(/\+/g, ' '));
      const value = decode(rawValue.replace(/\+/g, ' '));
      if (!(key in out)) out[key] = value;
      else if (Array.isArray(out[key])) out[key].push(value);
      else out[key] = [out[key], value];
    }
    return out;
  },
  stringify(obj, sep = '&', eq = '=', options = {}) {
    sep = sep || '&';
    eq = eq || '=';
    const encode = options && typeof options.encodeURIComponent === 'function' ? options.encodeURIComponent : querystring.escape;
    if (obj === null || typeof obj !== 'object') return '';
    const parts = [];
    for (const k of Object.keys(obj)) {
      const v = obj[k];
      const ks = encode(qsValue(k)) + eq;
      if (Array.isArray(v)) for (const item of v) parts.push(ks + encode(qsValue(item)));
      else parts.push(ks + encode(qsValue(v)));
    }
    return parts.join(sep);
  },
};
querystring.decode = querystring.parse;
querystring.encode = querystring.stringify;
