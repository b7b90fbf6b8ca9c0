
// Part of the isolate prelude (js/prelude/begin.js): process.stdin,
// process.stdout and process.stderr as node's streams. A fragment, not a
// module: it shares the prelude function's scope (stream.js's streamModule).
//
// Compiling the stream library costs an isolate about 20 ms, so nothing here
// loads it until a script asks: process.stdin is made at its first use (as
// node's), and stdout/stderr start as light legacy Streams that become real
// Writables, the same objects, once the library is loaded.

// ---------------------------------------------------------------------------
// process.stdin: a stream.Readable over fd 0 read on this thread's loop
// (js/bindings_stdin.cc). _read() starts the native reads; they stop when
// push() says the buffer is full or the stream is paused, and start again at
// the next _read(): a slow consumer holds at most the buffer and one read.

function makeStdin() {
  const { Readable } = streamModule();
  const kind = native.stdinKind();
  // node reads a file (or a device as /dev/null, which it also opens for a
  // closed fd 0) with an fs.ReadStream without autoClose: 64 KB buffered,
  // no 'close' after the end. A pipe, socket or terminal is a net.Socket:
  // 16 KB, closed after its end, and so is the empty stream node offers
  // for a directory.
  const file = kind === 'file';

  class Stdin extends Readable {
    constructor() {
      super({ highWaterMark: file ? 64 * 1024 : 16 * 1024, autoDestroy: !file });
      this.fd = 0;
      if (kind === 'tty') this.isTTY = true;
      this._feedId = 0;
      // node's stdin: once paused (stdin.pause(), readline's close), the
      // reads stop at once even while the buffer has room, so an input that
      // never ends does not keep the script alive. A later read() or
      // resume() calls _read again.
      this.on('pause', () => nextTick(() => {
        if (this.readableFlowing || this.destroyed) return;
        native.stdinStop();
        this._readableState.reading = false;
      }));
    }
    _read() {
      if (!this._feedId) {
        this._feedId = nextFeedId++;
        feeds.set(this._feedId, this);
      }
      let ready;
      try {
        ready = native.stdinStart(this._feedId);
      } catch (e) {
        this.destroy(e);  // another isolate thread reads stdin
        return;
      }
      // The end or an error already there (fd 0 closed, a read that could
      // not start) is told on the next tick, as a read's result would be.
      if (ready) nextTick(() => this._poll());
    }
    // hooks.onFeed (js/prelude/pouchdb.js): what the native side read.
    _poll() {
      if (this.destroyed) return;
      const [chunks, ended, error, errno] = native.stdinTake();
      let more = true;
      for (const c of chunks) more = this.push(asBuffer(c));
      if (error !== undefined) {
        // As node's net.Socket: the stream is destroyed with node's error
        // at once, whether or not anything is reading it now.
        const e = new Error('read ' + error);
        e.errno = errno;
        e.code = error;
        e.syscall = 'read';
        this.destroy(e);
      } else if (ended) {
        feeds.delete(this._feedId);
        this.push(null);
      } else if (!more) {
        native.stdinStop();  // backpressure: _read starts it again
      }
    }
    _destroy(err, cb) {
      native.stdinStop();
      if (this._feedId) feeds.delete(this._feedId);
      cb(err);
    }
  }
  return new Stdin();
}

let stdinStream = null;
Object.defineProperty(process, 'stdin', {
  configurable: true,
  enumerable: true,
  get() { return stdinStream || (stdinStream = makeStdin()); },
});

// ---------------------------------------------------------------------------
// process.stdout and process.stderr

// node writes to its stdout and stderr synchronously (files, pipes and
// terminals on Linux), answers true to every write, and never closes them:
// end() says 'finish' and 'close', and later writes still go out.
// StdioWriter does just that without the library: console.log goes through
// its write, which a script may replace. upgradeStdio turns it into a
// StdioWritable when the library is loaded (require('stream'), process.stdin,
// or a look at its Writable state: is-stream's _writableState), so that
// `instanceof Writable` holds wherever Writable can be named.
class StdioWriter extends Stream {
  constructor(fd) {
    super();
    this.fd = fd;
    this.isTTY = false;
    this.writable = true;
    this._isStdio = true;
  }
  write(chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    stdioPrint(this.fd, chunk, encoding);
    if (typeof callback === 'function') nextTick(callback, null);
    return true;
  }
  _write(chunk, encoding, callback) {
    stdioPrint(this.fd, chunk, encoding);
    callback();
  }
  end(chunk, encoding, callback) {
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    else if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
    nextTick(() => {
      if (typeof callback === 'function') callback();
      this.emit('finish');
      this.emit('close');
    });
    return this;
  }
}
// What only a Writable has: asking for it upgrades the stream first.
for (const name of ['_writableState', 'writableLength', 'writableHighWaterMark', 'writableBuffer',
  'writableEnded', 'writableFinished', 'writableNeedDrain', 'destroyed']) {
  Object.defineProperty(StdioWriter.prototype, name, {
    configurable: true,
    get() { return upgradeStdio(this) ? this[name] : undefined; },
    set(value) { Object.defineProperty(this, name, { value, writable: true, configurable: true, enumerable: true }); },
  });
}
for (const name of ['cork', 'uncork', 'setDefaultEncoding', 'destroy']) {
  StdioWriter.prototype[name] = function (...args) {
    if (!upgradeStdio(this)) throw new TypeError('process.stdout.' + name + ' is not available');
    return this[name](...args);
  };
}

function stdioPrint(fd, chunk, encoding) {
  if (typeof chunk === 'string' && encoding && encoding !== 'utf8' && encoding !== 'utf-8' && encoding !== 'buffer') {
    chunk = Buffer.from(chunk, encoding);
  }
  native.print(fd, typeof chunk === 'string' || ArrayBuffer.isView(chunk) ? chunk : String(chunk));
}

let StdioWritable = null;
// Makes the light `w` a StdioWritable in place (listeners and properties
// kept); whether `w` is one now.
function upgradeStdio(w) {
  if (!w || Object.getPrototypeOf(w) !== StdioWriter.prototype) return StdioWritable !== null && w instanceof StdioWritable;
  const { Writable } = streamModule();  // which upgrades process.stdout and process.stderr
  if (StdioWritable === null) {
    StdioWritable = class StdioWritable extends Writable {
      _write(chunk, encoding, callback) {
        stdioPrint(this.fd, chunk, encoding);
        callback();
      }
      // 'finish' on a later tick, as node's, not within end().
      _final(callback) {
        callback();
      }
      // Written before write() returns: nothing waits, and node answers
      // true (the library says false for a chunk above highWaterMark).
      write(chunk, encoding, callback) {
        const ok = super.write(chunk, encoding, callback);
        const state = this._writableState;
        if (!ok && state.length === 0 && !state.ended && !state.destroyed) {
          state.needDrain = false;
          return true;
        }
        return ok;
      }
      // node's dummyDestroy: the descriptor stays open, and the stream
      // comes back (autoDestroy after 'finish'), so later writes go out.
      _destroy(err, callback) {
        callback(err);
        this._undestroy();
      }
    };
  }
  if (Object.getPrototypeOf(w) === StdioWriter.prototype) {
    Object.setPrototypeOf(w, StdioWritable.prototype);
    Writable.call(w, { decodeStrings: false, autoDestroy: true });
  }
  return true;
}

process.stdout = new StdioWriter(1);
process.stderr = new StdioWriter(2);
