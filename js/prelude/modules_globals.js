// Part of the isolate prelude (js/prelude/begin.js): CommonJS require() and the global object.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// CommonJS require

const builtins = {
  events: EventEmitter, util, 'util/types': utilTypes, assert, 'assert/strict': assertStrict, path, 'path/posix': path,
  fs, 'fs/promises': fs.promises, crypto, os, url: { URL, URLSearchParams, fileURLToPath, pathToFileURL, ...legacyUrl }, querystring,
  string_decoder: { StringDecoder }, zlib, child_process: childProcess, 'timers/promises': timersPromises, perf_hooks: { performance },
  module: { createRequire: (from) => makeRequire(new Module(from instanceof URL || String(from).startsWith('file:') ? fileURLToPath(from) : String(from), null)) },
  pouchdb: PouchDBExport, 'pouchdb-core': PouchDBExport, settee, buffer: bufferModule, tty,
  readline: readlineModule, 'readline/promises': readlinePromises,
  timers: null, process: null, console: null,
};
const moduleCache = Object.create(null);

class Module {
  constructor(id, parent) {
    this.id = id;
    this.filename = id;
    this.exports = {};
    this.loaded = false;
    this.parent = parent;
    this.children = [];
    this.paths = [];
  }
}

// JSON text as node reads it: a UTF-8 byte order mark (which some editors
// write) is not part of it (require, package.json, import of .json).
function stripBOM(text) {
  return text.charCodeAt(0) === 0xFEFF ? text.slice(1) : text;
}
function readJsonText(file) {
  return stripBOM(native.readFile(file));
}

function resolveFile(base) {
  const kind = native.statKind(base);
  if (kind === 1) return base;
  for (const ext of ['.js', '.json', '.cjs']) if (native.statKind(base + ext) === 1) return base + ext;
  if (kind === 2) {
    const pkg = base + '/package.json';
    if (native.statKind(pkg) === 1) {
      let main;
      try { main = JSON.parse(readJsonText(pkg)).main; } catch (e) { main = undefined; }
      if (typeof main === 'string') {
        const r = resolveFile(path.resolve(base, main));
        if (r) return r;
      }
    }
    for (const ext of ['/index.js', '/index.json']) if (native.statKind(base + ext) === 1) return base + ext;
  }
  return null;
}

// The package.json "exports" conditions of require() and of import.
const kRequireConditions = ['require', 'node', 'default'];
const kImportConditions = ['import', 'node', 'default'];

// A package.json "exports" target for `conditions`, or undefined: a string,
// an array (first that resolves), or a conditions object (the first key, in
// the package's order, that is one of `conditions`).
function exportsTarget(value, conditions = kRequireConditions) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const v of value) {
      const t = exportsTarget(v, conditions);
      if (t !== undefined) return t;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (conditions.includes(key)) {
        const t = exportsTarget(value[key], conditions);
        if (t !== undefined) return t;
      }
    }
  }
  return undefined;
}

// `subpath` ("." or "./x") of the package in `dir` through its "exports",
// or null when it has none (plain file resolution applies then).
function resolvePackageExports(dir, subpath, conditions) {
  const pkgFile = dir + '/package.json';
  if (native.statKind(pkgFile) !== 1) return null;
  let exportsField;
  try { exportsField = JSON.parse(readJsonText(pkgFile)).exports; } catch (e) { return null; }
  if (exportsField === undefined || exportsField === null) return null;
  const sugar = typeof exportsField === 'string' || Array.isArray(exportsField) ||
      !Object.keys(exportsField).some((k) => k.startsWith('.'));
  const target = exportsTarget(sugar ? (subpath === '.' ? exportsField : undefined) : exportsField[subpath], conditions);
  return target === undefined ? null : resolveFile(path.resolve(dir, target));
}

// node's lookup of a bare specifier ("pkg", "pkg/sub", "@scope/pkg/sub"):
// node_modules/ in the requiring module's directory, then in each parent.
function resolveNodeModules(dir, spec, conditions = kRequireConditions) {
  const parts = spec.split('/');
  const nameLength = spec.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameLength).join('/');
  const subpath = parts.length > nameLength ? './' + parts.slice(nameLength).join('/') : '.';
  for (let d = dir; ; d = path.dirname(d)) {
    if (path.basename(d) !== 'node_modules') {
      const pkgDir = path.join(d, 'node_modules', name);
      if (native.statKind(pkgDir) === 2) {
        const viaExports = resolvePackageExports(pkgDir, subpath, conditions);
        if (viaExports) return viaExports;
        const r = resolveFile(path.join(d, 'node_modules', spec));
        if (r) return r;
      }
    }
    if (d === path.dirname(d)) return null;
  }
}

