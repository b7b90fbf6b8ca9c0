// Part of the isolate prelude (js/prelude/begin.js): util.inspect and util.format.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// util.inspect / util.format (a compact subset of node's rules)

const kMaxDepth = 2;
const kBreakLength = 72;

function isIdentifier(k) { return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k); }

function quote(s) {
  let q = "'";
  if (s.includes("'")) q = !s.includes('"') ? '"' : (!s.includes('`') ? '`' : "'");
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === q || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0').toUpperCase();
    else out += ch;
  }
  return q + out + q;
}

function fnName(f) {
  const name = f.name;
  const src = Function.prototype.toString.call(f);
  const kind = src.startsWith('class') ? 'class' : 'Function';
  if (kind === 'class') return '[class ' + (name || '(anonymous)') + ']';
  const asyncPrefix = ObjectToString.call(f) === '[object AsyncFunction]' ? 'AsyncFunction' :
    (ObjectToString.call(f) === '[object GeneratorFunction]' ? 'GeneratorFunction' : 'Function');
  return name ? '[' + asyncPrefix + ': ' + name + ']' : '[' + asyncPrefix + ' (anonymous)]';
}

function ctorName(o) {
  let proto = Object.getPrototypeOf(o);
  if (proto === null) return null;
  const c = proto.constructor;
  return typeof c === 'function' && c.name ? c.name : '';
}

function formatPrimitive(v, top) {
  switch (typeof v) {
    case 'string': return top ? v : quote(v);
    case 'number': return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint': return String(v) + 'n';
    case 'boolean': return String(v);
    case 'undefined': return 'undefined';
    case 'symbol': return v.toString();
  }
  return v === null ? 'null' : undefined;
}

function formatValue(v, depth, seen, top) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return formatPrimitive(v, top);
  if (typeof v === 'function') {
    const base = fnName(v);
    const keys = Object.keys(v);
    if (keys.length === 0) return base;
    return formatObjectBody(v, keys, depth, seen, base + ' ', '{', '}');
  }
  if (seen.includes(v)) return '[Circular *1]';
  if (v instanceof Error) {
    const keys = Object.keys(v).filter((k) => k !== 'stack' && k !== 'message');
    let s = v.stack ? String(v.stack) : '[' + Error.prototype.toString.call(v) + ']';
    if (keys.length && depth <= kMaxDepth) {
      s += ' ' + formatObjectBody(v, keys, depth, seen, '', '{', '}');
    }
    return s;
  }
  if (v instanceof Date) return isNaN(v) ? 'Invalid Date' : v.toISOString();
  if (v instanceof RegExp) return String(v);
  if (v instanceof Promise) return 'Promise { <unknown> }';
  if (typeof v.then === 'function' && v.constructor && v.constructor.name === 'Changes') {
    return 'Changes {}';
  }
  if (v instanceof Boolean || v instanceof Number || v instanceof String) {
    return '[' + ctorName(v) + ': ' + formatPrimitive(v.valueOf(), false) + ']';
  }
  if (depth > kMaxDepth) {
    if (Array.isArray(v)) return '[Array]';
    const n = ctorName(v);
    return '[' + (n === null ? 'Object: null prototype' : (n || 'Object')) + ']';
  }
  seen.push(v);
  let out;
  try {
    if (Array.isArray(v)) {
      const items = [];
      const limit = Math.min(v.length, 100);
      for (let i = 0; i < limit; i++) {
        items.push(hasOwn(v, i) ? formatValue(v[i], depth + 1, seen, false) : '<1 empty item>');
      }
      if (v.length > limit) items.push('... ' + (v.length - limit) + ' more items');
      for (const k of Object.keys(v)) {
        if (!/^\d+$/.test(k)) items.push(formatKey(k) + ': ' + formatValue(v[k], depth + 1, seen, false));
      }
      const n = ctorName(v);
      const prefix = n && n !== 'Array' ? n + '(' + v.length + ') ' : '';
      out = wrap(prefix, '[', ']', items, depth);
    } else if (v instanceof Map) {
      const items = [];
      for (const [k, val] of v) {
        items.push(formatValue(k, depth + 1, seen, false) + ' => ' + formatValue(val, depth + 1, seen, false));
      }
      out = wrap('Map(' + v.size + ') ', '{', '}', items, depth);
    } else if (v instanceof Set) {
      const items = [];
      for (const val of v) items.push(formatValue(val, depth + 1, seen, false));
      out = wrap('Set(' + v.size + ') ', '{', '}', items, depth);
    } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      const items = [];
      const limit = Math.min(v.length, 50);
      const isBuf = v instanceof Buffer;
      for (let i = 0; i < limit; i++) {
        items.push(isBuf ? v[i].toString(16).padStart(2, '0') : formatPrimitive(v[i], false));
      }
      if (v.length > limit) items.push('... ' + (v.length - limit) + ' more ' + (isBuf ? 'bytes' : 'items'));
      if (isBuf) return '<Buffer' + (items.length ? ' ' + items.join(' ') : '') + '>';
      out = wrap(ctorName(v) + '(' + v.length + ') ', '[', ']', items, depth);
    } else {
      const n = ctorName(v);
      let prefix = n === null ? '[Object: null prototype] ' : (n && n !== 'Object' ? n + ' ' : '');
      const tag = v[Symbol.toStringTag];
      if (typeof tag === 'string' && tag && tag !== n) prefix = (n || 'Object') + ' [' + tag + '] ';
      const keys = Object.keys(v);
      const syms = Object.getOwnPropertySymbols(v).filter((s) => Object.getOwnPropertyDescriptor(v, s).enumerable);
      out = formatObjectBody(v, keys.concat(syms), depth, seen, prefix, '{', '}');
    }
  } finally {
    seen.pop();
  }
  return out;
}

