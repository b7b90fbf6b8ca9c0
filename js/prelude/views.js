// Part of the isolate prelude (js/prelude/begin.js): the design-document
// function runtime behind views (storage/views.h via js/view_functions_js.h):
// compiles map and reduce functions with CouchDB's sandbox (emit, log, sum,
// isArray, toJSON, require of the design document's CommonJS modules) and
// runs them over batches of documents. A fragment, not a module.

// ---------------------------------------------------------------------------
// Views: map/reduce functions

const viewCodeCache = new Map();  // code key -> compiled map functions
const reduceCache = new Map();    // source -> compiled reduce function
let currentEmits = null;
let mapErrorsLogged = 0;

function viewSum(values) {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s;
}
function viewLog(msg) {
  console.error('Log :: ' + (typeof msg === 'string' ? msg : JSON.stringify(msg)));
}
function viewEmit(key, value) {
  if (currentEmits === null) throw new Error('emit() called outside a map function');
  currentEmits.push([key === undefined ? null : key, value === undefined ? null : value]);
}

// CouchDB's require() for design documents: paths are relative to the
// design document ("views/lib/foo"); modules are CommonJS source strings.
function ddocRequire(ddoc) {
  const cache = new Map();
  function resolve(parts, spec) {
    const path = spec.startsWith('./') || spec.startsWith('../') ? parts.slice(0, -1) : [];
    for (const p of spec.split('/')) {
      if (p === '..') path.pop();
      else if (p !== '.' && p !== '') path.push(p);
    }
    return path;
  }
  function load(parts, spec) {
    const path = resolve(parts, spec);
    const key = path.join('/');
    if (cache.has(key)) return cache.get(key).exports;
    let src = ddoc;
    for (const p of path) {
      src = src != null && typeof src === 'object' ? src[p] : undefined;
    }
    if (typeof src !== 'string') throw new Error('require(\'' + spec + '\'): no module ' + key + ' in the design document');
    const module = { id: key, exports: {} };
    cache.set(key, module);
    const fn = new Function('module', 'exports', 'require', 'emit', 'log', 'sum', 'isArray', 'toJSON', src);
    fn(module, module.exports, (s) => load(path, s), viewEmit, viewLog, viewSum, Array.isArray, JSON.stringify);
    return module.exports;
  }
  return (spec) => load([], spec);
}

function compileViewFunction(src, require) {
  let fn;
  try {
    fn = new Function('emit', 'log', 'sum', 'isArray', 'toJSON', 'require',
                      'return (' + src + '\n);')(viewEmit, viewLog, viewSum, Array.isArray, JSON.stringify, require);
  } catch (e) {
    throw new PouchError(400, 'compilation_error', 'Expression does not eval to a function. (' + String(src).slice(0, 200) + ')');
  }
  if (typeof fn !== 'function') {
    throw new PouchError(400, 'compilation_error', 'Expression does not eval to a function. (' + String(src).slice(0, 200) + ')');
  }
  return fn;
}

function compiledMaps(code) {
  const key = code.maps.join('\u0000') + '\u0001' + code.ddoc;
  let fns = viewCodeCache.get(key);
  if (fns) return fns;
  const ddoc = code.ddoc ? JSON.parse(code.ddoc) : {};
  const require = ddocRequire(ddoc);
  fns = code.maps.map((src) => compileViewFunction(src, require));
  if (viewCodeCache.size > 64) viewCodeCache.clear();
  viewCodeCache.set(key, fns);
  return fns;
}

// code: {language, maps, ddoc}; docs: an array of documents. Returns, per
// document, per function, its [key, value] emits.
function viewMap(code, docs) {
  const fns = compiledMaps(code);
  const out = new Array(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const per = new Array(fns.length);
    for (let f = 0; f < fns.length; f++) {
      currentEmits = [];
      try {
        // PouchDB passes emit as a second argument too (its idiom for
        // temporary views: `db.query((doc, emit) => emit(doc.x))`).
        fns[f](docs[i], viewEmit);
      } catch (e) {
        currentEmits = [];
        // CouchDB skips the document for this view and logs it.
        if (mapErrorsLogged++ < 100) {
          console.error('map function threw on document ' + JSON.stringify(docs[i]._id) + ': ' + (e && e.name ? e.name + ': ' + e.message : String(e)));
        }
      }
      per[f] = currentEmits;
    }
    out[i] = per;
  }
  currentEmits = null;
  return out;
}

// One reduce call. A reduce that throws gives null for its group and is
// logged, as CouchDB's runReduce (share/server/views.js: handleViewError,
// then "reductions[i] = null") and PouchDB's tryReduce do; only CouchDB's
// fatal forms ('fatal_error', ['fatal', error, reason]) fail the query.
function reduceOrNull(fn, keys, values, rereduce) {
  let r;
  try {
    r = fn(keys, values, rereduce);
  } catch (e) {
    if (e === 'fatal_error') throw new PouchError(500, 'map_runtime_error', "function raised 'fatal_error'");
    if (Array.isArray(e) && e[0] === 'fatal') throw new PouchError(500, String(e[1]), String(e[2]));
    if (mapErrorsLogged++ < 100) {
      console.error('reduce function threw: ' + (e && e.name ? e.name + ': ' + e.message : String(e)));
    }
    return null;
  }
  return r === undefined ? null : r;
}

