// node's stream module in settee run (node-readable-stream underneath):
// the classes, pipe, pipeline and finished in callback and promise forms,
// Readable.from, async iteration, piping into process.stdout, and fs's read
// and write streams. Runs unchanged in node.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const stream = require('stream');
const { Readable, Writable, Duplex, Transform, PassThrough } = stream;
const { check, done } = require('./lib/harness');

const root = path.join(process.env.TMPDIR || '/tmp', 'settee-stream-' + process.pid + '-' + Date.now());

// A Writable that keeps what it is given, as strings.
function collector() {
  const got = [];
  const w = new Writable({ write(chunk, encoding, cb) { got.push(String(chunk)); cb(); } });
  w.got = got;
  return w;
}
const upper = () => new Transform({ transform(chunk, encoding, cb) { cb(null, String(chunk).toUpperCase()); } });
const onceEvent = (emitter, name) => new Promise((resolve) => emitter.once(name, resolve));

check('the module is the legacy Stream with the classes on it', () => {
  assert.strictEqual(typeof stream, 'function');
  assert.strictEqual(require('node:stream'), stream);
  assert.strictEqual(stream.Stream, stream);
  for (const C of [Readable, Writable, Duplex, Transform, PassThrough]) assert.ok(new C() instanceof stream, C.name);
  assert.ok(new Transform() instanceof Duplex);
  assert.ok(new PassThrough() instanceof Transform);
  assert.ok(new Duplex() instanceof Readable);
  assert.ok(new Readable() instanceof require('events'));
  assert.strictEqual(typeof stream.pipeline, 'function');
  assert.strictEqual(typeof stream.finished, 'function');
  assert.strictEqual(require('stream/promises'), stream.promises);
  assert.strictEqual(require('node:stream/promises'), stream.promises);
});

check('old-style code calls EventEmitter and Stream on its own objects; a bare Stream pipes', async () => {
  const EventEmitter = require('events');
  const util = require('util');
  function Emitter() { EventEmitter.call(this); }
  util.inherits(Emitter, EventEmitter);
  const e = new Emitter();
  let got;
  e.on('x', (v) => { got = v; });
  e.emit('x', 1);
  assert.strictEqual(got, 1);
  EventEmitter.call(e);  // keeps the listeners it has, as node's does
  assert.strictEqual(e.listenerCount('x'), 1);
  assert.strictEqual(new EventEmitter().constructor, EventEmitter);

  // through's shape: a Stream that emits 'data' and 'end' itself.
  function Source() { stream.call(this); this.readable = true; }
  util.inherits(Source, stream);
  const src = new Source();
  const w = collector();
  const events = [];
  w.on('pipe', (s) => events.push(s === src));
  assert.strictEqual(src.pipe(w), w);
  src.emit('data', 'a');
  src.emit('data', 'b');
  src.emit('end');
  await onceEvent(w, 'finish');
  assert.deepStrictEqual(w.got, ['a', 'b']);
  assert.deepStrictEqual(events, [true]);
});

check('a Readable pushes, pauses and ends; objectMode and encoding', async () => {
  const chunks = ['one', 'two', 'three'];
  const r = new Readable({ read() { this.push(chunks.length ? chunks.shift() : null); } });
  r.setEncoding('utf8');
  const seen = [];
  r.on('data', (s) => seen.push(s));
  await onceEvent(r, 'end');
  assert.deepStrictEqual(seen, ['one', 'two', 'three']);

  const objects = new Readable({ objectMode: true, read() {} });
  objects.push({ a: 1 });
  objects.push(null);
  assert.deepStrictEqual(objects.read(), { a: 1 });
  // The old style: inheriting with util.inherits and calling the constructor.
  function Counter() { Readable.call(this, { objectMode: true }); this.n = 0; }
  require('util').inherits(Counter, Readable);
  Counter.prototype._read = function () { this.push(this.n < 3 ? this.n++ : null); };
  const counted = [];
  for await (const n of new Counter()) counted.push(n);
  assert.deepStrictEqual(counted, [0, 1, 2]);
});

