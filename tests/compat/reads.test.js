// What the PouchDB 9 HTTP client reads back where CouchDB 3's answer has
// details a server can get subtly wrong: get with revs / revs_info /
// open_revs / latest / conflicts / deleted_conflicts, allDocs with conflicts,
// update_seq and deleted keys, _changes with style=all_docs, conflicts,
// attachments and every filter kind, attachment revision rules, bulkGet with
// revs and attachments, compaction, info(), _revs_limit stemming, and
// replication resuming from its checkpoint.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { serveDuringTests } = require('./settee_server');

const server = serveDuringTests();
let dbCount = 0;
function remote() {
  dbCount += 1;
  return new PouchDB(`${server.url}/reads-${dbCount}`);
}
function dbPath(db) { return '/' + db.name.split('/').pop(); }
async function fetchJson(path, init) {
  const res = await fetch(server.url + path, init);
  return { status: res.status, body: await res.json() };
}

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

// One document with three leaves: 2-bbb (winner), 2-aaa (live conflict) and
// 2-ccc (a deleted branch), all children of the client's 1- revision.
async function branchedDoc(db) {
  const base = await db.put({ _id: 'doc', v: 0 });
  const parent = base.rev.slice(2);
  await db.bulkDocs([
    { _id: 'doc', _rev: `2-${A}`, v: 'a', _revisions: { start: 2, ids: [A, parent] } },
    { _id: 'doc', _rev: `2-${B}`, v: 'b', _revisions: { start: 2, ids: [B, parent] } },
    { _id: 'doc', _rev: `2-${C}`, _deleted: true, _revisions: { start: 2, ids: [C, parent] } },
  ], { new_edits: false });
  return base.rev;
}

test('get: revs, revs_info, conflicts, deleted_conflicts, meta, open_revs and latest', async () => {
  const db = remote();
  const first = await branchedDoc(db);
  let doc = await db.get('doc', { revs: true, revs_info: true, conflicts: true });
  assert.equal(doc._rev, `2-${B}`);
  assert.deepEqual(doc._revisions, { start: 2, ids: [B, first.slice(2)] });
  assert.deepEqual(doc._revs_info, [
    { rev: `2-${B}`, status: 'available' }, { rev: first, status: 'available' }]);
  assert.deepEqual(doc._conflicts, [`2-${A}`]);
  assert.equal(doc._deleted_conflicts, undefined);
  // The HTTP adapter does not pass deleted_conflicts on: ask for it directly.
  const dc = await fetchJson(`${dbPath(db)}/doc?deleted_conflicts=true`);
  assert.deepEqual(dc.body._deleted_conflicts, [`2-${C}`]);
  assert.equal(dc.body._conflicts, undefined);
  // meta=true is revs_info + conflicts + deleted_conflicts.
  const meta = await fetchJson(`${dbPath(db)}/doc?meta=true`);
  assert.deepEqual(meta.body._conflicts, [`2-${A}`]);
  assert.deepEqual(meta.body._deleted_conflicts, [`2-${C}`]);
  assert.equal(meta.body._revs_info.length, 2);
  // An old revision by rev, with its own history.
  doc = await db.get('doc', { rev: first, revs: true });
  assert.equal(doc.v, 0);
  assert.deepEqual(doc._revisions, { start: 1, ids: [first.slice(2)] });

  // open_revs=all: every leaf, the deleted one included, each with its history.
  const leaves = await db.get('doc', { open_revs: 'all', revs: true });
  const byRev = Object.fromEntries(leaves.map((l) => [l.ok._rev, l.ok]));
  assert.deepEqual(Object.keys(byRev).sort(), [`2-${A}`, `2-${B}`, `2-${C}`]);
  assert.equal(byRev[`2-${C}`]._deleted, true);
  assert.deepEqual(byRev[`2-${A}`]._revisions.ids, [A, first.slice(2)]);
  // latest=true gives the leaves that descend from an inner revision.
  const latest = await db.get('doc', { open_revs: [first], latest: true });
  assert.deepEqual(latest.map((l) => l.ok._rev).sort(), [`2-${A}`, `2-${B}`, `2-${C}`]);
  const plain = await db.get('doc', { open_revs: [first, '9-' + A] });
  assert.equal(plain[0].ok._rev, first);
  assert.equal(plain[1].missing, '9-' + A);
  // A rev that never existed is 404 missing; a malformed one is 400.
  await assert.rejects(db.get('doc', { rev: '3-' + A }), (e) => e.status === 404 && e.reason === 'missing');
  const bad = await fetchJson(`${dbPath(db)}/doc?rev=nonsense`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'bad_request');
});

