// Part of the isolate prelude (js/prelude/begin.js): util.inspect and util.format.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// util.inspect / util.format (a compact subset of node's rules)

const kBreakLength = 80;
const kInspectCustom = Symbol.for('nodejs.util.inspect.custom');
// node's defaults (util.inspect.defaultOptions); `ctx` below is these merged
// with the caller's options.
const inspectDefaults = {
  depth: 2, colors: false, customInspect: true, showHidden: false, maxArrayLength: 100,
  maxStringLength: 10000, breakLength: kBreakLength, sorted: false, getters: false,
};
// node's util.inspect.colors / styles: ANSI [open, close] codes per kind.
const inspectColors = {
  bold: [1, 22], italic: [3, 23], underline: [4, 24], inverse: [7, 27], white: [37, 39], grey: [90, 39],
  black: [30, 39], blue: [34, 39], cyan: [36, 39], green: [32, 39], magenta: [35, 39], red: [31, 39],
  yellow: [33, 39],
};
const inspectStyles = {
  special: 'cyan', number: 'yellow', bigint: 'yellow', boolean: 'yellow', undefined: 'grey', null: 'bold',
  string: 'green', symbol: 'green', date: 'magenta', regexp: 'red', module: 'underline',
};
function stylize(ctx, text, kind) {
  if (!ctx.colors) return text;
  const c = inspectColors[inspectStyles[kind]];
  return c ? '\u001b[' + c[0] + 'm' + text + '\u001b[' + c[1] + 'm' : text;
}

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
    // for...of pairs surrogates, so one seen alone is unpaired.
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\u' + c.toString(16);
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

function formatPrimitive(v, top, ctx = inspectDefaults) {
  switch (typeof v) {
    case 'string': {
      if (top) return v;
      const extra = v.length - ctx.maxStringLength;
      const shown = extra > 0 ? quote(v.slice(0, ctx.maxStringLength)) : quote(v);
      return stylize(ctx, shown, 'string') + (extra > 0 ? '... ' + extra + ' more character' + (extra > 1 ? 's' : '') : '');
    }
    case 'number': return stylize(ctx, Object.is(v, -0) ? '-0' : String(v), 'number');
    case 'bigint': return stylize(ctx, String(v) + 'n', 'bigint');
    case 'boolean': return stylize(ctx, String(v), 'boolean');
    case 'undefined': return stylize(ctx, 'undefined', 'undefined');
    case 'symbol': return stylize(ctx, v.toString(), 'symbol');
  }
  return v === null ? stylize(ctx, 'null', 'null') : undefined;
}

// The object's own keys as inspect shows them: enumerable string keys and
// enumerable symbols, or every own key with showHidden.
function ownKeys(v, ctx) {
  const keys = ctx.showHidden ? Object.getOwnPropertyNames(v) : Object.keys(v);
  const syms = Object.getOwnPropertySymbols(v)
    .filter((k) => ctx.showHidden || Object.getOwnPropertyDescriptor(v, k).enumerable);
  const all = keys.concat(syms);
  if (ctx.sorted) all.sort(typeof ctx.sorted === 'function' ? ctx.sorted : undefined);
  return all;
}

