// Part of the isolate prelude (js/prelude/begin.js): the PouchDB-compatible database API.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// PouchDB-compatible database API

// pouchdb-errors' templates that PouchDB's adapters use bare
// (createError(TEMPLATE), no reason): an error with one of these messages
// has no `reason` member, as PouchDB's has none. Any other keeps its
// reason (a missing document's 'missing' or 'deleted', CouchDB's reasons).
const kBareMessages = new Set(['Document update conflict', 'Missing JSON list of \'docs\'',
  '_id field must contain a string', '_id is required for puts',
  'Only reserved document ids may start with underscore.', 'Document must be a JSON object',
  'Invalid rev format', 'A pre-existing attachment stub wasn\'t found']);

class PouchError extends Error {
  constructor(status, name, reason) {
    // Members assigned in pouchdb-errors' order (status, name, message,
    // error, reason): Object.keys and JSON.stringify list them so. The
    // stack stays the usual non-enumerable one (PouchDB's createError
    // copies it to an enumerable member), so that JSON.stringify(err)
    // prints no stack trace.
    super();
    this.status = status;
    this.name = name;
    this.message = reason;
    this.error = true;
    if (!kBareMessages.has(reason)) this.reason = reason;
  }
  // PouchDB's: String(err) is JSON of status, name, message and reason.
  toString() {
    return JSON.stringify({ status: this.status, name: this.name, message: this.message, reason: this.reason });
  }
}
// The engine's errors carry CouchDB's names and reasons (its HTTP API's);
// where PouchDB's own adapters answer differently (pouchdb-errors), the JS
// API answers as they do: a conflict's message has no full stop, and it has
// no reason; a missing or deleted document's (or attachment's) message is
// "missing", its reason saying which; a reserved _id is a bad_request; a
// missing stub has PouchDB's message (and no reason).
function pouchShaped(e) {
  if (e.name === 'conflict' && e.message === 'Document update conflict.') {
    e.message = 'Document update conflict';
    delete e.reason;
  } else if (e.name === 'not_found' && (e.reason === 'deleted' || e.reason === 'missing' ||
                                        e.reason === 'Document is missing attachment')) {
    e.message = 'missing';
  } else if (e.name === 'illegal_docid') {
    e.name = 'bad_request';
  } else if (e.name === 'missing_stub') {
    e.message = 'A pre-existing attachment stub wasn\'t found';
    delete e.reason;
  }
  return e;
}
// PouchDB's put, post and remove write through bulkDocs: a refused row's
// error (a conflict, a removal's 404) carries the row's `id` and then the
// document's `docId` (pouchdb-core's yankError); post's and remove's other
// errors (the whole batch refused: a bad rev or _id) the docId only, put's
// none (put checks them before it writes). Only PouchErrors: a TypeError
// stays as it is.
function yanked(e, id, allErrors) {
  if (e instanceof PouchError) {
    if (e.status === 409 || e.status === 404) {
      e.id = id;
      e.docId = id;
    } else if (allErrors) {
      e.docId = id;
    }
  }
  return e;
}
hooks.makeError = (status, name, reason) => pouchShaped(new PouchError(status, name, reason));

// Settles `cb` (node style, on a fresh tick so that a throwing callback is
// an uncaught exception, not a rejected promise) and returns the promise.
function settle(promise, cb) {
  if (typeof cb === 'function') {
    promise.then((r) => nextTick(cb, null, r), (e) => nextTick(cb, e));
  }
  return promise;
}
function run(cb, fn) {
  let p;
  try { p = Promise.resolve(fn()); } catch (e) { p = Promise.reject(e); }
  return cb === undefined ? p : settle(p, cb);
}
// run() without a closure: fn(a, b, c) (put and post).
function runCall(cb, fn, a, b, c) {
  let p;
  try { p = Promise.resolve(fn(a, b, c)); } catch (e) { p = Promise.reject(e); }
  return cb === undefined ? p : settle(p, cb);
}
// A _rev as pouchdb-core 9 takes it before any adapter sees it
// (isValidRev): a number, '-', then no other '-'; anything else is 400
// "Invalid rev format" for put, post, bulkDocs and remove. CouchDB's
// parse_rev differs (it takes '1-a-b', and refuses a 32-character id that
// is not hex), which is why the HTTP API, and the engine, keep their own.
const kPouchRev = /^\d+-[^-]*$/;
function badPouchRev(rev) { return typeof rev !== 'string' || !kPouchRev.test(rev); }
// Of the revs PouchDB takes, those that can name no stored revision: for a
// document, generation 0 or one beyond the engine's 64 bits, or an empty
// id ('1-', '0-abc'), which the engine refuses as malformed; for a _local
// one, anything but the "0-N" it stores. PouchDB looks such a rev up and
// answers what a rev the document does not have gets: a conflict (a
// removal of a never-written document its 404).
const kLocalRev = /^0-\d{1,20}$/;
function revNamesNothing(id, rev) {
  if (typeof id === 'string' && id.startsWith('_local/')) return !kLocalRev.test(rev);
  const dash = rev.indexOf('-');
  if (dash === rev.length - 1) return true;
  let i = 0;
  while (i < dash && rev[i] === '0') i++;
  const digits = dash - i;
  return digits === 0 || digits > 20 || (digits === 20 && rev.slice(i, dash) > '18446744073709551615');
}
// An _id put() refuses (pouchdb-utils' invalidIdError) before it looks at
// the rev: the engine's error answers it.
function reservedId(id) {
  return id.startsWith('_') && !id.startsWith('_design/') && !id.startsWith('_local/');
}
function conflictError() {
  return pouchShaped(new PouchError(409, 'conflict', 'Document update conflict.'));
}
// remove()'s overloads, read as PouchDB 9 reads them: (id, rev, opts?, cb?)
// when the second argument is a string, else (doc, opts?, cb?), the doc's
// rev being doc._rev or opts.rev. A string id without a rev string is thus
// a "doc" with no _id (see remove()).
function removeArgs(docOrId, optsOrRev, opts, cb) {
  if (typeof optsOrRev === 'string') {
    if (typeof opts === 'function') { cb = opts; opts = {}; }
    return { doc: { _id: docOrId, _rev: optsOrRev }, opts: opts || {}, cb };
  }
  if (typeof optsOrRev === 'function') return { doc: docOrId, opts: {}, cb: optsOrRev };
  return { doc: docOrId, opts: optsOrRev || {}, cb: opts };
}
// PouchDB's error for a removal: its bulkDocs answer carries the id
// (pouchdb-core's yankError), a never-written document is "deleted" (its
// was_delete refusal) and a deleted one a conflict.
function removeError(e, id) {
  if (e && e.status === 404 && e.reason === 'missing') e.reason = 'deleted';
  return yanked(e, id, true);
}

