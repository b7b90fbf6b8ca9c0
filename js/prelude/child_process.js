// Part of the isolate prelude (js/prelude/begin.js): node's child_process
// without streams, over native.child* (js/bindings_child_process.cc):
// spawnSync, execSync, execFileSync, and exec / execFile with a callback
// (util.promisify gives {stdout, stderr}). Input is given whole (`input`),
// output collected whole; a child's stdio cannot be inherited or piped
// elsewhere here.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// child_process

const kSignals = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9,
  SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGCHLD: 17, SIGCONT: 18,
  SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22,
};
const kSignalNames = Object.fromEntries(Object.entries(kSignals).map(([k, v]) => [v, k]));
const kSpawnErrnoNames = { 2: 'ENOENT', 13: 'EACCES', 20: 'ENOTDIR', 7: 'E2BIG', 8: 'ENOEXEC', 12: 'ENOMEM' };

function signalNumber(s) {
  if (s === undefined) return kSignals.SIGTERM;
  if (typeof s === 'number') return s;
  const n = kSignals[String(s)];
  if (n === undefined) {
    const e = new TypeError(`Unknown signal: ${s}`);
    e.code = 'ERR_UNKNOWN_SIGNAL';
    throw e;
  }
  return n;
}

// The native arguments for running `file` with `args` under `options`.
function childArgs(file, args, options) {
  if (typeof file !== 'string' || file === '') throw new TypeError('The "file" argument must be a non-empty string');
  const env = options.env === undefined ? null
    : Object.keys(options.env).filter((k) => options.env[k] !== undefined).map((k) => k + '=' + options.env[k]);
  let input = null;
  if (options.input !== undefined && options.input !== null) {
    input = typeof options.input === 'string' ? Buffer.from(options.input, options.encoding === 'buffer' ? 'utf8' : options.encoding || 'utf8') : options.input;
  }
  const argv0 = options.argv0 !== undefined ? String(options.argv0) : file;
  return [file, [argv0, ...args.map(String)], env, options.cwd !== undefined ? String(options.cwd) : null, input,
    options.timeout > 0 ? options.timeout : 0, signalNumber(options.killSignal),
    options.maxBuffer === undefined ? 1024 * 1024 : options.maxBuffer];
}

// The shell command line as a /bin/sh invocation, as node's `shell: true`.
function shellCommand(command, options) {
  const shell = typeof options.shell === 'string' ? options.shell : '/bin/sh';
  return [shell, ['-c', String(command)]];
}

function decodeOutput(bytes, encoding) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return encoding && encoding !== 'buffer' ? b.toString(encoding) : b;
}

function spawnError(r, syscall, path, spawnargs) {
  const code = kSpawnErrnoNames[r.spawnErrno] || 'E' + r.spawnErrno;
  const e = new Error(`${syscall} ${path} ${code}`);
  e.errno = -r.spawnErrno;
  e.code = code;
  e.syscall = syscall + ' ' + path;
  e.path = path;
  e.spawnargs = spawnargs;
  return e;
}

// node's spawnSync answer from the native one.
function spawnResult(r, file, args, options) {
  const out = {
    pid: r.pid > 0 ? r.pid : 0,
    output: null,
    stdout: decodeOutput(r.stdout, options.encoding),
    stderr: decodeOutput(r.stderr, options.encoding),
    status: r.status,
    signal: r.signal ? kSignalNames[r.signal] || r.signal : null,
  };
  out.output = [null, out.stdout, out.stderr];
  if (r.spawnErrno) out.error = spawnError(r, 'spawnSync', file, args);
  else if (r.timedOut) { out.error = new Error('spawnSync ' + file + ' ETIMEDOUT'); out.error.code = 'ETIMEDOUT'; }
  else if (r.overflowed) { out.error = new RangeError('stdout maxBuffer length exceeded'); out.error.code = 'ENOBUFS'; }
  return out;
}

// execSync / execFileSync's error for a child that failed. Without a
// `stdio` option the child's stderr goes on to ours, as in node.
function checkSyncResult(result, commandText, options) {
  if (options.stdio === undefined && result.stderr.length) process.stderr.write(result.stderr.toString());
  if (result.error && result.error.code !== 'ETIMEDOUT' && result.error.code !== 'ENOBUFS') throw result.error;
  if (result.error || result.status !== 0) {
    const e = result.error || new Error('Command failed: ' + commandText + (result.stderr.length ? '\n' + result.stderr.toString() : ''));
    Object.assign(e, { status: result.status, signal: result.signal, output: result.output, pid: result.pid, stdout: result.stdout, stderr: result.stderr });
    throw e;
  }
}

