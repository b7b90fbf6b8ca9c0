// Attachments through the PouchDB-compatible JS API: putAttachment /
// getAttachment / removeAttachment, bodies as Buffer, Uint8Array or base64,
// get with attachments (base64 and binary), bulkDocs and bulkGet with
// attachments, and PouchDB-shaped errors. Run by `settee run`.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const dbName = 'atts_' + settee.threadId;
const allBytes = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));

check('putAttachment / getAttachment round trip every byte value', async () => {
  const db = new PouchDB(dbName);
  const r = await db.putAttachment('doc', 'all.bin', allBytes, 'application/octet-stream');
  assert.strictEqual(r.ok, true);
  assert.match(r.rev, /^1-[0-9a-f]{32}$/);
  const body = await db.getAttachment('doc', 'all.bin');
  assert.ok(Buffer.isBuffer(body));
  assert.ok(body.equals(allBytes));
  assert.strictEqual(body.type, 'application/octet-stream');  // as PouchDB's Buffer has it
  const doc = await db.get('doc');
  const stub = doc._attachments['all.bin'];
  assert.strictEqual(stub.stub, true);
  assert.strictEqual(stub.length, 1024);
  assert.strictEqual(stub.revpos, 1);
  assert.strictEqual(stub.content_type, 'application/octet-stream');
  assert.match(stub.digest, /^md5-[A-Za-z0-9+/]{22}==$/);
  // With the rev, a Uint8Array, then a base64 string.
  const r2 = await db.putAttachment('doc', 'u8', r.rev, new Uint8Array([0, 255, 7]), 'x/y');
  const r3 = await db.putAttachment('doc', 'b64', r2.rev, Buffer.from('hello').toString('base64'), 'text/plain');
  assert.deepStrictEqual([...await db.getAttachment('doc', 'u8')], [0, 255, 7]);
  assert.strictEqual((await db.getAttachment('doc', 'b64')).toString(), 'hello');
  // The old revision still has its attachments only.
  const old = await db.getAttachment('doc', 'all.bin', { rev: r.rev });
  assert.ok(old.equals(allBytes));
  const removed = await db.removeAttachment('doc', 'u8', r3.rev);
  assert.match(removed.rev, /^4-/);
  const after = await db.get('doc');
  assert.deepStrictEqual(Object.keys(after._attachments).sort(), ['all.bin', 'b64']);
});

check('get with attachments: base64 and binary', async () => {
  const db = new PouchDB(dbName);
  await db.put({ _id: 'inline', _attachments: { a: { content_type: 'application/octet-stream', data: allBytes } } });
  const b64 = await db.get('inline', { attachments: true });
  assert.strictEqual(b64._attachments.a.data, allBytes.toString('base64'));
  assert.strictEqual(b64._attachments.a.stub, undefined);
  const bin = await db.get('inline', { attachments: true, binary: true });
  assert.ok(Buffer.isBuffer(bin._attachments.a.data));
  assert.ok(bin._attachments.a.data.equals(allBytes));
  assert.strictEqual(bin._attachments.a.content_type, 'application/octet-stream');
  // An edit keeping the stub, read back through bulkGet with attachments.
  const cur = await db.get('inline');
  cur.v = 2;
  await db.put(cur);
  const got = await db.bulkGet({ docs: [{ id: 'inline' }], attachments: true });
  const doc = got.results[0].docs[0].ok;
  assert.strictEqual(doc.v, 2);
  assert.strictEqual(doc._attachments.a.data, allBytes.toString('base64'));
  assert.strictEqual(doc._attachments.a.revpos, 1);
});