function formatValue(v, depth, seen, top, ctx = inspectDefaults) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return formatPrimitive(v, top, ctx);
  if (ctx.customInspect) {
    const custom = v[kInspectCustom];
    if (typeof custom === 'function' && custom !== inspect) {
      const remaining = ctx.depth === null ? Infinity : ctx.depth - depth;
      const r = custom.call(v, remaining, Object.assign({}, ctx, { depth: remaining, stylize: (t, k) => stylize(ctx, t, k) }), inspect);
      if (r !== v) return typeof r === 'string' ? r : formatValue(r, depth, seen, false, ctx);
    }
  }
  if (typeof v === 'function') {
    const base = stylize(ctx, fnName(v), 'special');
    const keys = ownKeys(v, ctx).filter((k) => !ctx.showHidden || (k !== 'length' && k !== 'name' && k !== 'prototype' && k !== 'arguments' && k !== 'caller'));
    if (keys.length === 0) return base;
    ctx.currentDepth = depth + 1;
    return formatObjectBody(v, keys, depth, seen, base + ' ', '{', '}', ctx);
  }
  // node numbers the objects met again in the order it meets them and
  // marks each with <ref *N> where it is shown.
  if (seen.includes(v)) {
    if (!seen.circular) seen.circular = new Map();
    let index = seen.circular.get(v);
    if (index === undefined) { index = seen.circular.size + 1; seen.circular.set(v, index); }
    return stylize(ctx, '[Circular *' + index + ']', 'special');
  }
  if (v instanceof Error) {
    const keys = Object.keys(v).filter((k) => k !== 'stack' && k !== 'message');
    let s = v.stack ? String(v.stack) : '[' + Error.prototype.toString.call(v) + ']';
    if (keys.length && depth <= maxDepth(ctx)) {
      ctx.currentDepth = depth + 1;
      s += ' ' + formatObjectBody(v, keys, depth, seen, '', '{', '}', ctx);
    }
    return s;
  }
  if (v instanceof Date) return stylize(ctx, isNaN(v) ? 'Invalid Date' : v.toISOString(), 'date');
  if (v instanceof RegExp) return stylize(ctx, String(v), 'regexp');
  if (typeof v.then === 'function' && v.constructor && v.constructor.name === 'Changes') {
    return 'Changes {}';
  }
  if (v instanceof Boolean || v instanceof Number || v instanceof String) {
    return stylize(ctx, '[' + ctorName(v) + ': ' + formatPrimitive(v.valueOf(), false) + ']', typeof v.valueOf());
  }
  if (depth > maxDepth(ctx)) {
    if (Array.isArray(v)) return stylize(ctx, '[Array]', 'special');
    const n = ctorName(v);
    return stylize(ctx, '[' + (n === null ? 'Object: null prototype' : (n || 'Object')) + ']', 'special');
  }
  seen.push(v);
  let out;
  try {
    if (Array.isArray(v)) {
      // With showHidden node lists the length too: [ 1, [length]: 1 ].
      const extraKeys = ownKeys(v, ctx).filter((k) => typeof k === 'symbol' || (!/^\d+$/.test(k) && (k !== 'length' || ctx.showHidden)));
      if (v.length > 0 || extraKeys.length > 0) ctx.currentDepth = depth + 1;
      const items = [];
      const limit = Math.min(v.length, Math.max(0, ctx.maxArrayLength === null ? Infinity : ctx.maxArrayLength));
      for (let i = 0; i < limit; i++) {
        items.push(hasOwn(v, i) ? formatValue(v[i], depth + 1, seen, false, ctx) : stylize(ctx, '<1 empty item>', 'undefined'));
      }
      if (v.length > limit) items.push('... ' + (v.length - limit) + ' more item' + (v.length - limit > 1 ? 's' : ''));
      for (const k of extraKeys) items.push(formatProperty(v, k, depth, seen, ctx));
      const n = ctorName(v);
      const prefix = n && n !== 'Array' ? n + '(' + v.length + ') ' : '';
      out = wrap(withRef(v, seen, ctx, prefix), '[', ']', items, depth, ctx, v);
    } else if (native.promiseState(v) !== undefined) {
      // node's Promise { value }, { <pending> } or { <rejected> reason }.
      const [state, result] = native.promiseState(v);
      ctx.currentDepth = depth + 1;
      const items = [state === 0 ? stylize(ctx, '<pending>', 'special')
        : (state === 2 ? stylize(ctx, '<rejected>', 'special') + ' ' : '') + formatValue(result, depth + 1, seen, false, ctx)];
      for (const k of ownKeys(v, ctx)) items.push(formatProperty(v, k, depth, seen, ctx));
      const n = ctorName(v);
      out = wrap(withRef(v, seen, ctx, (n && n !== 'Promise' ? n + ' [Promise] ' : 'Promise ')), '{', '}', items, depth, ctx);
    } else if (v instanceof WeakMap || v instanceof WeakSet) {
      const items = [stylize(ctx, '<items unknown>', 'special')];
      for (const k of ownKeys(v, ctx)) items.push(formatProperty(v, k, depth, seen, ctx));
      out = wrap(withRef(v, seen, ctx, (v instanceof WeakMap ? 'WeakMap ' : 'WeakSet ')), '{', '}', items, depth, ctx);
    } else if (v instanceof Map) {
      // A Map's or Set's own properties follow its entries, as in node
      // (immer's frozen Maps carry their own set/delete/clear).
      const extraKeys = ownKeys(v, ctx);
      if (v.size > 0 || extraKeys.length > 0) ctx.currentDepth = depth + 1;
      const items = [];
      for (const [k, val] of v) {
        items.push(formatValue(k, depth + 1, seen, false, ctx) + ' => ' + formatValue(val, depth + 1, seen, false, ctx));
      }
      for (const k of extraKeys) items.push(formatProperty(v, k, depth, seen, ctx));
      out = wrap(withRef(v, seen, ctx, 'Map(' + v.size + ') '), '{', '}', items, depth, ctx);
    } else if (v instanceof Set) {
      const extraKeys = ownKeys(v, ctx);
      if (v.size > 0 || extraKeys.length > 0) ctx.currentDepth = depth + 1;
      const items = [];
      for (const val of v) items.push(formatValue(val, depth + 1, seen, false, ctx));
      for (const k of extraKeys) items.push(formatProperty(v, k, depth, seen, ctx));
      out = wrap(withRef(v, seen, ctx, 'Set(' + v.size + ') '), '{', '}', items, depth, ctx);
    } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      if (v.length > 0) ctx.currentDepth = depth + 1;
      const items = [];
      const limit = Math.min(v.length, 50);
      const isBuf = v instanceof Buffer;
      for (let i = 0; i < limit; i++) {
        items.push(isBuf ? v[i].toString(16).padStart(2, '0') : formatPrimitive(v[i], false, ctx));
      }
      if (v.length > limit) items.push('... ' + (v.length - limit) + ' more ' + (isBuf ? 'bytes' : 'items'));
      if (isBuf) return '<Buffer' + (items.length ? ' ' + items.join(' ') : '') + '>';
      out = wrap(ctorName(v) + '(' + v.length + ') ', '[', ']', items, depth, ctx, v);
    } else {
      const n = ctorName(v);
      let prefix = n === null ? '[Object: null prototype] ' : (n && n !== 'Object' ? n + ' ' : '');
      const tag = v[Symbol.toStringTag];
      if (typeof tag === 'string' && tag && tag !== n) prefix = (n || 'Object') + ' [' + tag + '] ';
      const keys = ownKeys(v, ctx);
      if (keys.length > 0) ctx.currentDepth = depth + 1;
      out = formatObjectBody(v, keys, depth, seen, prefix, '{', '}', ctx);
    }
  } finally {
    seen.pop();
  }
  return out;
}

