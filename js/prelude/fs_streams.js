// Part of the isolate prelude (js/prelude/begin.js): fs.createReadStream,
// fs.createWriteStream and their classes, on the streams of stream.js and
// the descriptor calls of js/bindings_fs.cc (fsOpen, fsRead, fsWrite,
// fsClose). A fragment, not a module.
//
// As node does, the file is opened and each chunk read on a later turn of
// the loop (setImmediate here, node's thread pool there), so listeners added
// after the call see 'open', 'ready', the data and 'close'; the system calls
// themselves run on the isolate's thread, like the rest of fs.js.

const fsStreams = (() => {
  let classes;
  const toFsPath = (p) => (p instanceof URL ? fileURLToPath(p) : ArrayBuffer.isView(p) ? Buffer.from(p).toString() : p);
  const streamOptions = (options) => {
    const o = typeof options === 'string' ? { encoding: options } : { ...options };
    // node's fs streams close their descriptor once done and say 'close'.
    if (o.autoDestroy === undefined) o.autoDestroy = true;
    if (o.emitClose === undefined) o.emitClose = true;
    return o;
  };
  const checkPosition = (name, value) => {
    if (value === undefined) return;
    if (typeof value !== 'number') {
      const e = new TypeError('The "' + name + '" argument must be of type number. Received ' + inspect(value));
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    if (!Number.isInteger(value) || value < 0) {
      const e = new RangeError('The value of "' + name + '" is out of range. It must be >= 0 && <= ' +
          Number.MAX_SAFE_INTEGER + '. Received ' + value);
      e.code = 'ERR_OUT_OF_RANGE';
      throw e;
    }
  };

  // What the two classes share: the descriptor's opening and closing.
  function openLater(s) {
    setImmediate(() => {
      if (s.destroyed) return;
      try {
        s.fd = native.fsOpen(toFsPath(s.path), s.flags, s.mode);
      } catch (e) {
        s.destroy(e);
        return;
      }
      s.emit('open', s.fd);
      s.emit('ready');
    });
  }
  function closeFd(s, err, cb) {
    const fd = s.fd;
    s.fd = null;
    if (fd === null || fd === undefined) return cb(err);
    try { native.fsClose(fd); } catch (e) { err = err || e; }
    cb(err);
  }

  function define() {
    const { Readable, Writable } = streamModule();

    class ReadStream extends Readable {
      constructor(p, options) {
        const o = streamOptions(options);
        if (o.fd === undefined) fsPathArg(p);  // node checks the path at the call, not on open
        if (o.highWaterMark === undefined) o.highWaterMark = 64 * 1024;
        super(o);
        checkPosition('start', o.start);
        checkPosition('end', o.end);
        if (o.start !== undefined && o.end !== undefined && o.start > o.end) {
          const e = new RangeError('The value of "start" is out of range. It must be <= "end" (here: ' + o.end + '). Received ' + o.start);
          e.code = 'ERR_OUT_OF_RANGE';
          throw e;
        }
        this.path = p;
        this.fd = o.fd === undefined ? null : o.fd;
        this.flags = o.flags === undefined ? 'r' : o.flags;
        this.mode = o.mode === undefined ? 0o666 : o.mode;
        this.start = o.start;
        this.end = o.end === undefined ? Infinity : o.end;
        this.pos = o.start;
        this.bytesRead = 0;
        if (this.fd === null) openLater(this);
      }
      get pending() { return this.fd === null; }
      _read() {
        if (this.fd === null) {
          this.once('open', () => this._read());
          return;
        }
        setImmediate(() => {
          if (this.destroyed) return;
          let size = this.readableHighWaterMark;
          // end is inclusive, as node's is.
          if (this.end !== Infinity) size = Math.min(size, this.end - (this.pos === undefined ? this.bytesRead : this.pos) + 1);
          if (size <= 0) return this.push(null);
          const buf = Buffer.allocUnsafe(size);
          let n;
          try {
            n = native.fsRead(this.fd, buf, this.pos === undefined ? -1 : this.pos);
          } catch (e) {
            this.destroy(e);
            return;
          }
          if (this.pos !== undefined) this.pos += n;
          this.bytesRead += n;
          this.push(n > 0 ? buf.subarray(0, n) : null);
        });
      }
      _destroy(err, cb) { closeFd(this, err, cb); }
      close(cb) {
        if (typeof cb === 'function') finishedOnce(this, cb);
        this.destroy();
      }
    }

    class WriteStream extends Writable {
      constructor(p, options) {
        const o = streamOptions(options);
        if (o.fd === undefined) fsPathArg(p);  // node checks the path at the call, not on open
        super(o);
        checkPosition('start', o.start);
        this.path = p;
        this.fd = o.fd === undefined ? null : o.fd;
        this.flags = o.flags === undefined ? 'w' : o.flags;
        this.mode = o.mode === undefined ? 0o666 : o.mode;
        this.start = o.start;
        this.pos = o.start;
        this.bytesWritten = 0;
        if (o.encoding) this.setDefaultEncoding(o.encoding);
        if (this.fd === null) openLater(this);
      }
      get pending() { return this.fd === null; }
      _write(chunk, encoding, cb) {
        if (this.fd === null) {
          this.once('open', () => this._write(chunk, encoding, cb));
          return;
        }
        try {
          native.fsWrite(this.fd, chunk, this.pos === undefined ? -1 : this.pos);
        } catch (e) {
          return cb(e);
        }
        this.bytesWritten += chunk.length;
        if (this.pos !== undefined) this.pos += chunk.length;
        cb();
      }
      // An ended stream that never wrote still creates its file, as node's
      // does: finishing waits for the descriptor.
      _final(cb) {
        if (this.fd === null) this.once('open', () => cb());
        else cb();
      }
      _destroy(err, cb) { closeFd(this, err, cb); }
      close(cb) {
        if (typeof cb === 'function') finishedOnce(this, cb);
        if (this.writableEnded || this.destroyed) this.destroy();
        else this.end();
      }
    }
    // close(cb): cb once closed, with the error if it failed.
    function finishedOnce(s, cb) {
      if (s.destroyed && !s.fd) return nextTick(cb);
      s.once('close', () => cb());
    }
    return { ReadStream, WriteStream };
  }
  const get = () => classes || (classes = define());
  return {
    get ReadStream() { return get().ReadStream; },
    get WriteStream() { return get().WriteStream; },
  };
})();

fs.createReadStream = (p, options) => new fsStreams.ReadStream(p, options);
fs.createWriteStream = (p, options) => new fsStreams.WriteStream(p, options);
for (const name of ['ReadStream', 'WriteStream']) {
  Object.defineProperty(fs, name, { get: () => fsStreams[name], enumerable: true, configurable: true });
}