test('a deleted document: 404 deleted, yet readable by rev and in open_revs', async () => {
  const db = remote();
  const r1 = await db.put({ _id: 'gone', v: 1 });
  const r2 = await db.remove('gone', r1.rev);
  await assert.rejects(db.get('gone'), (e) => e.status === 404 && e.reason === 'deleted');
  const tomb = await db.get('gone', { rev: r2.rev });
  assert.equal(tomb._deleted, true);
  assert.equal((await db.get('gone', { rev: r1.rev })).v, 1);
  const leaves = await db.get('gone', { open_revs: 'all' });
  assert.deepEqual(leaves, [{ ok: { _id: 'gone', _rev: r2.rev, _deleted: true } }]);
});

test('allDocs: conflicts, update_seq, and keys naming deleted documents', async () => {
  const db = remote();
  await branchedDoc(db);
  await db.bulkDocs([{ _id: 'live' }, { _id: 'dead' }]);
  const dead = await db.get('dead');
  const tomb = await db.remove(dead);
  const info = await db.info();

  let r = await db.allDocs({ include_docs: true, conflicts: true, update_seq: true });
  assert.equal(r.update_seq, info.update_seq);
  assert.equal(r.total_rows, 2);
  assert.deepEqual(r.rows.map((row) => row.id), ['doc', 'live']);
  assert.deepEqual(r.rows[0].doc._conflicts, [`2-${A}`]);
  assert.equal(r.rows[1].doc._conflicts, undefined);

  r = await db.allDocs({ keys: ['dead', 'nope', 'live'], include_docs: true, update_seq: true });
  // fabric_view_all_docs gives a keys query no offset and no update_seq.
  assert.equal(r.total_rows, 2);
  assert.equal(r.offset, null);
  assert.equal(r.update_seq, null);
  assert.deepEqual(r.rows[0], { id: 'dead', key: 'dead', value: { rev: tomb.rev, deleted: true }, doc: null });
  assert.deepEqual(r.rows[1], { key: 'nope', error: 'not_found' });
  assert.equal(r.rows[2].doc._id, 'live');
  // Without include_docs a deleted key's row has no doc member.
  r = await db.allDocs({ keys: ['dead'] });
  assert.equal('doc' in r.rows[0], false);
});

test('changes: style=all_docs lists every leaf, winner first; conflicts on the doc', async () => {
  const db = remote();
  await branchedDoc(db);
  const ch = await db.changes({ style: 'all_docs', include_docs: true, conflicts: true });
  assert.equal(ch.results.length, 1);
  const row = ch.results[0];
  // couch_doc:to_doc_info orders live leaves before deleted ones, each by rev.
  assert.deepEqual(row.changes.map((c) => c.rev), [`2-${B}`, `2-${A}`, `2-${C}`]);
  assert.deepEqual(row.doc._conflicts, [`2-${A}`]);
  assert.equal(row.deleted, undefined);
  const winnerOnly = await db.changes();
  assert.deepEqual(winnerOnly.results[0].changes, [{ rev: `2-${B}` }]);
});

test('changes: filter function with query_params, _view, selector, doc_ids', async () => {
  const db = remote();
  await db.put({
    _id: '_design/app',
    filters: { kind: 'function(doc, req) { return doc.kind === req.query.kind; }' },
    views: { evens: { map: 'function(doc) { if (doc.n % 2 === 0) emit(doc.n); }' } },
  });
  const docs = [];
  for (let i = 0; i < 6; i++) docs.push({ _id: `k${i}`, n: i, kind: i < 2 ? 'x' : 'y' });
  await db.bulkDocs(docs);

  let ch = await db.changes({ filter: 'app/kind', query_params: { kind: 'x' } });
  assert.deepEqual(ch.results.map((r) => r.id), ['k0', 'k1']);
  ch = await db.changes({ filter: '_view', view: 'app/evens' });
  assert.deepEqual(ch.results.map((r) => r.id), ['k0', 'k2', 'k4']);
  ch = await db.changes({ selector: { n: { $gte: 4 } } });
  assert.deepEqual(ch.results.map((r) => r.id), ['k4', 'k5']);
  ch = await db.changes({ doc_ids: ['k3', 'nope'] });
  assert.deepEqual(ch.results.map((r) => r.id), ['k3']);
  // last_seq is the database's, not the last matching row's, on a filtered feed.
  assert.equal(Number(ch.last_seq), Number((await db.info()).update_seq));

  await assert.rejects(db.changes({ filter: 'app/none' }),
    (e) => e.status === 404 && e.reason === 'missing json key: none');
  await assert.rejects(db.changes({ filter: 'nodesign/kind' }), (e) => e.status === 404);
  // (The client looks a name without a slash up itself: ask directly.)
  let bad = await fetchJson(`${dbPath(db)}/_changes?filter=kind`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.reason, '`filter` must be of the form `designname/filtername`');
  bad = await fetchJson(`${dbPath(db)}/_changes?filter=_nope`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.reason, 'unknown builtin filter name');
});

