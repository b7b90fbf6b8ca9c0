
// Part of the isolate prelude (js/prelude/begin.js): process.stdin and
// node's readline module (readline, readline/promises).
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// process.stdin: fd 0 read on this thread's loop (js/bindings_stdin.cc),
// offered as node's readable stream is used: 'data' / 'end' / 'close' /
// 'error' events, pause/resume (flowing starts with the first 'data'
// listener, as node's), 'readable' with read() (paused mode; no
// highWaterMark: what comes is kept until read), setEncoding, pipe and
// for await. It is made at its
// first use, as node's, so a script that never touches it does not read.

class StdinStream extends EventEmitter {
  constructor() {
    super();
    this.fd = 0;
    if (native.isatty(0)) this.isTTY = true;
    this.readable = true;
    this.readableFlowing = null;
    this.readableEnded = false;
    this.destroyed = false;
    this._decoder = null;
    this._pending = [];   // chunks read while paused
    this._ended = false;  // the native side has told the end
    this._feedId = 0;
    this._readableListening = false;
    this._file = false;   // fd 0 is read as a file
  }
  _add(ev, fn, prepend) {
    super._add(ev, fn, prepend);
    // node: a 'data' listener switches a stream that was never paused on;
    // a 'readable' one reads in paused mode, read() taking what came.
    if (ev === 'data' && this.readableFlowing !== false) this.resume();
    if (ev === 'readable' && !this.destroyed) {
      this._readableListening = true;
      this.readableFlowing = false;
      this._startReading();
      if (this._pending.length) nextTick(() => this.emit('readable'));
    }
    return this;
  }
  setEncoding(enc) {
    this._decoder = new StringDecoder(enc);
    return this;
  }
  isPaused() { return this.readableFlowing === false; }
  resume() {
    if (this.destroyed) return this;
    const wasFlowing = this.readableFlowing === true;
    this.readableFlowing = true;
    if (wasFlowing) return this;
    // Chunks kept while paused go out after this call, as node's resume().
    nextTick(() => this._flush());
    this._startReading();
    return this;
  }
  _startReading() {
    if (this._ended) return;
    if (!this._feedId) {
      this._feedId = nextFeedId++;
      feeds.set(this._feedId, this);
    }
    if (native.stdinStart(this._feedId)) nextTick(() => this._poll());
  }
  // Paused mode: what has been read (at most n bytes), or null when nothing
  // is; the end is emitted once read() has taken everything.
  read(n) {
    const parts = [];
    let size = 0;
    while (this._pending.length && Buffer.isBuffer(this._pending[0]) && (n === undefined || size < n)) {
      const c = this._pending.shift();
      if (n !== undefined && size + c.length > n) {
        parts.push(c.subarray(0, n - size));
        this._pending.unshift(c.subarray(n - size));
        size = n;
        break;
      }
      parts.push(c);
      size += c.length;
    }
    if (this._pending.length && !Buffer.isBuffer(this._pending[0])) {
      // The end (null) or an error, with nothing left before it.
      const last = this._pending.shift();
      if (last === null) {
        nextTick(() => this._emitEnd());
      } else {
        this.destroy(last);
      }
    }
    if (parts.length === 0) return null;
    const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    return this._decoder ? this._decoder.write(buf) : buf;
  }
  _emitEnd() {
    if (this._decoder) {
      const rest = this._decoder.end();
      if (rest) this.emit('data', rest);
    }
    this.readable = false;
    this.readableEnded = true;
    this.emit('end');
    // node reads a file on fd 0 as an fs.ReadStream without autoClose: no
    // 'close' after its end; a pipe or terminal is a socket, closed then.
    if (this._file) {
      native.stdinStop();
      feeds.delete(this._feedId);
    } else {
      this.destroy();
    }
  }
  pause() {
    if (this.readableFlowing !== false) {
      this.readableFlowing = false;
      native.stdinStop();
    }
    return this;
  }
  // hooks.onFeed: what the native side read (js/prelude/pouchdb.js dispatches).
  _poll() {
    if (this._ended) return;
    const [chunks, ended, error, file] = native.stdinTake();
    this._file = file;
    for (const c of chunks) this._pending.push(asBuffer(c));
    if (ended) {
      this._ended = true;
      feeds.delete(this._feedId);
      if (error !== undefined) {
        const e = new Error(error + ': read error on stdin');
        e.code = error;
        e.syscall = 'read';
        this._pending.push(e);
      } else {
        this._pending.push(null);
      }
    }
    if (this.readableFlowing === true) this._flush();
    else if (this._readableListening && this._pending.length) this.emit('readable');
  }
  _flush() {
    while (this.readableFlowing === true && this._pending.length && !this.destroyed) {
      const c = this._pending.shift();
      if (c === null) {
        this._emitEnd();
      } else if (c instanceof Error) {
        this.destroy(c);
      } else {
        this.emit('data', this._decoder ? this._decoder.write(c) : c);
      }
    }
  }
  destroy(err) {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.readable = false;
    native.stdinStop();
    if (this._feedId) feeds.delete(this._feedId);
    nextTick(() => {
      if (err) this.emit('error', err);
      this.emit('close');
    });
    return this;
  }
  pipe(dest, opts = {}) {
    this.on('data', (chunk) => {
      if (dest.write(chunk) === false && typeof dest.once === 'function') {
        this.pause();
        dest.once('drain', () => this.resume());
      }
    });
    if (opts.end !== false && dest !== process.stdout && dest !== process.stderr) {
      this.on('end', () => { if (typeof dest.end === 'function') dest.end(); });
    }
    return dest;
  }
  unpipe() { this.removeAllListeners('data'); return this; }
  // for await (const chunk of process.stdin)
  [Symbol.asyncIterator]() {
    return chunkIterator(this, 'data', 'end', 1, () => this.destroy());
  }
}

