// settee's own replicator (POST /_replicate) judged by PouchDB 9: PouchDB in
// node writes a database with conflicts, deletions, a long history, a
// design doc and a _local doc into settee; settee replicates it locally, over
// HTTP to itself, continuously, and to and from pouchdb-server 4.2 (when
// bench/http has it installed); PouchDB pulls every copy back and compares
// it with its own, doc by doc and rev tree by rev tree.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const PouchDB = require('./pouch');
const { startSettee } = require('./settee_server');

let server;
let origin;  // the local PouchDB everything is compared with
let n = 0;
const local = () => new PouchDB(`cmp-${++n}-${Date.now()}`, { adapter: 'memory' });

async function replicate(body) {
  const res = await fetch(`${server.url}/_replicate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

// Every document (deleted ones too) with each leaf's body and history.
async function trees(db) {
  const changes = await db.changes({ style: 'all_docs' });
  const out = {};
  for (const row of changes.results) {
    const leaves = await db.get(row.id, { open_revs: 'all', revs: true });
    out[row.id] = leaves.map((l) => l.ok).sort((a, b) => (a._rev < b._rev ? -1 : 1));
  }
  return out;
}

async function assertSameAsOrigin(url) {
  const copy = local();
  await PouchDB.replicate(new PouchDB(url), copy);
  assert.deepEqual(await trees(copy), await trees(origin));
  await assert.rejects(new PouchDB(url).get('_local/private'), (e) => e.status === 404);
}

before(async () => {
  server = await startSettee();
  origin = local();
  const docs = [];
  for (let i = 0; i < 200; i++) docs.push({ _id: `doc${String(i).padStart(3, '0')}`, i });
  await origin.bulkDocs(docs);
  let d = await origin.get('doc001');
  for (let i = 0; i < 30; i++) d = { ...d, _rev: (await origin.put({ ...d, step: i })).rev };
  await origin.remove(await origin.get('doc002'));
  await origin.bulkDocs([{ _id: 'doc003', _rev: '1-aaaa', side: 'x' },
                         { _id: 'doc003', _rev: '1-bbbb', side: 'y' }], { new_edits: false });
  await origin.put({ _id: '_design/app', views: { v: { map: 'function (d) { emit(d.i); }' } } });
  await origin.put({ _id: '_local/private', secret: true });
  await origin.replicate.to(new PouchDB(`${server.url}/origin`));
});
after(async () => { await server.stop(); });

test('POST /_replicate local to local keeps every rev tree', async () => {
  const r = await replicate({ source: 'origin', target: 'copy-local', create_target: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.ok, true);
  // 200 docs, the design doc and doc003's two extra branches.
  assert.equal(r.body.history[0].docs_written, 203);
  await assertSameAsOrigin(`${server.url}/copy-local`);
});

test('POST /_replicate over HTTP (to itself) keeps every rev tree', async () => {
  const r = await replicate({ source: `${server.url}/origin`, target: `${server.url}/copy-http`,
                              create_target: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await assertSameAsOrigin(`${server.url}/copy-http`);
  // A second run finds the checkpoint and has nothing to do.
  const again = await replicate({ source: `${server.url}/origin`, target: `${server.url}/copy-http` });
  assert.equal(again.status, 200);
  assert.equal(again.body.no_changes, true);
});

test('continuous _replicate delivers a PouchDB write within a second', async () => {
  const source = new PouchDB(`${server.url}/live-src`);
  await source.put({ _id: 'first' });
  const r = await replicate({ source: 'live-src', target: 'copy-live', create_target: true,
                              continuous: true });
  assert.equal(r.status, 202);
  const target = new PouchDB(`${server.url}/copy-live`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await source.put({ _id: 'live-write' });
  const start = Date.now();
  let found = false;
  while (!found && Date.now() - start < 1000) {
    found = await target.get('live-write').then(() => true, () => false);
  }
  assert.ok(found, 'not delivered within a second');
  const cancel = await replicate({ replication_id: r.body._local_id, cancel: true });
  assert.equal(cancel.status, 200);
});

test('filtered _replicate: a design-doc filter with query_params, a selector', async () => {
  const src = new PouchDB(`${server.url}/filter-src`);
  await src.put({ _id: '_design/app', filters: {
    by_kind: 'function (doc, req) { return doc.kind === req.query.kind; }' } });
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push({ _id: `f${String(i).padStart(2, '0')}`, kind: i % 3 ? 'b' : 'a' });
  await src.bulkDocs(docs);
  // Local to local, with the server's JS view runtime, and over HTTP.
  for (const source of ['filter-src', `${server.url}/filter-src`]) {
    const target = `filtered-${source.length}`;
    const r = await replicate({ source, target, create_target: true, filter: 'app/by_kind',
                                query_params: { kind: 'a' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.history[0].docs_written, 10);
    const ids = (await new PouchDB(`${server.url}/${target}`).allDocs()).rows.map((row) => row.id);
    assert.deepEqual(ids, docs.filter((d) => d.kind === 'a').map((d) => d._id));
  }
  const r = await replicate({ source: 'filter-src', target: 'selected-local', create_target: true,
                              selector: { kind: 'b' } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.history[0].docs_written, 20);
  // PouchDB 9 pulling from settee with the same design-doc filter agrees.
  const copy = local();
  await PouchDB.replicate(src, copy, { filter: 'app/by_kind', query_params: { kind: 'a' } });
  assert.equal((await copy.allDocs()).rows.length, 10);
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// pouchdb-server on a free port, answering. The port is free when asked but
// another process may take it before the server binds: then the server
// exits, and it starts again on another.
async function startPouchdbServer(bin, cwd) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(bin, ['--in-memory', '--port', String(port)], { cwd, stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => { exited = true; });
    const peer = `http://127.0.0.1:${port}`;
    // Its first start loads ~350 packages: slow on a loaded machine.
    const deadline = Date.now() + 60000;
    while (!exited && Date.now() < deadline) {
      // Its own welcome, not another process's that took the port.
      const welcome = await fetch(peer).then((r) => (r.ok ? r.json() : null), () => null);
      if (!exited && welcome && welcome['express-pouchdb']) return { child, peer };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGKILL');
  }
  throw new Error('pouchdb-server did not start answering (3 attempts)');
}

test('settee replicates to and from pouchdb-server 4.2', async (t) => {
  const bin = path.resolve(__dirname, '../../bench/http/node_modules/.bin/pouchdb-server');
  if (!fs.existsSync(bin)) {
    t.skip('pouchdb-server not installed (cd bench/http && npm ci)');
    return;
  }
  const cwd = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'pouchdb-server-'));
  const { child, peer } = await startPouchdbServer(bin, cwd);
  try {
    let r = await replicate({ source: 'origin', target: `${peer}/fromsettee`, create_target: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await assertSameAsOrigin(`${peer}/fromsettee`);
    r = await replicate({ source: `${peer}/fromsettee`, target: 'roundtrip', create_target: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await assertSameAsOrigin(`${server.url}/roundtrip`);
    // pouchdb-server keeps MVCC on _local docs: the second run must update
    // the checkpoint there, and find nothing to do.
    r = await replicate({ source: 'origin', target: `${peer}/fromsettee` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.no_changes, true);
    // atts_since: an edit that keeps a 256 KiB attachment goes to
    // pouchdb-server with the attachment as a stub, which it accepts under
    // new_edits=false; the body there stays the same bytes.
    const src = new PouchDB(`${server.url}/atts-src`);
    const bytes = Buffer.alloc(256 * 1024, 0);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) >> 3;
    await src.putAttachment('doc', 'big.bin', bytes, 'application/octet-stream');
    r = await replicate({ source: 'atts-src', target: `${peer}/atts`, create_target: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const doc = await src.get('doc');
    await src.put({ ...doc, edited: true });
    r = await replicate({ source: 'atts-src', target: `${peer}/atts` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.history[0].doc_write_failures, 0);
    const remote = new PouchDB(`${peer}/atts`);
    assert.equal((await remote.get('doc')).edited, true);
    assert.ok(Buffer.compare(await remote.getAttachment('doc', 'big.bin'), bytes) === 0);
    // A selector-filtered replication to pouchdb-server.
    r = await replicate({ source: 'origin', target: `${peer}/selected`, create_target: true,
                          selector: { i: { $lt: 10 } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const selected = await new PouchDB(`${peer}/selected`).allDocs();
    assert.equal(selected.rows.length, 9);  // doc000..doc009 less the deleted doc002
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});
