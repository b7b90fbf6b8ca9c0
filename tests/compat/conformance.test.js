// What the PouchDB 9 HTTP client sees where CouchDB 3 behaves in a way a
// server can easily get wrong (issue 8): client strings that must come back
// as the same strings, _bulk_docs validation for the whole request, key with
// startkey/endkey, inverted _all_docs ranges, _changes "pending" and
// replication progress, and _local documents carrying _revisions.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { serveDuringTests } = require('./settee_server');

const server = serveDuringTests();
let dbCount = 0;
function remote() {
  dbCount += 1;
  return new PouchDB(`${server.url}/conformance-${dbCount}`);
}
async function getJson(path, init) {
  const res = await fetch(server.url + path, init);
  return { status: res.status, body: await res.json() };
}

// Strings that look like other JSON, need escaping or are not ASCII, put
// together by a seeded generator (the same strings every run).
function trickyStrings(n) {
  const pieces = ['1000', '0', '2', '-1', '1e5', '3.25', 'true', 'false', 'null', '[1]', '{}',
    '{"a":1}', '"', '\\', '\\n', '\n', '\t', '\u0001', '/', ' ', '%2F', '?', '#', '&', '+', '=',
    '\u00e9', '\u65e5\u672c', '\ud83d\ude00', '\uffff', '\ue000', 'a', 'Z', '-', ',', ':', '\\u0041'];
  const out = new Set(['1000', '2', '0', 'true', 'null', 'false', '-1', '1e5', '["x"]', '"quoted"']);
  let seed = 20261201;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  while (out.size < n) {
    let s = '';
    for (let i = 1 + (next() % 5); i > 0; i--) s += pieces[next() % pieces.length];
    if (s[0] === '_') s = 'x' + s;
    out.add(s);
  }
  return [...out].sort();
}

test('a string key is never given back as another type', async () => {
  const db = remote();
  await db.bulkDocs([{ _id: '2' }, { _id: '0' }]);
  const r = await db.allDocs({ keys: ['2', '0', '1000'] });
  assert.deepEqual(r.rows.map((row) => row.key), ['2', '0', '1000']);
  assert.equal(r.rows[2].error, 'not_found');
  const get = await getJson(`/${db.name.split('/').pop()}/_all_docs?keys=${encodeURIComponent('["1000","true",1000,null]')}`);
  assert.equal(get.status, 200);
  assert.deepEqual(get.body.rows.map((row) => row.key), ['1000', 'true', 1000, null]);
});

test('client strings round-trip through every place that echoes them', async () => {
  const db = remote();
  const all = trickyStrings(60);
  const half = all.length >> 1;
  const present = all.slice(0, half);
  const missing = all.slice(half);
  // Document ids, through put and bulkDocs results.
  for (const id of present.filter((_, i) => i % 2 === 0)) {
    assert.equal((await db.put({ _id: id })).id, id);
  }
  const bulk = await db.bulkDocs(present.filter((_, i) => i % 2 === 1).map((id) => ({ _id: id })));
  assert.deepEqual(bulk.map((r) => r.id), present.filter((_, i) => i % 2 === 1));
  for (const id of present) assert.equal((await db.get(id))._id, id);
  // allDocs keys: rows and not_found rows.
  const rows = (await db.allDocs({ keys: all })).rows;
  assert.deepEqual(rows.map((r) => r.key), all);
  assert.deepEqual(rows.slice(half).map((r) => r.error), missing.map(() => 'not_found'));
  assert.deepEqual(rows.slice(0, half).map((r) => r.id), present);
  for (const id of [present[0], present[present.length - 1]]) {
    assert.deepEqual((await db.allDocs({ key: id })).rows.map((r) => r.id), [id]);
  }
  // bulkGet: found docs and errors for missing ones.
  const got = await db.bulkGet({ docs: all.map((id) => ({ id })) });
  assert.deepEqual(got.results.map((r) => r.id), all);
  for (const r of got.results.slice(half)) assert.ok(r.docs[0].error);
  // revsDiff: ids and revisions.
  const req = {};
  for (const id of all) req[id] = ['7-' + id];
  const diff = await db.revsDiff(req);
  assert.deepEqual(Object.keys(diff).sort(), [...all].sort());
  for (const id of all) assert.deepEqual(diff[id].missing, ['7-' + id]);
  // changes with doc_ids (a POST with filter=_doc_ids).
  const ch = await db.changes({ doc_ids: all });
  assert.deepEqual(ch.results.map((r) => r.id).sort(), [...present].sort());
});

