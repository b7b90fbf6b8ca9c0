// Part of the isolate prelude (js/prelude/begin.js): PouchDB's replication
// API over settee's replicator (replication/, native.replicate*):
// PouchDB.replicate(source, target, opts), db.replicate.to/from, db.sync and
// PouchDB.sync. Source and target are PouchDB objects, database names or
// http(s) URLs (or {url, headers}). A fragment sharing the prelude's scope.

function replicationEndpoint(x) {
  if (x instanceof RemotePouchDB) return x._replicationUrl();
  if (x instanceof PouchDB) return storeDbName(x.name);
  if (isRemoteName(x)) return x;
  if (typeof x === 'string' && x !== '') return storeDbName(x);
  if (x !== null && typeof x === 'object' && typeof x.url === 'string') {
    return { url: x.url, headers: x.headers };
  }
  throw new PouchError(400, 'bad_request', 'source and target must be a PouchDB, a name or a URL');
}

function replicationError(e) {
  return e instanceof Error ? e : new PouchError(e.status, e.name, e.message);
}

// One direction: an EventEmitter ('change', 'active', 'paused', 'denied',
// 'complete', 'error') that is also a promise of the 'complete' info.
class Replication extends EventEmitter {
  constructor(source, target, opts) {
    super();
    this.cancelled = false;
    this._done = false;
    this._startTime = new Date().toISOString();
    this._promise = new Promise((resolve, reject) => {
      this.once('complete', resolve);
      this.once('error', reject);
    });
    this._promise.catch(() => {});  // also reported via 'error'
    this._feedId = nextFeedId++;
    const o = opts || {};
    const req = {
      source: replicationEndpoint(source),
      target: replicationEndpoint(target),
      continuous: !!o.live,
      // PouchDB creates a missing local or remote target.
      create_target: o.create_target !== false,
    };
    // PouchDB gives up on the first error unless asked to retry (its
    // backOff: `retry` is false by default, live or not). A one-shot job is
    // told so; a live one (which settee's replicator retries for ever)
    // is ended here at its first failed attempt (_poll).
    if (!o.live && !o.retry) req.retries_per_request = 0;
    this._giveUpOnError = !o.retry;
    if (o.batch_size !== undefined) req.batch_size = Number(o.batch_size);
    if (o.batches_limit !== undefined) req.batches_limit = Number(o.batches_limit);
    if (Array.isArray(o.doc_ids)) req.doc_ids = o.doc_ids;
    if (o.since !== undefined && o.since !== 0) req.since_seq = o.since;
    // A filter function crosses as its source, and runs as a design
    // document's filter does (on settee's isolate for filters): like one,
    // it sees (doc, req) and nothing of the scope it was written in.
    let filterSource;
    if (typeof o.filter === 'function') filterSource = o.filter.toString();
    else if (o.filter !== undefined) req.filter = o.filter;
    if (o.query_params !== undefined) req.query_params = o.query_params;
    if (o.selector !== undefined) req.selector = o.selector;
    // A local source named by string is created, as new PouchDB(name) would.
    if (typeof source === 'string' && !/^https?:\/\//.test(source)) new PouchDB(source).close();
    nextTick(() => {
      if (this.cancelled) {
        this._finish({ kind: 'complete', status: 'cancelled', docs_read: 0, docs_written: 0,
          doc_write_failures: 0, last_seq: 0 });
        return;
      }
      try {
        feeds.set(this._feedId, this);
        if (filterSource === undefined) native.replicate(this._feedId, JSON.stringify(req));
        else native.replicate(this._feedId, JSON.stringify(req), filterSource, JSON.stringify(o.query_params || {}));
      } catch (e) {
        feeds.delete(this._feedId);
        this._done = true;
        this.emit('error', e);
      }
    });
  }
  then(a, b) { return this._promise.then(a, b); }
  catch(b) { return this._promise.catch(b); }
  finally(f) { return this._promise.finally(f); }

  _info(e) {
    return { ok: true, start_time: this._startTime, docs_read: e.docs_read,
      docs_written: e.docs_written, doc_write_failures: e.doc_write_failures, errors: [],
      last_seq: e.last_seq };
  }
  _poll() {
    for (const e of native.replicationEvents(this._feedId)) {
      if (this._aborted) {
        // Given up on (_abort): the cancelled job's last event ends the feed.
        if (e.kind === 'complete' || e.kind === 'error') this._close();
        continue;
      }
      if (this._done) return;
      switch (e.kind) {
        case 'active': this.emit('active'); break;
        case 'paused':
          if (e.error && this._giveUpOnError) {
            this._abort(e);
            break;
          }
          this.emit('paused', e.error ? replicationError(e.error) : undefined);
          break;
        case 'change': {
          if (e.docs.length === 0) break;  // a batch the target had already
          const info = this._info(e);
          info.docs = e.docs;
          this.emit('change', info);
          break;
        }
        case 'denied': {
          const err = replicationError(e.error);
          err.id = e.id;
          this.emit('denied', err);
          break;
        }
        default: this._finish(e);
      }
    }
  }
  _close() {
    feeds.delete(this._feedId);
    native.replicationClose(this._feedId);
  }
  // PouchDB's error of a failed replication, with the result its
  // abortReplication and completeReplication give it: not ok, status
  // 'aborting', an end_time.
  _errorOf(e) {
    const err = replicationError(e.error);
    err.result = this._info(e);
    err.result.ok = false;
    err.result.status = 'aborting';
    err.result.end_time = new Date().toISOString();
    return err;
  }
  // A live replication not to be retried ends at its first failed attempt
  // (PouchDB's backOff with retry false): 'error' now. Its job, waiting to
  // retry, is cancelled, and the feed closed at the job's last event
  // (closing now would wait here for the attempt the job may be starting).
  _abort(e) {
    this._done = true;
    this._aborted = true;
    native.replicationCancel(this._feedId);
    this.emit('error', this._errorOf(e));
  }
  _finish(e) {
    this._done = true;
    this._close();
    if (e.kind === 'error') {
      this.emit('error', this._errorOf(e));
      return;
    }
    const info = this._info(e);
    info.end_time = new Date().toISOString();
    info.status = e.status;
    // PouchDB's one-shot replication pauses once its feed is done, before
    // it completes (not when cancelled).
    if (e.status === 'complete') this.emit('paused');
    this.emit('complete', info);
  }
  cancel() {
    if (this.cancelled || this._done) return;
    this.cancelled = true;
    this.emit('cancel');
    native.replicationCancel(this._feedId);  // 'complete' with status 'cancelled' follows
  }
}

// Both directions at once: PouchDB's sync events carry `direction`.
class Sync extends EventEmitter {
  constructor(a, b, opts) {
    super();
    const o = Object.assign({}, opts || {});
    this.push = new Replication(a, b, Object.assign({}, o, o.push || {}));
    this.pull = new Replication(b, a, Object.assign({}, o, o.pull || {}));
    this.cancelled = false;
    const results = {};
    const paused = { push: false, pull: false };
    let pending = 2;
    this._promise = new Promise((resolve, reject) => {
      this.once('complete', resolve);
      this.once('error', reject);
    });
    this._promise.catch(() => {});
    for (const direction of ['push', 'pull']) {
      const r = this[direction];
      r.on('change', (change) => this.emit('change', { direction, change }));
      // PouchDB's sync is paused when both directions are, and active
      // again when one of them resumes from there.
      r.on('active', () => {
        paused[direction] = false;
        if (paused[direction === 'push' ? 'pull' : 'push']) this.emit('active', { direction });
      });
      r.on('paused', (err) => {
        paused[direction] = true;
        if (paused[direction === 'push' ? 'pull' : 'push']) this.emit('paused', err);
      });
      r.on('denied', (err) => this.emit('denied', err));
      r.on('error', (err) => {
        this.cancel();
        this.emit('error', err);
      });
      r.on('complete', (info) => {
        results[direction] = info;
        if (--pending === 0) this.emit('complete', results);
      });
    }
  }
  then(a, b) { return this._promise.then(a, b); }
  catch(b) { return this._promise.catch(b); }
  finally(f) { return this._promise.finally(f); }
  cancel() {
    if (this.cancelled) return;
    this.cancelled = true;
    this.push.cancel();
    this.pull.cancel();
  }
}

function withCallback(r, opts, cb) {
  if (typeof opts === 'function') cb = opts;
  if (typeof cb === 'function') r.then((info) => nextTick(cb, null, info), (e) => nextTick(cb, e));
  return r;
}

PouchDB.replicate = function (source, target, opts, cb) {
  return withCallback(new Replication(source, target, typeof opts === 'object' ? opts : {}), opts, cb);
};
PouchDB.sync = function (a, b, opts, cb) {
  return withCallback(new Sync(a, b, typeof opts === 'object' ? opts : {}), opts, cb);
};
Object.defineProperty(PouchDB.prototype, 'replicate', {
  configurable: true,
  get() {
    const db = this;
    return {
      to: (target, opts, cb) => PouchDB.replicate(db, target, opts, cb),
      from: (source, opts, cb) => PouchDB.replicate(source, db, opts, cb),
    };
  },
});
PouchDB.prototype.sync = function (other, opts, cb) { return PouchDB.sync(this, other, opts, cb); };