function formatKey(k) {
  if (typeof k === 'symbol') return '[' + k.toString() + ']';
  return isIdentifier(k) ? k : quote(k);
}

function formatObjectBody(v, keys, depth, seen, prefix, open, close) {
  const items = [];
  for (const k of keys) {
    const desc = Object.getOwnPropertyDescriptor(v, k);
    let val;
    if (desc && (desc.get || desc.set)) val = desc.get && desc.set ? '[Getter/Setter]' : (desc.get ? '[Getter]' : '[Setter]');
    else val = formatValue(v[k], depth + 1, seen, false);
    items.push(formatKey(k) + ': ' + val);
  }
  return wrap(prefix, open, close, items, depth);
}

function wrap(prefix, open, close, items, depth) {
  if (items.length === 0) return prefix + open + close;
  const total = items.reduce((n, s) => n + s.length + 2, prefix.length);
  if (total <= kBreakLength && !items.some((s) => s.includes('\n'))) {
    return prefix + open + ' ' + items.join(', ') + ' ' + close;
  }
  const ind = '  '.repeat(depth + 1);
  return prefix + open + '\n' + items.map((s) => ind + s.split('\n').join('\n' + '')).join(',\n') +
    '\n' + '  '.repeat(depth) + close;
}

function inspect(v) { return formatValue(v, 0, [], false); }

function format(...args) {
  let out = '';
  let i = 0;
  if (typeof args[0] === 'string' && args.length > 1) {
    const f = args[0];
    i = 1;
    let last = 0;
    for (let p = 0; p < f.length - 1; p++) {
      if (f[p] !== '%') continue;
      const c = f[p + 1];
      let rep;
      if (c === '%') { out += f.slice(last, p) + '%'; last = p + 2; p++; continue; }
      if (i >= args.length) continue;
      switch (c) {
        case 's': rep = typeof args[i] === 'string' ? args[i] : (typeof args[i] === 'object' && args[i] !== null ? inspect(args[i]) : formatPrimitive(args[i], true)); break;
        case 'd': case 'i': {
          const a = args[i];
          rep = typeof a === 'bigint' ? a + 'n' : formatPrimitive(c === 'i' ? Math.trunc(Number(a)) : Number(a), true);
          break;
        }
        case 'f': rep = String(parseFloat(args[i])); break;
        case 'j': try { rep = JSON.stringify(args[i]); } catch (e) { rep = '[Circular]'; } break;
        case 'o': case 'O': rep = inspect(args[i]); break;
        case 'c': rep = ''; break;
        default: continue;
      }
      i++;
      out += f.slice(last, p) + rep;
      last = p + 2;
      p++;
    }
    out += f.slice(last);
  }
  for (; i < args.length; i++) {
    if (out.length || (i > 0)) out += ' ';
    out += typeof args[i] === 'string' ? args[i] : formatValue(args[i], 0, [], false);
  }
  return out;
}