function normalizeFileArgs(args, options) {
  if (!Array.isArray(args)) { options = args; args = []; }
  return [args, Object.assign({}, options || {})];
}

class ChildProcess extends EventEmitter {
  constructor() {
    super();
    this.pid = undefined;
    this.exitCode = null;
    this.signalCode = null;
    this.killed = false;
    this.stdin = this.stdout = this.stderr = null;
  }
  kill(signal = 'SIGTERM') {
    if (this.exitCode !== null || this.signalCode !== null || !this.pid) return false;
    const sent = native.childKill(this.pid, signalNumber(signal));
    if (sent) this.killed = true;
    return sent;
  }
}

class ChildCall {
  constructor(child, nativeArgs, done) {
    this.child = child;
    this.done = done;
    this.id = nextFeedId++;
    feeds.set(this.id, this);
    const pid = native.childStart(this.id, ...nativeArgs);
    if (pid > 0) child.pid = pid;
  }
  _poll() {
    const r = native.childResult(this.id);
    if (r === undefined) return;
    feeds.delete(this.id);
    this.done(r);
  }
  cancel() {}
}

// exec / execFile: the callback gets (error, stdout, stderr) once the child
// has exited; the ChildProcess emits 'exit' and 'close' then.
function runChild(file, args, options, commandText, callback) {
  const child = new ChildProcess();
  child.spawnfile = file;
  child.spawnargs = [file, ...args];
  new ChildCall(child, childArgs(file, args, options), (r) => {
    const encoding = options.encoding === undefined ? 'utf8' : options.encoding;
    const stdout = decodeOutput(r.stdout, encoding);
    const stderr = decodeOutput(r.stderr, encoding);
    let error = null;
    if (r.spawnErrno) {
      error = spawnError(r, 'spawn', file, args);
      child.emit('error', error);
    } else {
      child.exitCode = r.status;
      child.signalCode = r.signal ? kSignalNames[r.signal] || r.signal : null;
      if (r.status !== 0 || r.signal) {
        error = new Error('Command failed: ' + commandText + '\n' + stderr.toString());
        Object.assign(error, { code: r.status, killed: child.killed || r.timedOut || r.overflowed, signal: child.signalCode, cmd: commandText });
      }
      child.emit('exit', child.exitCode, child.signalCode);
      child.emit('close', child.exitCode, child.signalCode);
    }
    if (callback) callback(error, stdout, stderr);
  });
  return child;
}

function execFile(file, args, options, callback) {
  if (typeof args === 'function') { callback = args; args = []; options = {}; }
  else if (typeof options === 'function') {
    callback = options;
    if (Array.isArray(args)) options = {};
    else { options = args || {}; args = []; }
  }
  [args, options] = normalizeFileArgs(args, options);
  return runChild(file, args, options, [file, ...args].join(' '), callback);
}
function exec(command, options, callback) {
  if (typeof options === 'function') { callback = options; options = {}; }
  options = Object.assign({}, options || {});
  const [shell, args] = shellCommand(command, options);
  return runChild(shell, args, options, String(command), callback);
}
// util.promisify(exec / execFile) resolves {stdout, stderr}, as in node.
for (const fn of [exec, execFile]) {
  fn[kCustomPromisify] = (...args) => new Promise((resolve, reject) => {
    fn(...args, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

const childProcess = {
  ChildProcess,
  exec,
  execFile,
  spawnSync(file, args, options) {
    [args, options] = normalizeFileArgs(args, options);
    const [f, a] = options.shell ? shellCommand([file, ...args].join(' '), options) : [file, args];
    return spawnResult(native.childSync(...childArgs(f, a, options)), f, a, options);
  },
  execFileSync(file, args, options) {
    [args, options] = normalizeFileArgs(args, options);
    const result = spawnResult(native.childSync(...childArgs(file, args, options)), file, args, options);
    checkSyncResult(result, [file, ...args].join(' '), options);
    return result.stdout;
  },
  execSync(command, options) {
    options = Object.assign({}, options || {});
    const [shell, args] = shellCommand(command, options);
    const result = spawnResult(native.childSync(...childArgs(shell, args, options)), shell, args, options);
    checkSyncResult(result, String(command), options);
    return result.stdout;
  },
};
