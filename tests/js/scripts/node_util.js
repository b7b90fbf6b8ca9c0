// node's util, events, path, assert, timers/promises, querystring and
// string_decoder modules and the web globals node has (AbortController,
// EventTarget, structuredClone, performance marks) in settee run; runs
// unchanged in node, which is where the expected values come from.
'use strict';
const assert = require('assert');
const strict = require('assert/strict');
const util = require('util');
const events = require('events');
const path = require('path');
const qs = require('querystring');
const { StringDecoder } = require('string_decoder');
const timersPromises = require('timers/promises');
const { performance: perf } = require('perf_hooks');
const { check, done } = require('./lib/harness');

check('util.inspect options and layout as node prints them', () => {
  const deep = { a: { b: { c: { d: { e: 1 } } } }, arr: [1, 'two', [3, [4, [5]]]] };
  assert.strictEqual(util.inspect(deep), "{ a: { b: { c: [Object] } }, arr: [ 1, 'two', [ 3, [Array] ] ] }");
  assert.strictEqual(util.inspect(deep, { depth: null }),
    "{\n  a: {\n    b: { c: { d: { e: 1 } } }\n  },\n  arr: [\n    1,\n    'two',\n    [ 3, [ 4, [ 5 ] ] ]\n  ]\n}");
  assert.strictEqual(util.inspect(deep, { depth: 0 }), '{ a: [Object], arr: [Array] }');
  assert.strictEqual(util.inspect({ s: 'x', n: 1, nul: null }, { colors: true }),
    "{ s: \u001b[32m'x'\u001b[39m, n: \u001b[33m1\u001b[39m, nul: \u001b[1mnull\u001b[22m }");
  class P { constructor() { this.x = 1; } [util.inspect.custom]() { return 'P<' + this.x + '>'; } }
  assert.strictEqual(util.inspect({ p: new P() }), '{ p: P<1> }');
  assert.strictEqual(util.inspect(Array.from({ length: 120 }, (_, i) => i), { maxArrayLength: 3 }), '[ 0, 1, 2, ... 117 more items ]');
  assert.strictEqual(util.inspect('a'.repeat(20), { maxStringLength: 5 }), "'aaaaa'... 15 more characters");
  assert.strictEqual(util.inspect({ b: 1, a: 2 }, { sorted: true }), '{ a: 2, b: 1 }');
  // A Map's or Set's own properties (immer's frozen Map), an array's length with showHidden (%o).
  const m = new Map([[1, 2]]);
  m.extra = 'own';
  const st = new Set();
  st.tag = 1;
  assert.strictEqual(util.inspect([m, st]), "[ Map(1) { 1 => 2, extra: 'own' }, Set(0) { tag: 1 } ]");
  assert.strictEqual(util.format('%o', [1]), '[ 1, [length]: 1 ]');
  // Promises show their state and value; weak collections cannot list theirs.
  const tagged = Promise.resolve(3);
  tagged.tag = 1;
  const rejected = Promise.reject(2);
  rejected.catch(() => {});
  assert.strictEqual(util.inspect([tagged, new Promise(() => {}), rejected]),
    '[\n  Promise { 3, tag: 1 },\n  Promise { <pending> },\n  Promise { <rejected> 2 }\n]');
  assert.strictEqual(util.inspect(Promise.resolve({ a: { b: { c: {} } } })), 'Promise { { a: { b: [Object] } } }');
  assert.strictEqual(util.inspect({ d: { e: { f: Promise.resolve(1) } } }), '{ d: { e: { f: [Promise] } } }');
  assert.strictEqual(util.inspect([new WeakMap(), new WeakSet()]), '[ WeakMap { <items unknown> }, WeakSet { <items unknown> } ]');
  // Objects met again are numbered, and marked where they are shown.
  const a = { n: 'a' };
  a.b = { n: 'b', a };
  a.me = a;
  assert.strictEqual(util.inspect(a), "<ref *1> { n: 'a', b: { n: 'b', a: [Circular *1] }, me: [Circular *1] }");
  const arr = [1];
  arr.push({ arr, inner: [arr] });
  assert.strictEqual(util.inspect({ arr }), '{ arr: <ref *1> [ 1, { arr: [Circular *1], inner: [Array] } ] }');
  assert.strictEqual(util.inspect(a.b, { colors: true }),
    "\u001b[36m<ref *1>\u001b[39m {\n  n: \u001b[32m'b'\u001b[39m,\n  a: \u001b[36m<ref *2>\u001b[39m { n: \u001b[32m'a'\u001b[39m, " +
    "b: \u001b[36m[Circular *1]\u001b[39m, me: \u001b[36m[Circular *2]\u001b[39m }\n}");
  assert.strictEqual(util.inspect({ get g() { return 42; } }, { getters: true }), '{ g: [Getter: 42] }');
  assert.strictEqual(util.formatWithOptions({ depth: 0 }, 'x %O', { a: { b: 1 } }), 'x { a: [Object] }');
  // Long arrays are grouped into aligned columns, numbers to the right.
  assert.strictEqual(util.inspect(Array.from({ length: 30 }, (_, i) => i * 37)),
    '[\n' +
    '    0,  37,  74, 111,  148,  185,\n' +
    '  222, 259, 296, 333,  370,  407,\n' +
    '  444, 481, 518, 555,  592,  629,\n' +
    '  666, 703, 740, 777,  814,  851,\n' +
    '  888, 925, 962, 999, 1036, 1073\n' +
    ']');
  assert.strictEqual(util.inspect(Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i).repeat(i % 4 + 1))),
    "[\n  'a', 'bb', 'ccc', 'dddd',\n  'e', 'ff', 'ggg', 'hhhh',\n  'i', 'jj', 'kkk', 'llll',\n" +
    "  'm', 'nn', 'ooo', 'pppp',\n  'q', 'rr', 'sss', 'tttt',\n  'u', 'vv', 'www', 'xxxx',\n  'y', 'zz'\n]");
  assert.strictEqual(util.inspect(['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'honeydew']),
    "[\n  'apple',\n  'banana',\n  'cherry',\n  'date',\n  'elderberry',\n  'fig',\n  'grape',\n  'honeydew'\n]");
});