// The prefix of an object that its members refer back to: node's
// "<ref *N> ", known once the members are formatted.
function withRef(v, seen, ctx, prefix) {
  const ref = seen.circular && seen.circular.get(v);
  return ref === undefined ? prefix : stylize(ctx, '<ref *' + ref + '>', 'special') + ' ' + prefix;
}

function formatKey(k) {
  if (typeof k === 'symbol') return '[' + k.toString() + ']';
  return isIdentifier(k) ? k : quote(k);
}

function maxDepth(ctx) { return ctx.depth === null ? Infinity : ctx.depth; }

function formatProperty(v, k, depth, seen, ctx) {
  const desc = Object.getOwnPropertyDescriptor(v, k);
  let val;
  if (desc && (desc.get || desc.set)) {
    const label = desc.get && desc.set ? 'Getter/Setter' : (desc.get ? 'Getter' : 'Setter');
    if (ctx.getters && desc.get) {
      let got;
      try {
        got = formatValue(desc.get.call(v), depth + 1, seen, false, ctx);
      } catch (e) {
        got = '<Inspection threw (' + e.message + ')>';
      }
      val = stylize(ctx, '[' + label + ':', 'special') + ' ' + got + stylize(ctx, ']', 'special');
    } else {
      val = stylize(ctx, '[' + label + ']', 'special');
    }
  } else {
    val = formatValue(v[k], depth + 1, seen, false, ctx);
  }
  const key = desc && !desc.enumerable ? '[' + formatKey(k) + ']' : formatKey(k);
  return key + ': ' + val;
}

