// Replication between a local PouchDB (memory adapter) and settee in both
// directions, one-shot and live, with conflicts, deletions and local
// checkpoints.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const PouchDB = require('./pouch');
const { startSettee } = require('./settee_server');

let server;
let n = 0;
function pair() {
  n += 1;
  return {
    local: new PouchDB(`local-${n}-${Date.now()}`, { adapter: 'memory' }),
    remote: new PouchDB(`${server.url}/repl-${n}`),
  };
}

async function sortedDocs(db) {
  const all = await db.allDocs({ include_docs: true, conflicts: true });
  return all.rows.map((r) => {
    const d = { ...r.doc };
    if (d._conflicts) d._conflicts = [...d._conflicts].sort();
    return d;
  });
}

before(async () => { server = await startSettee(); });
after(async () => { await server.stop(); });

test('push: local PouchDB -> settee', async () => {
  const { local, remote } = pair();
  const docs = [];
  for (let i = 0; i < 250; i++) docs.push({ _id: `doc${i}`, i, tags: ['a', i % 3] });
  await local.bulkDocs(docs);
  const d5 = await local.get('doc5');
  await local.put({ ...d5, edited: true });
  const d6 = await local.get('doc6');
  await local.remove(d6);

  const result = await local.replicate.to(remote);
  assert.equal(result.ok, true);
  assert.equal(result.docs_written, 250);
  assert.equal(result.doc_write_failures, 0);

  assert.deepEqual(await sortedDocs(remote), await sortedDocs(local));
  const info = await remote.info();
  assert.equal(info.doc_count, 249);
  assert.equal(info.doc_del_count, 1);
  await assert.rejects(remote.get('doc6'), (e) => e.reason === 'deleted');

  // A second run starts from the checkpoint and writes nothing.
  const again = await local.replicate.to(remote);
  assert.equal(again.docs_written, 0);
});

test('pull: settee -> local PouchDB', async () => {
  const { local, remote } = pair();
  const docs = [];
  for (let i = 0; i < 120; i++) docs.push({ _id: `r${i}`, i });
  await remote.bulkDocs(docs);
  await remote.put({ _id: '_design/d', views: { v: { map: 'function(doc){emit(doc.i)}' } } });
  await remote.put({ _id: '_local/not-replicated', x: 1 });

  const result = await local.replicate.from(remote);
  assert.equal(result.ok, true);
  assert.equal(result.docs_written, 121);
  assert.deepEqual(await sortedDocs(local), await sortedDocs(remote));
  await assert.rejects(local.get('_local/not-replicated'), (e) => e.status === 404);
});

test('conflicts replicate both ways and converge', async () => {
  const { local, remote } = pair();
  await local.put({ _id: 'shared', v: 'origin' });
  await local.replicate.to(remote);
  const l = await local.get('shared');
  const r = await remote.get('shared');
  await local.put({ ...l, v: 'local edit' });
  await remote.put({ ...r, v: 'remote edit' });

  // Push, then pull, rather than local.sync(): with both directions running
  // at once, PouchDB's own leveldb-core changes reader can miss `shared` on
  // the push side (its by-seq iterator is a snapshot, but the doc metadata it
  // checks is read live; the pull moving `shared` to a later local seq makes
  // the reader skip it as "seen later", and the later entry is outside the
  // snapshot). Seen once in CI; it is PouchDB's race, not the server's.
  await local.replicate.to(remote);
  await local.replicate.from(remote);
  const fromLocal = await local.get('shared', { conflicts: true });
  const fromRemote = await remote.get('shared', { conflicts: true });
  assert.equal(fromLocal._rev, fromRemote._rev, 'same winner on both sides');
  assert.deepEqual(fromLocal._conflicts, fromRemote._conflicts);
  assert.equal(fromRemote._conflicts.length, 1);

  // Resolve on settee, replicate back: the conflict disappears locally too.
  await remote.remove('shared', fromRemote._conflicts[0]);
  await local.replicate.from(remote);
  const resolved = await local.get('shared', { conflicts: true });
  assert.equal(resolved._conflicts, undefined);
});

test('live sync carries changes both ways', async () => {
  const { local, remote } = pair();
  const sync = local.sync(remote, { live: true, retry: false });
  const waitFor = async (db, id) => {
    for (let i = 0; i < 100; i++) {
      try { return await db.get(id); } catch (e) { await new Promise((r) => setTimeout(r, 50)); }
    }
    throw new Error(`${id} never arrived`);
  };
  try {
    await local.put({ _id: 'from-local', v: 1 });
    await remote.put({ _id: 'from-remote', v: 2 });
    assert.equal((await waitFor(remote, 'from-local')).v, 1);
    assert.equal((await waitFor(local, 'from-remote')).v, 2);
  } finally {
    sync.cancel();
  }
});

test('filtered replication by doc_ids', async () => {
  const { local, remote } = pair();
  await remote.bulkDocs([{ _id: 'keep1' }, { _id: 'skip' }, { _id: 'keep2' }]);
  const result = await local.replicate.from(remote, { doc_ids: ['keep1', 'keep2'] });
  assert.equal(result.docs_written, 2);
  const all = await local.allDocs();
  assert.deepEqual(all.rows.map((x) => x.id), ['keep1', 'keep2']);
});