// %s shows an object without a toString of its own one level deep, and
// calls String() on the rest (functions, symbols, a class's or an own
// toString, Buffer and URL); %d, %i and %f are Number(), parseInt() and
// parseFloat() (settee inspected every object fully, printed functions as
// undefined and kept -0 for %i).
check('util.format %s, %d, %i and %f as node 20 formats them', () => {
  class Named { toString() { return 'named!'; } }
  class Plain { constructor() { this.a = { b: { c: 1 } }; } }
  assert.strictEqual(util.format('%s', { a: { b: { c: { d: 1 } } } }), '{ a: [Object] }');
  assert.strictEqual(util.format('%s', [1, [2, [3, [4]]]]), '[ 1, [Array] ]');
  assert.strictEqual(util.format('%s|%s', new Named(), new Plain()), 'named!|Plain { a: [Object] }');
  assert.strictEqual(util.format('%s', { toString() { return 'own'; } }), 'own');
  assert.strictEqual(util.format('%s', function f() { return 1; }), 'function f() { return 1; }');
  assert.strictEqual(util.format('%s %s %s', Symbol('s'), -0, 5n), 'Symbol(s) -0 5n');
  assert.strictEqual(util.format('%s %s', Buffer.from('ab'), new URL('http://x/y')), 'ab http://x/y');
  assert.strictEqual(util.format('%s', new Map([[1, { a: { b: 1 } }]])), 'Map(1) { 1 => [Object] }');
  assert.strictEqual(util.format('%s', new Date(0)), '1970-01-01T00:00:00.000Z');
  assert.strictEqual(util.format('%s', new Error('e')).split('\n')[0], 'Error: e');
  assert.strictEqual(util.format('%s', Object.create(null)), '[Object: null prototype] {}');
  assert.strictEqual(util.format('%d %i %f', '42.5', '42.5', '42.5'), '42.5 42 42.5');
  assert.strictEqual(util.format('%i %i %f %d', -0, 1e21, -0, -0), '0 1 0 -0');
  assert.strictEqual(util.format('%d %i %f', Symbol('x'), Symbol('y'), Symbol('z')), 'NaN NaN NaN');
  assert.strictEqual(util.format('%d %i %f', 5n, 6n, 7n), '5n 6n 7');
});