function formatObjectBody(v, keys, depth, seen, prefix, open, close, ctx = inspectDefaults) {
  const items = keys.map((k) => formatProperty(v, k, depth, seen, ctx));
  return wrap(withRef(v, seen, ctx, prefix), open, close, items, depth, ctx);
}

// Visible length: colour codes take no columns.
function visibleLength(s) { return s.replace(/\u001b\[\d+m/g, '').length; }

// node's `compact: 3`: a container goes on one line only if it is among the
// three innermost levels of what was formatted last (ctx.currentDepth, set
// as each non-empty container is entered) and fits in breakLength.
const kCompactLevels = 3;

function wrap(prefix, open, close, items, depth, ctx = inspectDefaults, arrayValue = undefined) {
  if (items.length === 0) return prefix + open + close;
  const indentLvl = 2 * depth;
  let output = items;
  if (arrayValue !== undefined && items.length > 6) output = groupArrayElements(ctx, items, arrayValue, indentLvl);
  if ((ctx.currentDepth || 0) - (depth + 1) < kCompactLevels && output.length === items.length) {
    // The entries, their separators, the indentation, the opening brace and
    // node's slack of 10 columns.
    // (node does not count the space after a <ref *N>.)
    let width = 2 * output.length + indentLvl + prefix.length + open.length + 10 - (prefix.includes('<ref *') ? 1 : 0);
    for (const entry of output) width += visibleLength(entry);
    if (width <= ctx.breakLength && !output.some((e) => e.includes('\n'))) {
      return prefix + open + ' ' + output.join(', ') + ' ' + close;
    }
  }
  const ind = '\n' + ' '.repeat(indentLvl);
  return prefix + open + ind + '  ' + output.join(',' + ind + '  ') + ind + close;
}

// node's grouping of long arrays into aligned columns: more than six
// entries of similar width are laid out about as a square (a character
// taken as 2.5 times as high as wide), numbers right-aligned, at most
// 4 * compact (12) columns and within breakLength.
function groupArrayElements(ctx, output, value, indentLvl) {
  const separatorSpace = 2;
  let outputLength = output.length;
  // The "... more items" entry is not grouped.
  if (ctx.maxArrayLength !== null && ctx.maxArrayLength < output.length) outputLength--;
  const dataLen = [];
  let totalLength = 0;
  let maxLength = 0;
  for (let i = 0; i < outputLength; i++) {
    const len = visibleLength(output[i]);
    dataLen.push(len);
    totalLength += len + separatorSpace;
    if (maxLength < len) maxLength = len;
  }
  const actualMax = maxLength + separatorSpace;
  // At least three entries must fit side by side, and no entry may dwarf
  // the others (the gaps between short entries would be enormous).
  if (!(actualMax * 3 + indentLvl < ctx.breakLength && (totalLength / actualMax > 5 || maxLength <= 6))) {
    return output;
  }
  const averageBias = Math.sqrt(actualMax - totalLength / output.length);
  const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
  const columns = Math.min(
    Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
    Math.floor((ctx.breakLength - indentLvl) / actualMax),
    kCompactLevels * 4,
    15);
  if (columns <= 1) return output;
  const maxLineLength = [];
  for (let i = 0; i < columns; i++) {
    let lineLength = 0;
    for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
    maxLineLength.push(lineLength + separatorSpace);
  }
  let numeric = true;
  for (let i = 0; i < output.length; i++) {
    if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { numeric = false; break; }
  }
  const grouped = [];
  for (let i = 0; i < outputLength; i += columns) {
    const max = Math.min(i + columns, outputLength);
    let line = '';
    let j = i;
    for (; j < max - 1; j++) {
      const padding = maxLineLength[j - i] + output[j].length - dataLen[j];
      line += numeric ? (output[j] + ', ').padStart(padding, ' ') : (output[j] + ', ').padEnd(padding, ' ');
    }
    if (numeric) {
      line += output[j].padStart(maxLineLength[j - i] + output[j].length - dataLen[j] - separatorSpace, ' ');
    } else {
      line += output[j];
    }
    grouped.push(line);
  }
  if (outputLength < output.length) grouped.push(output[outputLength]);
  return grouped;
}

// util.inspect(value[, options]) and the legacy inspect(value, showHidden,
// depth, colors).
function inspect(v, opts, ...legacy) {
  const ctx = Object.assign({}, inspectDefaults, inspect.defaultOptions);
  if (opts !== null && typeof opts === 'object') {
    for (const k of Object.keys(opts)) if (k in inspectDefaults) ctx[k] = opts[k];
  } else if (opts !== undefined || legacy.length) {
    if (opts !== undefined) ctx.showHidden = Boolean(opts);
    if (legacy.length > 0 && legacy[0] !== undefined) ctx.depth = legacy[0];
    if (legacy.length > 1 && legacy[1] !== undefined) ctx.colors = Boolean(legacy[1]);
  }
  if (ctx.depth === Infinity) ctx.depth = null;
  ctx.currentDepth = 0;
  return formatValue(v, 0, [], false, ctx);
}
inspect.custom = kInspectCustom;
inspect.defaultOptions = Object.assign({}, inspectDefaults);
inspect.colors = inspectColors;
inspect.styles = inspectStyles;

function format(...args) { return formatWithOptions(undefined, ...args); }

// The global constructors ECMAScript defines (node's builtInObjects: the
// capitalized globals of a bare context). Taken from globalThis, whose
// node-like additions (Buffer, URL...) are JS classes, not native code.
let builtInObjects;
function isBuiltInConstructor(f) {
  if (builtInObjects === undefined) {
    builtInObjects = new Set(Object.getOwnPropertyNames(globalThis).filter((e) => /^[A-Z][a-zA-Z0-9]+$/.test(e)));
  }
  return builtInObjects.has(f.name) && globalThis[f.name] === f &&
    /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f));
}