// calls: [[keys, values, rereduce], ...]. Returns the results. CouchDB's
// reduce_limit: a reduce or rereduce whose output does not shrink is
// refused (couchjs checks both; settee reduces cached blocks of 64 rows,
// whose output may pass the 4 KiB floor only when rereduced).
function viewReduce(code, source, calls) {
  let fn = reduceCache.get(source);
  if (!fn) {
    fn = compileViewFunction(source, ddocRequire(code.ddoc ? JSON.parse(code.ddoc) : {}));
    if (reduceCache.size > 64) reduceCache.clear();
    reduceCache.set(source, fn);
  }
  const out = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) {
    const [keys, values, rereduce] = calls[i];
    out[i] = reduceOrNull(fn, keys, values, rereduce);
    if (values.length > 1) {
      const size = JSON.stringify(out[i]).length;
      if (size > 4096 && size * 2 > JSON.stringify(values).length) {
        throw new PouchError(500, 'reduce_overflow_error', 'Reduce output must shrink more rapidly: Current output: \'' + JSON.stringify(out[i]).slice(0, 100) + '\'... (first 100 of ' + size + ' bytes)');
      }
    }
  }
  return out;
}

// viewMap's result as JSON text. An emit that is not JSON (a cycle, a
// BigInt, a toJSON that throws) drops that document's emits of that
// function, as a map function that throws does, instead of failing the
// whole batch.
function viewMapText(code, docs) {
  const out = viewMap(code, docs);
  try {
    return JSON.stringify(out);
  } catch (e) {
    for (let i = 0; i < out.length; i++) {
      for (let f = 0; f < out[i].length; f++) {
        try {
          JSON.stringify(out[i][f]);
        } catch (e2) {
          out[i][f] = [];
          if (mapErrorsLogged++ < 100) {
            console.error('map function emitted what is not JSON for document ' + JSON.stringify(docs[i]._id) + ': ' + (e2 && e2.message ? e2.message : String(e2)));
          }
        }
      }
    }
    return JSON.stringify(out);
  }
}

// The in-isolate path (native.dbQuery / dbTempQuery): JSON text both ways.
function viewMapJson(codeJson, docsJson) {
  return viewMapText(JSON.parse(codeJson), JSON.parse(docsJson));
}
function viewReduceJson(codeJson, source, callsJson) {
  return JSON.stringify(viewReduce(JSON.parse(codeJson), source, JSON.parse(callsJson)));
}
function fnText(f) { return typeof f === 'function' ? Function.prototype.toString.call(f) : String(f); }

// ---------------------------------------------------------------------------
// validate_doc_update (storage/validate_functions.h)

const validateCache = new Map();  // set signature -> [{fn, ddoc}]

function compiledValidators(set) {
  let fns = validateCache.get(set.signature);
  if (fns) return fns;
  fns = set.validators.map((v) => {
    const ddoc = JSON.parse(v.ddoc);
    return { fn: compileViewFunction(v.source, ddocRequire(ddoc)), ddoc };
  });
  if (validateCache.size > 64) validateCache.clear();
  validateCache.set(set.signature, fns);
  return fns;
}

// What a validate function threw, as CouchDB's couch_query_servers reads
// it: {forbidden: msg} and {unauthorized: msg} as such; any other object's
// first value, a string, or an Error's text as {error: msg}.
function validateRefusal(e) {
  if (e !== null && typeof e === 'object' && !(e instanceof Error)) {
    if ('forbidden' in e) return { forbidden: String(e.forbidden) };
    if ('unauthorized' in e) return { unauthorized: String(e.unauthorized) };
    const keys = Object.keys(e);
    return { error: keys.length ? String(e[keys[0]]) : JSON.stringify(e) };
  }
  if (e instanceof Error) return { error: e.name + ': ' + e.message };
  return { error: String(e) };
}

// a: {set: {signature, validators: [{source, ddoc}]}, calls: [[newDoc,
// oldDoc], ...], userCtx, secObj}. Returns, per call, null (accepted) or
// the first refusal; every function runs with its design document as this.
function validateDocs(a) {
  const fns = compiledValidators(a.set);
  const out = new Array(a.calls.length);
  for (let i = 0; i < a.calls.length; i++) {
    const [newDoc, oldDoc] = a.calls[i];
    let refusal = null;
    for (let f = 0; f < fns.length && refusal === null; f++) {
      try {
        fns[f].fn.call(fns[f].ddoc, newDoc, oldDoc, a.userCtx, a.secObj);
      } catch (e) {
        refusal = validateRefusal(e);
      }
    }
    out[i] = refusal;
  }
  return out;
}

// a: [source, ...], a design document's map and reduce functions. Returns
// null when every one compiles, else {index, message} of the first that
// does not (storage/validate_functions.h's Compile). Nothing is called: a
// require() the expression itself makes fails as compilation would.
function compileSources(a) {
  const noRequire = () => { throw new Error('require() while compiling'); };
  for (let i = 0; i < a.length; i++) {
    try {
      compileViewFunction(a[i], noRequire);
    } catch (e) {
      return { index: i, message: e && e.message !== undefined ? String(e.message) : String(e) };
    }
  }
  return null;
}

// The pool path (IsolatePool::Run with a task source naming these).
Object.defineProperty(settee, '_views', {
  value: Object.freeze({
    // JSON text for the host as it is (not quoted as a string).
    mapText: (a) => new TaskJsonText(viewMapText(a.code, a.docs)),
    reduce: (a) => viewReduce(a.code, a.source, a.calls),
    validate: (a) => validateDocs(a),
    compile: (a) => compileSources(a),
  }),
  enumerable: false,
});
