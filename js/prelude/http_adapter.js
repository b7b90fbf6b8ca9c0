// Part of the isolate prelude (js/prelude/begin.js): PouchDB's http adapter.
// `new PouchDB('http://host:port/db')` (or https) is a RemotePouchDB: the
// same API, each call a CouchDB REST request sent by native.httpRequest
// (js/bindings_http.cc: the replicator's libcurl client on a worker thread,
// so the loop never waits on the network). Replicating to or from one hands
// its URL to settee's replicator (replication.js), which speaks HTTP itself.
// A fragment sharing the prelude's scope.

function isRemoteName(name) { return typeof name === 'string' && /^https?:\/\//i.test(name); }

// A query value as fetch() puts it on the wire when PouchDB appends it to a
// URL unencoded: cut at '#' (a fragment), and percent-encoded in UTF-8 only
// where the WHATWG URL parser's special-query set says (controls, space, '"',
// "'", '<', '>', non-ASCII); '&', '=', '+' and '%' stay as they are.
function asFetchedQuery(value) {
  const hash = value.indexOf('#');
  if (hash >= 0) value = value.slice(0, hash);
  return value.replace(/[\x00-\x20"'<>\x7f-\u{10ffff}]/gu, (c) => {
    try { return encodeURIComponent(c); } catch (e) { return '%EF%BF%BD'; }  // a lone surrogate: U+FFFD
  });
}

function encodeDocId(id) {
  for (const prefix of ['_design/', '_local/']) {
    if (id.startsWith(prefix)) return prefix + encodeURIComponent(id.slice(prefix.length));
  }
  return encodeURIComponent(id);
}
// An attachment name keeps its slashes as path separators (CouchDB's and
// PouchDB's form: /db/doc/dir/file.txt).
function attachmentPath(docId, name) {
  return encodeDocId(docId) + '/' + String(name).split('/').map(encodeURIComponent).join('/');
}

// CouchDB's query string: keys and ranges as JSON, the rest as text.
const kJsonParams = new Set(['key', 'keys', 'startkey', 'endkey', 'start_key', 'end_key', 'open_revs', 'atts_since']);
function queryString(params) {
  const parts = [];
  for (const k of Object.keys(params)) {
    let v = params[k];
    if (v === undefined || typeof v === 'function') continue;
    if (kJsonParams.has(k) && !(k === 'open_revs' && v === 'all')) v = JSON.stringify(v);
    else if (typeof v === 'object' && v !== null) v = JSON.stringify(v);
    parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(String(v)));
  }
  return parts.length ? '?' + parts.join('&') : '';
}
function pick(opts, names) {
  const out = {};
  for (const k of names) if (opts[k] !== undefined) out[k] = opts[k];
  return out;
}

// One request in flight: hooks.onFeed(id) calls _poll once it is answered.
// `options` ({contentType, accept, binary}) go to native.httpRequest; a
// binary answer resolves to a Buffer.
class HttpCall {
  constructor(h, method, rel, body, options, resolve, reject) {
    this.resolve = resolve;
    this.reject = reject;
    this.id = nextFeedId++;
    feeds.set(this.id, this);
    try {
      native.httpRequest(h, this.id, method, rel, body === undefined ? undefined : body, options);
    } catch (e) {
      feeds.delete(this.id);
      reject(e);
    }
  }
  _poll() {
    let r;
    try {
      r = native.httpResult(this.id);
    } catch (e) {
      feeds.delete(this.id);
      this.reject(e);
      return;
    }
    if (r === undefined) return;
    feeds.delete(this.id);
    const status = r[0], text = r[1];
    if (typeof text !== 'string') {
      // PouchDB's Buffer carries the content type as `type`, as a Blob would.
      const bytes = asBuffer(text);
      bytes.type = r[2];
      this.resolve(bytes);
      return;
    }
    let body;
    try { body = text === '' ? {} : JSON.parse(text); } catch (e) { body = { error: 'bad_response', reason: text }; }
    if (status >= 400) {
      this.reject(httpError(status, body));
    } else {
      this.resolve(body);
    }
  }
  cancel() {}
}
function httpCall(h, method, rel, body, options) {
  if (body !== undefined && typeof body !== 'string' && !ArrayBuffer.isView(body)) {
    body = JSON.stringify(body, optsReplacer);
  }
  return new Promise((resolve, reject) => new HttpCall(h, method, rel, body, options, resolve, reject));
}

