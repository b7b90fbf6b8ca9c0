// Part of the isolate prelude (js/prelude/begin.js): the WHATWG fetch()
// global with Headers, Request and Response, over native.fetch*
// (js/bindings_fetch.cc). Bodies are whole values (strings, bytes,
// URLSearchParams, JSON); there are no streams, Blob or FormData here.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// Headers

const kHeaderName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
function checkHeader(name, value) {
  if (!kHeaderName.test(name)) throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
  if (/[\0\r\n]/.test(value)) throw new TypeError(`Invalid header value for "${name}"`);
}

class Headers {
  constructor(init = undefined) {
    this._map = new Map();  // lower-case name -> values in order
    if (init === undefined || init === null) return;
    if (init instanceof Headers) {
      for (const [k, v] of init._map) this._map.set(k, v.slice());
    } else if (typeof init[Symbol.iterator] === 'function') {
      for (const pair of init) {
        const p = Array.from(pair);
        if (p.length !== 2) throw new TypeError('Headers constructor: expected name/value pair to be length 2, found ' + p.length + '.');
        this.append(p[0], p[1]);
      }
    } else if (typeof init === 'object') {
      for (const k of Object.keys(init)) this.append(k, init[k]);
    } else {
      throw new TypeError("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'");
    }
  }
  append(name, value) {
    name = String(name);
    value = String(value).trim();
    checkHeader(name, value);
    const k = name.toLowerCase();
    const list = this._map.get(k);
    if (list) list.push(value); else this._map.set(k, [value]);
  }
  set(name, value) {
    name = String(name);
    value = String(value).trim();
    checkHeader(name, value);
    this._map.set(name.toLowerCase(), [value]);
  }
  get(name) {
    const list = this._map.get(String(name).toLowerCase());
    return list === undefined ? null : list.join(', ');
  }
  getSetCookie() { return (this._map.get('set-cookie') || []).slice(); }
  has(name) { return this._map.has(String(name).toLowerCase()); }
  delete(name) { this._map.delete(String(name).toLowerCase()); }
  forEach(fn, thisArg) { for (const [k, v] of this) fn.call(thisArg, v, k, this); }
  // Sorted by name, combined per name, except set-cookie which stays one
  // entry per cookie (the fetch standard's "sort and combine").
  *entries() {
    for (const k of [...this._map.keys()].sort()) {
      if (k === 'set-cookie') for (const v of this._map.get(k)) yield [k, v];
      else yield [k, this._map.get(k).join(', ')];
    }
  }
  *keys() { for (const [k] of this.entries()) yield k; }
  *values() { for (const [, v] of this.entries()) yield v; }
  [Symbol.iterator]() { return this.entries(); }
  get [Symbol.toStringTag]() { return 'Headers'; }
  [kInspectCustom]() { return 'Headers ' + inspect(Object.fromEntries(this.entries())); }
}

// ---------------------------------------------------------------------------
// Bodies

// A body init as bytes and the content type it implies (null: none).
function extractBody(body) {
  if (body === undefined || body === null) return { bytes: null, type: null };
  if (typeof body === 'string') return { bytes: native.utf8Encode(body), type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams) {
    return { bytes: native.utf8Encode(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  }
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)), type: null };
  if (ArrayBuffer.isView(body)) {
    return { bytes: new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), type: null };
  }
  throw new TypeError('settee fetch: unsupported body type (use a string, an ArrayBuffer, a typed array or URLSearchParams)');
}

// The reading methods Request and Response share; a body is read once.
class BodyMixin {
  _initBody(bytes) {
    this._bytes = bytes;
    this._bodyUsed = false;
  }
  get bodyUsed() { return this._bodyUsed; }
  // No streams: the body is whole; null when there is none.
  get body() { return null; }
  _consume() {
    if (this._bodyUsed) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this._bodyUsed = true;
    return Promise.resolve(this._bytes || new Uint8Array(0));
  }
  arrayBuffer() { return this._consume().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); }
  bytes() { return this._consume().then((b) => new Uint8Array(b)); }
  text() { return this._consume().then((b) => native.utf8Decode(b, false)); }
  json() { return this.text().then((t) => JSON.parse(t)); }
}

// ---------------------------------------------------------------------------
// Request and Response

const kForbiddenBodyMethods = new Set(['GET', 'HEAD']);
// The methods fetch upper-cases (not PATCH: the standard leaves it as given).
const kNormalizedMethods = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);

