// Part of the isolate prelude (js/prelude/begin.js): node's `fs` module for
// scripts, over the system calls of js/bindings_fs.cc. The *Sync functions
// are node's; the callback and `fs.promises` forms run the same call on the
// isolate's thread and answer on a later tick (files are local and small in
// the scripts this serves; nothing here reads a socket). A fragment, not a
// module.

// ---------------------------------------------------------------------------
// fs

// A path argument as node's fs checks it, as a string: a string, a Buffer
// (any Uint8Array) or a file: URL; anything else is node's
// ERR_INVALID_ARG_TYPE, another URL scheme ERR_INVALID_URL_SCHEME and a NUL
// byte ERR_INVALID_ARG_VALUE, thrown where the call is made (the system
// call would cut the path at the NUL).
function fsPathArg(p) {
  let s;
  if (typeof p === 'string') {
    s = p;
  } else if (typeof URL === 'function' && p instanceof URL) {
    if (p.protocol !== 'file:') {
      throw Object.assign(new TypeError('The URL must be of scheme file'), { code: 'ERR_INVALID_URL_SCHEME' });
    }
    s = decodeURIComponent(p.pathname);
  } else if (p instanceof Uint8Array) {
    s = Buffer.from(p).toString();
  } else {
    throw invalidArgType('path', 'of type string or an instance of Buffer or URL', p);
  }
  if (s.includes('\0')) {
    const e = new TypeError("The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received " +
        inspect(p));
    e.code = 'ERR_INVALID_ARG_VALUE';
    throw e;
  }
  return s;
}

const fs = (() => {
  const toPath = fsPathArg;
  const encodingOf = (options) => (typeof options === 'string' ? options : options && options.encoding) || null;
  const toBytes = (data, options) => {
    if (typeof data === 'string') return Buffer.from(data, encodingOf(options) || 'utf8');
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    throw new TypeError('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView');
  };

  // node's write flags: "a" appends, "x" refuses an existing file (EEXIST).
  const flagOf = (options, fallback) => {
    const flag = options && typeof options === 'object' && options.flag !== undefined ? String(options.flag) : fallback;
    return { append: flag.includes('a'), exclusive: flag.includes('x') };
  };
  const COPYFILE_EXCL = 1;

  class Stats {
    constructor(s) {
      Object.assign(this, s);
      delete this.kind;
      Object.defineProperty(this, 'kind', { value: s.kind, enumerable: false });
      this.atime = new Date(s.atimeMs);
      this.mtime = new Date(s.mtimeMs);
      this.ctime = new Date(s.ctimeMs);
      this.birthtime = new Date(s.ctimeMs);
    }
    isFile() { return this.kind === 'file'; }
    isDirectory() { return this.kind === 'dir'; }
    isSymbolicLink() { return this.kind === 'link'; }
  }
  class Dirent {
    constructor(name, kind, dir) { this.name = name; this.path = dir; Object.defineProperty(this, 'kind', { value: kind }); }
    isFile() { return this.kind === 'file'; }
    isDirectory() { return this.kind === 'dir'; }
    isSymbolicLink() { return this.kind === 'link'; }
  }

  const sync = {
    readFileSync(p, options) {
      const bytes = native.fsReadFile(toPath(p));
      const buf = new Buffer(bytes.buffer, bytes.byteOffset, bytes.length);
      const enc = encodingOf(options);
      return enc ? buf.toString(enc) : buf;
    },
    writeFileSync(p, data, options) {
      const { append, exclusive } = flagOf(options, 'w');
      native.fsWriteFile(toPath(p), toBytes(data, options), append, options && options.mode, exclusive);
    },
    appendFileSync(p, data, options) {
      const { exclusive } = flagOf(options, 'a');
      native.fsWriteFile(toPath(p), toBytes(data, options), true, options && options.mode, exclusive);
    },
    existsSync(p) {
      try { return native.fsStat(toPath(p), true, true) !== null; } catch (e) { return false; }
    },
    statSync(p, options) {
      const s = native.fsStat(toPath(p), true, !!(options && options.throwIfNoEntry === false));
      return s === null ? undefined : new Stats(s);
    },
    lstatSync(p, options) {
      const s = native.fsStat(toPath(p), false, !!(options && options.throwIfNoEntry === false));
      return s === null ? undefined : new Stats(s);
    },
    readdirSync(p, options) {
      const dir = toPath(p);
      const entries = native.fsReaddir(dir);
      if (options && options.withFileTypes) return entries.map(([name, kind]) => new Dirent(name, kind, dir));
      return entries.map(([name]) => name);
    },
    mkdirSync(p, options) {
      const recursive = !!(options && typeof options === 'object' && options.recursive);
      const mode = typeof options === 'number' ? options : options && options.mode;
      return native.fsMkdir(toPath(p), recursive, mode);
    },
    // node's mkdtemp: the prefix and six random letters or digits, a new
    // directory (mode 0700), another name if that one exists.
    mkdtempSync(prefix, options) {
      const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      const base = toPath(prefix);
      for (let attempt = 0; ; attempt++) {
        const r = new Uint8Array(6);
        native.cryptoRandomFill(r);
        const p = base + Array.from(r, (b) => chars[b % chars.length]).join('');
        try {
          native.fsMkdir(p, false, 0o700);
          return encodingOf(options) === 'buffer' ? Buffer.from(p) : p;
        } catch (e) {
          if (e.code !== 'EEXIST' || attempt >= 100) {
            // node names the call and the template.
            e.message = e.message.replace(", mkdir '" + p + "'", ", mkdtemp '" + base + "XXXXXX'");
            e.syscall = 'mkdtemp';
            e.path = base + 'XXXXXX';
            throw e;
          }
        }
      }
    },
    unlinkSync(p) { native.fsUnlink(toPath(p)); },
    rmdirSync(p, options) {
      if (options && options.recursive) native.fsRm(toPath(p), true, false);
      else native.fsRmdir(toPath(p));
    },
    rmSync(p, options) { native.fsRm(toPath(p), !!(options && options.recursive), !!(options && options.force)); },
    renameSync(from, to) { native.fsRename(toPath(from), toPath(to)); },
    realpathSync(p) { return native.fsRealpath(toPath(p)); },
    copyFileSync(from, to, mode) {
      native.fsWriteFile(toPath(to), native.fsReadFile(toPath(from)), false, undefined, ((mode | 0) & COPYFILE_EXCL) !== 0);
    },
    accessSync(p) { native.fsStat(toPath(p), true, false); },
  };

  const module = {
    constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, COPYFILE_EXCL, COPYFILE_FICLONE: 2, COPYFILE_FICLONE_FORCE: 4 },
    Stats,
    Dirent,
  };
  const promises = {};
  for (const [name, fn] of Object.entries(sync)) {
    module[name] = fn;
    if (name === 'existsSync') continue;  // node has no fs.promises.exists
    const base = name.slice(0, -4);
    // Callback form: the last argument is the callback, called on a later tick.
    module[base] = (...args) => {
      const cb = args.pop();
      if (typeof cb !== 'function') throw new TypeError('The "cb" argument must be of type function');
      let result, error = null;
      try { result = fn(...args); } catch (e) { error = e; }
      setImmediate(() => (error ? cb(error) : cb(null, result)));
    };
    promises[base] = (...args) => new Promise((resolve, reject) => {
      setImmediate(() => {
        try { resolve(fn(...args)); } catch (e) { reject(e); }
      });
    });
  }
  module.exists = (p, cb) => setImmediate(() => cb(sync.existsSync(p)));
  module.promises = promises;
  return module;
})();