// A server's error answer as PouchDB's http adapter gives it
// (pouchdb-errors' generateErrorFromResponse on the JSON body): CouchDB's
// error (a string) and reason as they are, then status, name (the error)
// and message (the reason), in that order. PouchDB's is the parsed body
// itself, a plain object; this one is a PouchError (an Error, with the
// usual non-enumerable stack), so that String(err) and instanceof Error
// say what it is.
function httpError(status, body) {
  const e = Object.create(PouchError.prototype);
  e.error = (body && body.error) || 'unknown_error';
  e.reason = (body && body.reason) || ('HTTP ' + status);
  e.status = status;
  e.name = e.error;
  e.message = e.reason;
  Error.captureStackTrace(e, httpError);
  return e;
}
// Marks a request's error with the document it was about (PouchDB's http
// adapter's get and put set docId; post, through bulkDocs, the refused
// row's id and then docId). Only the server's or PouchDB's errors.
function withDocId(p, id, row) {
  return p.catch((e) => {
    if (e instanceof PouchError) {
      if (row && e.status === 409) {
        // The row's id leads, as in the row the server answered.
        const rowError = Object.setPrototypeOf({ id, error: e.error, reason: e.reason, name: e.name, status: e.status,
          message: e.message }, PouchError.prototype);
        Object.defineProperty(rowError, 'stack', { value: e.stack, writable: true, configurable: true });
        e = rowError;
      }
      e.docId = id;
    }
    throw e;
  });
}

// pouchdb-core's checks of every adapter's put and bulkDocs, made before
// the request: its rev pattern (a rev that passes and the server refuses
// is the server's error; an undefined one is none, as PouchDB's clone of
// the arguments drops it) and its _id checks (invalidIdError).
const kValidRev = /^\d+-[^-]*$/;
function isValidRev(rev) { return typeof rev === 'string' && kValidRev.test(rev); }
function putDocError(doc) {
  const id = doc._id;
  if (!id) return new PouchError(412, 'missing_id', '_id is required for puts');
  if (typeof id !== 'string') return new PouchError(400, 'bad_request', '_id field must contain a string');
  if (/^_/.test(id) && !/^_(design|local)/.test(id)) {
    return new PouchError(400, 'bad_request', 'Only reserved document ids may start with underscore.');
  }
  if (doc._rev !== undefined && !isValidRev(doc._rev)) return new PouchError(400, 'bad_request', 'Invalid rev format');
  return null;
}

// A CouchDB error row ({id, error, reason}) given PouchDB's members as its
// http adapter gives them (pouchdb-errors' generateErrorFromResponse):
// name, status (409 for a conflict, else 500 unless given) and message.
function errorRow(row) {
  if (row.error === 'conflict') {
    row.name = 'conflict';
    row.status = 409;
  }
  if (!('name' in row)) row.name = row.error || 'unknown';
  if (!('status' in row)) row.status = 500;
  if (!('message' in row)) row.message = row.reason;
  return row;
}