check('get with many attachments: separate bodies, every size, atts_since, encoding info', async () => {
  const db = new PouchDB(dbName);
  const atts = {};
  const bodies = {};
  // Sizes around base64's groups of 3, empty, and one over a 256 KiB chunk.
  const sizes = [0, 1, 2, 3, 4, 5, 100, 50000, 300001];
  sizes.forEach((n, i) => {
    bodies['a' + i] = Buffer.from(Array.from({ length: n }, (_, k) => (k * 7 + i) % 256));
    atts['a' + i] = { content_type: 'application/octet-stream', data: bodies['a' + i] };
  });
  const text = 'compressible '.repeat(5000);
  atts['t.txt'] = { content_type: 'text/plain', data: Buffer.from(text) };
  const r1 = await db.put({ _id: 'many', n: 1, _attachments: atts });
  const bin = await db.get('many', { attachments: true, binary: true });
  assert.strictEqual(bin.n, 1);
  assert.strictEqual(bin._rev, r1.rev);
  assert.deepStrictEqual(Object.keys(bin._attachments), Object.keys(atts));
  for (const name of Object.keys(bodies)) {
    const a = bin._attachments[name];
    assert.ok(Buffer.isBuffer(a.data), name);
    assert.ok(a.data.equals(bodies[name]), name);
    assert.strictEqual(a.stub, undefined);
    assert.strictEqual(a.revpos, 1);
  }
  assert.strictEqual(bin._attachments['t.txt'].data.toString(), text);
  // Writing into one returned body changes neither its neighbours nor the store.
  bin._attachments.a6.data.fill(0);
  assert.ok(bin._attachments.a7.data.equals(bodies.a7));
  const again = await db.get('many', { attachments: true, binary: true });
  assert.ok(again._attachments.a6.data.equals(bodies.a6));
  const b64 = await db.get('many', { attachments: true });
  for (const name of Object.keys(bodies)) {
    assert.strictEqual(b64._attachments[name].data, bodies[name].toString('base64'), name);
  }
  assert.strictEqual(b64._attachments['t.txt'].data, Buffer.from(text).toString('base64'));
  // A new revision: atts_since leaves the older bodies as stubs.
  const r2 = await db.put(Object.assign({}, bin, { _attachments: {
    a0: { stub: true }, 'new.bin': { content_type: 'application/octet-stream', data: Buffer.from('new') } } }));
  const since = await db.get('many', { attachments: true, atts_since: [r1.rev] });
  assert.strictEqual(since._rev, r2.rev);
  assert.strictEqual(since._attachments.a0.stub, true);
  assert.strictEqual(since._attachments.a0.length, 0);
  assert.strictEqual(since._attachments['new.bin'].data, Buffer.from('new').toString('base64'));
  const info = await db.get('many', { attachments: true, binary: true, att_encoding_info: true, rev: r1.rev });
  assert.strictEqual(info._attachments['t.txt'].encoding, 'gzip');
  assert.ok(info._attachments['t.txt'].encoded_length < text.length);
  assert.strictEqual(info._attachments['t.txt'].data.toString(), text);
  assert.strictEqual(info._attachments.a1.encoding, undefined);
});

check('attachment names that are indices or Object.prototype members are own properties', async () => {
  const db = new PouchDB(dbName + '_names');
  const names = ['z', '10', '2', 'constructor', 'toString', 'hasOwnProperty'];
  const atts = {};
  names.forEach((n, i) => { atts[n] = { content_type: 'application/octet-stream', data: Buffer.from([i]) }; });
  await db.put({ _id: 'names', _attachments: atts });
  for (const binary of [false, true]) {
    const got = (await db.get('names', { attachments: true, binary }))._attachments;
    // In a plain object's order (indices first, ascending, then as inserted).
    assert.deepStrictEqual(Object.keys(got), Object.keys(atts));
    assert.strictEqual(Object.getPrototypeOf(got), Object.prototype);
    for (const [i, n] of names.entries()) {
      assert.ok(Object.prototype.hasOwnProperty.call(got, n), n);
      const data = got[n].data;
      assert.deepStrictEqual([...(binary ? data : Buffer.from(data, 'base64'))], [i], n);
      assert.strictEqual(got[n].revpos, 1);
    }
  }
});

check('allDocs and changes with include_docs carry attachment bodies', async () => {
  const db = new PouchDB(dbName + '_ad');
  await db.put({ _id: 'x', _attachments: { a: { content_type: 'application/octet-stream', data: allBytes } } });
  const all = await db.allDocs({ include_docs: true, attachments: true });
  assert.strictEqual(all.rows[0].doc._attachments.a.data, allBytes.toString('base64'));
  const bin = await db.allDocs({ include_docs: true, attachments: true, binary: true, keys: ['x'] });
  assert.ok(Buffer.isBuffer(bin.rows[0].doc._attachments.a.data));
  assert.ok(bin.rows[0].doc._attachments.a.data.equals(allBytes));
  const stubs = await db.allDocs({ include_docs: true });
  assert.strictEqual(stubs.rows[0].doc._attachments.a.stub, true);
  const ch = await db.changes({ include_docs: true, attachments: true, binary: true });
  assert.ok(ch.results[0].doc._attachments.a.data.equals(allBytes));
  const local = await db.putAttachment('_local/l', 'a', Buffer.from('x'), 'text/plain').then(() => null, (e) => e);
  assert.strictEqual(local.status, 400);
  await db.destroy();
});

