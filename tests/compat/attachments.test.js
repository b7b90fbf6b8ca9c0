// Attachments with the PouchDB 9 HTTP client: putAttachment / getAttachment
// / removeAttachment with binary bodies, get with attachments (base64 and
// binary), replication of documents with attachments both ways, and a
// 64 MiB body through HTTP with the server's peak memory measured.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const PouchDB = require('./pouch');
const { startSettee } = require('./settee_server');

let server;
let n = 0;
const allBytes = Buffer.from(Array.from({ length: 2048 }, (_, i) => i % 256));

function remoteDb() {
  n += 1;
  return new PouchDB(`${server.url}/atts-${n}`);
}

before(async () => { server = await startSettee(); });
after(async () => { await server.stop(); });

test('putAttachment, getAttachment, removeAttachment with every byte value', async () => {
  const db = remoteDb();
  const r = await db.putAttachment('doc', 'dir/all ü.bin', allBytes, 'application/octet-stream');
  assert.equal(r.ok, true);
  const body = await db.getAttachment('doc', 'dir/all ü.bin');
  assert.ok(Buffer.isBuffer(body));
  assert.ok(body.equals(allBytes));
  const doc = await db.get('doc');
  const stub = doc._attachments['dir/all ü.bin'];
  assert.equal(stub.stub, true);
  assert.equal(stub.length, allBytes.length);
  assert.equal(stub.digest, 'md5-' + crypto.createHash('md5').update(allBytes).digest('base64'));
  const r2 = await db.putAttachment('doc', 'text.txt', r.rev, Buffer.from('hello text'), 'text/plain');
  assert.equal((await db.getAttachment('doc', 'text.txt')).toString(), 'hello text');
  const r3 = await db.removeAttachment('doc', 'dir/all ü.bin', r2.rev);
  assert.match(r3.rev, /^3-/);
  await assert.rejects(db.getAttachment('doc', 'dir/all ü.bin'), (e) => e.status === 404);
  await assert.rejects(db.putAttachment('doc', 'x', r.rev, allBytes, 'a/b'), (e) => e.status === 409);
});

test('get with attachments as base64 and as binary', async () => {
  const db = remoteDb();
  await db.put({ _id: 'inline', _attachments: { a: { content_type: 'application/octet-stream', data: allBytes.toString('base64') } } });
  const b64 = await db.get('inline', { attachments: true });
  assert.equal(b64._attachments.a.data, allBytes.toString('base64'));
  const bin = await db.get('inline', { attachments: true, binary: true });
  assert.ok(bin._attachments.a.data.equals(allBytes));
  await assert.rejects(
    db.put({ _id: 'bad', _attachments: { a: { content_type: 'text/plain', data: 'not base64!' } } }),
    (e) => e.status === 400);
});

test('replication carries attachments both ways', async () => {
  const local = new PouchDB(`local-atts-${Date.now()}`, { adapter: 'memory' });
  const remote = remoteDb();
  const docs = [];
  for (let i = 0; i < 20; i++) {
    const data = Buffer.concat([allBytes, Buffer.from(String(i))]);
    docs.push({ _id: `d${i}`, i, _attachments: { 'a.bin': { content_type: 'application/octet-stream', data } } });
  }
  docs.push({ _id: 'shared1', _attachments: { s: { content_type: 'text/plain', data: Buffer.from('same text') } } });
  docs.push({ _id: 'shared2', _attachments: { s: { content_type: 'text/plain', data: Buffer.from('same text') } } });
  await local.bulkDocs(docs);
  const pushed = await local.replicate.to(remote);
  assert.equal(pushed.doc_write_failures, 0);
  assert.equal(pushed.docs_written, docs.length);
  for (let i = 0; i < 20; i += 7) {
    const got = await remote.getAttachment(`d${i}`, 'a.bin');
    assert.ok(got.equals(Buffer.concat([allBytes, Buffer.from(String(i))])));
  }
  assert.equal((await remote.getAttachment('shared2', 's')).toString(), 'same text');

  // Edits on the server side, pulled into a fresh local database.
  const d3 = await remote.get('d3');
  await remote.putAttachment('d3', 'new.bin', d3._rev, allBytes.subarray(0, 100), 'application/octet-stream');
  const fresh = new PouchDB(`local-atts-pull-${Date.now()}`, { adapter: 'memory' });
  const pulled = await fresh.replicate.from(remote);
  assert.equal(pulled.doc_write_failures, 0);
  assert.equal(pulled.docs_written, docs.length);
  const back = await fresh.get('d3', { attachments: true, binary: true });
  assert.ok(back._attachments['a.bin'].data.equals(Buffer.concat([allBytes, Buffer.from('3')])));
  assert.ok(back._attachments['new.bin'].data.equals(allBytes.subarray(0, 100)));
});

function peakRssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]);
}

test('a 64 MiB attachment round trip adds under 3x its size to peak RSS', async () => {
  const size = 64 << 20;
  const data = crypto.randomBytes(size);
  const url = `${server.url}/atts-big`;
  assert.equal((await fetch(url, { method: 'PUT' })).status, 201);
  const before = peakRssKiB(server.pid);
  const put = await fetch(`${url}/big/blob`, {
    method: 'PUT', body: data, headers: { 'Content-Type': 'application/octet-stream' },
  });
  assert.equal(put.status, 201, await put.text());
  const res = await fetch(`${url}/big/blob`);
  assert.equal(res.status, 200);
  const hash = crypto.createHash('md5');
  let length = 0;
  for await (const piece of res.body) {
    hash.update(piece);
    length += piece.length;
  }
  assert.equal(length, size);
  assert.equal(hash.digest('base64'), crypto.createHash('md5').update(data).digest('base64'));
  const added = (peakRssKiB(server.pid) - before) * 1024;
  // On the memory backend the stored copy is part of the process too.
  const stored = (process.env.SETTEE_BACKEND || 'memory') === 'memory' ? size : 0;
  console.log(`# 64 MiB round trip: peak RSS +${(added / size).toFixed(2)}x the body` +
              (stored ? ' (the memory backend holds one copy)' : ''));
  assert.ok(added < 3 * size + stored, `peak RSS grew by ${added} bytes`);
});