// get()'s error for a document it could not read carries the id asked for
// as `docId`, as pouchdb-core's get gives it; a local document's is
// localError's.
function gotError(e, id) {
  if (e instanceof PouchError) {
    if (id.startsWith('_local/')) return localError(e);
    e.docId = id;
  }
  return e;
}
// PouchDB reads and writes local documents past bulkDocs and get's
// wrapping (its adapters' _getLocal, _putLocal, _removeLocal): their errors
// have no id or docId, and a missing one's 404 no reason (MISSING_DOC used
// bare).
function localError(e) {
  if (e instanceof PouchError && e.status === 404) delete e.reason;
  return e;
}

// Every call naming a document: PouchDB's error for a missing id.
function checkDocId(id) {
  if (typeof id !== 'string' || id === '') throw new PouchError(412, 'missing_id', 'docid is required');
}
// putAttachment()'s overloads, PouchDB's: the rev is optional
// ((docId, name, rev?, blob, type, cb?)).
function putAttachmentArgs(rev, blob, type, cb) {
  if (typeof type === 'function') return { rev: null, blob: rev, type: blob, cb: type };
  if (type === undefined) return { rev: null, blob: rev, type: blob, cb };
  return { rev, blob, type, cb };
}

function argsOf(opts, cb) {
  if (typeof opts === 'function') return [{}, opts];
  return [opts == null ? {} : opts, cb];
}
function jsonOpts(o) { return o && Object.keys(o).length ? JSON.stringify(o, optsReplacer) : undefined; }
// Options may carry callbacks (onChange, complete, filter): drop them.
function optsReplacer(k, v) { return typeof v === 'function' ? undefined : v; }