const remoteHandles = new FinalizationRegistry((h) => native.httpClose(h));
const kRemoteOnly = 'not supported on a remote (http) database in settee yet: replicate it to a local one';
const kBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class RemotePouchDB extends PouchDB {
  constructor(name, opts) {
    super(name, opts);
    opts = this.__opts;
    this.adapter = 'http';
    this._openError = new PouchError(501, 'not_implemented', kRemoteOnly);
    const auth = opts.auth || {};
    this._user = typeof auth.username === 'string' ? auth.username : undefined;
    this._password = typeof auth.password === 'string' ? auth.password : undefined;
    this._setup = null;
    try {
      this._rh = native.httpOpen(name, this._user, this._password);
      remoteHandles.register(this, this._rh, this);
    } catch (e) {
      this._rh = -1;
      this._remoteError = e;
    }
  }
  // The URL the replicator is given: with the credentials of opts.auth.
  _replicationUrl() {
    if (this._user === undefined || /^https?:\/\/[^/]*@/i.test(this.name)) return this.name;
    return this.name.replace(/^(https?:\/\/)/i, '$1' + encodeURIComponent(this._user) + ':' +
      encodeURIComponent(this._password || '') + '@');
  }
  // PouchDB creates the remote database on first use (skip_setup: not).
  _call(method, rel, body, setup, options) {
    if (this._remoteError) return Promise.reject(this._remoteError);
    // PouchDB's errors for a closed or destroyed database: plain Errors, as
    // the local API gives.
    if (this._rh < 0) return Promise.reject(new Error(this._destroyed ? 'database is destroyed' : 'database is closed'));
    if (setup === false || this.__opts.skip_setup) return httpCall(this._rh, method, rel, body, options);
    if (!this._setup) {
      this._setup = httpCall(this._rh, 'GET', '').catch((e) => {
        if (e.status !== 404) throw e;
        return httpCall(this._rh, 'PUT', '').catch((e2) => { if (e2.status !== 412) throw e2; });
      });
      this._setup.catch(() => { this._setup = null; });
    }
    return this._setup.then(() => httpCall(this._rh, method, rel, body, options));
  }
  info(cb) {
    return settle(this._call('GET', '').then((i) => Object.assign(i, { host: this.name, adapter: 'http' })), cb);
  }
  get(id, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    const q = pick(opts, ['rev', 'revs', 'revs_info', 'open_revs', 'conflicts', 'attachments', 'latest',
      'local_seq', 'deleted_conflicts', 'att_encoding_info', 'atts_since']);
    return run(cb, () => {
      // A non-string id fails in encodeDocId with PouchDB's TypeError.
      if (id === '') checkDocId(id);
      return withDocId(this._call('GET', encodeDocId(id) + queryString(q)), id).then((doc) => {
        if (opts.binary && opts.attachments && doc && doc._attachments) {
          for (const name in doc._attachments) {
            const a = doc._attachments[name];
            if (typeof a.data === 'string') a.data = Buffer.from(a.data, 'base64');
          }
        }
        return doc;
      });
    });
  }
  put(doc, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      return settle(Promise.reject(new PouchError(400, 'bad_request', 'Document must be a JSON object')), cb);
    }
    const bad = putDocError(doc);
    if (bad) return settle(Promise.reject(bad), cb);
    const q = opts.new_edits === false ? '?new_edits=false' : '';
    return settle(withDocId(this._call('PUT', encodeDocId(doc._id) + q, withBase64Atts(doc)), doc._id), cb);
  }
  post(doc, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      return settle(Promise.reject(new PouchError(400, 'bad_request', 'Document must be a JSON object')), cb);
    }
    // pouchdb-core's post writes through its bulkDocs, which checks the rev
    // pattern first (the error then carries the docId).
    if (doc._rev !== undefined && !isValidRev(doc._rev)) {
      return settle(withDocId(Promise.reject(new PouchError(400, 'bad_request', 'Invalid rev format')), doc._id, true), cb);
    }
    return settle(withDocId(this._call('POST', '', withBase64Atts(doc)), doc._id, true), cb);
  }
  // PouchDB's http adapter's remove: the doc's (or opts') rev goes into the
  // URL unencoded, fetch() encoding only what a URL cannot hold, and the
  // server reads it as a query value ('+1-abc' as ' 1-abc'): a missing or
  // malformed one is the server's 400 "Invalid rev format" (rev=undefined,
  // '+1-abc'), as against CouchDB; a null doc or a non-string _id
  // fails with the TypeError of reading it (doc._rev, id.startsWith).
  remove(docOrId, optsOrRev, opts, cb) {
    let doc;
    ({ doc, opts, cb } = removeArgs(docOrId, optsOrRev, opts, cb));
    return run(cb, () => {
      const rev = doc._rev || opts.rev;
      return this._call('DELETE', encodeDocId(doc._id) + '?rev=' + asFetchedQuery(String(rev)));
    });
  }
  // PUT /db/doc/att: the body as bytes with its content type; with no rev
  // the server creates the doc.
  putAttachment(docId, attachmentId, rev, blob, type, cb) {
    ({ rev, blob, type, cb } = putAttachmentArgs(rev, blob, type, cb));
    return run(cb, () => {
      checkDocId(docId);
      let bytes = blob;
      if (typeof blob === 'string') {
        if (!kBase64.test(blob)) throw new PouchError(400, 'bad_request', 'Attachment is not a valid base64 string');
        bytes = Buffer.from(blob, 'base64');
      } else if (blob instanceof ArrayBuffer) {
        bytes = new Uint8Array(blob);
      } else if (!ArrayBuffer.isView(blob)) {
        throw new PouchError(400, 'bad_request', 'Attachment data must be a Buffer, a typed array or base64');
      }
      const q = typeof rev === 'string' ? queryString({ rev }) : '';
      return this._call('PUT', attachmentPath(docId, attachmentId) + q, bytes, undefined,
        { contentType: typeof type === 'string' && type ? type : 'application/octet-stream' });
    });
  }
  // GET /db/doc/att: a Buffer, as PouchDB in node gives.
  getAttachment(docId, attachmentId, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    const q = typeof opts.rev === 'string' ? queryString({ rev: opts.rev }) : '';
    return run(cb, () => {
      checkDocId(docId);
      return this._call('GET', attachmentPath(docId, attachmentId) + q, undefined, undefined,
        { accept: '*/*', binary: true });
    });
  }
  removeAttachment(docId, attachmentId, rev, cb) {
    return run(cb, () => {
      checkDocId(docId);
      return this._call('DELETE', attachmentPath(docId, attachmentId) + queryString({ rev }));
    });
  }
  bulkDocs(req, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    let docs = req, newEdits = opts.new_edits;
    if (!Array.isArray(req)) {
      if (req === null || typeof req !== 'object' || !Array.isArray(req.docs)) {
        return settle(Promise.reject(new PouchError(400, 'bad_request', 'Missing JSON list of \'docs\'')), cb);
      }
      docs = req.docs;
      if (req.new_edits !== undefined) newEdits = req.new_edits;
    }
    for (const d of docs) {
      if (d !== null && typeof d === 'object' && !Array.isArray(d) && d._rev !== undefined && !isValidRev(d._rev)) {
        return settle(Promise.reject(new PouchError(400, 'bad_request', 'Invalid rev format')), cb);
      }
    }
    const body = { docs: docs.map((d) => (d !== null && typeof d === 'object' && d._attachments ? withBase64Atts(d) : d)) };
    if (newEdits === false) body.new_edits = false;
    return settle(this._call('POST', '_bulk_docs', body).then((rows) => {
      if (Array.isArray(rows)) for (const row of rows) if (row && row.error) errorRow(row);
      return rows;
    }), cb);
  }
  allDocs(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    const q = Object.assign({}, opts);
    delete q.binary;
    if (Array.isArray(q.keys)) {
      const keys = q.keys;
      delete q.keys;
      return settle(this._call('POST', '_all_docs' + queryString(q), { keys }), cb);
    }
    return settle(this._call('GET', '_all_docs' + queryString(q)), cb);
  }
  revsDiff(req, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    return settle(this._call('POST', '_revs_diff', req), cb);
  }
  bulkGet(opts, cb) {
    if (!opts || !Array.isArray(opts.docs)) {
      return settle(Promise.reject(new PouchError(400, 'bad_request', 'Missing JSON list of \'docs\'')), cb);
    }
    const q = pick(opts, ['revs', 'latest', 'attachments']);
    return settle(this._call('POST', '_bulk_get' + queryString(q), { docs: opts.docs }), cb);
  }
  query(fun, opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    if (typeof fun === 'function') fun = { map: fun };
    if (fun !== null && typeof fun === 'object') {
      // A temporary view: its source goes to POST /db/_temp_view, as
      // PouchDB's http adapter sends it (the server compiles and runs it).
      if (fun.map === undefined) {
        return settle(Promise.reject(new PouchError(400, 'bad_request', '`map` is required for a temporary view')), cb);
      }
      const body = { map: String(fun.map) };
      if (fun.reduce !== undefined && fun.reduce !== null) body.reduce = String(fun.reduce);
      const q = Object.assign({}, opts);
      if (Array.isArray(q.keys)) { body.keys = q.keys; delete q.keys; }
      return settle(this._call('POST', '_temp_view' + queryString(q), body), cb);
    }
    if (typeof fun !== 'string') {
      return settle(Promise.reject(new PouchError(400, 'bad_request', 'a view is a \'ddoc/view\' name, a function or {map, reduce}')), cb);
    }
    const slash = fun.indexOf('/');
    const ddoc = slash < 0 ? fun : fun.slice(0, slash);
    const view = slash < 0 ? fun : fun.slice(slash + 1);
    const rel = '_design/' + encodeURIComponent(ddoc) + '/_view/' + encodeURIComponent(view);
    const q = Object.assign({}, opts);
    if (Array.isArray(q.keys)) {
      const keys = q.keys;
      delete q.keys;
      return settle(this._call('POST', rel + queryString(q), { keys }), cb);
    }
    return settle(this._call('GET', rel + queryString(q)), cb);
  }
  createIndex(req, cb) { return settle(this._call('POST', '_index', req), cb); }
  getIndexes(opts, cb) { [opts, cb] = argsOf(opts, cb); return settle(this._call('GET', '_index'), cb); }
  deleteIndex(index, cb) {
    if (!index || typeof index.ddoc !== 'string' || typeof index.name !== 'string') {
      return settle(Promise.reject(new PouchError(400, 'bad_request', 'you must supply an index.ddoc and an index.name')), cb);
    }
    const ddoc = index.ddoc.startsWith('_design/') ? index.ddoc.slice('_design/'.length) : index.ddoc;
    return settle(this._call('DELETE', '_index/' + encodeURIComponent(ddoc) + '/json/' + encodeURIComponent(index.name)), cb);
  }
  find(req, cb) { return settle(this._call('POST', '_find', req), cb); }
  explain(req, cb) { return settle(this._call('POST', '_explain', req), cb); }
  compact(opts, cb) { [opts, cb] = argsOf(opts, cb); return settle(this._call('POST', '_compact', {}), cb); }
  viewCleanup(opts, cb) { [opts, cb] = argsOf(opts, cb); return settle(this._call('POST', '_view_cleanup', {}), cb); }
  changes(opts, cb) {
    if (typeof opts === 'function') { cb = opts; opts = {}; }
    opts = Object.assign({}, opts || {});
    if (cb) opts.complete = cb;
    return new RemoteChanges(this, opts);
  }
  destroy(opts, cb) {
    [opts, cb] = argsOf(opts, cb);
    const p = this._call('DELETE', '', undefined, false).then((r) => {
      this._closeRemote();
      this._destroyed = true;
      this.emit('destroyed');
      pouchEvents.emit('destroyed', this.name);
      return r;
    });
    return settle(p, cb);
  }
  close(cb) {
    return run(cb, () => {
      this._closeRemote();
      this.emit('closed');
    });
  }
  _closeRemote() {
    if (this._rh >= 0) {
      remoteHandles.unregister(this);
      native.httpClose(this._rh);
    }
    this._rh = -1;
  }
}