// An async iterator over `emitter`'s `ev` events (the first argument of
// each), done at `endEv`, failing at 'error'. The emitter is paused while
// more than `highWater` values wait (node's readline uses 1024 lines).
function chunkIterator(emitter, ev, endEv, highWater, onReturn) {
  const values = [];
  const waiters = [];
  let done = false, error = null;
  let pausedByUs = false;  // the emitter is paused because values pile up
  const settle = () => {
    while (waiters.length && (values.length || done || error)) {
      const w = waiters.shift();
      if (values.length) {
        w.resolve({ value: values.shift(), done: false });
        if (values.length <= highWater && pausedByUs && !done) { pausedByUs = false; emitter.resume(); }
      } else if (error) {
        w.reject(error);
        error = null;
        done = true;
      } else {
        w.resolve({ value: undefined, done: true });
      }
    }
  };
  const onValue = (v) => {
    values.push(v);
    if (values.length > highWater && !pausedByUs) { pausedByUs = true; emitter.pause(); }
    settle();
  };
  const onEnd = () => { done = true; cleanup(); settle(); };
  const onError = (e) => { error = e; cleanup(); settle(); };
  const cleanup = () => {
    emitter.removeListener(ev, onValue);
    emitter.removeListener(endEv, onEnd);
    emitter.removeListener('error', onError);
  };
  emitter.on(ev, onValue);
  emitter.on(endEv, onEnd);
  emitter.on('error', onError);
  return {
    next() {
      if (values.length === 0 && done && !error) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => { waiters.push({ resolve, reject }); settle(); });
    },
    return(value) {
      done = true;
      pausedByUs = false;
      values.length = 0;
      cleanup();
      if (onReturn) onReturn();
      settle();
      return Promise.resolve({ value, done: true });
    },
    [Symbol.asyncIterator]() { return this; },
  };
}

let stdinStream = null;
Object.defineProperty(process, 'stdin', {
  configurable: true,
  enumerable: true,
  get() { return stdinStream || (stdinStream = new StdinStream()); },
});

// ---------------------------------------------------------------------------
// readline: line splitting over any readable that emits 'data' (Buffer or
// string) and 'end'. Terminal mode (line editing, history, completion,
// keypress events) is not implemented: `terminal` is read but lines are
// split as node splits them without a terminal.