// Documents cross to C++ as JSON text. The fast path is a JS pre-check
// that the value is plain JSON (cheap once JIT-compiled) followed by V8's
// JSON.stringify; anything unusual (toJSON, functions, undefined, cycles,
// NaN, BigInt, deep nesting) is handed to the C++ serializer as is, which
// applies toJSON or produces the precise bad_request error.
function plainJson(v, depth, stack) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return v - v === 0;  // finite
    case 'object': {
      if (v === null) return true;
      if (depth > 500 || typeof v.toJSON === 'function') return false;
      for (let i = 0; i < stack.length; i++) if (stack[i] === v) return false;
      stack.push(v);
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!plainJson(v[i], depth + 1, stack)) return false;
      } else {
        for (const k in v) {
          if (hasOwn(v, k) && !plainJson(v[k], depth + 1, stack)) return false;
        }
      }
      stack.pop();
      return true;
    }
    default:
      return false;
  }
}
// plainJson() of a document object, its own members listed by Object.keys
// (what for-in and hasOwn gave, without a call per member) and no ancestor
// stack until a member is an object: the check of a small document cost
// ~0.25 us of a post's ~2.2 in the bench's loop, run in baseline code.
function plainDoc(doc) {
  if (typeof doc.toJSON === 'function') return false;
  const keys = Object.keys(doc);
  for (let i = 0; i < keys.length; i++) {
    const x = doc[keys[i]];
    switch (typeof x) {
      case 'string':
      case 'boolean':
        break;
      case 'number':
        if (x - x !== 0) return false;
        break;
      case 'object':
        if (x !== null && !plainJson(x, 1, [doc])) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
// A document as the engine takes it: JSON text, as PouchDB stores what
// JSON.stringify writes (members that are undefined, functions or symbols
// left out, and null in arrays; NaN and the infinities null; a Date, or
// anything with toJSON, as what that gives), so `{_id, _rev: undefined}`
// is a new document there and here. What JSON.stringify cannot write (a
// cycle, a BigInt) goes to the engine as the object, whose conversion
// answers 400 naming the member.
function docArg(doc) {
  const plain = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? plainDoc(doc) : plainJson(doc, 0, []);
  if (plain) return JSON.stringify(doc);
  try {
    const text = JSON.stringify(doc);
    if (typeof text === 'string') return text;
  } catch (e) {
    // the engine's conversion gives the member's path
  }
  return doc;
}

// db.get's documents: a flat one comes from native.dbGetFlat as [shape,
// values...] (js/doc_shapes.h) and is built here by its shape's function, an
// object literal (JSON.parse costs ~230 ns for any object, a literal of four
// members ~6); any other comes as the object itself.
// Shape number -> the function that builds its objects. No prototype: an
// unfilled slot must read undefined, not an element a script put on
// Array.prototype.
const docShapes = [];
Object.setPrototypeOf(docShapes, null);
const dbGetFlat = native.dbGetFlat;
function flatDoc(r) {
  if (!Array.isArray(r)) return r;
  let make = docShapes[r[0]];
  if (make === undefined) make = docShapes[r[0]] = docShapeFunction(native.docShapeNames(r[0]));
  return make(r);
}
function docShapeFunction(names) {
  // JSON.stringify quotes a name as a JS string literal (the engine declines
  // __proto__, integer and repeated names, which a literal would treat
  // differently from JSON.parse).
  let members = '';
  for (let i = 0; i < names.length; i++) members += JSON.stringify(names[i]) + ':v[' + (i + 1) + '],';
  try {
    return new Function('v', '"use strict"; return {' + members + '};');
  } catch (e) {
    // V8 run with --disallow-code-generation-from-strings: the same object
    // member by member, defined as the literal (and JSON.parse) define them.
    return (v) => {
      const o = {};
      for (let i = 0; i < names.length; i++) {
        defineProperty(o, names[i], { value: v[i + 1], writable: true, enumerable: true, configurable: true });
      }
      return o;
    };
  }
}
const defineProperty = Object.defineProperty;

// db.allDocs(opts): as put and post, no array destructuring and no closure,
// and indexed loops where for-of would run the iterator protocol (the
// bench's loops run this interpreted or in baseline code). JSON.stringify
// without a replacer: it drops function-valued options as optsReplacer does
// (omitted members, null in arrays).
const allDocsKeyOptions = ['key', 'startkey', 'endkey', 'start_key', 'end_key'];
function allDocsOf(db, opts) {
  const o = Object.assign({}, opts);
  if ('keys' in o) {
    if (!Array.isArray(o.keys)) throw new PouchError(400, 'bad_request', '`keys` must be an array');
    for (let i = 0; i < allDocsKeyOptions.length; i++) {
      const k = allDocsKeyOptions[i];
      if (k in o) throw new PouchError(400, 'query_parse_error', 'Query parameter `keys` is not compatible with `' + k + '`');
    }
  }
  if ('start_key' in o && !('startkey' in o)) o.startkey = o.start_key;
  if ('end_key' in o && !('endkey' in o)) o.endkey = o.end_key;
  if ('key' in o) { o.startkey = o.endkey = o.key; o.inclusive_end = true; }
  delete o.start_key; delete o.end_key; delete o.key;
  if ('startkey' in o && typeof o.startkey !== 'string') o.startkey = o.startkey == null ? undefined : String(o.startkey);
  if ('endkey' in o && typeof o.endkey !== 'string') o.endkey = o.endkey == null ? undefined : String(o.endkey);
  const r = native.dbAllDocsFlat(db._handle(), JSON.stringify(o));
  const result = Array.isArray(r) ? allDocsRows(r) : r;
  if (result === r && o.binary && o.attachments) for (const row of r.rows) binaryAtts(row.doc);
  // PouchDB's adapters answer a keys query with offset 0, whatever its skip
  // (the engine gives the skip, as an offset is for a range).
  if ('keys' in o) result.offset = 0;
  return result;
}

// allDocs' answer from native.dbAllDocsFlat's [total_rows, offset, (id,
// rev, doc)...]: the object JSON.parse made of its text, built with
// literals (a doc is [shape, values...], an object, or undefined).
function allDocsRows(r) {
  const rows = [];
  for (let i = 2; i < r.length; i += 3) {
    const id = r[i];
    let doc = r[i + 2];
    if (doc === undefined) {
      rows.push({ id, key: id, value: { rev: r[i + 1] } });
    } else {
      if (Array.isArray(doc)) {
        const make = docShapes[doc[0]];
        doc = make !== undefined ? make(doc) : flatDoc(doc);
      }
      rows.push({ id, key: id, value: { rev: r[i + 1] }, doc });
    }
  }
  return { total_rows: r[0], offset: r[1], rows };
}

// Attachment data given as bytes (Buffer, typed array, ArrayBuffer), as
// PouchDB in node accepts it, crosses as base64 like the rest of the JSON.
// The caller's document is left as it was: a shallow copy carries the change.
function isBytes(v) { return ArrayBuffer.isView(v) || v instanceof ArrayBuffer; }
function withBase64Atts(doc) {
  const atts = doc && doc._attachments;
  if (atts === null || typeof atts !== 'object') return doc;
  let copy = null;
  for (const name in atts) {
    const a = atts[name];
    if (a === null || typeof a !== 'object' || !isBytes(a.data)) continue;
    if (copy === null) copy = Object.assign({}, atts);
    copy[name] = Object.assign({}, a, { data: native.base64Encode(a.data) });
  }
  return copy === null ? doc : Object.assign({}, doc, { _attachments: copy });
}
function asBuffer(u8) { return Object.setPrototypeOf(u8, Buffer.prototype); }
// allDocs/changes with attachments and binary: the inline base64 as Buffers.
function binaryAtts(doc) {
  const atts = doc && doc._attachments;
  if (!atts) return;
  for (const name in atts) {
    if (typeof atts[name].data === 'string') atts[name].data = Buffer.from(atts[name].data, 'base64');
  }
}

const feeds = new Map();
let nextFeedId = 1;

// The open local handles by name, as pouchdb-core's destruction listeners
// (weakly here: an unclosed handle may still be garbage collected). When
// one handle destroys its database, every open one by that name, itself
// included, emits 'destroyed' with `true`, after its own 'destroyed' and
// before PouchDB's. The others then fail as a destroyed database does
// (in PouchDB 9 their calls never settle). Handles in other isolate
// threads are not told.
const openHandles = new Map();  // name -> Set of WeakRef
// A PouchDB object that is garbage collected without close() or destroy()
// gives its native handle back and leaves openHandles. One registration
// per object, the object its own unregister token: close() and destroy()
// (its own, or another handle's through tellDestroyed) unregister it.
const dbHandles = new FinalizationRegistry((held) => {
  native.dbClose(held.h);
  forgetHandle(held.name, held.ref);
});
// Tracks `db`, whose native handle is open, from now until it is closed,
// destroyed or collected.
function rememberHandle(db) {
  const ref = new WeakRef(db);
  db._ref = ref;
  let set = openHandles.get(db.name);
  if (set === undefined) openHandles.set(db.name, set = new Set());
  set.add(ref);
  dbHandles.register(db, { h: db._h, name: db.name, ref }, db);
}
function forgetHandle(name, ref) {
  const set = openHandles.get(name);
  if (set === undefined || !set.delete(ref)) return;
  if (set.size === 0) openHandles.delete(name);
}
function tellDestroyed(db) {
  const set = openHandles.get(db.name);
  if (set === undefined) return;
  openHandles.delete(db.name);
  for (const ref of set) {
    // A collected handle's finalizer still closes its native handle (its
    // forgetHandle finds the set gone).
    const other = ref.deref();
    if (other === undefined) continue;
    if (other !== db) {
      for (const f of feeds.values()) if (f.db === other) f.cancel();
      if (other._h >= 0) {
        dbHandles.unregister(other);
        native.dbClose(other._h);
      }
      other._h = -1;
      other._destroyed = true;
    }
    other.emit('destroyed', true);
  }
}

// A failed bulkDocs row as PouchDB's adapters give it (pouchdb-errors'
// createError): a PouchError with status, name, message, error and id, and
// a reason only where it says more than the message (a conflict's has
// none). PouchDB's also has an enumerable `stack`; here it stays the
// usual non-enumerable one, so JSON.stringify(rows) prints no stack traces.
function bulkErrorRow(row) {
  pouchShaped(row);
  // Members in PouchDB's order (the constructor would put message first).
  const e = Object.create(PouchError.prototype);
  e.status = row.status;
  e.name = row.name;
  e.message = row.message;
  e.error = true;
  if (row.reason !== undefined && row.reason !== row.message) e.reason = row.reason;
  e.id = row.id;
  if (row.rev !== undefined) e.rev = row.rev;
  Error.captureStackTrace(e, bulkErrorRow);
  return e;
}

// Writes a bulkDocs batch: PouchDB's result rows.
function bulkWrite(h, docs, replicated) {
  // Plain JSON (the usual case): encoded to the engine's stored form
  // here (doc_encode.js), no JSON text. Otherwise (undefined back,
  // nothing written) the engine reads the objects as they are
  // (js/doc_split.h, which takes special members such as _conflicts);
  // failing that, plain documents cross as one JSON.stringify and one
  // engine parse, and others each on its own, so that the odd one gets
  // its precise error.
  let r = docEncoder.encode(docs, (bytes, meta, strs, nums, n, part) =>
    native.dbBulkDocsEncoded(h, bytes, meta, strs, nums, n, replicated, part));
  if (r === undefined) r = native.dbBulkDocsSplit(h, docs, replicated);
  if (r === undefined) {
    let plain = true;
    for (let i = 0; plain && i < docs.length; i++) plain = plainJson(docs[i], 0, []);
    r = plain
      ? native.dbBulkDocs(h, JSON.stringify(docs), replicated)
      : native.dbBulkDocs(h, docs.map(docArg), replicated);
  }
  if (r.length === 0 || typeof r[0] !== 'string') {
    for (let i = 0; i < r.length; i++) {
      const row = r[i];
      if (row !== null && typeof row === 'object' && row.error === true) r[i] = bulkErrorRow(row);
    }
    return r;
  }
  const out = new Array(r.length >> 1);  // all succeeded: [id, rev, ...]
  for (let i = 0; i < out.length; i++) out[i] = { ok: true, id: r[2 * i], rev: r[2 * i + 1] };
  return out;
}

// pouchdb-find's createIndex() takes name, ddoc and type inside `index`
// (its documented form); CouchDB's POST _index beside it. Both are taken,
// the outer one winning.
function indexRequest(req) {
  const index = req.index;
  if (index === null || typeof index !== 'object' || Array.isArray(index)) return req;
  const out = Object.assign({}, req, { index: Object.assign({}, index) });
  for (const k of ['name', 'ddoc', 'type']) {
    if (k in out.index) {
      if (!(k in out)) out[k] = out.index[k];
      delete out.index[k];
    }
  }
  return out;
}

// Where PouchDB's query() is lenient and CouchDB's (the engine's) refuses:
// PouchDB ignores group/group_level when it does not reduce, reduce: true
// on a map-only view, and a stale value it does not know. Returns the
// options to retry with, or null (and gives three messages PouchDB's
// wording).
function pouchViewOpts(e, opts) {
  if (!e || e.name !== 'query_parse_error') return null;
  if (e.message === 'No rows can match your key range, reverse your start_key and end_key or set descending=true') {
    e.message = 'No rows can match your key range, reverse your start_key and end_key or set {descending : true}';
  } else if (e.message === '`include_docs` is invalid for reduce') {
    e.message = '{include_docs:true} is invalid for reduce';
  } else if (e.message === 'Multi-key fetches for reduce views must use `group=true`') {
    e.message = 'Multi-key fetches for reduce views must use {group: true}';
  }
  const grouping = /^Invalid use of grouping/.test(e.message);
  const mapOnly = e.message === 'Reduce is invalid for map-only views.';
  const stale = /^Invalid value for `stale`/.test(e.message);
  const groupFalse = /^Can't specify group=false and group_level>0/.test(e.message);
  if (!grouping && !mapOnly && !stale && !groupFalse) return null;
  const o = Object.assign({}, opts);
  if (groupFalse) {
    delete o.group;  // PouchDB groups by group_level whatever group says
    return o;
  }
  if (stale) {
    delete o.stale;  // PouchDB ignores a stale value it does not know
    return o;
  }
  delete o.group;
  delete o.group_level;
  if (mapOnly) delete o.reduce;
  return o;
}

function putDoc(db, doc, opts) {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new PouchError(400, 'bad_request', 'Document must be a JSON object');
  }
  if (!doc._id) throw new PouchError(412, 'missing_id', '_id is required for puts');
  if (typeof doc._id !== 'string') throw new PouchError(400, 'bad_request', '_id field must contain a string');
  const replicated = opts != null && opts.new_edits === false;
  const rev = doc._rev;
  if (rev !== undefined && !reservedId(doc._id)) {
    if (badPouchRev(rev)) throw new PouchError(400, 'bad_request', 'Invalid rev format');
    if (!replicated && revNamesNothing(doc._id, rev)) {
      throw doc._id.startsWith('_local/') ? conflictError() : yanked(conflictError(), doc._id, false);
    }
  }
  const h = db._handle();
  let r;
  try {
    r = native.dbPut(h, docArg(withBase64Atts(doc)), replicated);
  } catch (e) {
    throw doc._id.startsWith('_local/') ? localError(e) : yanked(e, doc._id, false);
  }
  if (db.auto_compaction) native.dbCompactDocs(h, [r[0]]);
  return { ok: true, id: r[0], rev: r[1] };
}
function postDoc(db, doc) {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new PouchError(400, 'bad_request', 'Document must be a JSON object');
  }
  // post() writes through bulkDocs: its rev check (before the _id's), then
  // the row's conflict.
  const rev = doc._rev;
  if (rev !== undefined) {
    if (badPouchRev(rev)) throw yanked(new PouchError(400, 'bad_request', 'Invalid rev format'), doc._id, true);
    if (revNamesNothing(doc._id, rev)) throw yanked(conflictError(), doc._id, true);
  }
  const h = db._handle();
  let r;
  try {
    r = native.dbPut(h, docArg(withBase64Atts(doc)), false);
  } catch (e) {
    throw yanked(e, doc._id, true);
  }
  if (db.auto_compaction) native.dbCompactDocs(h, [r[0]]);
  return { ok: true, id: r[0], rev: r[1] };
}

// PouchDB takes any string as a local database's name (in node, the path
// of the database's LevelDB directory: 'MyDB', './data/todos'); settee's
// store takes only CouchDB's names, which its HTTP API serves. A name
// CouchDB takes is stored as it is; any other under 'js$' followed by its
// characters, those CouchDB takes after the first ([a-z0-9_$+/-]) as they
// are and each other one as '(' its code point in hex ')': 'MyDB' is
// 'js$(4d)y(44)(42)' over HTTP. Parentheses are always escaped there, so
// two names never meet, and a CouchDB name that starts with 'js$' is
// escaped too, so it cannot meet the stored form of another.
const kEscapedDbPrefix = 'js$';
// The engine's rule (storage's IsValidDatabaseName: CouchDB's characters
// and length) decides which names are stored as they are.
function storeDbName(name) {
  if (native.dbNameValid(name) && !name.startsWith(kEscapedDbPrefix)) return name;
  let out = kEscapedDbPrefix;
  for (const ch of name) out += /^[a-z0-9_$+/-]$/.test(ch) ? ch : '(' + ch.codePointAt(0).toString(16) + ')';
  // Only its length can make the escaped form illegal.
  if (!native.dbNameValid(out)) {
    throw new PouchError(400, 'illegal_database_name',
      `Name: '${name}'. Too long: settee stores it as '${out.slice(0, 40)}...' (${out.length} characters), longer than a database name may be.`);
  }
  return out;
}

class PouchDB extends EventEmitter {
  constructor(name, opts) {
    super();
    if (typeof name === 'object' && name !== null) { opts = name; name = opts.name; }
    if (typeof name !== 'string' || !name) throw new PouchError(400, 'bad_request', 'Missing/invalid DB name');
    // An http(s) URL is a remote database (http_adapter.js).
    if (isRemoteName(name) && !(this instanceof RemotePouchDB)) return new RemotePouchDB(name, opts);
    this.name = name;
    this.__opts = opts || {};
    this.adapter = 'settee';
    // PouchDB's option: after each write the written documents' old
    // revision bodies go (the engine's CompactDocuments; attachment bodies
    // left unreferenced wait for compact()).
    this.auto_compaction = this.__opts.auto_compaction;
    this._openError = null;
    this._h = -1;
    if (this instanceof RemotePouchDB) {
      native.queueMicrotask(() => emitCreated(this));
      return;
    }
    try {
      this._h = native.dbOpen(storeDbName(name));
      // PouchDB's revs_limit option; settee keeps it as the database's
      // _revs_limit, so it outlives this handle.
      if (this.__opts.revs_limit !== undefined) native.dbSetRevsLimit(this._h, this.__opts.revs_limit);
      rememberHandle(this);
    } catch (e) {
      // A handle opened before the error (a bad revs_limit), not yet
      // remembered, is let go now.
      if (this._h >= 0) native.dbClose(this._h);
      this._h = -1;
      this._openError = e;
    }
    if (this._openError === null) native.queueMicrotask(() => emitCreated(this));
  }
  _handle() {
    if (this._openError) throw this._openError;
    // PouchDB's errors for a closed or destroyed database: plain Errors.
    if (this._h < 0) throw new Error(this._destroyed ? 'database is destroyed' : 'database is closed');
    return this._h;
  }
  // put and post are the hot writes: no array destructuring (argsOf) and
  // no closure (run). A benchmark's 1000 posts run mostly in V8's
  // interpreter (TurboFan comes later), where both cost more than the rest
  // of the JS of the call.
  put(doc, opts, cb) {
    if (typeof opts === 'function') { cb = opts; opts = undefined; }
    return runCall(cb, putDoc, this, doc, opts);
  }
  post(doc, opts, cb) {
    if (typeof opts === 'function') cb = opts;
    return runCall(cb, postDoc, this, doc, undefined);
  }
  get(id, opts, cb) {
    // Fast path of the most frequent call, db.get(id) with a promise: no
    // closure, no option handling, the shape's function called here (flatDoc
    // makes it on a shape's first document), resolved in the call.
    if (opts === undefined && cb === undefined && typeof id === 'string' && id !== '' && this._h >= 0) {
      let r;
      try {
        r = dbGetFlat(this._h, id);
      } catch (e) {
        return Promise.reject(gotError(e, id));
      }
      if (Array.isArray(r)) {
        const make = docShapes[r[0]];
        r = make !== undefined ? make(r) : flatDoc(r);
      }
      return Promise.resolve(r);
    }
    if (typeof opts === 'function') { cb = opts; opts = undefined; }
    return run(cb, () => {
      if (typeof id !== 'string') throw new PouchError(400, 'bad_request', '_id field must contain a string');
      // PouchDB looks '' up, and finds nothing.
      if (id === '') throw gotError(pouchShaped(new PouchError(404, 'not_found', 'missing')), id);
      const h = this._handle();
      if (opts !== undefined && opts !== null && opts.open_revs !== undefined) {
        return native.dbOpenRevs(h, id, JSON.stringify(opts, optsReplacer));
      }
      let doc;
      try {
        doc = native.dbGet(h, id, opts == null ? undefined : jsonOpts(opts));
      } catch (e) {
        throw gotError(e, id);
      }
      if (opts != null && opts.binary && opts.attachments && doc._attachments) {
        for (const name in doc._attachments) {
          const a = doc._attachments[name];
          if (a.data instanceof Uint8Array) asBuffer(a.data);
        }
      }
      return doc;
    });
  }
  putAttachment(docId, attachmentId, rev, blob, type, cb) {
    ({ rev, blob, type, cb } = putAttachmentArgs(rev, blob, type, cb));
    return run(cb, () => {
      checkDocId(docId);
      if (!isBytes(blob) && typeof blob !== 'string') {
        throw new PouchError(400, 'bad_request', 'Attachment data must be a Buffer, a typed array or base64');
      }
      const h = this._handle();
      // PouchDB reads the document first, so a deleted one is its 404
      // (reason 'deleted'), with or without a rev, where the engine would
      // write a new revision on the deletion.
      // (Its _all_docs row says so without building the document.)
      const row = native.dbAllDocs(h, JSON.stringify({ keys: [docId] })).rows[0];
      if (row && row.value && row.value.deleted === true) {
        throw pouchShaped(new PouchError(404, 'not_found', 'deleted'));
      }
      const r = native.dbPutAttachment(h, docId, String(attachmentId),
        typeof rev === 'string' ? rev : undefined, typeof type === 'string' ? type : undefined, blob);
      if (this.auto_compaction) native.dbCompactDocs(h, [r[0]]);
      return { ok: true, id: r[0], rev: r[1] };
    });
  }
  getAttachment(docId, attachmentId, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => {
      checkDocId(docId);
      return asBuffer(native.dbGetAttachment(this._handle(), docId, String(attachmentId),
        typeof opts.rev === 'string' ? opts.rev : undefined));
    });
  }
  removeAttachment(docId, attachmentId, rev, cb) {
    return run(cb, () => {
      checkDocId(docId);
      const h = this._handle();
      const conflict = () => pouchShaped(new PouchError(409, 'conflict', 'Document update conflict.'));
      // PouchDB reads the document first (its error wins), then compares
      // revisions: a rev that is not a string is a conflict.
      if (typeof rev !== 'string') {
        native.dbGet(h, docId);
        throw conflict();
      }
      let r;
      try {
        r = native.dbRemoveAttachment(h, docId, String(attachmentId), rev);
      } catch (e) {
        // PouchDB writes the document without the attachment even when it
        // has none by that name (a new revision, unchanged otherwise),
        // unless it has no attachments at all: then nothing, and undefined.
        if (!e || e.reason !== 'Document is missing attachment') throw e;
        const doc = native.dbGet(h, docId);
        if (doc._rev !== rev) throw conflict();
        if (!doc._attachments) return undefined;
        r = native.dbPut(h, JSON.stringify(doc), false);
      }
      if (this.auto_compaction) native.dbCompactDocs(h, [r[0]]);
      return { ok: true, id: r[0], rev: r[1] };
    });
  }
  remove(docOrId, optsOrRev, opts, cb) {
    let doc;
    ({ doc, opts, cb } = removeArgs(docOrId, optsOrRev, opts, cb));
    return run(cb, () => {
      // PouchDB reads doc._id as it is: remove(null) and remove(undefined)
      // reject with that read's TypeError.
      const id = doc._id;
      // No id (remove(id) and remove(id, {rev}), remove({}), remove(42),
      // remove(null, rev), remove('', rev)): PouchDB deletes a new document
      // with a generated id, which answers 404 "deleted" and writes
      // nothing, whether or not a document `id` exists.
      if (id === undefined || id === null || id === '') {
        throw removeError(pouchShaped(new PouchError(404, 'not_found', 'deleted')), id);
      }
      if (typeof id !== 'string') throw removeError(new PouchError(400, 'bad_request', '_id field must contain a string'), id);
      const h = this._handle();
      if (id.startsWith('_local/')) return this._removeLocal(h, id, doc._rev);
      const rev = doc._rev || opts.rev;
      try {
        const none = rev === undefined || rev === null || rev === '';
        if (!none && badPouchRev(rev)) throw new PouchError(400, 'bad_request', 'Invalid rev format');
        // Without a rev PouchDB writes {_id, _deleted: true}: a live or
        // deleted document is a conflict, a never-written one its 404; so
        // too with a rev that names nothing.
        if (none || revNamesNothing(id, rev)) {
          try {
            native.dbGet(h, id);
          } catch (e) {
            if (!e || e.status !== 404 || e.reason !== 'deleted') throw e;
          }
          throw conflictError();
        }
        const r = native.dbRemove(h, id, rev);
        if (this.auto_compaction) native.dbCompactDocs(h, [r[0]]);
        return { ok: true, id: r[0], rev: r[1] };
      } catch (e) {
        throw removeError(e, id);
      }
    });
  }
  // A local document's removal, PouchDB's _removeLocal: by doc._rev only
  // (not opts.rev), its errors without a docId.
  _removeLocal(h, id, rev) {
    // A missing document is its 404 (PouchDB's bare MISSING_DOC), with a
    // rev or without.
    try {
      native.dbGet(h, id);
    } catch (e) {
      throw localError(e);
    }
    // Its adapters compare the rev with the stored one and nothing else:
    // any other value, malformed or not a string, is a conflict.
    if (typeof rev !== 'string' || !kLocalRev.test(rev)) throw conflictError();
    const r = native.dbRemove(h, id, rev);
    return { ok: true, id: r[0], rev: r[1] };
  }
  bulkDocs(req, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => {
      let docs = req;
      let newEdits = opts.new_edits;
      if (!Array.isArray(req)) {
        if (req === null || typeof req !== 'object' || !Array.isArray(req.docs)) {
          throw new PouchError(400, 'bad_request', 'Missing JSON list of \'docs\'');
        }
        docs = req.docs;
        if (req.new_edits !== undefined) newEdits = req.new_edits;
      }
      for (let i = 0; i < docs.length; i++) {
        let d = docs[i];
        if (d !== null && typeof d === 'object' && d._attachments) {
          if (docs === req || docs === req.docs) docs = docs.slice();
          d = docs[i] = withBase64Atts(d);
        }
        if (d === null || typeof d !== 'object' || Array.isArray(d)) {
          throw new PouchError(400, 'bad_request', 'Document must be a JSON object');
        }
        // pouchdb-core's check of each rev, in the same pass, before any
        // other of the document.
        if (d._rev !== undefined && badPouchRev(d._rev)) {
          throw new PouchError(400, 'bad_request', 'Invalid rev format');
        }
      }
      const h = this._handle();
      const replicated = newEdits === false;
      // A rev that names nothing is its document's conflict row; the
      // others are written.
      let nothing = null;
      if (!replicated) {
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i];
          if (d._rev !== undefined && revNamesNothing(d._id, d._rev)) (nothing = nothing || []).push(i);
        }
      }
      let rows;
      if (nothing === null) {
        rows = bulkWrite(h, docs, replicated);
      } else {
        const written = docs.filter((d, i) => !nothing.includes(i));
        const wrote = written.length > 0 ? bulkWrite(h, written, replicated) : [];
        rows = new Array(docs.length);
        for (let i = 0, w = 0; i < docs.length; i++) {
          rows[i] = nothing.includes(i)
            ? bulkErrorRow({ status: 409, name: 'conflict', message: 'Document update conflict', id: docs[i]._id })
            : wrote[w++];
        }
      }
      if (this.auto_compaction) native.dbCompactDocs(h, docs.map((d) => d._id));
      return rows;
    });
  }
  allDocs(opts, cb) {
    if (typeof opts === 'function') { cb = opts; opts = undefined; }
    return runCall(cb, allDocsOf, this, opts == null ? {} : opts, undefined);
  }

  info(cb) {
    return run(cb, () => {
      const i = native.dbInfo(this._handle());
      i.db_name = this.name;  // PouchDB's name, not the stored form (storeDbName)
      i.adapter = 'settee';
      i.auto_compaction = !!this.auto_compaction;
      return i;
    });
  }
  // pouchdb-core 9's purge(docId, rev): the leaf and its ancestors no other
  // leaf shares leave the tree (the engine's Database::Purge, which also
  // makes indexes drop the document's rows). Rejects as PouchDB does: 404
  // for a missing document, and findPathToLeaf's message, a plain string,
  // for a rev that is not a leaf or not there.
  purge(docId, rev, cb) {
    return run(cb, () => {
      const r = native.dbPurge(this._handle(), String(docId), String(rev));
      if (r.notLeaf) throw 'The requested revision is not a leaf';  // eslint-disable-line no-throw-literal
      if (r.noRev) throw 'The requested revision does not exist';  // eslint-disable-line no-throw-literal
      return r;
    });
  }
  compact(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => { native.dbCompact(this._handle()); return { ok: true }; });
  }
  destroy(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => {
      for (const f of feeds.values()) if (f.db === this) f.cancel();
      native.dbDestroy(this._handle());
      dbHandles.unregister(this);
      this._h = -1;
      this._destroyed = true;
      this.emit('destroyed');
      tellDestroyed(this);
      pouchEvents.emit('destroyed', this.name);
      return { ok: true };
    });
  }
  close(cb) {
    return run(cb, () => {
      for (const f of feeds.values()) if (f.db === this) f.cancel();
      if (this._h >= 0) {
        dbHandles.unregister(this);
        native.dbClose(this._h);
        forgetHandle(this.name, this._ref);
      }
      this._h = -1;
      this.emit('closed');
    });
  }
  revsDiff(req, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => native.dbRevsDiff(this._handle(), JSON.stringify(req)));
  }
  bulkGet(opts, cb) {
    return run(cb, () => {
      if (!opts || !Array.isArray(opts.docs)) throw new PouchError(400, 'bad_request', 'Missing JSON list of \'docs\'');
      return native.dbBulkGet(this._handle(), JSON.stringify(opts, optsReplacer));
    });
  }
  // PouchDB's query(): 'ddoc/view' (or 'view', meaning 'view/view'), a
  // map function, or {map, reduce} (a temporary view).
  query(fun, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => {
      let call;
      if (typeof fun === 'string') {
        const slash = fun.indexOf('/');
        const ddoc = slash < 0 ? fun : fun.slice(0, slash);
        const view = slash < 0 ? fun : fun.slice(slash + 1);
        call = (o) => {
          try {
            return native.dbQuery(this._handle(), ddoc, view, o, viewMapJson, viewReduceJson);
          } catch (e) {
            // PouchDB's message for CouchDB's reason (which stays the reason).
            if (e && e.name === 'not_found' && e.reason === 'missing_named_view') {
              e.message = 'ddoc _design/' + ddoc + ' has no view named ' + view;
            }
            throw e;
          }
        };
      } else {
        let map = fun, reduce = null;
        if (fun !== null && typeof fun === 'object') { map = fun.map; reduce = fun.reduce == null ? null : fun.reduce; }
        if (typeof map !== 'function' && typeof map !== 'string') {
          throw new PouchError(400, 'bad_request', 'query() takes a view name, a map function or {map, reduce}');
        }
        if (reduce !== null && typeof reduce !== 'function' && typeof reduce !== 'string') {
          throw new PouchError(400, 'bad_request', 'reduce must be a function or the name of a built-in reduce');
        }
        call = (o) => native.dbTempQuery(this._handle(), fnText(map), reduce === null ? null : fnText(reduce), o,
                                         viewMapJson, viewReduceJson);
      }
      let r;
      // Each retry drops one option PouchDB ignores; there are three kinds.
      for (let tries = 0; ; tries++) {
        try {
          r = call(jsonOpts(opts) || '{}');
          break;
        } catch (e) {
          const lenient = tries < 3 ? pouchViewOpts(e, opts) : null;
          if (lenient === null) throw e;
          opts = lenient;
        }
      }
      // CouchDB answers a _sum over values it cannot add with a row whose
      // value is {error: 'builtin_reduce_error'}; PouchDB's own _sum throws
      // (pouchdb-mapreduce's sum: 500 invalid_value).
      if (r && Array.isArray(r.rows)) {
        for (const row of r.rows) {
          if (row && row.value && row.value.error === 'builtin_reduce_error') {
            throw new PouchError(500, 'invalid_value', 'builtin _sum function requires map values to be numbers or number arrays');
          }
        }
      }
      // PouchDB's offset is the skip it was given (CouchDB's, the rows
      // before the first one returned).
      if (r && typeof r.offset === 'number') r.offset = Number(opts.skip) || 0;
      return r;
    });
  }
  // pouchdb-find: Mango indexes and queries (CouchDB's request and answer
  // bodies, storage/mango.h).
  createIndex(req, cb) {
    return run(cb, () => {
      if (!req || typeof req !== 'object') throw new PouchError(400, 'bad_request', 'createIndex needs {index: {fields: [...]}}');
      return native.dbMango(this._handle(), 'createIndex', JSON.stringify(indexRequest(req), optsReplacer));
    });
  }
  getIndexes(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => native.dbMango(this._handle(), 'getIndexes'));
  }
  deleteIndex(index, cb) {
    return run(cb, () => {
      if (!index || typeof index.ddoc !== 'string' || typeof index.name !== 'string') {
        throw new PouchError(400, 'bad_request', 'you must supply an index.ddoc and an index.name');
      }
      return native.dbMango(this._handle(), 'deleteIndex', undefined, index.ddoc, index.name);
    });
  }
  find(req, cb) {
    return run(cb, () => {
      if (!req || typeof req !== 'object') throw new PouchError(400, 'bad_request', 'find needs {selector: {...}}');
      return native.dbMango(this._handle(), 'find', JSON.stringify(req, optsReplacer));
    });
  }
  explain(req, cb) {
    return run(cb, () => {
      if (!req || typeof req !== 'object') throw new PouchError(400, 'bad_request', 'explain needs {selector: {...}}');
      return native.dbMango(this._handle(), 'explain', JSON.stringify(req, optsReplacer));
    });
  }
  viewCleanup(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return run(cb, () => { native.dbViewCleanup(this._handle()); return { ok: true }; });
  }
  changes(opts, cb) {
    if (typeof opts === 'function') { cb = opts; opts = {}; }
    opts = Object.assign({}, opts || {});
    if (cb) opts.complete = cb;
    return new Changes(this, opts);
  }
  // pouchdb-core 9's (deprecated there, still defined): the adapter's
  // name, 'settee' here and 'http' for a remote database.
  type() { return this.adapter; }
  toString() { return '[object PouchDB]'; }
}
// The PouchDB release whose API settee's follows (its version is
// settee.version): scripts print or compare PouchDB.version.
PouchDB.version = '9.0.0';

