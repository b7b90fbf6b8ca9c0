// Node-like basics inside a settee isolate: console formatting (util),
// timers and their ordering, process, require() of relative CommonJS modules
// and JSON, Buffer, TextEncoder/TextDecoder, performance.now, EventEmitter.
'use strict';
const assert = require('assert');
const util = require('util');
const path = require('path');
const EventEmitter = require('events');
const { check, done } = require('./lib/harness');

check('util.inspect / util.format like node', () => {
  assert.strictEqual(util.inspect({ a: 1, b: 'x', c: [1, 2, 3] }), "{ a: 1, b: 'x', c: [ 1, 2, 3 ] }");
  assert.strictEqual(util.inspect([]), '[]');
  assert.strictEqual(util.inspect({}), '{}');
  assert.strictEqual(util.inspect('str'), "'str'");
  assert.strictEqual(util.inspect("it's"), '"it\'s"');
  assert.strictEqual(util.inspect(-0), '-0');
  assert.strictEqual(util.inspect(10n), '10n');
  assert.strictEqual(util.inspect(null), 'null');
  assert.strictEqual(util.inspect(undefined), 'undefined');
  assert.strictEqual(util.inspect(Symbol('s')), 'Symbol(s)');
  assert.strictEqual(util.inspect(function foo() {}), '[Function: foo]');
  assert.strictEqual(util.inspect(class Bar {}), '[class Bar]');
  assert.strictEqual(util.inspect({ a: { b: { c: { d: 1 } } } }), '{ a: { b: { c: [Object] } } }');
  const circ = { name: 'c' };
  circ.self = circ;
  assert.strictEqual(util.inspect(circ), "<ref *1> { name: 'c', self: [Circular *1] }");
  assert.strictEqual(util.inspect(new Map([[1, 'a']])), "Map(1) { 1 => 'a' }");
  assert.strictEqual(util.inspect(new Set([1, 2])), 'Set(2) { 1, 2 }');
  assert.strictEqual(util.inspect(new Date(0)), '1970-01-01T00:00:00.000Z');
  assert.strictEqual(util.inspect({ 'a-b': 1 }), "{ 'a-b': 1 }");
  assert.strictEqual(util.inspect(Object.create(null)), '[Object: null prototype] {}');
  class Point { constructor() { this.x = 1; } }
  assert.strictEqual(util.inspect(new Point()), 'Point { x: 1 }');
  assert.strictEqual(util.inspect(new Uint8Array([1, 2])), 'Uint8Array(2) [ 1, 2 ]');
  assert.strictEqual(util.inspect(Buffer.from('hi')), '<Buffer 68 69>');
  const long = util.inspect({ alpha: 'aaaaaaaaaaaaaaaaaaaa', beta: 'bbbbbbbbbbbbbbbbbbbb', gamma: 'cccccccccccccccccccc' });
  assert.strictEqual(long, "{\n  alpha: 'aaaaaaaaaaaaaaaaaaaa',\n  beta: 'bbbbbbbbbbbbbbbbbbbb',\n  gamma: 'cccccccccccccccccccc'\n}");
  assert.ok(util.inspect(new Error('boom')).startsWith('Error: boom\n    at '));
  assert.strictEqual(util.format('%s=%d %j %%', 'x', 42, { a: 1 }), 'x=42 {"a":1} %');
  assert.strictEqual(util.format('a', 1, { b: 2 }), 'a 1 { b: 2 }');
  assert.strictEqual(util.format('%i|%f|%o', 3.9, '1.5', [1]), '3|1.5|[ 1, [length]: 1 ]');
  assert.strictEqual(util.format(1, 'two'), '1 two');
});

check('timers, immediates, ticks and microtasks run in node order', async () => {
  const order = [];
  // From a macrotask (a timer callback), as in node: ticks first, then
  // promise jobs; inside a promise job ticks would wait for the microtasks.
  await new Promise((resolve) => setTimeout(() => {
    setTimeout(() => { order.push('timeout'); }, 0);
    setImmediate(() => { order.push('immediate'); });
    process.nextTick(() => order.push('tick'));
    Promise.resolve().then(() => order.push('promise'));
    queueMicrotask(() => order.push('microtask'));
    setTimeout(resolve, 30);
  }, 0));
  assert.deepStrictEqual(order.slice(0, 3), ['tick', 'promise', 'microtask']);
  assert.deepStrictEqual(order.slice(3).sort(), ['immediate', 'timeout']);
});

check('ticks and promise jobs run after each immediate; unhandled rejections once both queues are empty', async () => {
  const order = [];
  await new Promise((resolve) => {
    setImmediate(() => {
      order.push('immediate 1');
      process.nextTick(() => order.push('tick'));
      Promise.resolve().then(() => order.push('promise'));
    });
    setImmediate(() => { order.push('immediate 2'); setTimeout(resolve, 5); });
  });
  assert.deepStrictEqual(order, ['immediate 1', 'tick', 'promise', 'immediate 2']);
  // node's processTicksAndRejections: a loop that awaits a tick per
  // iteration keeps both queues busy, and the rejection waits for it.
  const seen = [];
  const onUnhandled = (e) => seen.push('unhandled ' + e.message);
  process.on('unhandledRejection', onUnhandled);
  await new Promise((resolve) => setTimeout(() => {
    Promise.reject(new Error('r'));
    (async () => {
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => process.nextTick(r));
        seen.push('loop ' + i);
      }
    })();
    setTimeout(resolve, 5);
  }, 0));
  process.removeListener('unhandledRejection', onUnhandled);
  assert.deepStrictEqual(seen, ['loop 0', 'loop 1', 'loop 2', 'unhandled r']);
});

