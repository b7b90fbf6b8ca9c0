// Part of the isolate prelude (js/prelude/begin.js): the WHATWG URL and
// URLSearchParams globals that node and browsers give scripts (and npm
// packages expect). Covers what scripts meet: special schemes (http, https,
// ws, wss, ftp, file) with credentials, hosts, ports, dot segments and the
// spec's percent-encode sets, opaque and authority forms of other schemes,
// relative references against a base, and live searchParams. Not covered:
// IDNA (non-ASCII hosts are kept percent-encoded) and IPv4 number forms
// other than dotted decimal. A fragment, not a module.

// ---------------------------------------------------------------------------
// URL and URLSearchParams

const { URL, URLSearchParams } = (() => {
  const specialPorts = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21', 'file:': '' };
  const isSpecial = (protocol) => hasOwn(specialPorts, protocol);
  const invalid = (input) => {
    const e = new TypeError('Invalid URL');
    e.code = 'ERR_INVALID_URL';
    e.input = input;
    return e;
  };

  // Percent-encodes the UTF-8 bytes of `s` outside printable ASCII and those
  // in `set` (space too, unless `keepSpace`: opaque paths), leaving existing
  // %XX escapes alone.
  function encodeSet(s, set, keepSpace = false) {
    let out = '';
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if ((c > 0x20 || (keepSpace && c === 0x20)) && c < 0x7f && !set.includes(ch)) {
        out += ch;
      } else {
        for (const b of native.utf8Encode(ch)) out += '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
      }
    }
    return out;
  }
  const fragmentSet = ' "<>`';
  const querySet = ' "#<>';
  const specialQuerySet = querySet + "'";
  const pathSet = querySet + '?`{}';
  const userinfoSet = pathSet + '/:;=@[\\]^|';

  function normalizePath(segments, special) {
    const out = [];
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const lower = seg.toLowerCase();
      const last = i === segments.length - 1;
      if (seg === '..' || lower === '.%2e' || lower === '%2e.' || lower === '%2e%2e') {
        if (out.length > 0) out.pop();
        if (last) out.push('');
      } else if (seg === '.' || lower === '%2e') {
        if (last) out.push('');
      } else {
        out.push(encodeSet(seg, pathSet));
      }
    }
    if (special && out.length === 0) out.push('');
    return out;
  }

  function parseHost(host, special, input) {
    if (host.startsWith('[')) {
      if (!host.endsWith(']') || !/^\[[0-9A-Fa-f:.]+\]$/.test(host)) throw invalid(input);
      return host.toLowerCase();
    }
    if (!special) return encodeSet(host, ' #/<>?@[\\]^|');
    let h;
    try { h = decodeURIComponent(host); } catch (e) { throw invalid(input); }
    if (/[\u0000\t\n\r #%/:<>?@[\\\]^|]/.test(h)) throw invalid(input);
    return encodeSet(h.toLowerCase(), '');
  }

  // Splits `rest` (what follows "scheme:") into the URL's parts.
  function parseAfterScheme(url, rest, input) {
    const special = isSpecial(url._protocol);
    if (special) rest = rest.replace(/\\/g, '/');
    let hashAt = rest.indexOf('#');
    if (hashAt >= 0) {
      url._hash = rest.slice(hashAt + 1);
      rest = rest.slice(0, hashAt);
    }
    let queryAt = rest.indexOf('?');
    if (queryAt >= 0) {
      url._query = rest.slice(queryAt + 1);
      rest = rest.slice(0, queryAt);
    }
    if (url._protocol === 'file:' && !rest.startsWith('//')) {
      url._host = '';
      url._hasAuthority = true;
      url._path = normalizePath(rest.replace(/^\/+/, '').split('/'), true);
    } else if (special || rest.startsWith('//')) {
      rest = special && url._protocol !== 'file:' ? rest.replace(/^\/*/, '') : rest.slice(2);
      const slash = rest.indexOf('/');
      let authority = slash >= 0 ? rest.slice(0, slash) : rest;
      rest = slash >= 0 ? rest.slice(slash) : '';
      const at = authority.lastIndexOf('@');
      if (at >= 0) {
        const userinfo = authority.slice(0, at);
        authority = authority.slice(at + 1);
        const colon = userinfo.indexOf(':');
        url._username = encodeSet(colon >= 0 ? userinfo.slice(0, colon) : userinfo, userinfoSet);
        url._password = colon >= 0 ? encodeSet(userinfo.slice(colon + 1), userinfoSet) : '';
      }
      const portMatch = /:([^:\]]*)$/.exec(authority);
      let host = authority;
      if (portMatch) {
        host = authority.slice(0, portMatch.index);
        if (!/^[0-9]*$/.test(portMatch[1]) || Number(portMatch[1]) > 65535) throw invalid(input);
        url._port = portMatch[1] === '' ? '' : String(Number(portMatch[1]));
        if (url._port === specialPorts[url._protocol]) url._port = '';
      }
      if (host === '' && special && url._protocol !== 'file:') throw invalid(input);
      url._host = parseHost(host, special, input);
      url._hasAuthority = true;
      url._path = rest === '' && !special ? [] : normalizePath(rest.replace(/^\//, '').split('/'), special);
    } else if (rest.startsWith('/')) {
      url._path = normalizePath(rest.slice(1).split('/'), false);
    } else {
      url._opaque = encodeSet(rest, '', true);
    }
  }

  function parse(url, input, base) {
    input = String(input).replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
    const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(input);
    if (m && !(base && isSpecial(m[1].toLowerCase() + ':') && m[1].toLowerCase() + ':' === base._protocol &&
               !/^[A-Za-z][A-Za-z0-9+.-]*:[\\/]/.test(input))) {
      url._protocol = m[1].toLowerCase() + ':';
      parseAfterScheme(url, input.slice(m[0].length), input);
      return;
    }
    if (!base || base._opaque !== null) {
      if (base && input.startsWith('#')) {
        Object.assign(url, base._fields(), { _hash: input.slice(1) });
        return;
      }
      throw invalid(input);
    }
    let rest = m ? input.slice(m[0].length) : input;
    const special = isSpecial(base._protocol);
    if (special) rest = rest.replace(/\\/g, '/');
    url._protocol = base._protocol;
    if (rest.startsWith('//')) {
      parseAfterScheme(url, rest, input);
      return;
    }
    Object.assign(url, base._fields(), { _hash: null });
    if (rest.startsWith('/')) {
      url._query = null;
      parseAfterScheme(url, '//' + base._authority() + rest, input);
      return;
    }
    if (rest === '' || rest.startsWith('?') || rest.startsWith('#')) {
      const probe = { _protocol: url._protocol, _path: [], _opaque: null, _query: null, _hash: null };
      parseAfterScheme(probe, '//x/' + rest, input);
      if (rest.startsWith('?')) url._query = probe._query;
      url._hash = probe._hash;
      return;
    }
    const dir = base._path.slice(0, -1).join('/');
    url._query = null;
    parseAfterScheme(url, '//' + base._authority() + '/' + (dir ? dir + '/' : '') + rest, input);
  }

  class URLSearchParams {
    constructor(init = '') {
      this._list = [];
      this._url = null;
      if (typeof init === 'object' && init !== null) {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const p = [...pair];
            if (p.length !== 2) throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            this._list.push([String(p[0]), String(p[1])]);
          }
        } else {
          for (const k of Object.keys(init)) this._list.push([k, String(init[k])]);
        }
      } else {
        this._parse(String(init));
      }
    }
    _parse(s) {
      this._list = [];
      if (s.startsWith('?')) s = s.slice(1);
      for (const part of s.split('&')) {
        if (part === '') continue;
        const eq = part.indexOf('=');
        const name = eq >= 0 ? part.slice(0, eq) : part;
        const value = eq >= 0 ? part.slice(eq + 1) : '';
        this._list.push([formDecode(name), formDecode(value)]);
      }
    }
    _update() {
      if (!this._url) return;
      const s = this.toString();
      this._url._query = s === '' ? null : s;
    }
    get size() { return this._list.length; }
    append(name, value) { this._list.push([String(name), String(value)]); this._update(); }
    delete(name, value) {
      name = String(name);
      this._list = this._list.filter(([n, v]) => n !== name || (value !== undefined && v !== String(value)));
      this._update();
    }
    get(name) {
      name = String(name);
      const e = this._list.find(([n]) => n === name);
      return e ? e[1] : null;
    }
    getAll(name) { name = String(name); return this._list.filter(([n]) => n === name).map(([, v]) => v); }
    has(name, value) {
      name = String(name);
      return this._list.some(([n, v]) => n === name && (value === undefined || v === String(value)));
    }
    set(name, value) {
      name = String(name);
      value = String(value);
      const i = this._list.findIndex(([n]) => n === name);
      if (i < 0) {
        this._list.push([name, value]);
      } else {
        this._list[i][1] = value;
        this._list = this._list.filter(([n], j) => j <= i || n !== name);
      }
      this._update();
    }
    sort() {
      // Stable, by UTF-16 code units, as the spec says.
      this._list = this._list.map((e, i) => [e, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map(([e]) => e);
      this._update();
    }
    forEach(fn, thisArg) { for (const [n, v] of this._list) fn.call(thisArg, v, n, this); }
    *entries() { for (const [n, v] of this._list) yield [n, v]; }
    *keys() { for (const [n] of this._list) yield n; }
    *values() { for (const [, v] of this._list) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this._list.map(([n, v]) => formEncode(n) + '=' + formEncode(v)).join('&'); }
    get [Symbol.toStringTag]() { return 'URLSearchParams'; }
  }

  function formDecode(s) {
    s = s.replace(/\+/g, ' ');
    try {
      return decodeURIComponent(s);
    } catch (e) {
      // Bad escapes stay as they are; bad UTF-8 becomes U+FFFD, as in node.
      return s.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
        const bytes = run.split('%').slice(1).map((h) => parseInt(h, 16));
        return native.utf8Decode(new Uint8Array(bytes), false);
      });
    }
  }
  function formEncode(s) {
    let out = '';
    for (const b of native.utf8Encode(s)) {
      const ch = String.fromCharCode(b);
      if (/[A-Za-z0-9*\-._]/.test(ch)) out += ch;
      else if (b === 0x20) out += '+';
      else out += '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
    }
    return out;
  }

  class URL {
    constructor(input, base) {
      this._protocol = '';
      this._username = '';
      this._password = '';
      this._host = null;
      this._port = '';
      this._path = [];
      this._opaque = null;
      this._query = null;
      this._hash = null;
      this._hasAuthority = false;
      let baseUrl;
      if (base !== undefined) baseUrl = base instanceof URL ? base : new URL(String(base));
      parse(this, input, baseUrl);
      const special = isSpecial(this._protocol);
      if (this._query !== null) this._query = encodeSet(this._query, special ? specialQuerySet : querySet);
      if (this._hash !== null) this._hash = encodeSet(this._hash, fragmentSet);
      this._params = new URLSearchParams(this._query || '');
      this._params._url = this;
    }
    static canParse(input, base) {
      try { new URL(input, base); return true; } catch (e) { return false; }
    }
    _fields() {
      const f = {};
      for (const k of ['_protocol', '_username', '_password', '_host', '_port', '_opaque', '_query', '_hash', '_hasAuthority']) f[k] = this[k];
      f._path = this._path.slice();
      return f;
    }
    _authority() {
      const cred = this._username || this._password
        ? this._username + (this._password ? ':' + this._password : '') + '@' : '';
      return cred + (this._host || '') + (this._port ? ':' + this._port : '');
    }
    get protocol() { return this._protocol; }
    get username() { return this._username; }
    set username(v) { this._username = encodeSet(String(v), userinfoSet); }
    get password() { return this._password; }
    set password(v) { this._password = encodeSet(String(v), userinfoSet); }
    get hostname() { return this._host || ''; }
    set hostname(v) { if (this._opaque === null) this._host = parseHost(String(v), isSpecial(this._protocol), String(v)); }
    get port() { return this._port; }
    set port(v) {
      const s = String(v);
      if (s === '') { this._port = ''; return; }
      const m = /^[0-9]+/.exec(s);
      if (!m || Number(m[0]) > 65535) return;
      this._port = String(Number(m[0])) === specialPorts[this._protocol] ? '' : String(Number(m[0]));
    }
    get host() { return this.hostname + (this._port ? ':' + this._port : ''); }
    get origin() {
      if (!isSpecial(this._protocol) || this._protocol === 'file:') return 'null';
      return this._protocol + '//' + this.host;
    }
    get pathname() {
      if (this._opaque !== null) return this._opaque;
      return this._path.length || isSpecial(this._protocol) ? '/' + this._path.join('/') : '';
    }
    set pathname(v) {
      if (this._opaque !== null) return;
      let s = String(v);
      if (isSpecial(this._protocol)) s = s.replace(/\\/g, '/');
      this._path = normalizePath(s.replace(/^\//, '').split('/'), isSpecial(this._protocol));
    }
    get search() { return this._query ? '?' + this._query : ''; }
    set search(v) {
      const s = String(v).replace(/^\?/, '');
      this._query = s === '' ? null : encodeSet(s, isSpecial(this._protocol) ? specialQuerySet : querySet);
      this._params._parse(this._query || '');
    }
    get searchParams() { return this._params; }
    get hash() { return this._hash ? '#' + this._hash : ''; }
    set hash(v) {
      const s = String(v).replace(/^#/, '');
      this._hash = s === '' ? null : encodeSet(s, fragmentSet);
    }
    get href() {
      let s = this._protocol;
      if (this._host !== null) s += '//' + this._authority();
      s += this.pathname;
      if (this._query !== null) s += '?' + this._query;
      if (this._hash !== null) s += '#' + this._hash;
      return s;
    }
    set href(v) {
      const u = new URL(String(v));
      Object.assign(this, u._fields());
      this._params._parse(this._query || '');
    }
    toString() { return this.href; }
    toJSON() { return this.href; }
    get [Symbol.toStringTag]() { return 'URL'; }
  }
  return { URL, URLSearchParams };
})();