// node's line ending: \n, \r\n, or a \r not followed by \n.
const kLineEnding = /\r?\n|\r(?!\n)/g;

class Interface extends EventEmitter {
  constructor(input, output, completer, terminal) {
    super();
    let opts = input;
    if (!(input && input.input !== undefined)) opts = { input, output, completer, terminal };
    this.input = opts.input;
    this.output = opts.output === undefined ? undefined : opts.output;
    this.terminal = opts.terminal === undefined ? !!(this.output && this.output.isTTY) : !!opts.terminal;
    this.crlfDelay = opts.crlfDelay ? Math.max(100, Number(opts.crlfDelay)) : 100;
    this.line = '';
    this.cursor = 0;
    this._prompt = opts.prompt === undefined ? '> ' : String(opts.prompt);
    this._oldPrompt = this._prompt;
    this._questionCallback = null;
    this._lineBuffer = null;
    this._sawReturnAt = 0;
    this._decoder = new StringDecoder('utf8');
    this._lineIterator = undefined;
    const input_ = this.input;
    if (!input_ || typeof input_.on !== 'function') {
      throw new TypeError('The "input" argument must be a readable stream (an EventEmitter with "data" and "end")');
    }
    this._ondata = (data) => this._normalWrite(data);
    this._onend = () => {
      if (typeof this._lineBuffer === 'string' && this._lineBuffer.length > 0) this.emit('line', this._lineBuffer);
      this.close();
    };
    this._onerror = (err) => this.emit('error', err);
    input_.on('error', this._onerror);
    input_.on('data', this._ondata);
    input_.on('end', this._onend);
    this.once('close', () => {
      input_.removeListener('data', this._ondata);
      input_.removeListener('end', this._onend);
      input_.removeListener('error', this._onerror);
    });
    if (typeof input_.resume === 'function') input_.resume();
  }
  setPrompt(prompt) { this._prompt = String(prompt); }
  getPrompt() { return this._prompt; }
  prompt() {
    if (this.paused) this.resume();
    this._writeToOutput(this._prompt);
  }
  _writeToOutput(s) {
    if (typeof s !== 'string') throw new TypeError('The "stringToWrite" argument must be of type string');
    if (this.output !== null && this.output !== undefined) this.output.write(s);
  }
  question(query, options, cb) {
    cb = typeof options === 'function' ? options : cb;
    if (typeof cb === 'function') this._question(query, cb);
  }
  _question(query, cb) {
    if (this.closed) {
      const e = new Error('readline was closed');
      e.code = 'ERR_USE_AFTER_CLOSE';
      throw e;
    }
    if (this._questionCallback) {
      this.prompt();
    } else {
      this._oldPrompt = this._prompt;
      this.setPrompt(query);
      this._questionCallback = cb;
      this.prompt();
    }
  }
  _onLine(line) {
    if (this._questionCallback) {
      const cb = this._questionCallback;
      this._questionCallback = null;
      this.setPrompt(this._oldPrompt);
      cb(line);
    } else {
      this.emit('line', line);
    }
  }
  // node's _normalWrite: lines of a chunk, with a \r\n split across two
  // chunks (within crlfDelay) counted once.
  _normalWrite(b) {
    if (b === undefined) return;
    let string = this._decoder.write(b);
    if (this._sawReturnAt && Date.now() - this._sawReturnAt <= this.crlfDelay) {
      if (string.codePointAt(0) === 10) string = string.slice(1);
      this._sawReturnAt = 0;
    }
    kLineEnding.lastIndex = 0;
    let found = kLineEnding.exec(string);
    if (found !== null) {
      if (this._lineBuffer) {
        string = this._lineBuffer + string;
        this._lineBuffer = null;
        kLineEnding.lastIndex = 0;
        found = kLineEnding.exec(string);
      }
      this._sawReturnAt = string.endsWith('\r') ? Date.now() : 0;
      const indexes = [0, found.index, kLineEnding.lastIndex];
      let next;
      while ((next = kLineEnding.exec(string)) !== null) indexes.push(next.index, kLineEnding.lastIndex);
      const last = indexes.length - 1;
      this._lineBuffer = string.slice(indexes[last]);
      for (let i = 1; i < last; i += 2) this._onLine(string.slice(indexes[i - 1], indexes[i]));
    } else if (string) {
      this._lineBuffer = this._lineBuffer ? this._lineBuffer + string : string;
    }
  }
  write(d) {
    if (this.closed) {
      const e = new Error('readline was closed');
      e.code = 'ERR_USE_AFTER_CLOSE';
      throw e;
    }
    if (this.paused) this.resume();
    this._normalWrite(d);
  }
  pause() {
    if (this.paused) return;
    if (typeof this.input.pause === 'function') this.input.pause();
    this.paused = true;
    this.emit('pause');
    return this;
  }
  resume() {
    if (!this.paused) return;
    if (typeof this.input.resume === 'function') this.input.resume();
    this.paused = false;
    this.emit('resume');
    return this;
  }
  close() {
    if (this.closed) return;
    this.pause();
    this.closed = true;
    this.emit('close');
  }
  getCursorPos() { return { rows: 0, cols: this.cursor }; }
  // for await (const line of rl): lines from the first next() on. Leaving
  // the loop early does not close the interface, as in node 20.20 (whose
  // documentation says it does): its input goes on to the end, or stays
  // paused if the loop had let 1024 lines pile up.
  [Symbol.asyncIterator]() {
    if (this._lineIterator === undefined) this._lineIterator = chunkIterator(this, 'line', 'close', 1024);
    return this._lineIterator;
  }
}