// The constructor is an event emitter too, as PouchDB's: one emitter
// behind PouchDB and the constructors defaults() makes, with 'created'
// (the name, once a database is opened; the database emits 'created'
// too, both when the code that opened it yields) and 'destroyed' (the name).
const pouchEvents = new EventEmitter();
for (const k of ['on', 'once', 'addListener', 'prependListener', 'prependOnceListener', 'removeListener',
  'off', 'removeAllListeners', 'emit', 'listeners', 'rawListeners', 'listenerCount', 'eventNames',
  'setMaxListeners', 'getMaxListeners']) {
  if (typeof EventEmitter.prototype[k] === 'function') PouchDB[k] = EventEmitter.prototype[k].bind(pouchEvents);
}
function emitCreated(db) {
  db.emit('created', db);
  pouchEvents.emit('created', db.name);
}

// PouchDB.plugin(obj | fn): a function is called with PouchDB; an object's
// methods are added to every database (PouchDB's own rule). Settee builds
// in what npm plugins add (the memory adapter, pouchdb-find's API as it
// lands), so those modules resolve to no-op plugins (builtinPlugins).
PouchDB.plugin = function (plugin) {
  if (typeof plugin === 'function') {
    plugin(this);
  } else if (plugin !== null && typeof plugin === 'object' && !Array.isArray(plugin)) {
    for (const k of Object.keys(plugin)) this.prototype[k] = plugin[k];
  } else {
    throw new Error('Invalid plugin: got "' + plugin + '", expected an object or a function');
  }
  return this;
};
// PouchDB.defaults(opts): a PouchDB constructor whose databases open with
// `opts` under their own options. Its statics (plugin, defaults) are
// inherited, and plugins added to PouchDB reach its databases too.
PouchDB.defaults = function (defaultOpts) {
  if (defaultOpts === null || typeof defaultOpts !== 'object') {
    throw new TypeError('PouchDB.defaults: options must be an object');
  }
  const base = Object.assign({}, defaultOpts);
  const Parent = this;
  return constructibleByCall(class PouchDB extends Parent {
    constructor(name, opts) {
      if (typeof name === 'object' && name !== null) { opts = name; name = opts.name; }
      super(name, Object.assign({}, base, opts));
    }
  });
};
// pouchdb-core's constructors construct when called without `new` too
// (its createClass: `PouchDB('db')`, `PouchDB.defaults(o)('db')`), where a
// class throws a TypeError. What scripts get (require('pouchdb'), the
// global, settee.PouchDB, defaults()) is the class behind a Proxy whose
// call constructs; `new`, statics, prototype and instanceof reach the
// class itself.
function constructibleByCall(Class) {
  return new Proxy(Class, { apply: (target, self, args) => new target(...args) });
}
const PouchDBExport = constructibleByCall(PouchDB);
// What require() gives for PouchDB's npm plugins: nothing to add.
const builtinPlugins = {
  'pouchdb-find': Object.freeze({}),
  'pouchdb-adapter-memory': Object.freeze(function memoryAdapter() {}),
  'pouchdb-adapter-leveldb': Object.freeze(function leveldbAdapter() {}),
};

