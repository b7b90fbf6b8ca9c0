// Part of the isolate prelude (js/prelude/begin.js): the WHATWG URL and
// URLSearchParams globals that node and browsers give scripts (and npm
// packages expect), and the url module's legacy API (url.parse, url.format,
// url.resolve, url.Url). URL covers what scripts meet: special schemes (http,
// https, ws, wss, ftp, file) with credentials, hosts, ports, dot segments and
// the spec's percent-encode sets, opaque and authority forms of other
// schemes, relative references against a base, and live searchParams. Not
// covered: IDNA (URL keeps non-ASCII hosts percent-encoded; url.parse
// punycodes them but skips IDNA's mapping and validation) and IPv4 number
// forms other than dotted decimal. A fragment, not a module.

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

// ---------------------------------------------------------------------------
// The url module's legacy API: parse / format / resolve / resolveObject on
// Url objects, as node 20 does them (older packages: request, http-proxy,
// express middleware). Lenient, not WHATWG: it escapes what it must and keeps
// the rest as written.

// node's ERR_INVALID_ARG_TYPE for argument `name`, which must be `what`
// ("of type string"), with node's account of what it got ("Received type
// number (5)", "Received an instance of Object", "Received null"): scripts
// and their tests compare code and message. Shared by url and fs.
function invalidArgType(name, what, value) {
  let got;
  if (value === null || value === undefined) got = String(value);
  else if (typeof value === 'object' || typeof value === 'function') {
    got = value.constructor && value.constructor.name ? 'an instance of ' + value.constructor.name : inspect(value);
  } else got = 'type ' + typeof value + ' (' + inspect(value) + ')';
  const e = new TypeError('The "' + name + '" argument must be ' + what + '. Received ' + got);
  e.code = 'ERR_INVALID_ARG_TYPE';
  return e;
}

