// PouchDB's http adapter in settee's JS runtime (js/prelude/http_adapter.js
// over js/bindings_http.cc): `new PouchDB(url)` against a CouchDB-compatible
// server given as the first argument (a `settee serve`, started by
// tests/replication/remote_pouchdb_test.cc), and replication to and from it
// through settee's replicator. Run by `settee run script.js URL`.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const server = process.argv[2].replace(/\/$/, '');
const tag = 'h' + settee.threadId + '_' + Date.now() + '_';

check('PouchDB.adapters.http exists and a URL makes a remote database', async () => {
  assert.ok(PouchDB.adapters && PouchDB.adapters.http);
  const db = new PouchDB(server + '/' + tag + 'a');
  assert.ok(db instanceof PouchDB);
  assert.strictEqual(db.adapter, 'http');
  const info = await db.info();  // created on first use
  assert.strictEqual(info.db_name, tag + 'a');
  assert.strictEqual(info.doc_count, 0);
  await db.destroy();
});

check('put, post, get, remove, conflicts and errors', async () => {
  const db = new PouchDB(server + '/' + tag + 'b');
  const r1 = await db.put({ _id: 'x/y z', n: 1 });
  assert.strictEqual(r1.ok, true);
  assert.strictEqual(r1.id, 'x/y z');
  const doc = await db.get('x/y z');
  assert.strictEqual(doc.n, 1);
  assert.strictEqual(doc._rev, r1.rev);
  await assert.rejects(db.put({ _id: 'x/y z', n: 2 }), (e) => e.status === 409 && e.name === 'conflict');
  const r2 = await db.put({ _id: 'x/y z', _rev: r1.rev, n: 2 });
  const withRevs = await db.get('x/y z', { revs: true, open_revs: 'all' });
  assert.strictEqual(withRevs.length, 1);
  assert.strictEqual(withRevs[0].ok._revisions.start, 2);
  const posted = await db.post({ p: true });
  assert.ok(posted.id.length > 0);
  assert.strictEqual((await db.get(posted.id)).p, true);
  const removed = await db.remove('x/y z', r2.rev);
  assert.strictEqual(removed.ok, true);
  await assert.rejects(db.get('x/y z'), (e) => e.status === 404 && e.name === 'not_found');
  await db.put({ _id: '_design/d', views: {} });
  assert.ok((await db.get('_design/d'))._rev);
  await db.destroy();
  await assert.rejects(new PouchDB(server + '/' + tag + 'b', { skip_setup: true }).info(), (e) => e.status === 404);
});

check('bulkDocs, allDocs (ranges, keys, include_docs) and changes', async () => {
  const db = new PouchDB(server + '/' + tag + 'c');
  const docs = [];
  for (let i = 0; i < 20; i++) docs.push({ _id: 'd' + String(i).padStart(2, '0'), i });
  const res = await db.bulkDocs({ docs });
  assert.strictEqual(res.length, 20);
  assert.ok(res.every((r) => r.ok));
  const all = await db.allDocs({ include_docs: true, startkey: 'd05', endkey: 'd09' });
  assert.deepStrictEqual(all.rows.map((r) => r.doc.i), [5, 6, 7, 8, 9]);
  const byKeys = await db.allDocs({ keys: ['d01', 'nope'] });
  assert.strictEqual(byKeys.rows[0].id, 'd01');
  assert.strictEqual(byKeys.rows[1].error, 'not_found');
  const ch = await db.changes({ since: 0, limit: 5 });
  assert.strictEqual(ch.results.length, 5);
  const more = await db.changes({ since: ch.last_seq, include_docs: true });
  assert.strictEqual(more.results.length, 15);
  assert.strictEqual(typeof more.results[0].doc.i, 'number');
  const ids = await db.changes({ doc_ids: ['d03', 'd04'] });
  assert.deepStrictEqual(ids.results.map((r) => r.id).sort(), ['d03', 'd04']);
  const diff = await db.revsDiff({ d01: ['1-abc'] });
  assert.deepStrictEqual(diff.d01.missing, ['1-abc']);
  await db.destroy();
});

check('live changes deliver a write and cancel() completes', async () => {
  const db = new PouchDB(server + '/' + tag + 'd');
  await db.put({ _id: 'first' });
  const seen = [];
  const feed = db.changes({ live: true, since: 'now' });
  const got = new Promise((resolve) => feed.on('change', (c) => { seen.push(c.id); resolve(); }));
  await new Promise((r) => setTimeout(r, 100));
  await db.put({ _id: 'second' });
  await got;
  feed.cancel();
  const end = await feed;
  assert.strictEqual(end.status, 'cancelled');
  assert.deepStrictEqual(seen, ['second']);
  await db.destroy();
});