// A changes feed: an EventEmitter ('change', 'complete', 'error', 'cancel')
// that is also a promise of the final {results, last_seq} (one-shot feeds).
class Changes extends EventEmitter {
  constructor(db, opts) {
    super();
    this.db = db;
    this.opts = opts;
    this.isCancelled = false;
    this._feedId = 0;
    this._filterFn = null;
    this._emitted = 0;
    this._results = [];
    this._promise = new Promise((resolve, reject) => {
      this.once('complete', resolve);
      this.once('error', reject);
    });
    this._promise.catch(() => {});  // rejection is reported via 'error' too
    // 'now' means now, not when the feed starts on the next tick.
    if (opts.since === 'now') {
      try { this._nowSeq = native.dbUpdateSeq(db._handle()); } catch (e) { this._nowSeq = 0; }
    }
    if (typeof opts.onChange === 'function') this.on('change', opts.onChange);
    if (typeof opts.complete === 'function') {
      this.on('complete', (r) => opts.complete(null, r));
      this.on('error', (e) => opts.complete(e));
    }
    nextTick(() => this._start());
  }
  then(a, b) { return this._promise.then(a, b); }
  catch(b) { return this._promise.catch(b); }
  finally(f) { return this._promise.finally(f); }

  // PouchDB's tryCatchInChangeListener (pouchdb-core's Changes): a 'change'
  // listener that throws is reported on the console and the feed goes on;
  // it is the listener's bug, not the feed's error (a one-shot feed still
  // completes, a live one keeps following, a remote one keeps polling).
  _emitChange(row) {
    try {
      this.emit('change', row);
    } catch (e) {
      console.error('Error in .on("change", function):', e);
    }
  }