test('changes: descending, since=now, return_docs=false, a longpoll that times out', async () => {
  const db = remote();
  await db.bulkDocs(['a', 'b', 'c'].map((_id) => ({ _id })));
  let ch = await db.changes({ descending: true, limit: 2 });
  assert.deepEqual(ch.results.map((r) => r.id), ['c', 'b']);
  assert.equal(Number(ch.last_seq), Number(ch.results[1].seq));
  ch = await db.changes({ since: 'now' });
  assert.deepEqual(ch.results, []);
  assert.equal(Number(ch.last_seq), 3);
  // return_docs=false: the client still sees every change event.
  const seen = [];
  ch = await db.changes({ return_docs: false }).on('change', (c) => seen.push(c.id));
  assert.deepEqual(ch.results, []);
  assert.deepEqual(seen, ['a', 'b', 'c']);
  const started = Date.now();
  const poll = await fetchJson(`${dbPath(db)}/_changes?feed=longpoll&since=now&timeout=300`);
  assert.ok(Date.now() - started >= 250, 'longpoll waited for its timeout');
  assert.equal(poll.status, 200);
  assert.deepEqual(poll.body.results, []);
  assert.equal(poll.body.last_seq, 3);
});

test('changes and allDocs with attachments inline', async () => {
  const db = remote();
  await db.put({ _id: 'att', _attachments: { 'f.txt': { content_type: 'text/plain', data: Buffer.from('hi').toString('base64') } } });
  const ch = await db.changes({ include_docs: true, attachments: true });
  assert.equal(ch.results[0].doc._attachments['f.txt'].data, Buffer.from('hi').toString('base64'));
  const stubs = await db.changes({ include_docs: true });
  assert.equal(stubs.results[0].doc._attachments['f.txt'].stub, true);
  assert.equal(stubs.results[0].doc._attachments['f.txt'].length, 2);
  const all = await db.allDocs({ include_docs: true, attachments: true, binary: true });
  assert.equal(all.rows[0].doc._attachments['f.txt'].data.toString(), 'hi');
});

test('putAttachment and removeAttachment follow CouchDB revision rules', async () => {
  const db = remote();
  // No doc and no rev: the attachment creates the document.
  const r1 = await db.putAttachment('d', 'a.txt', Buffer.from('one'), 'text/plain');
  assert.match(r1.rev, /^1-/);
  // An existing doc without a rev, or at a stale or unknown rev, is a conflict.
  await assert.rejects(db.putAttachment('d', 'b.txt', Buffer.from('x'), 'text/plain'), (e) => e.status === 409);
  const r2 = await db.putAttachment('d', 'b.txt', r1.rev, Buffer.from('two'), 'text/plain');
  await assert.rejects(db.putAttachment('d', 'c.txt', r1.rev, Buffer.from('x'), 'text/plain'),
    (e) => e.status === 409);
  await assert.rejects(db.putAttachment('d', 'c.txt', '9-' + A, Buffer.from('x'), 'text/plain'),
    (e) => e.status === 409);
  await assert.rejects(db.putAttachment('none', 'c.txt', '1-' + A, Buffer.from('x'), 'text/plain'),
    (e) => e.status === 409);
  // Removing a name the revision does not have is 404; a stale rev is too
  // (the stale revision lacks the name); without a rev, 409.
  await assert.rejects(db.removeAttachment('d', 'zzz.txt', r2.rev),
    (e) => e.status === 404 && e.reason === 'Document is missing attachment');
  await assert.rejects(db.removeAttachment('d', 'b.txt', r1.rev), (e) => e.status === 404);
  const r3 = await db.removeAttachment('d', 'a.txt', r2.rev);
  assert.match(r3.rev, /^3-/);
  const doc = await db.get('d');
  assert.deepEqual(Object.keys(doc._attachments), ['b.txt']);
  assert.equal(doc._attachments['b.txt'].revpos, 2);
  // The attachment of an older revision stays readable by rev.
  assert.equal((await db.getAttachment('d', 'a.txt', { rev: r2.rev })).toString(), 'one');
  await assert.rejects(db.getAttachment('d', 'a.txt'), (e) => e.status === 404);
});