check('once() listeners start a Readable as on() does', async () => {
  // node's once goes through the stream's on: 'data' makes it flow,
  // 'readable' makes it read.
  const flowing = new Readable({ read() { this.push('a'); this.push(null); } });
  const got = await new Promise((resolve) => flowing.once('data', (c) => resolve(String(c))));
  assert.strictEqual(got, 'a');
  const paused = new Readable({ read() { this.push('abc'); this.push(null); } });
  await new Promise((resolve) => paused.once('readable', resolve));
  assert.strictEqual(String(paused.read(2)), 'ab');
});

check('pipe, Transform and Duplex', async () => {
  const w = collector();
  Readable.from(['a', 'b']).pipe(upper()).pipe(w);
  assert.deepStrictEqual([w.writableEnded, w.writableFinished], [false, false]);
  await onceEvent(w, 'finish');
  assert.deepStrictEqual(w.got, ['A', 'B']);
  assert.deepStrictEqual([w.writableEnded, w.writableFinished], [true, true]);
  const ended = Readable.from(['e']);
  assert.strictEqual(ended.readableEnded, false);
  ended.resume();
  await onceEvent(ended, 'end');
  assert.strictEqual(ended.readableEnded, true);
  const duplex = new PassThrough();
  duplex.end();
  assert.strictEqual(duplex.writableEnded, true);

  const d = new Duplex({
    read() {},
    write(chunk, encoding, cb) { this.push('<' + chunk + '>'); cb(); },
    final(cb) { this.push(null); cb(); },
  });
  const w2 = collector();
  d.pipe(w2);
  d.write('x');
  d.end('y');
  await onceEvent(w2, 'finish');
  assert.deepStrictEqual(w2.got, ['<x>', '<y>']);
});

check('pipeline and finished, with callbacks and with promises', async () => {
  const w = collector();
  const err = await new Promise((resolve) => stream.pipeline(Readable.from(['p', 'q']), upper(), new PassThrough(), w, resolve));
  assert.ok(err === undefined || err === null);
  assert.deepStrictEqual(w.got, ['P', 'Q']);

  const failing = new Transform({ transform(chunk, encoding, cb) { cb(new Error('bad chunk')); } });
  const failed = await new Promise((resolve) => stream.pipeline(Readable.from(['z']), failing, collector(), resolve));
  assert.strictEqual(failed.message, 'bad chunk');

  const promises = require('stream/promises');
  const w2 = collector();
  await promises.pipeline(Readable.from(['m']), upper(), w2);
  assert.deepStrictEqual(w2.got, ['M']);
  await assert.rejects(promises.pipeline(Readable.from(['z']), new Transform({ transform(c, e, cb) { cb(new Error('no')); } }), collector()), /no/);

  const r = Readable.from(['f']);
  r.resume();
  await new Promise((resolve, reject) => stream.finished(r, (e) => (e ? reject(e) : resolve())));
  const r2 = Readable.from(['g']);
  r2.resume();
  await promises.finished(r2);
  const r3 = new Readable({ read() {} });
  const premature = promises.finished(r3);
  r3.destroy();
  await assert.rejects(premature, { code: 'ERR_STREAM_PREMATURE_CLOSE' });
});

check('Readable.from and for await over strings, buffers, generators', async () => {
  const from = async (source) => { const out = []; for await (const x of Readable.from(source)) out.push(x); return out; };
  assert.deepStrictEqual(await from(['a', 'b']), ['a', 'b']);
  assert.deepStrictEqual(await from((function* () { yield 1; yield 2; })()), [1, 2]);
  assert.deepStrictEqual(await from((async function* () { yield 'x'; })()), ['x']);
  const r = new PassThrough();
  r.end(Buffer.from('bytes'));
  const chunks = [];
  for await (const c of r) chunks.push(c);
  assert.ok(Buffer.isBuffer(chunks[0]));
  assert.strictEqual(Buffer.concat(chunks).toString(), 'bytes');
});