check('util: promisify (and its custom form), callbackify, inherits, deprecate, types', async () => {
  const cbFn = (a, b, cb) => setImmediate(() => (a < 0 ? cb(new Error('negative')) : cb(null, a + b)));
  const p = util.promisify(cbFn);
  assert.strictEqual(await p(1, 2), 3);
  await assert.rejects(p(-1, 2), /negative/);
  const sleep = util.promisify(setTimeout);
  assert.strictEqual(sleep, timersPromises.setTimeout);
  assert.strictEqual(await sleep(2, 'woke'), 'woke');
  const custom = function () {};
  custom[util.promisify.custom] = () => Promise.resolve('custom');
  assert.strictEqual(await util.promisify(custom)(), 'custom');
  const cb = util.callbackify(async (x) => { if (x) return x * 2; throw null; });
  assert.strictEqual(await new Promise((res) => cb(21, (e, v) => res(v))), 42);
  const err = await new Promise((res) => cb(0, (e) => res(e)));
  assert.strictEqual(err.code, 'ERR_FALSY_VALUE_REJECTION');
  function Base() {}
  Base.prototype.hello = () => 'hi';
  function Derived() { Base.call(this); }
  util.inherits(Derived, Base);
  assert.strictEqual(new Derived().hello(), 'hi');
  assert.strictEqual(Derived.super_, Base);
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const old = util.deprecate((x) => x + 1, 'old() is deprecated', 'DEP_SETTEE_TEST');
  assert.strictEqual(old(1) + old(2), 5);
  await new Promise((r) => setImmediate(r));
  process.removeListener('warning', onWarning);
  assert.strictEqual(warnings.length, 1);
  assert.strictEqual(warnings[0].name, 'DeprecationWarning');
  assert.strictEqual(warnings[0].code, 'DEP_SETTEE_TEST');
  const t = util.types;
  assert.ok(t.isMap(new Map()) && t.isSet(new Set()) && t.isUint8Array(Buffer.from('x')) && t.isTypedArray(new Float64Array(1)));
  assert.ok(t.isAsyncFunction(async () => {}) && !t.isAsyncFunction(() => {}) && t.isGeneratorFunction(function* () {}));
  assert.ok(t.isArrayBuffer(new ArrayBuffer(1)) && t.isNativeError(new TypeError()) && !t.isNativeError({}));
  assert.ok(t.isProxy(new Proxy({}, {})) && !t.isProxy({}));
  assert.strictEqual(require('util/types'), t);
  assert.strictEqual(util.stripVTControlCharacters('\u001b[31mred\u001b[39m'), 'red');
});

check('events: once, on, prependListener, errorMonitor, listener bookkeeping', async () => {
  const e = new events.EventEmitter();
  setImmediate(() => e.emit('ready', 1, 2));
  assert.deepStrictEqual(await events.once(e, 'ready'), [1, 2]);
  setImmediate(() => e.emit('error', new Error('boom')));
  await assert.rejects(events.once(e, 'never'), /boom/);
  assert.strictEqual(e.listenerCount('never'), 0);
  // events.once is an async function: its promise settles two microtasks
  // after the event, after a then() queued just after the emit.
  const turns = [];
  const settled = events.once(e, 'go').then(() => turns.push('once'));
  e.emit('go');
  await Promise.all([settled, Promise.resolve().then(() => turns.push('then'))]);
  assert.deepStrictEqual(turns, ['then', 'once']);
  assert.strictEqual(e.listenerCount('error'), 0);
  const order = [];
  e.on('x', () => order.push('on'));
  e.prependListener('x', () => order.push('prepend'));
  e.prependOnceListener('x', () => order.push('prepend-once'));
  e.emit('x');
  e.emit('x');
  assert.deepStrictEqual(order, ['prepend-once', 'prepend', 'on', 'prepend', 'on']);
  const monitored = [];
  e.on(events.errorMonitor, (err) => monitored.push(err.message));
  assert.throws(() => e.emit('error', new Error('unhandled')), /unhandled/);
  assert.deepStrictEqual(monitored, ['unhandled']);
  assert.strictEqual(e.getMaxListeners(), events.defaultMaxListeners);
  const seen = [];
  setImmediate(() => { e.emit('tick', 'a'); e.emit('tick', 'b'); e.emit('tick', 'c'); });
  for await (const [v] of events.on(e, 'tick')) {
    seen.push(v);
    if (seen.length === 3) break;
  }
  assert.deepStrictEqual(seen, ['a', 'b', 'c']);
  assert.strictEqual(e.listenerCount('tick'), 0);
  const target = new EventTarget();
  setImmediate(() => target.dispatchEvent(new Event('ping')));
  const [event] = await events.once(target, 'ping');
  assert.strictEqual(event.type, 'ping');
});

