
// Part of the isolate prelude (js/prelude/begin.js): node's readline module
// (readline, readline/promises); process.stdin is in stdio.js.
// A fragment, not a module: it shares the prelude function's scope.

// An async iterator over `emitter`'s `ev` events (the first argument of
// each), done at `endEv`, failing at 'error'. The emitter is paused while
// more than `highWater` values wait (node's readline uses 1024 lines).
function chunkIterator(emitter, ev, endEv, highWater) {
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
      settle();
      return Promise.resolve({ value, done: true });
    },
    [Symbol.asyncIterator]() { return this; },
  };
}

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