test('bulkGet with revs and attachments, missing revs and docs', async () => {
  const db = remote();
  const r1 = await db.put({ _id: 'x', _attachments: { 'f.bin': { content_type: 'application/octet-stream', data: Buffer.from([0, 1, 2]).toString('base64') } } });
  const r2 = await db.put({ _id: 'x', _rev: r1.rev, v: 2, _attachments: (await db.get('x'))._attachments });
  const got = await db.bulkGet({
    docs: [{ id: 'x' }, { id: 'x', rev: r1.rev }, { id: 'x', rev: '7-' + A }, { id: 'nope' }],
    revs: true, attachments: true, binary: false,
  });
  const [latest, old, missing, nodoc] = got.results;
  assert.equal(latest.docs[0].ok._rev, r2.rev);
  assert.deepEqual(latest.docs[0].ok._revisions, { start: 2, ids: [r2.rev.slice(2), r1.rev.slice(2)] });
  assert.equal(latest.docs[0].ok._attachments['f.bin'].data, Buffer.from([0, 1, 2]).toString('base64'));
  assert.equal(latest.docs[0].ok._attachments['f.bin'].revpos, 1);
  assert.equal(old.docs[0].ok._rev, r1.rev);
  assert.deepEqual(missing.docs[0].error, { id: 'x', rev: '7-' + A, error: 'not_found', reason: 'missing' });
  assert.deepEqual(nodoc.docs[0].error, { id: 'nope', rev: 'undefined', error: 'not_found', reason: 'missing' });
});

test('compaction drops old revision bodies but keeps the history', async () => {
  const db = remote();
  const r1 = await db.put({ _id: 'c', v: 1 });
  const r2 = await db.put({ _id: 'c', _rev: r1.rev, v: 2 });
  assert.equal((await db.get('c', { rev: r1.rev })).v, 1);
  await db.compact();
  await assert.rejects(db.get('c', { rev: r1.rev }), (e) => e.status === 404 && e.reason === 'missing');
  const doc = await db.get('c', { revs: true, revs_info: true });
  assert.equal(doc.v, 2);
  assert.deepEqual(doc._revisions.ids, [r2.rev.slice(2), r1.rev.slice(2)]);
  assert.deepEqual(doc._revs_info, [{ rev: r2.rev, status: 'available' }, { rev: r1.rev, status: 'missing' }]);
  const old = await fetchJson(`${dbPath(db)}/c?open_revs=${encodeURIComponent(JSON.stringify([r1.rev]))}`);
  assert.deepEqual(old.body, [{ missing: r1.rev }]);
});

test('_design_docs counts design documents in total_rows', async () => {
  const db = remote();
  await db.bulkDocs([{ _id: 'a' }, { _id: '_design/one' }, { _id: 'z' }, { _id: '_design/two' }]);
  const r = await fetchJson(`${dbPath(db)}/_design_docs?limit=1`);
  assert.equal(r.body.total_rows, 2);
  assert.deepEqual(r.body.rows.map((row) => row.id), ['_design/one']);
  assert.equal((await db.allDocs()).total_rows, 4);
});