check('path: relative, parse, format', () => {
  assert.strictEqual(path.relative('/a/b/c', '/a/d'), '../../d');
  assert.strictEqual(path.relative('/a', '/a'), '');
  assert.strictEqual(path.relative('/a/b', '/a/b/c/d'), 'c/d');
  assert.deepStrictEqual(path.parse('/home/u/file.tar.gz'), { root: '/', dir: '/home/u', base: 'file.tar.gz', ext: '.gz', name: 'file.tar' });
  assert.deepStrictEqual(path.parse('.bashrc'), { root: '', dir: '', base: '.bashrc', ext: '', name: '.bashrc' });
  assert.deepStrictEqual(path.parse('a//b.js/'), { root: '', dir: 'a/', base: 'b.js', ext: '.js', name: 'b' });
  assert.strictEqual(path.format({ dir: '/x', name: 'f', ext: '.js' }), '/x/f.js');
  assert.strictEqual(path.format({ root: '/', base: 'f.js' }), '/f.js');
  assert.strictEqual(path.posix, path);
});

check('assert: loose and strict deep equality, doesNotMatch, ifError', () => {
  assert.deepEqual({ a: 1, b: [2] }, { a: '1', b: ['2'] });
  assert.throws(() => assert.deepStrictEqual({ a: 1 }, { a: '1' }), { code: 'ERR_ASSERTION' });
  assert.throws(() => strict.deepEqual({ a: 1 }, { a: '1' }), { code: 'ERR_ASSERTION' });
  assert.throws(() => strict.equal(1, '1'), { code: 'ERR_ASSERTION' });
  assert.equal(1, '1');
  assert.notDeepEqual({ a: 1 }, { a: 2 });
  assert.doesNotMatch('abc', /x/);
  assert.throws(() => assert.doesNotMatch('abc', /b/), { code: 'ERR_ASSERTION' });
  assert.ifError(null);
  assert.throws(() => assert.ifError(new Error('e')), { code: 'ERR_ASSERTION', message: 'ifError got unwanted exception: e' });
});

check('timers/promises and AbortController', async () => {
  assert.strictEqual(await timersPromises.setTimeout(1, 'v'), 'v');
  assert.strictEqual(await timersPromises.setImmediate('i'), 'i');
  const ac = new AbortController();
  const pending = timersPromises.setTimeout(10000, 'never', { signal: ac.signal });
  ac.abort();
  await assert.rejects(pending, { name: 'AbortError', code: 'ABORT_ERR' });
  assert.ok(ac.signal.aborted);
  assert.strictEqual(ac.signal.reason.name, 'AbortError');
  assert.ok(ac.signal.reason instanceof DOMException);
  assert.strictEqual(ac.signal.reason.code, 20);
  assert.throws(() => ac.signal.throwIfAborted(), { name: 'AbortError' });
  let ticks = 0;
  for await (const v of timersPromises.setInterval(1, 'tick')) {
    assert.strictEqual(v, 'tick');
    if (++ticks === 3) break;
  }
  // AbortSignal.timeout's timer does not keep the thread alive: this one does.
  const keepAlive = setTimeout(() => {}, 10000);
  const timeout = AbortSignal.timeout(5);
  await new Promise((r) => timeout.addEventListener('abort', r, { once: true }));
  clearTimeout(keepAlive);
  assert.strictEqual(timeout.reason.name, 'TimeoutError');
  const a = new AbortController();
  const any = AbortSignal.any([a.signal, AbortSignal.timeout(100000)]);
  a.abort('why');
  assert.ok(any.aborted);
  assert.strictEqual(any.reason, 'why');
  let onabort = 0;
  const b = new AbortController();
  b.signal.onabort = () => onabort++;
  b.abort();
  b.abort();
  assert.strictEqual(onabort, 1);
});