check('a timer set after a long synchronous stretch waits its whole delay', async () => {
  // The loop's cached clock is stale after synchronous work; node refreshes
  // it when a timer starts, so the delay counts from the setTimeout call.
  await new Promise((r) => setImmediate(r));
  const busyUntil = Date.now() + 120;
  while (Date.now() < busyUntil) { /* keep the thread busy */ }
  const start = Date.now();
  await new Promise((r) => setTimeout(r, 60));
  const waited = Date.now() - start;
  assert.ok(waited >= 59, 'setTimeout(60) fired after ' + waited + ' ms');
});

check('setTimeout args, clearTimeout, setInterval/clearInterval, unref', async () => {
  const got = await new Promise((resolve) => setTimeout((a, b) => resolve(a + b), 1, 'x', 'y'));
  assert.strictEqual(got, 'xy');
  let fired = false;
  const t = setTimeout(() => { fired = true; }, 5);
  clearTimeout(t);
  let n = 0;
  await new Promise((resolve) => {
    const iv = setInterval(() => {
      if (++n === 3) { clearInterval(iv); resolve(); }
    }, 2);
  });
  assert.strictEqual(n, 3);
  await new Promise((r) => setTimeout(r, 15));
  assert.strictEqual(fired, false);
  // An unref'd timer does not keep the thread alive (checked by exiting).
  const u = setTimeout(() => { throw new Error('unref timer must not fire'); }, 60000);
  assert.strictEqual(u.hasRef(), true);
  u.unref();
  assert.strictEqual(u.hasRef(), false);
  const im = setImmediate(() => { throw new Error('cleared immediate ran'); });
  clearImmediate(im);
});

check('process', () => {
  assert.ok(Array.isArray(process.argv));
  assert.ok(process.argv[1].endsWith('node_basics.js'));
  assert.deepStrictEqual(process.argv.slice(2), ['--flag', 'value']);
  assert.strictEqual(typeof process.env.PATH, 'string');
  assert.strictEqual(process.platform, 'linux');
  assert.strictEqual(typeof process.pid, 'number');
  assert.strictEqual(process.threadId, settee.threadId);
  const [s, ns] = process.hrtime();
  assert.ok(s >= 0 && ns >= 0 && ns < 1e9);
  const d = process.hrtime([s, ns]);
  assert.ok(d[0] >= 0);
  const b1 = process.hrtime.bigint();
  const b2 = process.hrtime.bigint();
  assert.strictEqual(typeof b1, 'bigint');
  assert.ok(b2 >= b1);
  const m = process.memoryUsage();
  assert.ok(m.rss > 0 && m.heapUsed > 0 && m.heapTotal >= m.heapUsed);
  assert.strictEqual(typeof process.cwd(), 'string');
  const cpu = process.cpuUsage();
  assert.ok(cpu.user > 0 && cpu.system >= 0);
  const dcpu = process.cpuUsage(cpu);
  assert.ok(dcpu.user >= 0 && dcpu.user < cpu.user + 1e9);
  // The thread's own CPU time: it grows with the thread's work, and the
  // process's (which counts the calling thread to the microsecond too) grows
  // at least as much.
  const t0 = process.threadCpuUsage();
  const p0 = process.cpuUsage();
  assert.ok(t0.user >= 0 && t0.system >= 0);
  let dt;
  const deadline = performance.now() + 10000;
  do { dt = process.threadCpuUsage(t0); } while (dt.user + dt.system < 20000 && performance.now() < deadline);
  const dp = process.cpuUsage(p0);
  const spun = dt.user + dt.system;
  assert.ok(spun >= 20000, 'thread CPU after spinning: ' + spun + ' us');
  assert.ok(dp.user + dp.system >= spun - 4000, 'process ' + (dp.user + dp.system) + " us against the thread's " + spun);
  assert.strictEqual(typeof process.nextTick, 'function');
});

