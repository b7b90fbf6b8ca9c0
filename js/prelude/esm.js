// Part of the isolate prelude (js/prelude/begin.js): ECMAScript modules for
// settee run, resolved as node 20 resolves them, over native.esm*
// (js/bindings_esm.cc).
// A fragment, not a module: it shares the prelude function's scope.
//
// A file is an ES module if it ends in .mjs, or in .js under a package.json
// whose "type" is "module" (the nearest one). Its imports may name files
// (with their extension: ESM does not guess), file: URLs, packages (their
// "exports" under the "import" condition, or their main file) and
// built-ins ("fs", "node:fs"). A CommonJS module or a built-in imported
// from ESM is a module whose default export is its module.exports, with
// its own keys as named exports too; JSON files export their value as
// default.

// ---------------------------------------------------------------------------
// file: URLs (the url module's fileURLToPath / pathToFileURL)

function fileURLToPath(u) {
  const url = typeof u === 'string' ? new URL(u) : u;
  if (!(url instanceof URL)) throw new TypeError('The "path" argument must be of type string or an instance of URL. Received ' + inspect(u));
  if (url.protocol !== 'file:') {
    const e = new TypeError('The URL must be of scheme file');
    e.code = 'ERR_INVALID_URL_SCHEME';
    throw e;
  }
  if (url.hostname !== '' && url.hostname !== 'localhost') {
    const e = new TypeError('File URL host must be "localhost" or empty on linux');
    e.code = 'ERR_INVALID_FILE_URL_HOST';
    throw e;
  }
  if (/%2f/i.test(url.pathname)) {
    const e = new TypeError('File URL path must not include encoded / characters');
    e.code = 'ERR_INVALID_FILE_URL_PATH';
    throw e;
  }
  return decodeURIComponent(url.pathname);
}

function pathToFileURL(p) {
  let resolved = path.resolve(p);
  if (p.endsWith('/') && !resolved.endsWith('/')) resolved += '/';
  const url = new URL('file://');
  url.pathname = resolved.replace(/%/g, '%25').replace(/\\/g, '%5C').replace(/\n/g, '%0A')
    .replace(/\r/g, '%0D').replace(/\t/g, '%09');
  return url;
}

// ---------------------------------------------------------------------------
// Which files are ES modules

function packageTypeOf(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    const pkg = d + '/package.json';
    if (native.statKind(pkg) === 1) {
      try { return JSON.parse(readJsonText(pkg)).type === 'module' ? 'module' : 'commonjs'; } catch (e) { return 'commonjs'; }
    }
    if (d === '/' || d === '.') return 'commonjs';
  }
}
function isEsmFile(filename) {
  if (filename.endsWith('.mjs')) return true;
  if (filename.endsWith('.cjs') || filename.endsWith('.json')) return false;
  return filename.endsWith('.js') && packageTypeOf(path.dirname(filename)) === 'module';
}

// ---------------------------------------------------------------------------
// Resolution and linking

function esmNotFound(spec, referrer) {
  const e = new Error(`Cannot find ${spec.startsWith('.') || spec.startsWith('/') ? 'module' : 'package'} '${spec}' imported from ${referrer}`);
  e.code = 'ERR_MODULE_NOT_FOUND';
  return e;
}