check('EventTarget and Event dispatch', () => {
  const t = new EventTarget();
  const calls = [];
  const fn = (e) => calls.push(e.type + ':' + (e.target === t));
  t.addEventListener('go', fn);
  t.addEventListener('go', fn);  // the same listener once
  t.addEventListener('go', { handleEvent: () => calls.push('object') }, { once: true });
  t.addEventListener('go', (e) => e.preventDefault());
  assert.strictEqual(t.dispatchEvent(new Event('go', { cancelable: true })), false);
  assert.strictEqual(t.dispatchEvent(new Event('go')), true);
  assert.deepStrictEqual(calls, ['go:true', 'object', 'go:true']);
  t.removeEventListener('go', fn);
  const custom = new CustomEvent('c', { detail: { n: 1 } });
  assert.deepStrictEqual(custom.detail, { n: 1 });
  const ac = new AbortController();
  let heard = 0;
  t.addEventListener('s', () => heard++, { signal: ac.signal });
  t.dispatchEvent(new Event('s'));
  ac.abort();
  t.dispatchEvent(new Event('s'));
  assert.strictEqual(heard, 1);
});

check('structuredClone copies deeply and refuses what cannot be cloned', () => {
  const src = { d: new Date(5), m: new Map([[1, { x: [1, 2] }]]), s: new Set(['a']), re: /x/gi, u8: new Uint8Array([1, 2, 3]), big: 10n };
  src.self = src;
  const copy = structuredClone(src);
  assert.notStrictEqual(copy, src);
  assert.strictEqual(copy.self, copy);
  assert.strictEqual(copy.d.getTime(), 5);
  assert.deepStrictEqual(copy.m.get(1), { x: [1, 2] });
  assert.notStrictEqual(copy.m.get(1), src.m.get(1));
  assert.ok(copy.s.has('a') && copy.re.flags === 'gi' && copy.u8[2] === 3 && copy.big === 10n);
  assert.throws(() => structuredClone({ f() {} }), (e) => e instanceof DOMException && e.name === 'DataCloneError');
  assert.throws(() => structuredClone({ get x() { throw new RangeError('getter'); } }), RangeError);
  const buf = new ArrayBuffer(8);
  const moved = structuredClone(buf, { transfer: [buf] });
  assert.strictEqual(moved.byteLength, 8);
  assert.strictEqual(buf.byteLength, 0);
  const e = structuredClone(new TypeError('cloned'));
  assert.ok(e instanceof TypeError);
  assert.strictEqual(e.message, 'cloned');
});

check('querystring and string_decoder', () => {
  const parsed = qs.parse('a=1&a=2&b=x+y&c&d=%E2%82%AC&e=%ZZ');
  assert.deepStrictEqual({ ...parsed }, { a: ['1', '2'], b: 'x y', c: '', d: '\u20ac', e: '%ZZ' });
  assert.strictEqual(Object.getPrototypeOf(parsed), null);
  assert.strictEqual(qs.stringify({ a: [1, 2], b: 'x y', c: true, d: null, e: '\u20ac' }), 'a=1&a=2&b=x%20y&c=true&d=&e=%E2%82%AC');
  assert.deepStrictEqual({ ...qs.parse('k:v;k2:v2', ';', ':') }, { k: 'v', k2: 'v2' });
  assert.strictEqual(qs.escape("a b&c/d!'()*~"), "a%20b%26c%2Fd!'()*~");
  const euro = Buffer.from('\u20ac');
  const d = new StringDecoder('utf8');
  assert.strictEqual(d.write(euro.subarray(0, 1)), '');
  assert.strictEqual(d.write(euro.subarray(1)), '\u20ac');
  assert.strictEqual(d.write(euro.subarray(0, 2)), '');
  assert.strictEqual(d.end(), '\ufffd');
  const b64 = new StringDecoder('base64');
  assert.strictEqual(b64.write(Buffer.from('ab')) + b64.write(Buffer.from('cd')) + b64.end(), 'YWJj' + 'ZA==');
  const u16 = new StringDecoder('utf16le');
  const smile = Buffer.from('\ud83d\ude00', 'utf16le');
  // An odd byte waits; a complete unit goes out even if it is half a pair.
  assert.strictEqual(u16.write(smile.subarray(0, 3)), '\ud83d');
  assert.strictEqual(u16.write(smile.subarray(3)), '\ude00');
  assert.strictEqual(u16.write(smile.subarray(0, 2)), '');
  assert.strictEqual(u16.end(), '\ud83d');
  assert.strictEqual(util.inspect('\ud83d'), "'\\ud83d'");
});

