// PouchDB 9's HTTP adapter against a live settee: CRUD, bulkDocs, allDocs
// with options, changes (normal and live), conflicts via new_edits=false,
// local docs, revsDiff, bulkGet and compaction.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { serveDuringTests } = require('./settee_server');

const server = serveDuringTests();
let dbCount = 0;
function remote() {
  dbCount += 1;
  return new PouchDB(`${server.url}/compat-${dbCount}`);
}

test('info and a stable server id', async () => {
  const db = remote();
  const info = await db.info();
  assert.equal(info.db_name, `compat-${dbCount}`);
  assert.equal(info.doc_count, 0);
  assert.equal(info.instance_start_time, '0');
  const id1 = await db.id();
  const id2 = await new PouchDB(`${server.url}/compat-${dbCount}`).id();
  assert.equal(id1, id2);
});

test('put, get, update, remove and their errors', async () => {
  const db = remote();
  const r1 = await db.put({ _id: 'doc', title: 'one' });
  assert.equal(r1.ok, true);
  assert.match(r1.rev, /^1-[0-9a-f]{32}$/);
  const doc = await db.get('doc');
  assert.equal(doc.title, 'one');
  assert.equal(doc._rev, r1.rev);

  await assert.rejects(db.put({ _id: 'doc', title: 'stale' }),
    (e) => e.status === 409 && e.name === 'conflict');
  const r2 = await db.put({ ...doc, title: 'two' });
  assert.match(r2.rev, /^2-/);
  const posted = await db.post({ kind: 'generated' });
  assert.ok(posted.id.length > 0);
  assert.equal((await db.get(posted.id)).kind, 'generated');

  await db.remove('doc', r2.rev);
  await assert.rejects(db.get('doc'), (e) => e.status === 404 && e.reason === 'deleted');
  await assert.rejects(db.get('never'), (e) => e.status === 404 && e.reason === 'missing');
  // A deleted doc can be recreated without a rev.
  const r3 = await db.put({ _id: 'doc', title: 'again' });
  assert.match(r3.rev, /^4-/);

  const withRevs = await db.get('doc', { revs: true, revs_info: true });
  assert.equal(withRevs._revisions.start, 4);
  assert.equal(withRevs._revisions.ids.length, 4);
  assert.ok(Array.isArray(withRevs._revs_info));
});

test('bulkDocs and allDocs with options', async () => {
  const db = remote();
  const docs = [];
  for (let i = 0; i < 20; i++) docs.push({ _id: `d${String(i).padStart(2, '0')}`, n: i });
  const res = await db.bulkDocs(docs);
  assert.equal(res.length, 20);
  assert.ok(res.every((r) => r.ok));
  const dup = await db.bulkDocs([{ _id: 'd00' }, { _id: 'fresh' }]);
  // The HTTP adapter hands back CouchDB's per-doc rows as they are.
  assert.equal(dup[0].error, 'conflict');
  assert.equal(dup[0].id, 'd00');
  assert.equal(dup[1].ok, true);

  let all = await db.allDocs();
  assert.equal(all.total_rows, 21);
  assert.equal(all.rows.length, 21);
  assert.equal(all.rows[0].id, 'd00');

  all = await db.allDocs({ include_docs: true, limit: 3, skip: 2 });
  assert.deepEqual(all.rows.map((r) => r.id), ['d02', 'd03', 'd04']);
  assert.equal(all.rows[0].doc.n, 2);
  assert.equal(all.offset, 2);

  all = await db.allDocs({ startkey: 'd05', endkey: 'd07' });
  assert.deepEqual(all.rows.map((r) => r.id), ['d05', 'd06', 'd07']);
  all = await db.allDocs({ startkey: 'd05', endkey: 'd07', inclusive_end: false });
  assert.deepEqual(all.rows.map((r) => r.id), ['d05', 'd06']);
  all = await db.allDocs({ descending: true, limit: 2 });
  assert.deepEqual(all.rows.map((r) => r.id), ['fresh', 'd19']);
  all = await db.allDocs({ key: 'd10', include_docs: true });
  assert.equal(all.rows.length, 1);
  assert.equal(all.rows[0].doc.n, 10);

  const d3 = await db.get('d03');
  await db.remove(d3);
  all = await db.allDocs({ keys: ['d01', 'nope', 'd03'], include_docs: true });
  assert.equal(all.rows[0].doc.n, 1);
  assert.equal(all.rows[1].error, 'not_found');
  assert.equal(all.rows[2].value.deleted, true);
  assert.equal(all.rows[2].doc, null);
});

test('changes: normal feed with since, limit, include_docs and doc_ids', async () => {
  const db = remote();
  await db.bulkDocs([{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }]);
  const a = await db.get('a');
  await db.put({ ...a, v: 2 });

  let ch = await db.changes();
  assert.deepEqual(ch.results.map((r) => r.id), ['b', 'c', 'a']);
  assert.equal(Number(ch.last_seq), Number(ch.results[2].seq));

  ch = await db.changes({ since: ch.results[0].seq, include_docs: true });
  assert.deepEqual(ch.results.map((r) => r.id), ['c', 'a']);
  assert.equal(ch.results[1].doc.v, 2);

  ch = await db.changes({ limit: 1 });
  assert.equal(ch.results.length, 1);

  ch = await db.changes({ doc_ids: ['c'] });
  assert.deepEqual(ch.results.map((r) => r.id), ['c']);

  const b = await db.get('b');
  await db.remove(b);
  ch = await db.changes({ style: 'all_docs' });
  const row = ch.results.find((r) => r.id === 'b');
  assert.equal(row.deleted, true);
});