test('info() fields and counts', async () => {
  const db = remote();
  await db.bulkDocs([{ _id: 'a' }, { _id: 'b' }, { _id: '_local/l' }]);
  await db.remove(await db.get('b'));
  const info = await db.info();
  assert.equal(info.db_name, db.name.split('/').pop());
  assert.equal(info.doc_count, 1);
  assert.equal(info.doc_del_count, 1);
  assert.equal(Number(info.update_seq), 3);
  assert.equal(info.compact_running, false);
  assert.equal(info.purge_seq, '0');  // a string, as CouchDB 3's
  for (const k of ['file', 'external', 'active']) assert.equal(typeof info.sizes[k], 'number', k);
  assert.equal(info.instance_start_time, '0');
  assert.equal(typeof info.disk_format_version, 'number');
  // PouchDB adds its own fields to the HTTP answer.
  assert.equal(info.host, db.name + '/');
});

test('_revs_limit: read, set, refused values, and stemming of new history', async () => {
  const db = remote();
  const path = `${dbPath(db)}/_revs_limit`;
  await db.info();
  let r = await fetchJson(path);
  assert.equal(r.body, 1000);
  r = await fetchJson(path, { method: 'PUT', body: '3', headers: { 'Content-Type': 'application/json' } });
  assert.deepEqual(r.body, { ok: true });
  assert.equal((await fetchJson(path)).body, 3);
  for (const bad of ['"3"', '{}', 'x']) {
    r = await fetchJson(path, { method: 'PUT', body: bad, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, bad);
  }
  let rev = (await db.put({ _id: 's', i: 0 })).rev;
  for (let i = 1; i < 6; i++) rev = (await db.put({ _id: 's', _rev: rev, i })).rev;
  const doc = await db.get('s', { revs: true, revs_info: true });
  assert.equal(doc._revisions.start, 6);
  assert.equal(doc._revisions.ids.length, 3);
  assert.equal(doc._revs_info.length, 3);
  // A stemmed-away revision is gone, as if it never existed.
  const revsDiff = await db.revsDiff({ s: ['1-' + A, rev] });
  assert.deepEqual(revsDiff.s.missing, ['1-' + A]);
});

test('replication resumes from its checkpoint: a second pull transfers only new docs', async () => {
  const db = remote();
  const local = new PouchDB(`reads-local-${dbCount}-${Date.now()}`, { adapter: 'memory' });
  try {
    await db.bulkDocs(Array.from({ length: 30 }, (_, i) => ({ _id: `r${String(i).padStart(2, '0')}` })));
    let res = await local.replicate.from(db, { batch_size: 10 });
    assert.equal(res.docs_read, 30);
    assert.equal(res.docs_written, 30);
    await db.bulkDocs([{ _id: 'new1' }, { _id: 'new2' }]);
    await db.remove(await db.get('r05'));
    res = await local.replicate.from(db, { batch_size: 10 });
    assert.equal(res.docs_read, 3);
    assert.equal(res.docs_written, 3);
    assert.equal(res.last_seq, (await db.info()).update_seq);
    await assert.rejects(local.get('r05'), (e) => e.status === 404);
    // The checkpoint lives on the server as a _local document.
    const locals = await fetchJson(`${dbPath(db)}/_local_docs`);
    assert.equal(locals.body.rows.length, 1);
    assert.match(locals.body.rows[0].id, /^_local\//);
    // CouchDB counts nothing in the _local namespace.
    assert.equal(locals.body.total_rows, null);
    assert.equal(locals.body.offset, null);
  } finally {
    await local.destroy();
  }
});

test('a live sync carries deletions both ways', async () => {
  const db = remote();
  const local = new PouchDB(`reads-sync-${dbCount}-${Date.now()}`, { adapter: 'memory' });
  const waitUntil = async (what, fn) => {
    for (let i = 0; i < 100; i++) {
      if (await fn().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  await db.bulkDocs([{ _id: 'srv', v: 1 }, { _id: 'both', v: 1 }]);
  const sync = local.sync(db, { live: true, retry: false });
  try {
    await waitUntil('first pull', async () => (await local.get('both')).v === 1);
    await local.remove(await local.get('srv'));
    await waitUntil('deletion on the server',
      () => db.get('srv').then(() => false, (e) => e.status === 404 && e.reason === 'deleted'));
    await local.put({ _id: 'loc', v: 1 });
    await waitUntil('push', async () => (await db.get('loc')).v === 1);
    await db.remove(await db.get('loc'));
    await waitUntil('deletion pulled', () => local.get('loc').then(() => false, (e) => e.status === 404));
    const info = await db.info();
    assert.equal(info.doc_count, 1);
    assert.equal(info.doc_del_count, 2);
  } finally {
    sync.cancel();
    await local.destroy();
  }
});