class Request extends BodyMixin {
  constructor(input, init = {}) {
    super();
    const base = input instanceof Request ? input : null;
    let url;
    try {
      url = new URL(base ? base.url : String(input));
    } catch (e) {
      throw new TypeError('Failed to parse URL from ' + (base ? base.url : String(input)));
    }
    if (url.username || url.password) throw new TypeError('Request cannot be constructed from a URL that includes credentials: ' + url.href);
    let method = init.method !== undefined ? String(init.method) : (base ? base.method : 'GET');
    if (kNormalizedMethods.has(method.toUpperCase())) method = method.toUpperCase();
    if (!kHeaderName.test(method)) throw new TypeError(`'${method}' is not a valid HTTP method.`);
    this.url = url.href;
    this.method = method;
    this.headers = new Headers(init.headers !== undefined ? init.headers : (base ? base.headers : undefined));
    this.redirect = init.redirect || (base ? base.redirect : 'follow');
    if (!['follow', 'manual', 'error'].includes(this.redirect)) throw new TypeError(`Failed to construct 'Request': The provided value '${this.redirect}' is not a valid enum value of type RequestRedirect.`);
    this.signal = init.signal !== undefined ? init.signal : (base ? base.signal : new AbortController().signal);
    let bytes = base ? base._bytes : null;
    if (init.body !== undefined && init.body !== null) {
      if (kForbiddenBodyMethods.has(method)) throw new TypeError('Request with GET/HEAD method cannot have body.');
      const { bytes: b, type } = extractBody(init.body);
      bytes = b;
      if (type && !this.headers.has('content-type')) this.headers.set('content-type', type);
    }
    this._initBody(bytes);
  }
  clone() {
    if (this._bodyUsed) throw new TypeError('Request.clone: Body has already been consumed.');
    return new Request(this);
  }
  get [Symbol.toStringTag]() { return 'Request'; }
}

const kNullBodyStatus = new Set([101, 204, 205, 304]);

class Response extends BodyMixin {
  constructor(body = null, init = {}) {
    super();
    const status = init.status === undefined ? 200 : Number(init.status);
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive.`);
    }
    this.status = status;
    this.statusText = init.statusText === undefined ? '' : String(init.statusText);
    this.headers = new Headers(init.headers);
    this.type = 'default';
    this.url = '';
    this.redirected = false;
    const { bytes, type } = extractBody(body);
    if (bytes !== null && kNullBodyStatus.has(status)) throw new TypeError('Response constructor: Invalid response status code ' + status);
    if (type && !this.headers.has('content-type')) this.headers.set('content-type', type);
    this._initBody(bytes);
  }
  get ok() { return this.status >= 200 && this.status <= 299; }
  clone() {
    if (this._bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    return responseFrom(this);
  }
  static json(data, init = {}) {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError('Value is not JSON serializable');
    const headers = new Headers(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new Response(text, Object.assign({}, init, { headers }));
  }
  static error() {
    const r = new Response(null, { status: 200 });
    r.status = 0;
    r.type = 'error';
    return r;
  }
  static redirect(url, status = 302) {
    if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError('Invalid status code ' + status);
    return new Response(null, { status, headers: { location: new URL(String(url)).href } });
  }
  get [Symbol.toStringTag]() { return 'Response'; }
}

// A Response with the fields of `src` (a Response or a native answer),
// which the constructor's status range would refuse for 1xx/3xx answers.
function responseFrom(src, bytes = src._bytes) {
  const r = new Response(null);
  r.status = src.status;
  r.statusText = src.statusText;
  r.headers = new Headers(src.headers);
  r.type = src.type || 'basic';
  r.url = src.url;
  r.redirected = src.redirected;
  r._initBody(bytes);
  return r;
}

// ---------------------------------------------------------------------------
// fetch

class FetchCall {
  constructor(request, resolve, reject) {
    this.resolve = resolve;
    this.reject = reject;
    this.request = request;
    this.id = nextFeedId++;
    feeds.set(this.id, this);
    const signal = request.signal;
    if (signal) {
      this.onAbort = () => this.abort(signal.reason);
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    const headers = [...request.headers];
    if (!request.headers.has('accept')) headers.push(['accept', '*/*']);
    native.fetchStart(this.id, request.method, request.url, headers, request._bytes || undefined, request.redirect);
  }
  _finish() {
    feeds.delete(this.id);
    if (this.onAbort) this.request.signal.removeEventListener('abort', this.onAbort);
  }
  abort(reason) {
    this._finish();
    native.fetchAbort(this.id);
    this.reject(reason);
  }
  _poll() {
    const r = native.fetchResult(this.id);
    if (r === undefined) return;
    this._finish();
    if (r.error !== undefined) {
      this.reject(new TypeError('fetch failed', { cause: new Error(r.error) }));
      return;
    }
    const hasBody = this.request.method !== 'HEAD' && !kNullBodyStatus.has(r.status);
    this.resolve(responseFrom(r, hasBody ? new Uint8Array(r.body) : null));
  }
  cancel() {}
}

function fetch(input, init = undefined) {
  return new Promise((resolve, reject) => {
    const request = new Request(input, init || {});
    if (request.signal && request.signal.aborted) {
      reject(request.signal.reason);
      return;
    }
    const protocol = new URL(request.url).protocol;
    if (protocol !== 'http:' && protocol !== 'https:') {
      reject(new TypeError('fetch failed', { cause: new Error('not implemented... yet...: ' + protocol + ' URLs') }));
      return;
    }
    new FetchCall(request, resolve, reject);
  });
}
