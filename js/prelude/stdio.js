
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
    this.writable = true;
    this._isStdio = true;
    if (native.isatty(fd)) makeTTY(this);
  }
  write(chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    const e = stdioWriteError(this, chunk, encoding);
    if (e) {
      // node's order: the write's callback, then 'error' (which throws
      // when nothing listens, as node's does).
      if (typeof callback === 'function') nextTick(callback, e);
      emitStdioError(this, e);
      return false;
    }
    if (typeof callback === 'function') nextTick(callback, null);
    return true;
  }
  _write(chunk, encoding, callback) {
    callback(stdioWriteError(this, chunk, encoding));
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
  return native.print(fd, typeof chunk === 'string' || ArrayBuffer.isView(chunk) ? chunk : String(chunk));
}

// Writes the chunk to w's descriptor: undefined, or node's Error for the
// failed write (EPIPE once the reader of a pipe has gone, ENOSPC, ...).
// console's own writes (consoleWriting, js/prelude/console_process.js)
// ignore the error unless something listens for it, as node's console
// does: `settee run x.js | head` goes on to its end.
function stdioWriteError(w, chunk, encoding) {
  const failed = stdioPrint(w.fd, chunk, encoding);
  if (failed === undefined || (consoleWriting > 0 && w.listenerCount('error') === 0)) return undefined;
  const [code, errno, message] = failed;
  const e = new Error(message);
  e.errno = errno;
  e.code = code;
  e.syscall = 'write';
  return e;
}

// 'error' once for the failed writes of one tick (node's stdout emits the
// first and drops the rest until it has been told), after their callbacks
// (node learns of a pipe's failure after the write has returned): two
// ticks on.
const stdioErrorPending = new WeakSet();
function emitStdioError(w, e) {
  if (stdioErrorPending.has(w)) return;
  stdioErrorPending.add(w);
  nextTick(() => nextTick(() => {
    stdioErrorPending.delete(w);
    w.emit('error', e);
  }));
}

// node's tty.WriteStream on a terminal: isTTY, the window's size (read at
// each look here; node's follows SIGWINCH), the colours the environment
// allows and readline's cursor moves. Own properties, so that they stay
// when the stream becomes a StdioWritable. Elsewhere node's stdout and
// stderr have no isTTY at all.
function makeTTY(w) {
  const size = () => native.windowSize(w.fd) || [0, 0];
  Object.defineProperties(w, {
    isTTY: { value: true, writable: true, enumerable: true, configurable: true },
    _type: { value: 'tty', writable: true, configurable: true },
    columns: { get: () => size()[0], set(v) { Object.defineProperty(w, 'columns', { value: v, writable: true, enumerable: true, configurable: true }); }, enumerable: true, configurable: true },
    rows: { get: () => size()[1], set(v) { Object.defineProperty(w, 'rows', { value: v, writable: true, enumerable: true, configurable: true }); }, enumerable: true, configurable: true },
  });
  Object.assign(w, {
    getWindowSize: () => size(),
    getColorDepth: (env) => colorDepth(env),
    hasColors: (count, env) => {
      if (env === undefined && (count === undefined || (typeof count === 'object' && count !== null))) {
        env = count;
        count = 16;
      } else if (!Number.isInteger(count) || count < 2) {
        const e = new RangeError('The value of "count" is out of range. It must be an integer >= 2. Received ' + count);
        e.code = 'ERR_OUT_OF_RANGE';
        throw e;
      }
      return count <= 2 ** colorDepth(env);
    },
    cursorTo: (x, y, cb) => readlineModule.cursorTo(w, x, y, cb),
    moveCursor: (dx, dy, cb) => readlineModule.moveCursor(w, dx, dy, cb),
    clearLine: (dir, cb) => readlineModule.clearLine(w, dir, cb),
    clearScreenDown: (cb) => readlineModule.clearScreenDown(w, cb),
  });
}