// A remote changes feed: one request for a one-shot feed; for a live one,
// long polls on a handle of its own, closed (interrupting the poll) by
// cancel(). Events, promise and cancel() are the local feed's (Changes).
class RemoteChanges extends Changes {
  _request(since, h) {
    const o = this.opts;
    const filterFn = typeof o.filter === 'function';
    const q = pick(o, ['include_docs', 'conflicts', 'attachments', 'descending', 'limit', 'style', 'view', 'seq_interval']);
    if (filterFn) { q.include_docs = true; delete q.limit; }
    if (typeof o.filter === 'string') q.filter = o.filter;
    if (o.query_params) Object.assign(q, o.query_params);
    q.since = since;
    let body;
    if (Array.isArray(o.doc_ids)) { q.filter = '_doc_ids'; body = { doc_ids: o.doc_ids }; }
    if (o.selector) { q.filter = '_selector'; body = { selector: o.selector }; }
    if (o.live) { q.feed = 'longpoll'; q.timeout = o.timeout || 10000; }
    const rel = '_changes' + queryString(q);
    const answer = h !== undefined ? httpCall(h, body ? 'POST' : 'GET', rel, body)
      : this.db._call(body ? 'POST' : 'GET', rel, body);
    if (!filterFn) return answer;
    const limit = o.limit === undefined || o.limit === null ? undefined : Math.max(0, Number(o.limit) | 0);
    return answer.then((r) => { this._applyFilter(r, since, o.live ? undefined : limit); return r; });
  }
  _start() {
    if (this.isCancelled) return;
    if (!this.opts.live) {
      this._request(this.opts.since === undefined ? 0 : this.opts.since).then((r) => {
        if (this.isCancelled) return;
        for (const row of r.results) this._emitChange(row);
        this.emit('complete', { results: this.opts.return_docs === false ? [] : r.results, last_seq: r.last_seq });
      }, (e) => this._fail(e));
      return;
    }
    // Live: catch the setup up first, then poll on a handle of our own.
    this._lastSeq = this.opts.since === undefined ? 0 : this.opts.since;
    this.db._call('GET', '').then((info) => {
      if (this.isCancelled) return;
      if (this._lastSeq === 'now') this._lastSeq = info.update_seq;
      this._h = native.httpOpen(this.db.name, this.db._user, this.db._password);
      this._poll();
    }).catch((e) => this._fail(e));
  }
  _poll() {
    if (this.isCancelled) return;
    this._request(this._lastSeq, this._h).then((r) => {
      if (this.isCancelled) return;
      this._lastSeq = r.last_seq;
      for (const row of r.results) {
        if (this.isCancelled) return;
        if (this.opts.return_docs !== false) this._results.push(row);
        this._emitChange(row);
      }
      this._poll();
    }, (e) => { if (!this.isCancelled) this._fail(e); });
  }
  _stop() {
    if (this.isCancelled) return;
    this.isCancelled = true;
    if (this._h !== undefined) native.httpClose(this._h);
  }
}

PouchDB.adapters = { settee: PouchDB, http: RemotePouchDB, https: RemotePouchDB };
