// CouchDB 3's purge and node endpoints against `settee serve`, with plain
// fetch (PouchDB 9's HTTP adapter has no purge) and the PouchDB client
// reading what a purge leaves: POST /db/_purge, _purged_infos_limit,
// purge_seq in GET /db, a Mango index and a view built before the purge,
// /_membership and /_node/_local/_config.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { serveDuringTests } = require('./settee_server');

const server = serveDuringTests();
async function req(method, path, body) {
  const init = { method, headers: { 'Content-Type': 'application/json' } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(server.url + path, init);
  return { status: res.status, body: await res.json() };
}

test('purge removes a document from allDocs, changes, a view and a Mango index', async () => {
  const db = new PouchDB(`${server.url}/purge-1`);
  const a = await db.put({ _id: 'a', k: 1 });
  await db.put({ _id: 'b', k: 2 });
  await db.put({ _id: '_design/v', views: { byk: { map: 'function (doc) { emit(doc.k); }' } } });
  assert.equal((await db.query('v/byk')).rows.length, 2);
  assert.equal((await req('POST', '/purge-1/_index', { index: { fields: ['k'] }, name: 'k' })).status, 200);
  const find = () => req('POST', '/purge-1/_find', { selector: { k: { $gt: 0 } }, use_index: 'k' });
  assert.equal((await find()).body.docs.length, 2);

  const r = await req('POST', '/purge-1/_purge', { a: [a.rev], nope: ['1-x'] });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, { purge_seq: null, purged: { a: [a.rev], nope: [] } });

  await assert.rejects(db.get('a'), { status: 404 });
  const ids = (await db.allDocs()).rows.map((row) => row.id).filter((id) => !id.startsWith('_design/'));
  assert.deepEqual(ids, ['b']);
  assert.ok(!(await db.changes()).results.some((c) => c.id === 'a'));
  assert.deepEqual((await db.query('v/byk')).rows.map((row) => row.id), ['b']);
  assert.deepEqual((await find()).body.docs.map((d) => d._id), ['b']);
  const info = await db.info();
  assert.equal(info.purge_seq, '2');
  assert.equal(info.doc_count, 3);  // b and the two design documents
});

test('purge errors and _purged_infos_limit', async () => {
  assert.equal((await req('PUT', '/purge-2')).status, 201);
  let r = await req('POST', '/purge-2/_purge', { a: ['junk'] });
  assert.deepEqual(r, { status: 400, body: { error: 'bad_request', reason: 'Invalid rev format' } });
  r = await req('POST', '/purge-2/_purge', '[]');
  assert.equal(r.status, 400);
  assert.deepEqual(await req('GET', '/purge-2/_purged_infos_limit'), { status: 200, body: 1000 });
  assert.deepEqual(await req('PUT', '/purge-2/_purged_infos_limit', '5'), { status: 200, body: { ok: true } });
  assert.equal((await req('GET', '/purge-2/_purged_infos_limit')).body, 5);
  r = await req('PUT', '/purge-2/_purged_infos_limit', '0');
  assert.deepEqual(r.body, { error: 'bad_request', reason: '`purge_infos_limit` must be positive integer' });
});

test('membership and node config', async () => {
  const m = await req('GET', '/_membership');
  assert.equal(m.status, 200);
  assert.deepEqual(m.body.all_nodes, m.body.cluster_nodes);
  const node = m.body.all_nodes[0];
  assert.deepEqual((await req('GET', '/_node/_local')).body, { name: node });
  const all = await req('GET', `/_node/${node}/_config`);
  assert.equal(all.status, 200);
  assert.equal(all.body.chttpd.port, new URL(server.url).port);
  assert.equal(all.body.chttpd.bind_address, '127.0.0.1');
  assert.equal((await req('GET', '/_node/_local/_config/couchdb/max_document_size')).body, String(8 << 20));
  assert.deepEqual(await req('GET', '/_node/other@host/_config'),
    { status: 404, body: { error: 'not_found', reason: 'no such node: other@host' } });
  // Live: the purge limit, then a request it refuses.
  assert.deepEqual(await req('PUT', '/_node/_local/_config/purge/max_document_id_number', '"1"'),
    { status: 200, body: '100' });
  assert.equal((await req('PUT', '/purge-3')).status, 201);
  const r = await req('POST', '/purge-3/_purge', { a: [], b: [] });
  assert.deepEqual(r.body, { error: 'bad_request', reason: 'Exceeded maximum number of documents.' });
  assert.equal((await req('DELETE', '/_node/_local/_config/purge/max_document_id_number')).status, 200);
  assert.equal((await req('POST', '/purge-3/_purge', { a: [], b: [] })).status, 201);
  // Fixed at startup: refused.
  assert.equal((await req('PUT', '/_node/_local/_config/chttpd/port', '"1"')).status, 400);
});
