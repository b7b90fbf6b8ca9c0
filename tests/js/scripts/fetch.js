// fetch(), Headers, Request and Response in settee run, against the
// CouchDB-compatible server whose URL is the first argument
// (`settee run fetch.js http://127.0.0.1:PORT`); runs unchanged in node.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const base = process.argv[2];
if (!base) throw new Error('usage: fetch.js SERVER_URL');
const db = base + '/fetch_test_' + process.pid + '_' + (typeof settee === 'object' ? settee.threadId : 0);

check('JSON requests: status, headers, bodies and errors', async () => {
  const hello = await fetch(base + '/');
  assert.strictEqual(hello.status, 200);
  assert.ok(hello.ok);
  assert.strictEqual(hello.statusText, 'OK');
  assert.match(hello.headers.get('Content-Type'), /application\/json/);
  assert.strictEqual((await hello.json()).couchdb, 'Welcome');
  assert.strictEqual(hello.bodyUsed, true);
  await assert.rejects(hello.text(), TypeError);
  const created = await fetch(db, { method: 'PUT' });
  assert.strictEqual(created.status, 201);
  const post = await fetch(db, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _id: 'a', n: 1 }),
  });
  assert.strictEqual(post.status, 201);
  const { rev } = await post.json();
  const got = await fetch(db + '/a');
  assert.strictEqual(got.headers.get('etag'), '"' + rev + '"');
  assert.deepStrictEqual(await got.json(), { _id: 'a', _rev: rev, n: 1 });
  const missing = await fetch(db + '/nope');
  assert.strictEqual(missing.status, 404);
  assert.strictEqual(missing.ok, false);
  assert.strictEqual((await missing.json()).error, 'not_found');
  const head = await fetch(db + '/a', { method: 'HEAD' });
  assert.strictEqual(head.status, 200);
  assert.strictEqual(await head.text(), '');
  const conflict = await fetch(new Request(db + '/a', { method: 'put', body: '{"n":2}', headers: [['Content-Type', 'application/json']] }));
  assert.strictEqual(conflict.status, 409);
  const form = await fetch(db + '/_all_docs?' + new URLSearchParams({ include_docs: 'true', key: '"a"' }));
  assert.strictEqual((await form.json()).rows[0].doc.n, 1);
});

check('binary bodies with every byte value, and concurrent fetches', async () => {
  const bytes = new Uint8Array(256 * 4);
  for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
  const put = await fetch(db + '/bin/data.bin', { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
  assert.strictEqual(put.status, 201);
  const back = await fetch(db + '/bin/data.bin');
  assert.strictEqual(back.headers.get('content-type'), 'application/octet-stream');
  assert.deepStrictEqual(new Uint8Array(await back.arrayBuffer()), bytes);
  const many = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    fetch(db + '/c' + i, { method: 'PUT', body: JSON.stringify({ i }) }).then((r) => r.status)));
  assert.deepStrictEqual(many, Array(20).fill(201));
  const all = await (await fetch(db + '/_all_docs')).json();
  assert.strictEqual(all.total_rows, 22);
});

check('abort, network failures and bad input', async () => {
  // A long poll that would wait a minute, aborted after 50 ms.
  const ac = new AbortController();
  const started = Date.now();
  const poll = fetch(db + '/_changes?feed=longpoll&since=now&timeout=60000', { signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(poll, { name: 'AbortError' });
  assert.ok(Date.now() - started < 30000);
  await assert.rejects(fetch(db, { signal: AbortSignal.abort() }), { name: 'AbortError' });
  // Nothing listens on port 1.
  await assert.rejects(fetch('http://127.0.0.1:1/'), (e) => e instanceof TypeError && e.message === 'fetch failed' && e.cause instanceof Error);
  await assert.rejects(fetch('not a url'), TypeError);
  await assert.rejects(fetch(db, { method: 'GET', body: 'x' }), TypeError);
  assert.throws(() => new Headers({ 'bad name': 'x' }), TypeError);
});

check('Headers, Request and Response on their own', async () => {
  const h = new Headers([['Accept', 'a'], ['accept', 'b'], ['Set-Cookie', 'x=1'], ['set-cookie', 'y=2']]);
  assert.strictEqual(h.get('ACCEPT'), 'a, b');
  assert.deepStrictEqual(h.getSetCookie(), ['x=1', 'y=2']);
  assert.deepStrictEqual([...h], [['accept', 'a, b'], ['set-cookie', 'x=1'], ['set-cookie', 'y=2']]);
  h.delete('accept');
  assert.strictEqual(h.has('Accept'), false);
  const r = Response.json({ a: 1 }, { status: 202, headers: { 'x-y': 'z' } });
  assert.strictEqual(r.status, 202);
  assert.strictEqual(r.headers.get('content-type'), 'application/json');
  const copy = r.clone();
  assert.deepStrictEqual(await r.json(), { a: 1 });
  assert.strictEqual(await copy.text(), '{"a":1}');
  assert.strictEqual(new Response('hi').headers.get('content-type'), 'text/plain;charset=UTF-8');
  assert.strictEqual(Response.redirect('http://x/', 301).headers.get('location'), 'http://x/');
  assert.throws(() => new Response('x', { status: 99 }), RangeError);
  const req = new Request('http://example.com/a?b', { method: 'post', body: new URLSearchParams({ q: '1 2' }) });
  assert.strictEqual(req.method, 'POST');
  assert.strictEqual(new Request('http://example.com/', { method: 'patch' }).method, 'patch');
  assert.strictEqual(req.headers.get('content-type'), 'application/x-www-form-urlencoded;charset=UTF-8');
  assert.strictEqual(await req.text(), 'q=1+2');
  await fetch(db, { method: 'DELETE' });
});

done();