// readline/promises: question() answers with a promise.
class PromisesInterface extends Interface {
  question(query, options = {}) {
    return new Promise((resolve, reject) => {
      if (options && options.signal && options.signal.aborted) {
        const e = new Error('The operation was aborted');
        e.name = 'AbortError';
        e.code = 'ABORT_ERR';
        reject(e);
        return;
      }
      try {
        this._question(query, resolve);
      } catch (e) {
        reject(e);
      }
    });
  }
}

// ANSI cursor control on a writable, as node's readline functions.
function ansiWrite(stream, data, cb) {
  if (stream === null || stream === undefined) {
    if (typeof cb === 'function') nextTick(cb, null);
    return true;
  }
  return stream.write(data, cb);
}
const readlineModule = {
  Interface,
  createInterface: (input, output, completer, terminal) => new Interface(input, output, completer, terminal),
  clearLine: (stream, dir, cb) => ansiWrite(stream, dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K', cb),
  clearScreenDown: (stream, cb) => ansiWrite(stream, '\x1b[0J', cb),
  cursorTo: (stream, x, y, cb) => {
    if (typeof y === 'function') { cb = y; y = undefined; }
    if (Number.isNaN(x) || Number.isNaN(y)) throw new TypeError('Invalid cursor position');
    if (typeof x !== 'number') {
      if (typeof cb === 'function') nextTick(cb, null);
      return true;
    }
    return ansiWrite(stream, typeof y !== 'number' ? '\x1b[' + (x + 1) + 'G' : '\x1b[' + (y + 1) + ';' + (x + 1) + 'H', cb);
  },
  moveCursor: (stream, dx, dy, cb) => {
    let data = '';
    if (dx < 0) data += '\x1b[' + -dx + 'D'; else if (dx > 0) data += '\x1b[' + dx + 'C';
    if (dy < 0) data += '\x1b[' + -dy + 'A'; else if (dy > 0) data += '\x1b[' + dy + 'B';
    if (!data) {
      if (typeof cb === 'function') nextTick(cb, null);
      return true;
    }
    return ansiWrite(stream, data, cb);
  },
};
const readlinePromises = {
  Interface: PromisesInterface,
  createInterface: (input, output, completer, terminal) => new PromisesInterface(input, output, completer, terminal),
};
readlineModule.promises = readlinePromises;
