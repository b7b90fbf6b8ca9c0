// Part of the isolate prelude (js/prelude/begin.js): node's `stream` and
// `stream/promises` modules. A fragment, not a module.
//
// The streams are Debian's node-readable-stream 3.6 (node 10's streams as a
// library, MIT; the notice is embedded beside it as readable-stream/LICENSE),
// embedded by js/CMakeLists.txt and compiled on the first require('stream'),
// so a script that never streams never parses them. Its requires of events,
// buffer, util, string_decoder, inherits and util-deprecate get settee's own
// modules, and its require('stream') (the legacy base class) gets Stream below.

// ---------------------------------------------------------------------------
// Embedded library files

const vendorModules = Object.create(null);
// require() inside an embedded file: `dir` is the file's directory in the
// embedded tree ("readable-stream/lib").
function requireVendor(dir, spec) {
  if (spec.startsWith('./') || spec.startsWith('../')) {
    const name = path.join(dir, spec);
    return loadVendor(name.endsWith('.js') ? name : name + '.js');
  }
  switch (spec) {
    case 'events': return EventEmitter;
    case 'buffer': return bufferModule;
    case 'util': return util;
    case 'inherits': return util.inherits;
    case 'util-deprecate': return util.deprecate;
    case 'string_decoder/': case 'string_decoder': return { StringDecoder };
    case 'stream': return Stream;
    default: throw new Error("settee: embedded stream library requires unknown '" + spec + "'");
  }
}
function loadVendor(name) {
  const cached = vendorModules[name];
  if (cached) return cached.exports;  // a cycle gets the partial exports, like node
  const source = native.vendorSource(name);
  if (source === undefined) throw new Error('settee: ' + name + ' is not embedded in this build');
  const mod = { exports: {} };
  vendorModules[name] = mod;
  const filename = 'node:internal/' + name;
  const dir = path.dirname(name);
  native.compileModule(source, filename).call(mod.exports, mod.exports, (spec) => requireVendor(dir, spec), mod, filename, dir);
  return mod.exports;
}

// ---------------------------------------------------------------------------
// stream

// node's legacy Stream, the base of Readable and Writable and what
// require('stream') returns. A function, not a class: the library (and old
// npm packages) call it on an existing object, Stream.call(this, opts).
function Stream(opts) {
  EventEmitter.call(this, opts);
}
Object.setPrototypeOf(Stream.prototype, EventEmitter.prototype);
Object.setPrototypeOf(Stream, EventEmitter);

// The pipe of a bare Stream (node's lib/internal/streams/legacy.js, which the
// library leaves to node): an old-style source (through, event-stream) that
// emits 'data' and 'end' itself. Readable replaces it with its own.
Stream.prototype.pipe = function (dest, options) {
  const source = this;
  const ondata = (chunk) => {
    if (dest.writable && dest.write(chunk) === false && source.pause) source.pause();
  };
  const ondrain = () => {
    if (source.readable && source.resume) source.resume();
  };
  let didOnEnd = false;
  const onend = () => {
    if (didOnEnd) return;
    didOnEnd = true;
    dest.end();
  };
  const onclose = () => {
    if (didOnEnd) return;
    didOnEnd = true;
    if (typeof dest.destroy === 'function') dest.destroy();
  };
  function onerror(er) {
    cleanup();
    if (this.listenerCount('error') === 0) this.emit('error', er);
  }
  function cleanup() {
    source.removeListener('data', ondata);
    dest.removeListener('drain', ondrain);
    source.removeListener('end', onend);
    source.removeListener('close', onclose);
    source.removeListener('error', onerror);
    dest.removeListener('error', onerror);
    source.removeListener('end', cleanup);
    source.removeListener('close', cleanup);
    dest.removeListener('close', cleanup);
  }
  source.on('data', ondata);
  dest.on('drain', ondrain);
  // process.stdout and process.stderr are never ended by a pipe.
  if (!dest._isStdio && (!options || options.end !== false)) {
    source.on('end', onend);
    source.on('close', onclose);
  }
  source.prependListener('error', onerror);
  dest.prependListener('error', onerror);
  source.on('end', cleanup);
  source.on('close', cleanup);
  dest.on('close', cleanup);
  dest.emit('pipe', source);
  return dest;
};