check('require: relative modules, .json, caching, cycles, package main, errors', () => {
  const c1 = require('./lib/counter_module');
  const c2 = require('./lib/counter_module.js');
  assert.strictEqual(c1, c2);
  assert.strictEqual(c1.next(), 1);
  assert.strictEqual(c2.next(), 2);
  assert.strictEqual(c1.isMain, false);
  assert.strictEqual(c1.filename, path.join(__dirname, 'lib', 'counter_module.js'));
  assert.strictEqual(c1.dirname, path.join(__dirname, 'lib'));
  assert.strictEqual(require.main, module);

  const data = require('./lib/data.json');
  assert.deepStrictEqual(data, { answer: 42, list: ['x', 'y'], text: 'caf\u00e9' });
  // A UTF-8 byte order mark before JSON is skipped, as node does (for
  // required .json and for package.json).
  assert.deepStrictEqual(require('./lib/bom.json'), { saved: 'by an editor that writes a BOM' });
  assert.strictEqual(require('./lib/bom_pkg'), 'bom package main');

  const a = require('./lib/cycle_a');
  assert.strictEqual(a.seenB, 'b');
  assert.deepStrictEqual(a.bSawA, { name: 'a', loaded: false });
  assert.strictEqual(a.loaded, true);

  assert.strictEqual(require('./lib/pkg'), 'from package main');
  assert.throws(() => require('./lib/nope'), { code: 'MODULE_NOT_FOUND' });
  assert.throws(() => require('left-pad'), { code: 'MODULE_NOT_FOUND' });
  // Bare names come from node_modules/ here or in a parent directory, through
  // package.json "main" or "exports" (its "require" condition), as in node.
  const fixture = path.join(__dirname, 'lib', 'modules_fixture');
  assert.deepStrictEqual(require('./lib/modules_fixture/sub/deeper/caller.js'), {
    plain: 'plain main with dep',
    extra: 'plain extra',
    exp: 'exports require',
    feature: 'feature',
    resolved: path.join(fixture, 'node_modules', 'plain', 'lib', 'entry.js'),
  });
  assert.strictEqual(require.resolve('pouchdb'), 'pouchdb');
  assert.strictEqual(require('events'), EventEmitter);
  assert.strictEqual(require('node:assert'), assert);
  assert.strictEqual(require('pouchdb'), PouchDB);
  assert.strictEqual(require.resolve('./lib/data.json'), path.join(__dirname, 'lib', 'data.json'));
});

check('Buffer, TextEncoder, TextDecoder', () => {
  const enc = new TextEncoder();
  const bytes = enc.encode('h\u00e9\ud83d\ude00');
  assert.ok(bytes instanceof Uint8Array);
  assert.deepStrictEqual(Array.from(bytes), [0x68, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]);
  assert.strictEqual(new TextDecoder().decode(bytes), 'h\u00e9\ud83d\ude00');
  assert.strictEqual(new TextDecoder().decode(new Uint8Array([0xff, 0x41])), '\ufffdA');
  assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xc3])), TypeError);
  assert.strictEqual(new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), 'A');

  const b = Buffer.from('hello w\u00f6rld');
  assert.ok(b instanceof Uint8Array);
  assert.ok(Buffer.isBuffer(b));
  assert.strictEqual(b.length, 12);
  assert.strictEqual(b.toString(), 'hello w\u00f6rld');
  assert.strictEqual(Buffer.from('hi').toString('hex'), '6869');
  assert.strictEqual(Buffer.from('6869', 'hex').toString(), 'hi');
  assert.strictEqual(Buffer.from('hello').toString('base64'), 'aGVsbG8=');
  assert.strictEqual(Buffer.from('aGVsbG8=', 'base64').toString(), 'hello');
  assert.strictEqual(Buffer.concat([Buffer.from('a'), Buffer.from('bc')]).toString(), 'abc');
  assert.strictEqual(Buffer.byteLength('\u00e9'), 2);
  assert.ok(Buffer.from([1, 2, 3]).equals(Buffer.from([1, 2, 3])));
  assert.strictEqual(Buffer.alloc(3, 7).toString('hex'), '070707');
  assert.strictEqual(btoa('hi'), 'aGk=');
  assert.strictEqual(atob('aGk='), 'hi');
});

check('performance.now and EventEmitter', async () => {
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 5));
  assert.ok(performance.now() > t0);
  const e = new EventEmitter();
  const seen = [];
  e.on('x', (v) => seen.push('on:' + v));
  e.once('x', (v) => seen.push('once:' + v));
  e.emit('x', 1);
  e.emit('x', 2);
  assert.deepStrictEqual(seen, ['on:1', 'once:1', 'on:2']);
  assert.strictEqual(e.listenerCount('x'), 1);
  assert.throws(() => e.emit('error', new Error('unhandled')), /unhandled/);
});

check('tty.isatty and the standard streams\' descriptors (chalk and debug ask them)', () => {
  const tty = require('tty');
  assert.strictEqual(require('node:tty'), tty);
  assert.strictEqual(process.stdout.fd, 1);
  assert.strictEqual(process.stderr.fd, 2);
  assert.strictEqual(typeof tty.isatty(process.stdout.fd), 'boolean');
  for (const fd of [-1, 1.5, '1', undefined, 1e6]) assert.strictEqual(tty.isatty(fd), false, String(fd));
  assert.strictEqual(typeof tty.WriteStream, 'function');
});

check('settee object', () => {
  assert.strictEqual(typeof settee.threadId, 'number');
  assert.ok(settee.threadCount >= 1);
  assert.strictEqual(typeof settee.tasks.run, 'function');
  assert.strictEqual(settee.restartCount, 0);
});

done();
