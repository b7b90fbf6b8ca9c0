// WHATWG URL and URLSearchParams in settee run: every line this prints is
// compared with what node 20 printed for the same code (the `expected` list).
'use strict';
const assert = require('assert');
const util = require('util');
const { check, done } = require('./lib/harness');

const got = [];
const log = (...args) => got.push(args.map((a) => (typeof a === 'string' ? a : util.inspect(a))).join(' '));

check('URL parsing, relative resolution, setters and searchParams match node', () => {
  const cases = [
    ['http://User:Pa ss@EXAMPLE.com:80/a/./b/../c?x=1 2&y=é#frag ment'],
    ['https://example.com:8443'],
    ['HTTPS://a.b/%7Efoo/'],
    ['http://a/b/c/d;p?q', undefined],
    ['g', 'http://a/b/c/d;p?q'], ['./g', 'http://a/b/c/d;p?q'], ['g/', 'http://a/b/c/d;p?q'],
    ['/g', 'http://a/b/c/d;p?q'], ['//g', 'http://a/b/c/d;p?q'], ['?y', 'http://a/b/c/d;p?q'],
    ['g?y', 'http://a/b/c/d;p?q'], ['#s', 'http://a/b/c/d;p?q'], ['..', 'http://a/b/c/d;p?q'],
    ['../../../g', 'http://a/b/c/d;p?q'], ['', 'http://a/b/c/d;p?q'], ['http:g', 'http://a/b/c/d;p?q'],
    ['file:///tmp/x y.txt'], ['file:/etc/hosts'], ['mailto:someone@example.com'],
    ['couchdb://admin:pw@host:5984/db'], ['http://[::1]:5984/_all_dbs'],
    ['http://127.0.0.1:5984/db/_design%2Ffoo?rev=1-abc&open_revs=["a"]'],
    ['http:\\\\a\\b\\c'], ['  http://a.com/ '], ['http://a.com:99999'], ['nope'], ['http://'],
    ['ws://x:80/'], ['data:text/plain,hello world'],
  ];
  for (const [input, base] of cases) {
    try {
      const u = base === undefined ? new URL(input) : new URL(input, base);
      log(JSON.stringify([input, base, u.href, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, u.origin]));
    } catch (e) { log(JSON.stringify([input, base, 'ERR', e.name, e.code])); }
  }
  const u = new URL('http://h/p?a=1&b=2&a=3');
  u.searchParams.append('c', 'x y');
  u.searchParams.set('a', '9');
  log(u.href, [...u.searchParams].join('|'), u.searchParams.getAll('a'), u.searchParams.has('b'), u.searchParams.size);
  u.searchParams.delete('b'); u.searchParams.sort(); log(u.href);
  u.search = '?q=é&z'; log(u.href, u.searchParams.get('q'), u.searchParams.get('z'));
  u.hash = 'h h'; u.pathname = '/x/../y z'; u.port = '8080'; log(u.href, String(u), JSON.stringify({u}));
  const sp = new URLSearchParams({a: '1', b: 'two words'}); log(sp.toString(), new URLSearchParams('?x=%zz&y=%E2%82%AC+1').get('y'), new URLSearchParams('x=%zz').get('x'), new URLSearchParams([['k', 'v']]).toString());
  log(URL.canParse('x'), URL.canParse('x', 'http://a'), require('url').URL === URL);
  const expected = [
    "[\"http://User:Pa ss@EXAMPLE.com:80/a/./b/../c?x=1 2&y=é#frag ment\",null,\"http://User:Pa%20ss@example.com/a/c?x=1%202&y=%C3%A9#frag%20ment\",\"http:\",\"User\",\"Pa%20ss\",\"example.com\",\"example.com\",\"\",\"/a/c\",\"?x=1%202&y=%C3%A9\",\"#frag%20ment\",\"http://example.com\"]",
    "[\"https://example.com:8443\",null,\"https://example.com:8443/\",\"https:\",\"\",\"\",\"example.com:8443\",\"example.com\",\"8443\",\"/\",\"\",\"\",\"https://example.com:8443\"]",
    "[\"HTTPS://a.b/%7Efoo/\",null,\"https://a.b/%7Efoo/\",\"https:\",\"\",\"\",\"a.b\",\"a.b\",\"\",\"/%7Efoo/\",\"\",\"\",\"https://a.b\"]",
    "[\"http://a/b/c/d;p?q\",null,\"http://a/b/c/d;p?q\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/d;p\",\"?q\",\"\",\"http://a\"]",
    "[\"g\",\"http://a/b/c/d;p?q\",\"http://a/b/c/g\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/g\",\"\",\"\",\"http://a\"]",
    "[\"./g\",\"http://a/b/c/d;p?q\",\"http://a/b/c/g\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/g\",\"\",\"\",\"http://a\"]",
    "[\"g/\",\"http://a/b/c/d;p?q\",\"http://a/b/c/g/\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/g/\",\"\",\"\",\"http://a\"]",
    "[\"/g\",\"http://a/b/c/d;p?q\",\"http://a/g\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/g\",\"\",\"\",\"http://a\"]",
    "[\"//g\",\"http://a/b/c/d;p?q\",\"http://g/\",\"http:\",\"\",\"\",\"g\",\"g\",\"\",\"/\",\"\",\"\",\"http://g\"]",
    "[\"?y\",\"http://a/b/c/d;p?q\",\"http://a/b/c/d;p?y\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/d;p\",\"?y\",\"\",\"http://a\"]",
    "[\"g?y\",\"http://a/b/c/d;p?q\",\"http://a/b/c/g?y\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/g\",\"?y\",\"\",\"http://a\"]",
    "[\"#s\",\"http://a/b/c/d;p?q\",\"http://a/b/c/d;p?q#s\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/d;p\",\"?q\",\"#s\",\"http://a\"]",
    "[\"..\",\"http://a/b/c/d;p?q\",\"http://a/b/\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/\",\"\",\"\",\"http://a\"]",
    "[\"../../../g\",\"http://a/b/c/d;p?q\",\"http://a/g\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/g\",\"\",\"\",\"http://a\"]",
    "[\"\",\"http://a/b/c/d;p?q\",\"http://a/b/c/d;p?q\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/d;p\",\"?q\",\"\",\"http://a\"]",
    "[\"http:g\",\"http://a/b/c/d;p?q\",\"http://a/b/c/g\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c/g\",\"\",\"\",\"http://a\"]",
    "[\"file:///tmp/x y.txt\",null,\"file:///tmp/x%20y.txt\",\"file:\",\"\",\"\",\"\",\"\",\"\",\"/tmp/x%20y.txt\",\"\",\"\",\"null\"]",
    "[\"file:/etc/hosts\",null,\"file:///etc/hosts\",\"file:\",\"\",\"\",\"\",\"\",\"\",\"/etc/hosts\",\"\",\"\",\"null\"]",
    "[\"mailto:someone@example.com\",null,\"mailto:someone@example.com\",\"mailto:\",\"\",\"\",\"\",\"\",\"\",\"someone@example.com\",\"\",\"\",\"null\"]",
    "[\"couchdb://admin:pw@host:5984/db\",null,\"couchdb://admin:pw@host:5984/db\",\"couchdb:\",\"admin\",\"pw\",\"host:5984\",\"host\",\"5984\",\"/db\",\"\",\"\",\"null\"]",
    "[\"http://[::1]:5984/_all_dbs\",null,\"http://[::1]:5984/_all_dbs\",\"http:\",\"\",\"\",\"[::1]:5984\",\"[::1]\",\"5984\",\"/_all_dbs\",\"\",\"\",\"http://[::1]:5984\"]",
    "[\"http://127.0.0.1:5984/db/_design%2Ffoo?rev=1-abc&open_revs=[\\\"a\\\"]\",null,\"http://127.0.0.1:5984/db/_design%2Ffoo?rev=1-abc&open_revs=[%22a%22]\",\"http:\",\"\",\"\",\"127.0.0.1:5984\",\"127.0.0.1\",\"5984\",\"/db/_design%2Ffoo\",\"?rev=1-abc&open_revs=[%22a%22]\",\"\",\"http://127.0.0.1:5984\"]",
    "[\"http:\\\\\\\\a\\\\b\\\\c\",null,\"http://a/b/c\",\"http:\",\"\",\"\",\"a\",\"a\",\"\",\"/b/c\",\"\",\"\",\"http://a\"]",
    "[\"  http://a.com/ \",null,\"http://a.com/\",\"http:\",\"\",\"\",\"a.com\",\"a.com\",\"\",\"/\",\"\",\"\",\"http://a.com\"]",
    "[\"http://a.com:99999\",null,\"ERR\",\"TypeError\",\"ERR_INVALID_URL\"]",
    "[\"nope\",null,\"ERR\",\"TypeError\",\"ERR_INVALID_URL\"]",
    "[\"http://\",null,\"ERR\",\"TypeError\",\"ERR_INVALID_URL\"]",
    "[\"ws://x:80/\",null,\"ws://x/\",\"ws:\",\"\",\"\",\"x\",\"x\",\"\",\"/\",\"\",\"\",\"ws://x\"]",
    "[\"data:text/plain,hello world\",null,\"data:text/plain,hello world\",\"data:\",\"\",\"\",\"\",\"\",\"\",\"text/plain,hello world\",\"\",\"\",\"null\"]",
    "http://h/p?a=9&b=2&c=x+y a,9|b,2|c,x y [ '9' ] true 3",
    "http://h/p?a=9&c=x+y",
    "http://h/p?q=%C3%A9&z é ",
    "http://h:8080/y%20z?q=%C3%A9&z#h%20h http://h:8080/y%20z?q=%C3%A9&z#h%20h {\"u\":\"http://h:8080/y%20z?q=%C3%A9&z#h%20h\"}",
    "a=1&b=two+words € 1 %zz k=v",
    "false true true"
  ];
  assert.strictEqual(got.length, expected.length);
  for (let i = 0; i < expected.length; i++) assert.strictEqual(got[i], expected[i], 'line ' + (i + 1));
});

done();