let streamLoaded = false;
// Fills in the module on first use: Readable, Writable, ... from the library.
function streamModule() {
  if (streamLoaded) return Stream;
  streamLoaded = true;
  const lib = (file) => loadVendor('readable-stream/lib/' + file);
  Stream.Stream = Stream;
  Stream.Readable = lib('_stream_readable.js');
  Stream.Writable = lib('_stream_writable.js');
  Stream.Duplex = lib('_stream_duplex.js');
  Stream.Transform = lib('_stream_transform.js');
  Stream.PassThrough = lib('_stream_passthrough.js');
  Stream.finished = lib('internal/streams/end-of-stream.js');
  // node 12.9's and 15's state getters, which the library predates. Duplex copies
  // Writable's methods but not its accessors, so it gets them too.
  const getter = (proto, name, get) => Object.defineProperty(proto, name, { get, enumerable: false, configurable: true });
  getter(Stream.Readable.prototype, 'readableEnded', function () { return this._readableState ? this._readableState.endEmitted : false; });
  for (const proto of [Stream.Writable.prototype, Stream.Duplex.prototype]) {
    getter(proto, 'writableEnded', function () { return this._writableState ? this._writableState.ending : false; });
    getter(proto, 'writableFinished', function () { return this._writableState ? this._writableState.finished : false; });
    getter(proto, 'writableNeedDrain', function () { return this._writableState ? this._writableState.needDrain : false; });
  }
  Stream.pipeline = pipelineEndingStdio(lib('internal/streams/pipeline.js'));
  Stream.promises = streamPromises();
  // From now on Writable can be named: process.stdout and process.stderr
  // become Writables (stdio.js).
  upgradeStdio(process.stdout);
  upgradeStdio(process.stderr);
  return Stream;
}

// node 20's pipeline ends a process.stdout or process.stderr it writes into
// and then calls back; the library's pipes never end them (as pipe() does
// not) and so never called back. Ending ours only says 'finish': the
// descriptor stays open for later writes, which work again from the next
// tick (stdio.js). The library calls back within the last stream's
// 'finish'; node on a later tick, and after the 'close' that follows a
// stdio stream's 'finish' (which would unpipe what the callback pipes).
function pipelineEndingStdio(pipeline) {
  return function (...args) {
    const streams = Array.isArray(args[0]) ? args[0] : args.filter((a) => typeof a !== 'function');
    const last = streams[streams.length - 1];
    const source = streams[streams.length - 2];
    const stdio = last && last._isStdio;
    if (stdio && source && typeof source.once === 'function') source.once('end', () => last.end());
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      args[args.length - 1] = (...result) => (stdio ? setImmediate : nextTick)(callback, ...result);
    }
    return pipeline(...args);
  };
}

// stream/promises (node 15+; the library predates it): pipeline and finished
// answering with a promise instead of a callback.
function streamPromises() {
  return {
    pipeline: (...streams) => new Promise((resolve, reject) => {
      Stream.pipeline(...streams, (err, value) => (err ? reject(err) : resolve(value)));
    }),
    finished: (stream, options) => new Promise((resolve, reject) => {
      Stream.finished(stream, options || {}, (err) => (err ? reject(err) : resolve()));
    }),
  };
}

// require('stream') and friends, loaded when first asked for.
for (const [name, get] of [
  ['stream', () => streamModule()],
  ['stream/promises', () => streamModule().promises],
]) {
  Object.defineProperty(builtins, name, { get, enumerable: true, configurable: true });
}