test('changes: live feed delivers new writes', async () => {
  const db = remote();
  await db.put({ _id: 'before' });
  // From the seq of 'before', not since: 'now': a feed that starts (reads
  // 'now') only after the writes below, as on a loaded machine, would skip
  // live1 and wait for a third change that never comes.
  const { update_seq: since } = await db.info();
  const seen = [];
  const feed = db.changes({ live: true, since, include_docs: true });
  const done = new Promise((resolve, reject) => {
    feed.on('change', (c) => {
      seen.push(c.id);
      if (seen.length === 3) feed.cancel();
    });
    feed.on('complete', resolve);
    feed.on('error', reject);
  });
  await new Promise((r) => setTimeout(r, 100));  // usually the feed waits by now: live delivery
  await db.put({ _id: 'live1' });
  await db.put({ _id: 'live2' });
  await db.bulkDocs([{ _id: 'live3' }]);
  await done;
  assert.deepEqual(seen, ['live1', 'live2', 'live3']);
});

test('conflicts via new_edits=false, open_revs and resolution', async () => {
  const db = remote();
  const base = await db.put({ _id: 'c', v: 0 });
  await db.bulkDocs([
    { _id: 'c', _rev: '2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', v: 'a',
      _revisions: { start: 2, ids: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', base.rev.slice(2)] } },
    { _id: 'c', _rev: '2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', v: 'b',
      _revisions: { start: 2, ids: ['bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', base.rev.slice(2)] } },
  ], { new_edits: false });
  const doc = await db.get('c', { conflicts: true });
  assert.equal(doc._rev, '2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');  // highest revid wins
  assert.deepEqual(doc._conflicts, ['2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']);

  const leaves = await db.get('c', { open_revs: 'all' });
  assert.equal(leaves.length, 2);
  assert.ok(leaves.every((l) => l.ok));

  const some = await db.get('c', { open_revs: ['2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '3-cccccccccccccccccccccccccccccccc'] });
  assert.equal(some[0].ok.v, 'a');
  assert.equal(some[1].missing, '3-cccccccccccccccccccccccccccccccc');

  // Replaying the same history is a no-op, not an error.
  const again = await db.bulkDocs([{ _id: 'c', _rev: '2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', v: 'a' }],
    { new_edits: false });
  assert.deepEqual(again, []);

  await db.remove('c', '2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
  const resolved = await db.get('c', { conflicts: true });
  assert.equal(resolved._conflicts, undefined);
});

test('local documents', async () => {
  const db = remote();
  const r1 = await db.put({ _id: '_local/cp', seq: 1 });
  assert.equal(r1.rev, '0-1');
  const got = await db.get('_local/cp');
  assert.equal(got.seq, 1);
  const r2 = await db.put({ ...got, seq: 2 });
  assert.equal(r2.rev, '0-2');
  const info = await db.info();
  assert.equal(info.doc_count, 0);
  const ch = await db.changes();
  assert.equal(ch.results.length, 0);
  await db.remove('_local/cp', r2.rev);
  await assert.rejects(db.get('_local/cp'), (e) => e.status === 404);
});

test('revsDiff and bulkGet', async () => {
  const db = remote();
  const r = await db.put({ _id: 'x', v: 1 });
  const diff = await db.revsDiff({
    x: [r.rev, '2-dddddddddddddddddddddddddddddddd'],
    y: ['1-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'],
  });
  assert.deepEqual(diff.x.missing, ['2-dddddddddddddddddddddddddddddddd']);
  assert.deepEqual(diff.y.missing, ['1-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee']);

  const got = await db.bulkGet({ docs: [{ id: 'x', rev: r.rev }, { id: 'nope' }], revs: true });
  assert.equal(got.results.length, 2);
  assert.equal(got.results[0].docs[0].ok.v, 1);
  assert.ok(got.results[0].docs[0].ok._revisions);
  assert.ok(got.results[1].docs[0].error);
});

test('design documents and compaction', async () => {
  const db = remote();
  await db.put({ _id: '_design/app', views: { v: { map: 'function(doc){emit(doc._id)}' } } });
  const ddoc = await db.get('_design/app');
  assert.ok(ddoc.views.v.map);
  const res = await db.compact();
  assert.equal(res.ok, true);
});

test('destroy removes the database', async () => {
  const db = remote();
  await db.put({ _id: 'a' });
  await db.destroy();
  const again = new PouchDB(`${server.url}/compat-${dbCount}`, { skip_setup: true });
  // PouchDB's HTTP adapter resolves info() with CouchDB's error body here.
  const info = await again.info().catch((e) => e);
  assert.equal(info.error, 'not_found');
});