  _query(since, limit) {
    const o = this.opts;
    const filterFn = this._filterFn;
    const q = { since, descending: !!o.descending && !o.live,
      include_docs: !!o.include_docs || !!filterFn, conflicts: !!o.conflicts,
      attachments: !!o.attachments, att_encoding_info: !!o.att_encoding_info,
      style: o.style === 'all_docs' ? 'all_docs' : 'main_only' };
    if (Array.isArray(o.doc_ids)) q.doc_ids = o.doc_ids;
    // PouchDB filters by doc_ids alone when both are given.
    if (o.selector !== undefined && o.selector !== null && !q.doc_ids) q.selector = o.selector;
    if (limit !== undefined && !filterFn) q.limit = limit;
    const r = native.dbChanges(this.db._handle(), JSON.stringify(q));
    if (o.binary && o.attachments) for (const row of r.results) binaryAtts(row.doc);
    if (filterFn) this._applyFilter(r, since, limit);
    return r;
  }
  // A filter function runs here, in the client, as in PouchDB: over rows
  // fetched with their docs (and without a limit, applied after it).
  _applyFilter(r, since, limit) {
    const o = this.opts;
    const req = { query: o.query_params || {} };
    const filterFn = this._filterFn || o.filter;  // a remote feed's is the option
    r.results = r.results.filter((row) => filterFn(row.doc, req));
    if (limit !== undefined && r.results.length > limit) {
      r.results.length = limit;
      r.last_seq = r.results.length ? r.results[r.results.length - 1].seq : since;
    }
    if (!o.include_docs) for (const row of r.results) delete row.doc;
  }