check('console.table, group and countReset as node writes them', () => {
  // console writes through process.stdout.write, so replacing it captures.
  const lines = [];
  const saved = process.stdout.write;
  process.stdout.write = (s) => { lines.push(String(s)); return true; };
  try {
    console.table([{ a: 1, b: 'x' }, { a: 2, c: [1, 2, 3, 4] }, 7]);
    console.table({ r: { x: 1 } }, ['x', 'y']);
    console.table(new Map([['k', { deep: { er: 1 } }]]));
    console.table(new Set(['s']));
    console.table('plain');
    console.group('G');
    console.log('in\ntwo lines');
    console.group();
    console.count('c');
    console.groupEnd();
    console.groupEnd();
    console.count('c');
    console.countReset('c');
    console.count('c');
  } finally {
    process.stdout.write = saved;
  }
  assert.strictEqual(lines.join(''), [
    '┌─────────┬───┬─────┬──────────────────────────────┬────────┐',
    '│ (index) │ a │ b   │ c                            │ Values │',
    '├─────────┼───┼─────┼──────────────────────────────┼────────┤',
    "│ 0       │ 1 │ 'x' │                              │        │",
    '│ 1       │ 2 │     │ [ 1, 2, 3, ... 1 more item ] │        │',
    '│ 2       │   │     │                              │ 7      │',
    '└─────────┴───┴─────┴──────────────────────────────┴────────┘',
    '┌─────────┬───┬───┐',
    '│ (index) │ x │ y │',
    '├─────────┼───┼───┤',
    '│ r       │ 1 │   │',
    '└─────────┴───┴───┘',
    '┌───────────────────┬─────┬────────────────────┐',
    '│ (iteration index) │ Key │ Values             │',
    '├───────────────────┼─────┼────────────────────┤',
    "│ 0                 │ 'k' │ { deep: [Object] } │",
    '└───────────────────┴─────┴────────────────────┘',
    '┌───────────────────┬────────┐',
    '│ (iteration index) │ Values │',
    '├───────────────────┼────────┤',
    "│ 0                 │ 's'    │",
    '└───────────────────┴────────┘',
    'plain',
    'G',
    '  in',
    '  two lines',
    '    c: 1',
    'c: 2',
    'c: 1',
    '',
  ].join('\n'));
});

check('performance marks and measures', () => {
  performance.clearMarks();
  performance.clearMeasures();
  assert.strictEqual(perf, performance);
  const a = performance.mark('a', { detail: { step: 1 } });
  assert.strictEqual(a.entryType, 'mark');
  assert.deepStrictEqual(a.detail, { step: 1 });
  let x = 0;
  for (let i = 0; i < 1e5; i++) x += i;
  performance.mark('b');
  const m = performance.measure('a to b', 'a', 'b');
  assert.ok(m.duration >= 0 && x > 0);
  assert.strictEqual(m.startTime, a.startTime);
  assert.strictEqual(performance.getEntriesByName('a to b')[0], m);
  assert.deepStrictEqual(performance.getEntriesByType('mark').map((e) => e.name), ['a', 'b']);
  const fixed = performance.measure('fixed', { start: 10, duration: 5 });
  assert.strictEqual(fixed.startTime, 10);
  assert.strictEqual(fixed.duration, 5);
  assert.throws(() => performance.measure('bad', 'no-such-mark'), { name: 'SyntaxError' });
  performance.clearMarks('a');
  assert.deepStrictEqual(performance.getEntriesByType('mark').map((e) => e.name), ['b']);
});

done();