check('a Readable pipes into process.stdout, bytes as they are', async () => {
  assert.ok(process.stdout instanceof stream);
  const written = [];
  const write = process.stdout.write;
  process.stdout.write = (chunk) => { written.push(Buffer.from(chunk)); return true; };
  try {
    const r = Readable.from([Buffer.from([0xff, 0x41]), Buffer.from('\n')]);
    r.pipe(process.stdout);
    await onceEvent(r, 'end');
  } finally {
    process.stdout.write = write;
  }
  assert.deepStrictEqual(Buffer.concat(written), Buffer.from([0xff, 0x41, 0x0a]));
  assert.strictEqual(process.stdout.write(''), true);
});

check('fs.createReadStream and fs.createWriteStream, with node\'s events and options', async () => {
  fs.mkdirSync(root, { recursive: true });
  const file = path.join(root, 'in.txt');
  fs.writeFileSync(file, 'hello world, streams\n');
  const r = fs.createReadStream(file, { start: 6, end: 10, encoding: 'utf8', highWaterMark: 2 });
  assert.ok(r instanceof fs.ReadStream && r instanceof Readable);
  assert.deepStrictEqual([r.path, r.start, r.end, r.flags, r.bytesRead, r.pending, r.fd, r.readableHighWaterMark],
    [file, 6, 10, 'r', 0, true, null, 2]);
  const events = [];
  for (const name of ['open', 'ready', 'end', 'close']) r.on(name, (x) => events.push(name + (typeof x === 'number' ? ':fd' : '')));
  r.on('data', (s) => events.push(s));
  await onceEvent(r, 'close');
  assert.deepStrictEqual(events, ['open:fd', 'ready', 'wo', 'rl', 'd', 'end', 'close']);
  assert.strictEqual(r.bytesRead, 5);
  assert.strictEqual(r.fd, null);

  // Chunks of highWaterMark (64 KiB by default) through a pipeline to a file.
  const big = Buffer.alloc(200000, 'ab');
  fs.writeFileSync(file, big);
  const sizes = [];
  for await (const c of fs.createReadStream(file)) sizes.push(c.length);
  assert.deepStrictEqual(sizes, [65536, 65536, 65536, 3392]);
  const out = path.join(root, 'out.txt');
  await require('stream/promises').pipeline(fs.createReadStream(file, { highWaterMark: 1000 }), upper(), fs.createWriteStream(out));
  assert.deepStrictEqual(fs.readFileSync(out), Buffer.from(big.toString().toUpperCase()));

  const w = fs.createWriteStream(out);
  assert.ok(w instanceof fs.WriteStream && w instanceof Writable);
  assert.deepStrictEqual([w.path, w.flags, w.bytesWritten, w.pending], [out, 'w', 0, true]);
  const wEvents = [];
  for (const name of ['open', 'ready', 'finish', 'close']) w.on(name, () => wEvents.push(name));
  w.write('abc');
  w.end(Buffer.from('d\u00e9f'));
  await onceEvent(w, 'close');
  assert.deepStrictEqual(wEvents, ['open', 'ready', 'finish', 'close']);
  assert.strictEqual(w.bytesWritten, 7);
  const a = fs.createWriteStream(out, { flags: 'a' });
  a.end('!');
  await onceEvent(a, 'close');
  assert.strictEqual(fs.readFileSync(out, 'utf8'), 'abcd\u00e9f!');
  // Ended without a write, it still creates (and truncates) its file.
  const empty = fs.createWriteStream(out);
  empty.end();
  await onceEvent(empty, 'close');
  assert.strictEqual(fs.readFileSync(out, 'utf8'), '');

  const missing = fs.createReadStream(path.join(root, 'nope'));
  const errors = [];
  missing.on('error', (e) => errors.push([e.code, e.syscall, e.message]));
  await onceEvent(missing, 'close');
  assert.deepStrictEqual(errors, [['ENOENT', 'open', "ENOENT: no such file or directory, open '" + path.join(root, 'nope') + "'"]]);
  const exclusive = fs.createWriteStream(out, { flags: 'wx' });
  const [exists] = await onceEvent(exclusive, 'error').then((e) => [e]);
  assert.strictEqual(exists.code, 'EEXIST');
  assert.throws(() => fs.createReadStream(file, { start: 5, end: 2 }), { code: 'ERR_OUT_OF_RANGE' });
  fs.rmSync(root, { recursive: true, force: true });
});

done();