  // A filter by name, as PouchDB runs it (its changes-filter plugin): a
  // design document's filter ('ddoc/name') or a view's map function
  // (filter '_view' and view 'ddoc/name': a document passes when the map
  // emits), looked up when the feed starts and run here as a filter
  // function is. '_doc_ids' and '_selector' are the engine's, and a
  // doc_ids option wins over a filter.
  _namedFilter() {
    const o = this.opts;
    const filter = o.view && !o.filter ? '_view' : o.filter;
    if (typeof filter !== 'string' || filter === '' || filter === '_doc_ids' || filter === '_selector' || o.doc_ids) return null;
    const isView = filter === '_view';
    if (isView && (!o.view || typeof o.view !== 'string')) {
      throw new PouchError(400, 'bad_request', '`view` filter parameter not found or invalid.');
    }
    let parts = (isView ? o.view : filter).split('/');
    if (parts.length === 1) parts = [parts[0], parts[0]];
    if (parts.length !== 2) return null;
    const ddoc = native.dbGet(this.db._handle(), '_design/' + parts[0]);
    const group = isView ? ddoc.views : ddoc.filters;
    const fun = group && group[parts[1]];
    const src = isView ? fun && fun.map : fun;
    if (typeof src !== 'string') {
      const e = new PouchError(404, 'not_found', 'missing');
      e.reason = 'missing json key: ' + (group ? parts[1] : isView ? 'views' : 'filters');
      throw e;
    }
    const fn = compileViewFunction(src, ddocRequire(ddoc));
    if (!isView) return fn;
    return (doc) => {
      const outer = currentEmits;
      currentEmits = [];
      try {
        fn(doc, viewEmit);
        return currentEmits.length > 0;
      } catch (e) {
        return false;
      } finally {
        currentEmits = outer;
      }
    };
  }