check('replicate from and to a remote database, and sync', async () => {
  const remote = new PouchDB(server + '/' + tag + 'e');
  const docs = [];
  for (let i = 0; i < 150; i++) docs.push({ _id: 'r' + String(i).padStart(3, '0'), i });
  await remote.bulkDocs(docs);
  const local = new PouchDB(tag + 'local');
  const pulled = await PouchDB.replicate(remote, local, { batch_size: 100 });
  assert.strictEqual(pulled.ok, true);
  assert.strictEqual(pulled.docs_written, 150);
  assert.strictEqual((await local.info()).doc_count, 150);
  await local.put({ _id: 'from-local' });
  const pushed = await local.replicate.to(remote);
  assert.strictEqual(pushed.docs_written, 1);
  assert.strictEqual((await remote.get('from-local'))._id, 'from-local');
  await remote.put({ _id: 'from-remote' });
  const both = await local.sync(remote);
  assert.strictEqual(both.pull.docs_written, 1);
  assert.strictEqual((await local.get('from-remote'))._id, 'from-remote');
  assert.strictEqual((await remote.info()).doc_count, (await local.info()).doc_count);
  await remote.destroy();
  await local.destroy();
});

check('filtered replication: a design-doc filter with query_params, and a selector', async () => {
  const remote = new PouchDB(server + '/' + tag + 'g');
  await remote.put({ _id: '_design/app', filters: {
    by_kind: 'function (doc, req) { return doc.kind === req.query.kind; }' } });
  const docs = [];
  for (let i = 0; i < 40; i++) docs.push({ _id: 'k' + String(i).padStart(2, '0'), kind: i % 4 === 0 ? 'a' : 'b', i });
  await remote.bulkDocs(docs);
  // Pulled through the server's _changes?filter=app/by_kind&kind=a.
  const local = new PouchDB(tag + 'filtered');
  const pulled = await PouchDB.replicate(remote, local, { filter: 'app/by_kind', query_params: { kind: 'a' }, batch_size: 3 });
  assert.strictEqual(pulled.docs_written, 10);
  assert.strictEqual((await local.info()).doc_count, 10);
  // A selector, server to server.
  const sel = new PouchDB(server + '/' + tag + 'h');
  const pushed = await PouchDB.replicate(remote, sel, { selector: { i: { $gte: 30 } } });
  assert.strictEqual(pushed.docs_written, 10);
  assert.strictEqual((await sel.allDocs()).rows.length, 10);
  // A JS filter function filters a local source, pushed to the server...
  const fnTarget = new PouchDB(server + '/' + tag + 'fn');
  const byFn = await PouchDB.replicate(local, fnTarget,
    { filter: function (doc, req) { return doc.i >= req.query.min; }, query_params: { min: 20 } });
  assert.strictEqual(byFn.docs_written, 5);
  assert.deepStrictEqual((await fnTarget.allDocs()).rows.map((r) => r.id), ['k20', 'k24', 'k28', 'k32', 'k36']);
  // ...and is refused plainly for a remote source, whose server cannot run it.
  await assert.rejects(PouchDB.replicate(remote, local, { filter: () => true }), (e) => e.status === 400);
  // A local-to-local filtered replication run by the server itself (its
  // _replicator database), with the server's JS view runtime.
  const reps = new PouchDB(server + '/_replicator');
  await reps.put({ _id: tag + 'job', source: tag + 'g', target: tag + 'i', create_target: true,
    filter: 'app/by_kind', query_params: { kind: 'b' } });
  const target = new PouchDB(server + '/' + tag + 'i', { skip_setup: true });
  let count = 0;
  for (let k = 0; k < 100 && count < 30; k++) {
    await new Promise((r) => setTimeout(r, 50));
    count = await target.info().then((i) => i.doc_count, () => 0);
  }
  assert.strictEqual(count, 30);
  for (const db of [remote, sel, target]) await db.destroy();
  await local.destroy();
});

check('callbacks, and an unreachable server is an error', async () => {
  const db = new PouchDB(server + '/' + tag + 'f');
  const info = await new Promise((resolve, reject) => db.info((err, i) => (err ? reject(err) : resolve(i))));
  assert.strictEqual(info.db_name, tag + 'f');
  await db.destroy();
  const dead = new PouchDB('http://127.0.0.1:1/nothing');
  await assert.rejects(dead.info(), (e) => e instanceof Error && typeof e.status === 'number');
  await assert.rejects(dead.putAttachment('a', 'b', 'text/plain', 'eA=='), (e) => e.status === 501);
});

done();