// What `spec` imported from `referrer` (a file path) names:
// {builtin: name} or {file: path}.
function esmResolve(spec, referrer) {
  const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
  if (hasOwn(builtins, bare) || hasOwn(builtinPlugins, bare)) return { builtin: bare };
  if (spec.startsWith('node:')) {
    const e = new Error('No such built-in module: ' + spec);
    e.code = 'ERR_UNKNOWN_BUILTIN_MODULE';
    throw e;
  }
  const dir = path.dirname(referrer);
  let file;
  if (spec.startsWith('file:')) file = fileURLToPath(spec);
  else if (spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/')) file = path.resolve(dir, spec);
  else {
    file = resolveNodeModules(dir, spec, kImportConditions);
    if (!file) throw esmNotFound(spec, referrer);
    return { file };
  }
  const kind = native.statKind(file);
  if (kind === 2) {
    const e = new Error(`Directory import '${file}' is not supported resolving ES modules imported from ${referrer}`);
    e.code = 'ERR_UNSUPPORTED_DIR_IMPORT';
    throw e;
  }
  if (kind !== 1) throw esmNotFound(file, referrer);
  return { file };
}

const esmIds = new Map();  // file path or "node:" + built-in -> module id
// The parent of CommonJS modules that ES modules import (require.main stays
// unset, as in node when the entry point is an ES module).
let esmImporter = null;

// A synthetic module over a value's keys: default is the value itself.
function esmSyntheticFor(name, value) {
  const exportsObject = Object.create(null);
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    for (const k of Object.keys(value)) if (k !== 'default') exportsObject[k] = value[k];
  }
  exportsObject.default = value;
  return native.esmSynthetic(name, exportsObject);
}

// The module id for `target` (esmResolve's answer), compiling and linking
// a file module's whole import graph (each file once).
function esmModuleFor(target) {
  const key = target.builtin !== undefined ? 'node:' + target.builtin : target.file;
  let id = esmIds.get(key);
  if (id !== undefined) return id;
  if (target.builtin !== undefined) {
    id = esmSyntheticFor(key, makeRequire(null)(target.builtin));
  } else if (target.file.endsWith('.json')) {
    id = esmSyntheticFor(target.file, JSON.parse(readJsonText(target.file)));
  } else if (!isEsmFile(target.file)) {
    if (esmImporter === null) esmImporter = new Module(native.cwd() + '/[esm]', null);
    id = esmSyntheticFor(target.file, loadModule(target.file, esmImporter).exports);
  } else {
    let source = native.readFile(target.file);
    if (source.startsWith('#!')) source = '//' + source.slice(2);
    const [moduleId, specifiers] = native.esmCompile(source, target.file);
    id = moduleId;
    esmIds.set(key, id);  // before the imports: cycles find it
    try {
      for (const spec of specifiers) native.esmLink(id, spec, esmModuleFor(esmResolve(spec, target.file)));
    } catch (e) {
      esmIds.delete(key);  // a later import tries again
      throw e;
    }
    return id;
  }
  esmIds.set(key, id);
  return id;
}

// Loads, links and runs the module `target`; resolves to its namespace.
async function esmRun(target) {
  const id = esmModuleFor(target);
  native.esmInstantiate(id);
  await native.esmEvaluate(id);
  return native.esmNamespace(id);
}

function importEsm(filename) { return esmRun({ file: filename }); }

// require() of an ES module: its namespace once it has run, if it ran to
// the end synchronously; node's ERR_REQUIRE_ASYNC_MODULE if it awaits.
function requireEsm(filename) {
  const id = esmModuleFor({ file: filename });
  native.esmInstantiate(id);
  if (!native.esmEvaluateSync(id)) {
    const e = new Error('require() cannot be used on an ESM graph with top-level await. Use import() instead.\n  From ' + filename);
    e.code = 'ERR_REQUIRE_ASYNC_MODULE';
    throw e;
  }
  return native.esmNamespace(id);
}

// import(specifier) from `referrer` (a module's or a script's file name).
hooks.esmImport = function (specifier, referrer) {
  try {
    const from = typeof referrer === 'string' && referrer.startsWith('/') ? referrer : native.cwd() + '/[eval]';
    return esmRun(esmResolve(String(specifier), from));
  } catch (e) {
    return Promise.reject(e);
  }
};

// import.meta of the module from `filename`.
hooks.esmMeta = function (filename, meta) {
  if (!filename.startsWith('/')) return;
  meta.url = pathToFileURL(filename).href;
  meta.filename = filename;
  meta.dirname = path.dirname(filename);
  meta.resolve = (spec) => {
    const t = esmResolve(String(spec), filename);
    return t.builtin !== undefined ? 'node:' + t.builtin : pathToFileURL(t.file).href;
  };
};