  _start() {
    if (this.isCancelled) return;
    // Its database destroyed before it started (by any handle): cancelled,
    // as PouchDB's feeds are on 'destroyed'.
    if (this.db._destroyed) {
      this.cancel();
      return;
    }
    const o = this.opts;
    try {
      this._filterFn = typeof o.filter === 'function' ? o.filter : this._namedFilter();
      let since = o.since === undefined ? 0 : o.since;
      if (since === 'now') since = this._nowSeq;
      since = Number(since) || 0;
      const limit = o.limit === undefined || o.limit === null ? undefined : Math.max(0, Number(o.limit) | 0);
      if (!o.live) {
        const r = this._query(since, limit === 0 ? 1 : limit);
        for (const row of r.results) this._emitChange(row);
        this.emit('complete', { results: o.return_docs === false ? [] : r.results, last_seq: r.last_seq });
        return;
      }
      // Live: listen first, then catch up, so no write falls in between.
      this._lastSeq = since;
      this._limit = limit;
      this._feedId = nextFeedId++;
      feeds.set(this._feedId, this);
      native.dbListen(this.db._handle(), this._feedId);
      this._poll();
    } catch (e) {
      this._fail(e);
    }
  }
  _poll() {
    if (this.isCancelled) return;
    try {
      const remaining = this._limit === undefined ? undefined : this._limit - this._emitted;
      const r = this._query(this._lastSeq, remaining);
      this._lastSeq = r.last_seq;
      for (const row of r.results) {
        if (this.isCancelled) return;
        this._emitted++;
        if (this.opts.return_docs !== false) this._results.push(row);
        this._emitChange(row);
      }
      if (this._limit !== undefined && this._emitted >= this._limit) {
        this._stop();
        this.emit('complete', { results: this._results, last_seq: this._lastSeq });
      }
    } catch (e) {
      this._fail(e);
    }
  }
  _fail(e) {
    this._stop();
    if (this.listenerCount('error') > 0) this.emit('error', e);
  }
  _stop() {
    if (this.isCancelled) return;
    this.isCancelled = true;
    if (this._feedId) {
      feeds.delete(this._feedId);
      native.dbUnlisten(this._feedId);
    }
  }
  cancel() {
    if (this.isCancelled) return;
    this._stop();
    this.emit('cancel');
    this.emit('complete', { status: 'cancelled' });  // PouchDB's: no results or last_seq
  }
}
hooks.onFeed = function (feedId) {
  const f = feeds.get(feedId);
  if (f) f._poll();
};