check('bulkDocs takes Buffers and base64; bad data refuses the batch', async () => {
  const db = new PouchDB(dbName);
  const bad = await db.bulkDocs([
    { _id: 'b0', _attachments: { x: { content_type: 'text/plain', data: Buffer.from('zero') } } },
    { _id: 'b3', _attachments: { x: { content_type: 'text/plain', data: 'not base64!' } } },
  ]).then(() => null, (e) => e);
  assert.strictEqual(bad.status, 400);
  assert.strictEqual(bad.name, 'bad_request');
  assert.strictEqual((await db.get('b0').then(() => null, (e) => e)).status, 404);
  const res = await db.bulkDocs([
    { _id: 'b1', _attachments: { x: { content_type: 'text/plain', data: Buffer.from('one') } } },
    { _id: 'b2', _attachments: { x: { content_type: 'text/plain', data: 'dHdv' } } },
  ]);
  assert.strictEqual(res[0].ok, true);
  assert.strictEqual(res[1].ok, true);
  assert.strictEqual((await db.getAttachment('b1', 'x')).toString(), 'one');
  assert.strictEqual((await db.getAttachment('b2', 'x')).toString(), 'two');
});

check('errors are PouchDB-shaped', async () => {
  const db = new PouchDB(dbName);
  const missing = await db.getAttachment('nodoc', 'x').then(() => null, (e) => e);
  assert.strictEqual(missing.status, 404);
  const r = await db.putAttachment('errs', 'a', Buffer.from('1'), 'text/plain');
  const conflict = await db.putAttachment('errs', 'b', Buffer.from('2'), 'text/plain').then(() => null, (e) => e);
  assert.strictEqual(conflict.status, 409);
  const stale = await db.removeAttachment('errs', 'a', '1-00000000000000000000000000000000').then(() => null, (e) => e);
  assert.strictEqual(stale.status, 409);
  const noAtt = await db.getAttachment('errs', 'zz').then(() => null, (e) => e);
  assert.strictEqual(noAtt.status, 404);
  assert.strictEqual(noAtt.message, 'missing');  // PouchDB's message
  // A deleted document takes no attachment, with or without its rev (PouchDB's 404).
  const gone = await db.put({ _id: 'gone', v: 1 });
  const del = await db.remove('gone', gone.rev);
  await assert.rejects(db.putAttachment('gone', 'a', del.rev, Buffer.from('x'), 'text/plain'),
    { status: 404, name: 'not_found', reason: 'deleted' });
  await assert.rejects(db.putAttachment('gone', 'a', Buffer.from('x'), 'text/plain'), { status: 404, reason: 'deleted' });
  assert.deepStrictEqual((await db.get('gone', { revs: true, rev: del.rev }))._revisions.start, 2);
  // Removing an attachment the document does not have writes a new
  // revision anyway, as PouchDB does; a stale rev is still a conflict.
  const cur = await db.putAttachment('errs2', 'a', Buffer.from('1'), 'text/plain');
  const same = await db.removeAttachment('errs2', 'never-there', cur.rev);
  assert.match(same.rev, /^2-/);
  assert.deepStrictEqual(Object.keys((await db.get('errs2'))._attachments), ['a']);
  await assert.rejects(db.removeAttachment('errs2', 'never-there', cur.rev), { status: 409 });
  // A document with no attachments at all: nothing written, undefined (as
  // pouchdb-core); a rev that is not a string is a conflict, a missing
  // document still 404.
  const plain = await db.put({ _id: 'plain' });
  assert.strictEqual(await db.removeAttachment('plain', 'a', plain.rev), undefined);
  assert.strictEqual((await db.get('plain'))._rev, plain.rev);
  await assert.rejects(db.removeAttachment('errs2', 'a', undefined), { status: 409 });
  await assert.rejects(db.removeAttachment('no-such-doc', 'a', undefined), { status: 404 });
  const stub = await db.put({ _id: 'errs', _rev: r.rev, _attachments: { q: { stub: true } } }).then(() => null, (e) => e);
  assert.strictEqual(stub.status, 412);
  assert.strictEqual(stub.name, 'missing_stub');
});

done();