// node's hasBuiltInToString (lib/internal/util/inspect.js): whether %s
// inspects `v` (the toString it would get is a built-in's: Object's,
// Array's, Error's, Date's) or calls String(v) (the object, or a class of
// its own such as Buffer or URL, defines toString).
function hasBuiltInToString(v) {
  if (typeof v.toString !== 'function') return true;
  if (Object.prototype.hasOwnProperty.call(v, 'toString')) return false;
  let p = v;
  do { p = Object.getPrototypeOf(p); } while (p !== null && !Object.prototype.hasOwnProperty.call(p, 'toString'));
  if (p === null) return true;
  const d = Object.getOwnPropertyDescriptor(p, 'constructor');
  return d !== undefined && typeof d.value === 'function' && isBuiltInConstructor(d.value);
}

// %s as node 20 formats it: numbers and bigints as inspect shows them
// (-0, 5n), an object without a toString of its own inspected one level
// deep, anything else (functions, symbols, objects with their own
// toString) through String().
function formatString(v, opts) {
  if (typeof v === 'number' || typeof v === 'bigint') return formatPrimitive(v, true);
  if (typeof v !== 'object' || v === null || !hasBuiltInToString(v)) return String(v);
  return inspect(v, Object.assign({}, opts, { depth: 0, colors: false, compact: 3 }));
}

// %d, %i and %f as node 20: Number(), parseInt() and parseFloat() of the
// argument (a symbol is NaN), shown as inspect shows numbers.
function formatNumberArg(v, c) {
  if (typeof v === 'bigint' && c !== 'f') return v + 'n';
  if (typeof v === 'symbol') return 'NaN';
  return formatPrimitive(c === 'd' ? Number(v) : c === 'i' ? parseInt(v) : parseFloat(v), true);
}

function formatWithOptions(opts, ...args) {
  const show = (v) => inspect(v, opts);
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
        case 's': rep = formatString(args[i], opts); break;
        case 'd': case 'i': case 'f': rep = formatNumberArg(args[i], c); break;
        case 'j': try { rep = JSON.stringify(args[i]); } catch (e) { rep = '[Circular]'; } break;
        case 'o': rep = inspect(args[i], Object.assign({ showHidden: true, depth: 4 }, opts)); break;
        case 'O': rep = show(args[i]); break;
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
    out += typeof args[i] === 'string' ? args[i] : show(args[i]);
  }
  return out;
}