const legacyUrl = (() => {
  // Schemes that take '//' and a host even where the string omits them, and
  // the one that never has a host (nor gets escaped).
  const slashed = new Set(['http', 'https', 'ftp', 'gopher', 'file', 'ws', 'wss'].flatMap((p) => [p, p + ':']));
  const hostless = new Set(['javascript', 'javascript:']);
  const argType = invalidArgType;
  const invalidUrl = (input) => Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL', input });
  // Whitespace that parse trims from both ends: controls, space, NBSP, BOM.
  const isTrimmed = (c) => c <= 0x20 || c === 0xa0 || c === 0xfeff;
  // Characters that end a host without ending the authority (a later '@'
  // still makes them auth), and those escaped anywhere after the host.
  const notInHost = '\t\n\r "%\';<>\\^`{|}';
  const escapeAlways = /[\t\n\r "'<>\\^`{|}]/g;
  const hex2 = (ch) => '%' + ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  let warnedPort = false;

  // RFC 3492's encoding of a label with non-ASCII characters (what follows
  // 'xn--'). Only that: none of IDNA's mapping or validation.
  function punycode(label) {
    const points = Array.from(label, (c) => c.codePointAt(0));
    const digit = (d) => String.fromCharCode(d < 26 ? 97 + d : 22 + d);
    const adapt = (delta, count, first) => {
      delta = first ? Math.floor(delta / 700) : delta >> 1;
      delta += Math.floor(delta / count);
      let k = 0;
      for (; delta > 455; k += 36) delta = Math.floor(delta / 35);
      return k + Math.floor((36 * delta) / (delta + 38));
    };
    let out = points.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join('');
    const basic = out.length;
    if (basic > 0) out += '-';
    let n = 0x80;
    let delta = 0;
    let bias = 72;
    for (let done = basic; done < points.length; n++, delta++) {
      const next = Math.min(...points.filter((c) => c >= n));
      delta += (next - n) * (done + 1);
      n = next;
      for (const c of points) {
        if (c < n) delta++;
        if (c !== n) continue;
        let q = delta;
        for (let k = 36; ; k += 36) {
          const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
          if (q < t) break;
          out += digit(t + ((q - t) % (36 - t)));
          q = Math.floor((q - t) / (36 - t));
        }
        out += digit(q);
        bias = adapt(delta, done + 1, done === basic);
        delta = 0;
        done++;
      }
    }
    return out;
  }

  function Url() {
    this.protocol = null;
    this.slashes = null;
    this.auth = null;
    this.host = null;
    this.port = null;
    this.hostname = null;
    this.hash = null;
    this.search = null;
    this.query = null;
    this.pathname = null;
    this.path = null;
    this.href = null;
  }

  function parse(input, parseQueryString, slashesDenoteHost) {
    if (input instanceof Url) return input;
    const u = new Url();
    u.parse(input, parseQueryString, slashesDenoteHost);
    return u;
  }

  Url.prototype.parse = function (input, parseQueryString, slashesDenoteHost) {
    if (typeof input !== 'string') throw argType('url', 'of type string', input);
    let from = 0;
    let to = input.length;
    while (from < to && isTrimmed(input.charCodeAt(from))) from++;
    while (to > from && isTrimmed(input.charCodeAt(to - 1))) to--;
    let rest = input.slice(from, to);
    // Backslashes before the query or fragment are slashes, as in browsers.
    const split = rest.search(/[?#]/);
    const before = split < 0 ? rest : rest.slice(0, split);
    rest = before.replace(/\\/g, '/') + (split < 0 ? '' : rest.slice(split));

    // A plain path (and query): taken as it is, unescaped.
    if (!slashesDenoteHost && !rest.includes('#') && !before.includes('@')) {
      const simple = /^(\/\/?(?!\/)[^?\s]*)(\?[^\s]*)?$/.exec(rest);
      if (simple) {
        this.path = rest;
        this.href = rest;
        this.pathname = simple[1];
        if (simple[2]) {
          this.search = simple[2];
          this.query = parseQueryString ? querystring.parse(simple[2].slice(1)) : simple[2].slice(1);
        } else if (parseQueryString) {
          this.search = null;
          this.query = Object.create(null);
        }
        return this;
      }
    }

    const protoMatch = /^[a-z0-9.+-]+:/i.exec(rest);
    const proto = protoMatch ? protoMatch[0] : undefined;
    const lowerProto = proto ? proto.toLowerCase() : undefined;
    if (proto) {
      this.protocol = lowerProto;
      rest = rest.slice(proto.length);
    }

    // '//' starts a host after a scheme, with slashesDenoteHost, or when an
    // '@' follows (//user@host).
    let slashes = false;
    if (slashesDenoteHost || proto || /^\/\/[^@/]+@[^@/]+/.test(rest)) {
      slashes = rest.startsWith('//');
      if (slashes && !(proto && hostless.has(lowerProto))) {
        rest = rest.slice(2);
        this.slashes = true;
      }
    }

    // (node tests the scheme as written here: 'HTTP:x' has a host 'x'.)
    if (!hostless.has(lowerProto) && (slashes || (proto && !slashed.has(proto)))) {
      // The authority ends at the first '/', '?' or '#'; the last '@' before
      // it ends the auth; the host ends at the first character that can't be
      // in one after that '@'.
      let authEnd = -1;
      let hostEnd = -1;
      for (let i = 0; i < rest.length; i++) {
        const ch = rest[i];
        if (ch === '/' || ch === '?' || ch === '#') {
          if (hostEnd < 0) hostEnd = i;
          break;
        }
        if (ch === '@') {
          authEnd = i;
          hostEnd = -1;
        } else if (hostEnd < 0 && notInHost.includes(ch)) {
          hostEnd = i;
        }
      }
      if (authEnd >= 0) this.auth = decodeURIComponent(rest.slice(0, authEnd));
      const hostStart = authEnd + 1;
      if (hostEnd < 0) hostEnd = rest.length;
      this.host = rest.slice(hostStart, hostEnd);
      rest = rest.slice(hostEnd);
      this.parseHost();
      if (typeof this.hostname !== 'string') this.hostname = '';
      const ipv6 = this.hostname.startsWith('[') && this.hostname.endsWith(']');
      if (!ipv6) {
        // What follows a '/', '\', '#', '?' or ':' left in the hostname
        // (a bad port, say) goes back into the path.
        const cut = this.hostname.search(/[/\\#?:]/);
        if (cut >= 0) {
          if (this.hostname[cut] === ':' && !warnedPort) {
            warnedPort = true;
            process.emitWarning('The URL ' + input + ' is invalid. Future versions of Node.js will throw an error.',
                                'DeprecationWarning', 'DEP0170');
          }
          rest = '/' + this.hostname.slice(cut) + rest;
          this.hostname = this.hostname.slice(0, cut);
        }
      }
      this.hostname = this.hostname.length > 255 ? '' : this.hostname.toLowerCase();
      if (this.hostname !== '' && !ipv6) {
        this.hostname = this.hostname.split('.').map((l) => (/[^\0-\x7f]/.test(l) ? 'xn--' + punycode(l) : l)).join('.');
      }
      if (this.hostname !== '') {
        const forbidden = ipv6 ? /[\0\t\n\r #%/<>?@\\^|]/ : /[\0\t\n\r #%/:<>?@[\\\]^|]/;
        if (forbidden.test(this.hostname)) throw invalidUrl(input);
      }
      this.host = this.hostname + (this.port ? ':' + this.port : '');
      if (ipv6) {
        this.hostname = this.hostname.slice(1, -1);
        if (rest[0] !== '/') rest = '/' + rest;
      }
    }

    if (!hostless.has(lowerProto)) rest = rest.replace(escapeAlways, hex2);

    const hashAt = rest.indexOf('#');
    if (hashAt >= 0) {
      this.hash = rest.slice(hashAt);
      rest = rest.slice(0, hashAt);
    }
    const queryAt = rest.indexOf('?');
    if (queryAt >= 0) {
      this.search = rest.slice(queryAt);
      this.query = rest.slice(queryAt + 1);
      if (parseQueryString) this.query = querystring.parse(this.query);
      rest = rest.slice(0, queryAt);
    } else if (parseQueryString) {
      this.search = null;
      this.query = Object.create(null);
    }
    if (rest !== '') this.pathname = rest;
    if (slashed.has(lowerProto) && this.hostname && !this.pathname) this.pathname = '/';
    if (this.pathname || this.search) this.path = (this.pathname || '') + (this.search || '');
    this.href = this.format();
    return this;
  };

  Url.prototype.format = function () {
    let auth = this.auth || '';
    if (auth) auth = encodeURIComponent(auth).replace(/%3A/g, ':') + '@';
    let protocol = this.protocol || '';
    let pathname = this.pathname || '';
    let hash = this.hash || '';
    let host = '';
    if (this.host) {
      host = auth + this.host;
    } else if (this.hostname) {
      const h = this.hostname;
      host = auth + (h.includes(':') && !(h.startsWith('[') && h.endsWith(']')) ? '[' + h + ']' : h);
      if (this.port) host += ':' + this.port;
    }
    let query = '';
    if (this.query !== null && typeof this.query === 'object') query = querystring.stringify(this.query);
    let search = this.search || (query && '?' + query) || '';
    if (protocol && !protocol.endsWith(':')) protocol += ':';
    pathname = pathname.replace(/[?#]/g, (c) => (c === '#' ? '%23' : '%3F'));
    // Only slashed schemes get '//' (not mailto:), unless parsed with them.
    if (this.slashes || slashed.has(protocol)) {
      if (this.slashes || host) {
        if (pathname && pathname[0] !== '/') pathname = '/' + pathname;
        host = '//' + host;
      } else if (protocol.startsWith('file')) {
        host = '//';
      }
    }
    search = search.replace(/#/g, '%23');
    if (hash && hash[0] !== '#') hash = '#' + hash;
    if (search && search[0] !== '?') search = '?' + search;
    return protocol + host + pathname + search + hash;
  };

  Url.prototype.resolve = function (relative) {
    return this.resolveObject(parse(relative, false, true)).format();
  };

  Url.prototype.resolveObject = function (relative) {
    if (typeof relative === 'string') {
      const rel = new Url();
      rel.parse(relative, false, true);
      relative = rel;
    }
    const result = new Url();
    for (const k of Object.keys(this)) result[k] = this[k];
    const finish = () => {
      result.href = result.format();
      return result;
    };
    const setPath = () => {
      if (result.pathname !== null || result.search !== null) result.path = (result.pathname || '') + (result.search || '');
    };
    // The fragment always comes from the relative one, even when it's empty.
    result.hash = relative.hash;
    if (relative.href === '') return finish();

    // '//host/path': everything but the scheme.
    if (relative.slashes && !relative.protocol) {
      for (const k of Object.keys(relative)) if (k !== 'protocol') result[k] = relative[k];
      if (slashed.has(result.protocol) && result.hostname && !result.pathname) result.path = result.pathname = '/';
      return finish();
    }

    if (relative.protocol && relative.protocol !== result.protocol) {
      // Another scheme: a hostful one takes its host from the path's first
      // segment if it has none ('http:host/p'); others replace everything.
      if (!slashed.has(relative.protocol)) {
        for (const k of Object.keys(relative)) result[k] = relative[k];
        return finish();
      }
      result.protocol = relative.protocol;
      if (!relative.host && !/^file:?$/.test(relative.protocol) && !hostless.has(relative.protocol)) {
        const segments = (relative.pathname || '').split('/');
        while (segments.length && !(relative.host = segments.shift()));
        if (!relative.host) relative.host = '';
        if (!relative.hostname) relative.hostname = '';
        if (segments[0] !== '') segments.unshift('');
        if (segments.length < 2) segments.unshift('');
        result.pathname = segments.join('/');
      } else {
        result.pathname = relative.pathname;
      }
      result.search = relative.search;
      result.query = relative.query;
      result.host = relative.host || '';
      result.auth = relative.auth;
      result.hostname = relative.hostname || relative.host;
      result.port = relative.port;
      if (result.pathname || result.search) result.path = (result.pathname || '') + (result.search || '');
      result.slashes = result.slashes || relative.slashes;
      return finish();
    }

    const sourceAbsolute = Boolean(result.pathname && result.pathname[0] === '/');
    const relativeAbsolute = Boolean(relative.host || (relative.pathname && relative.pathname[0] === '/'));
    let mustEndAbsolute = relativeAbsolute || sourceAbsolute || Boolean(result.host && relative.pathname);
    const removeAllDots = mustEndAbsolute;
    let srcPath = (result.pathname && result.pathname.split('/')) || [];
    const relPath = (relative.pathname && relative.pathname.split('/')) || [];
    // Schemes without '//' (mailto:): the "host" is the path's first segment,
    // so '..' can climb into it.
    const noSlashes = result.protocol && !slashed.has(result.protocol);
    const hostBackFromPath = (host) => {
      result.hostname = result.host = host;
      // 'user@host' stuck in the host: split the auth off again.
      const at = result.host && result.host.indexOf('@') > 0 ? result.host.split('@') : null;
      if (at) {
        result.auth = at.shift();
        result.host = result.hostname = at.shift();
      }
    };
    if (noSlashes) {
      result.hostname = '';
      result.port = null;
      if (result.host) {
        if (srcPath[0] === '') srcPath[0] = result.host;
        else srcPath.unshift(result.host);
      }
      result.host = '';
      if (relative.protocol) {
        relative.hostname = null;
        relative.port = null;
        if (relative.host) {
          if (relPath[0] === '') relPath[0] = relative.host;
          else relPath.unshift(relative.host);
        }
        relative.host = null;
      }
      mustEndAbsolute = mustEndAbsolute && (relPath[0] === '' || srcPath[0] === '');
    }

    if (relativeAbsolute) {
      if (relative.host || relative.host === '') {
        if (result.host !== relative.host) result.auth = null;
        result.host = relative.host;
        result.port = relative.port;
      }
      if (relative.hostname || relative.hostname === '') {
        if (result.hostname !== relative.hostname) result.auth = null;
        result.hostname = relative.hostname;
      }
      result.search = relative.search;
      result.query = relative.query;
      srcPath = relPath;
    } else if (relPath.length) {
      // Relative path: replaces the last segment.
      srcPath.pop();
      srcPath = srcPath.concat(relPath);
      result.search = relative.search;
      result.query = relative.query;
    } else if (relative.search !== null && relative.search !== undefined) {
      // Only a query ('?x').
      if (noSlashes) hostBackFromPath(srcPath.shift());
      result.search = relative.search;
      result.query = relative.query;
      setPath();
      return finish();
    }

    if (!srcPath.length) {
      result.pathname = null;
      result.path = result.search ? '/' + result.search : null;
      return finish();
    }

    // A path ending in '.' or '..' (or '') keeps a trailing slash.
    let last = srcPath[srcPath.length - 1];
    const trailingSlash = Boolean(((result.host || relative.host || srcPath.length > 1) && (last === '.' || last === '..')) || last === '');
    // Drop '.', and '..' with the segment before it; count those above the root.
    let up = 0;
    for (let i = srcPath.length - 1; i >= 0; i--) {
      last = srcPath[i];
      if (last === '.') {
        srcPath.splice(i, 1);
      } else if (last === '..') {
        srcPath.splice(i, 1);
        up++;
      } else if (up) {
        srcPath.splice(i, 1);
        up--;
      }
    }
    if (!mustEndAbsolute && !removeAllDots) while (up--) srcPath.unshift('..');
    if (mustEndAbsolute && srcPath[0] !== '' && (!srcPath[0] || srcPath[0][0] !== '/')) srcPath.unshift('');
    if (trailingSlash && !srcPath.join('/').endsWith('/')) srcPath.push('');
    const isAbsolute = srcPath[0] === '' || Boolean(srcPath[0] && srcPath[0][0] === '/');
    if (noSlashes) hostBackFromPath(isAbsolute ? '' : srcPath.length ? srcPath.shift() : '');
    mustEndAbsolute = mustEndAbsolute || Boolean(result.host && srcPath.length);
    if (mustEndAbsolute && !isAbsolute) srcPath.unshift('');
    if (srcPath.length) {
      result.pathname = srcPath.join('/');
    } else {
      result.pathname = null;
      result.path = null;
    }
    setPath();
    result.auth = relative.auth || result.auth;
    result.slashes = result.slashes || relative.slashes;
    return finish();
  };

  // Splits host into hostname and port (digits after the last ':').
  Url.prototype.parseHost = function () {
    let host = this.host;
    const port = /:[0-9]*$/.exec(host);
    if (port) {
      if (port[0] !== ':') this.port = port[0].slice(1);
      host = host.slice(0, host.length - port[0].length);
    }
    if (host) this.hostname = host;
  };

  // A WHATWG URL's string without the parts options turn off (fragment,
  // search, auth; unicode would need IDNA, which settee lacks).
  function formatURL(u, options) {
    let fragment = true;
    let search = true;
    let auth = true;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw argType('options', 'of type object', options);
      if (options.fragment !== undefined) fragment = Boolean(options.fragment);
      if (options.search !== undefined) search = Boolean(options.search);
      if (options.auth !== undefined) auth = Boolean(options.auth);
    }
    let s = u.protocol;
    if (u._host !== null) {
      s += '//';
      if (auth && (u.username || u.password)) s += u.username + (u.password ? ':' + u.password : '') + '@';
      s += u.host;
    }
    s += u.pathname;
    if (search && u._query !== null) s += '?' + u._query;
    if (fragment && u._hash !== null) s += '#' + u._hash;
    return s;
  }

  function format(urlObject, options) {
    if (typeof urlObject === 'string') return parse(urlObject).format();
    if (urlObject === null || typeof urlObject !== 'object') throw argType('urlObject', 'one of type object or string', urlObject);
    if (urlObject instanceof URL) return formatURL(urlObject, options);
    return Url.prototype.format.call(urlObject);
  }

  return {
    Url,
    parse,
    format,
    resolve: (from, to) => parse(from, false, true).resolve(to),
    resolveObject: (from, to) => (from ? parse(from, false, true).resolveObject(to) : to),
  };
})();