test('one invalid document refuses the whole _bulk_docs request', async () => {
  const db = remote();
  const cases = [
    [[{ _id: 'ok' }, { _id: 'x', _zing: 4 }], {}, 'doc_validation', 'Bad special document member: _zing'],
    [[{ _id: 'ok' }, { _id: '_zing' }], {}, 'illegal_docid', 'Only reserved document ids may start with underscore.'],
    [[{ _id: 'ok' }, { _id: 5 }], {}, 'illegal_docid', 'Document id must be a string'],
    [[{ _id: 'ok', _rev: '1-a' }, { _id: 'norev' }], { new_edits: false }, 'bad_request',
      'When `new_edits: false`, the document needs `_rev` or `_revisions` specified'],
  ];
  for (const [docs, opts, name, reason] of cases) {
    await assert.rejects(db.bulkDocs(docs, opts), (e) => {
      assert.equal(e.status, 400, JSON.stringify(docs));
      assert.equal(e.name, name);
      assert.equal(e.reason || e.message, reason);
      return true;
    });
  }
  const info = await db.info();
  assert.equal(info.doc_count, 0);
  assert.equal(info.update_seq, 0);
  // Conflicts stay per document.
  await db.put({ _id: 'a' });
  const res = await db.bulkDocs([{ _id: 'a' }, { _id: 'b' }]);
  assert.equal(res[0].error, 'conflict');
  assert.equal(res[1].ok, true);
});

test('key with startkey or endkey runs; keys with them stays an error', async () => {
  const db = remote();
  await db.bulkDocs(['a', 'b', 'c', 'd'].map((_id) => ({ _id })));
  // The HTTP adapter sends key before endkey: key sets both ends, endkey one.
  let r = await db.allDocs({ key: 'b', endkey: 'c' });
  assert.deepEqual(r.rows.map((row) => row.id), ['b', 'c']);
  r = await db.allDocs({ key: 'c', startkey: 'a' });
  assert.deepEqual(r.rows.map((row) => row.id), ['a', 'b', 'c']);
  const name = db.name.split('/').pop();
  let raw = await getJson(`/${name}/_all_docs?startkey=%22a%22&key=%22b%22`);
  assert.equal(raw.status, 200);
  assert.deepEqual(raw.body.rows.map((row) => row.id), ['b']);
  raw = await getJson(`/${name}/_all_docs?keys=%5B%22a%22%5D&startkey=%22a%22`);
  assert.equal(raw.status, 400);
  assert.equal(raw.body.error, 'query_parse_error');
});

test('an inverted _all_docs range answers no rows with total_rows', async () => {
  const db = remote();
  await db.bulkDocs(['3', '4', '5', '6'].map((_id) => ({ _id })));
  let r = await db.allDocs({ startkey: '5', endkey: '4' });
  assert.equal(r.total_rows, 4);
  assert.deepEqual(r.rows, []);
  r = await db.allDocs({ startkey: '4', endkey: '5', descending: true });
  assert.deepEqual(r.rows, []);
  r = await db.allDocs({ startkey: '4', endkey: '5' });
  assert.deepEqual(r.rows.map((row) => row.id), ['4', '5']);
});

test('_changes ends with pending, and replication reports it', async () => {
  const db = remote();
  const docs = [];
  for (let i = 0; i < 25; i++) docs.push({ _id: `p${String(i).padStart(2, '0')}` });
  await db.bulkDocs(docs);
  let seen = 0;
  let since = 0;
  for (;;) {
    const name = db.name.split('/').pop();
    const { body } = await getJson(`/${name}/_changes?limit=10&since=${since}`);
    seen += body.results.length;
    assert.equal(typeof body.pending, 'number');
    assert.equal(body.pending, 25 - seen);
    since = body.last_seq;
    if (body.pending === 0) break;
  }
  const longpoll = await getJson(`/${db.name.split('/').pop()}/_changes?feed=longpoll&limit=5`);
  assert.equal(longpoll.body.pending, 20);
  // PouchDB's replicator passes pending on in its change events.
  const local = new PouchDB(`local-pending-${dbCount}`, { adapter: 'memory' });
  const pendings = [];
  await PouchDB.replicate(db, local, { batch_size: 10, batches_limit: 1 })
    .on('change', (info) => pendings.push(info.pending));
  assert.deepEqual(pendings, [15, 5, 0]);
  await local.destroy();
});

test('a _local document with _revisions is stored', async () => {
  const db = remote();
  await db.put({ _id: '_local/cp', n: 1 });
  const r = await db.put({ _id: '_local/cp', _revisions: { start: 0, ids: ['1'] }, n: 2 });
  assert.equal(r.rev, '0-2');
  assert.equal((await db.get('_local/cp')).n, 2);
  const made = await db.put({ _id: '_local/fresh', _revisions: { start: 0, ids: [] }, n: 1 });
  assert.equal(made.rev, '0-1');
});