// node's getColorDepth (lib/internal/tty.js, after chalk's supports-color):
// bits of colour, 1 (none), 4, 8 or 24, from the environment.
const termColorDepths = {
  eterm: 4, cons25: 4, console: 4, cygwin: 4, dtterm: 4, gnome: 4, hurd: 4, jfbterm: 4, konsole: 4,
  kterm: 4, mlterm: 4, mosh: 24, putty: 4, st: 4, 'rxvt-unicode-24bit': 24, terminator: 24,
};
function colorDepth(env = process.env) {
  if (env.FORCE_COLOR !== undefined) {
    return { '': 4, 1: 4, true: 4, 2: 8, 3: 24 }[env.FORCE_COLOR] || 1;
  }
  if (env.NODE_DISABLE_COLORS !== undefined || env.NO_COLOR !== undefined || env.TERM === 'dumb') return 1;
  if (env.TMUX) return 8;
  if (env.CI) {
    const known = ['APPVEYOR', 'BUILDKITE', 'CIRCLECI', 'DRONE', 'GITHUB_ACTIONS', 'GITLAB_CI', 'TRAVIS'];
    return known.some((name) => name in env) || env.CI_NAME === 'codeship' ? 8 : 1;
  }
  if ('TEAMCITY_VERSION' in env) return /^(9\.(0*[1-9]\d*)\.|\d{2,}\.)/.test(env.TEAMCITY_VERSION) ? 4 : 1;
  switch (env.TERM_PROGRAM) {
    case 'iTerm.app': return !env.TERM_PROGRAM_VERSION || /^[0-2]\./.test(env.TERM_PROGRAM_VERSION) ? 8 : 24;
    case 'HyperTerm': case 'MacTerm': return 24;
    case 'Apple_Terminal': return 8;
  }
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return 24;
  if (env.TERM) {
    if (/^xterm-256/.test(env.TERM)) return 8;
    const term = env.TERM.toLowerCase();
    if (termColorDepths[term]) return termColorDepths[term];
    if ([/ansi/, /color/, /linux/, /^con[0-9]*x[0-9]/, /^rxvt/, /^screen/, /^xterm/, /^vt100/].some((re) => re.test(term))) return 4;
  }
  return env.COLORTERM ? 4 : 1;
}

// Whether console colours what it writes to `stream`, as node 20's
// (lib/internal/util/colors.js shouldColorize): FORCE_COLOR decides
// everywhere, else a terminal whose colour depth is above 2 bits.
function consoleColors(stream) {
  if (process.env.FORCE_COLOR !== undefined) return colorDepth() > 2;
  return Boolean(stream && stream.isTTY) &&
    (typeof stream.getColorDepth === 'function' ? stream.getColorDepth() > 2 : true);
}

let StdioWritable = null;
// Whether StdioWritable's last _write failed: its write() answers false.
let stdioFailed = false;
// Makes the light `w` a StdioWritable in place (listeners and properties
// kept); whether `w` is one now.
function upgradeStdio(w) {
  if (!w || Object.getPrototypeOf(w) !== StdioWriter.prototype) return StdioWritable !== null && w instanceof StdioWritable;
  const { Writable } = streamModule();  // which upgrades process.stdout and process.stderr
  if (StdioWritable === null) {
    StdioWritable = class StdioWritable extends Writable {
      _write(chunk, encoding, callback) {
        const e = stdioWriteError(this, chunk, encoding);
        if (e) stdioFailed = true;
        callback(e);
      }
      // 'finish' on a later tick, as node's, not within end().
      _final(callback) {
        callback();
      }
      // Written before write() returns: nothing waits, and node answers
      // true (the library says false for a chunk above highWaterMark).
      write(chunk, encoding, callback) {
        stdioFailed = false;
        const ok = super.write(chunk, encoding, callback);
        // A failed write says false, as node's (the stream is whole again
        // at once: _destroy below).
        if (stdioFailed) return false;
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
        if (err) emitStdioError(this, err);
        callback(null);
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