function makeRequire(mod) {
  const dir = mod ? path.dirname(mod.filename) : native.cwd();
  const isPath = (spec) => spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/') ||
      spec === '.' || spec === '..';
  const resolveSpec = (spec) =>
    isPath(spec) ? resolveFile(path.resolve(dir, spec)) : resolveNodeModules(dir, spec);
  function require(spec) {
    if (typeof spec !== 'string' || spec === '') throw new TypeError('The "id" argument must be a non-empty string');
    const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
    if (hasOwn(builtinPlugins, bare)) return builtinPlugins[bare];
    if (hasOwn(builtins, bare)) {
      const b = builtins[bare];
      if (bare === 'timers') return { setTimeout: global.setTimeout, setInterval: global.setInterval, setImmediate, clearTimeout: clearTimer, clearInterval: clearTimer, clearImmediate };
      if (bare === 'process') return process;
      if (bare === 'console') return console;
      return b;
    }
    const filename = resolveSpec(spec);
    if (!filename) {
      const e = new Error("Cannot find module '" + spec + "'" + (mod ? '\nRequire stack:\n- ' + mod.filename : ''));
      e.code = 'MODULE_NOT_FOUND';
      throw e;
    }
    // An ES module is loaded synchronously, as node 20 does, unless it
    // (or an import) awaits at the top level.
    if (isEsmFile(filename)) return requireEsm(filename);
    return loadModule(filename, mod).exports;
  }
  require.resolve = (spec) => {
    const bare = typeof spec === 'string' && spec.startsWith('node:') ? spec.slice(5) : spec;
    if (hasOwn(builtinPlugins, bare) || hasOwn(builtins, bare)) return bare;
    const r = typeof spec === 'string' && spec !== '' ? resolveSpec(spec) : null;
    if (!r) { const e = new Error("Cannot find module '" + spec + "'"); e.code = 'MODULE_NOT_FOUND'; throw e; }
    return r;
  };
  require.cache = moduleCache;
  require.main = mainModule;
  return require;
}

let mainModule;
function loadModule(filename, parent, source) {
  const cached = moduleCache[filename];
  if (cached) return cached;  // a cycle gets the partial exports, like node
  const mod = new Module(filename, parent);
  if (parent) parent.children.push(mod);
  if (!parent) mainModule = mod;
  moduleCache[filename] = mod;
  // try/finally, not catch + rethrow: a rethrow would move the error's
  // reported location (file:line and caret) into this file.
  let loaded = false;
  try {
    if (source === undefined) source = native.readFile(filename);
    if (filename.endsWith('.json')) {
      try {
        mod.exports = JSON.parse(stripBOM(source));
      } catch (e) {
        e.message = filename + ': ' + e.message;
        throw e;
      }
    } else {
      if (source.startsWith('#!')) source = '//' + source.slice(2);
      const fn = native.compileModule(source, filename);
      const req = makeRequire(mod);
      fn.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
    }
    mod.loaded = true;
    loaded = true;
  } finally {
    if (!loaded) delete moduleCache[filename];
  }
  return mod;
}
// Runs the main script: `source` is given for stdin/eval-like input.
hooks.runMain = function (filename, source) {
  const abs = filename === '[stdin]' ? native.cwd() + '/[stdin]' : path.resolve(filename);
  // An ES module's errors, top-level await's included, reject its
  // evaluation; they are reported as the uncaught exceptions they are.
  if (source === '' && isEsmFile(abs)) importEsm(abs).catch((e) => native.reportUncaught(e));
  else loadModule(abs, null, source === '' ? undefined : source);
};

// ---------------------------------------------------------------------------
// Globals


function defineGlobal(name, value) {
  Object.defineProperty(global, name, { value, writable: true, configurable: true, enumerable: false });
}
defineGlobal('global', global);
defineGlobal('console', console);
defineGlobal('process', process);
defineGlobal('setTimeout', (fn, ms, ...args) => setTimer(fn, ms, args, false));
global.setTimeout[kCustomPromisify] = timersPromises.setTimeout;
setImmediate[kCustomPromisify] = timersPromises.setImmediate;
defineGlobal('setInterval', (fn, ms, ...args) => setTimer(fn, ms, args, true));
defineGlobal('clearTimeout', clearTimer);
defineGlobal('clearInterval', clearTimer);
defineGlobal('setImmediate', setImmediate);
defineGlobal('clearImmediate', clearImmediate);
defineGlobal('queueMicrotask', (fn) => {
  if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
  native.queueMicrotask(fn);
});
defineGlobal('TextEncoder', TextEncoder);
defineGlobal('TextDecoder', TextDecoder);
defineGlobal('Buffer', Buffer);
defineGlobal('URL', URL);
defineGlobal('crypto', crypto.webcrypto);
defineGlobal('URLSearchParams', URLSearchParams);
defineGlobal('performance', performance);
defineGlobal('PouchDB', PouchDBExport);
defineGlobal('settee', settee);
defineGlobal('require', makeRequire(null));
defineGlobal('EventEmitter', EventEmitter);
defineGlobal('fetch', fetch);
defineGlobal('Headers', Headers);
defineGlobal('Request', Request);
defineGlobal('Response', Response);
defineGlobal('structuredClone', structuredClone);
defineGlobal('DOMException', DOMException);
defineGlobal('Event', Event);
defineGlobal('CustomEvent', CustomEvent);
defineGlobal('EventTarget', EventTarget);
defineGlobal('AbortController', AbortController);
defineGlobal('AbortSignal', AbortSignal);
defineGlobal('atob', (s) => String.fromCharCode(...base64Decode(s)));
defineGlobal('btoa', (s) => base64Encode(Buffer.from(String(s), 'latin1')));
