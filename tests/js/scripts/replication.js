// PouchDB's replication API in settee's JS runtime (js/prelude/replication.js
// over replication/): PouchDB.replicate with events and batches, callbacks,
// db.replicate.to/from, db.sync converging conflicts, live sync delivering
// and cancel(), errors. Run by `settee run`; any failed assertion exits
// non-zero.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const tag = 'r' + settee.threadId + '_';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function leaves(db, id) {
  const revs = await db.get(id, { open_revs: 'all' });
  return revs.map((r) => r.ok._rev).sort();
}

check('PouchDB.replicate: events, batches and the complete info', async () => {
  const a = new PouchDB(tag + 'a'), b = new PouchDB(tag + 'b');
  const docs = [];
  for (let i = 0; i < 250; i++) docs.push({ _id: 'd' + String(i).padStart(3, '0'), i });
  await a.bulkDocs(docs);
  const events = [];
  const batches = [];
  const rep = PouchDB.replicate(a, b, { batch_size: 100 });
  rep.on('active', () => events.push('active'));
  rep.on('change', (info) => { events.push('change'); batches.push(info.docs.length); });
  rep.on('paused', (err) => events.push(err === undefined ? 'paused' : 'paused with ' + err));
  rep.on('complete', () => events.push('complete'));
  const info = await rep;
  assert.strictEqual(info.ok, true);
  assert.strictEqual(info.status, 'complete');
  assert.strictEqual(info.docs_written, 250);
  assert.strictEqual(info.docs_read, 250);
  assert.strictEqual(info.doc_write_failures, 0);
  assert.deepStrictEqual(batches, [100, 100, 50]);
  assert.strictEqual(events[0], 'active');
  // PouchDB's one-shot replication pauses (no error) once its feed is
  // done, then completes.
  assert.deepStrictEqual(events.slice(-2), ['paused', 'complete']);
  assert.strictEqual((await b.info()).doc_count, 250);
  const doc = await b.get('d007', { revs: true });
  assert.strictEqual(doc.i, 7);
  assert.strictEqual(doc._revisions.start, 1);
});

check('callbacks and db.replicate.to / from', async () => {
  const a = new PouchDB(tag + 'c'), b = new PouchDB(tag + 'd');
  await a.put({ _id: 'x' });
  const info = await new Promise((resolve, reject) =>
    a.replicate.to(b, (err, res) => (err ? reject(err) : resolve(res))));
  assert.strictEqual(info.docs_written, 1);
  await b.put({ _id: 'y' });
  const back = await a.replicate.from(tag + 'd');
  assert.strictEqual(back.docs_written, 1);
  assert.strictEqual((await a.get('y'))._id, 'y');
});

check('sync converges both sides, conflicts included', async () => {
  const a = new PouchDB(tag + 'e'), b = new PouchDB(tag + 'f');
  const r = await a.put({ _id: 'c', v: 0 });
  await a.replicate.to(b);
  await a.put({ _id: 'c', _rev: r.rev, v: 'a' });
  await b.put({ _id: 'c', _rev: r.rev, v: 'b' });
  await a.put({ _id: '_local/stays', v: 1 });
  const result = await a.sync(b);
  assert.strictEqual(result.push.status, 'complete');
  assert.strictEqual(result.pull.status, 'complete');
  assert.deepStrictEqual(await leaves(a, 'c'), await leaves(b, 'c'));
  assert.strictEqual((await leaves(a, 'c')).length, 2);
  const winnerA = await a.get('c', { conflicts: true });
  const winnerB = await b.get('c', { conflicts: true });
  assert.deepStrictEqual(winnerA, winnerB);
  assert.strictEqual(winnerA._conflicts.length, 1);
  await assert.rejects(b.get('_local/stays'), (e) => e.status === 404);
});

check('live sync delivers new writes and cancel() completes it', async () => {
  const a = new PouchDB(tag + 'g'), b = new PouchDB(tag + 'h');
  const sync = PouchDB.sync(a, b, { live: true });
  const directions = [];
  sync.on('change', (c) => directions.push(c.direction));
  // PouchDB's sync: 'paused' when both directions are, 'active' when
  // one leaves that state, so the two never come twice in a row.
  let paused = 0;
  const states = [];
  sync.on('paused', () => { paused++; states.push('paused'); });
  sync.on('active', () => states.push('active'));
  await sleep(50);
  await b.put({ _id: 'from-b' });
  await a.put({ _id: 'from-a' });
  const start = Date.now();
  // The documents land, then the batch is checkpointed and its 'change'
  // event crosses to this loop.
  while (Date.now() - start < 1000 && !(directions.includes('push') && directions.includes('pull'))) {
    await sleep(5);
  }
  assert.strictEqual((await a.get('from-b'))._id, 'from-b');
  assert.strictEqual((await b.get('from-a'))._id, 'from-a');
  assert.ok(directions.includes('push') && directions.includes('pull'), directions.join());
  assert.ok(paused > 0);
  for (let i = 1; i < states.length; i++) assert.notStrictEqual(states[i], states[i - 1], states.join());
  sync.cancel();
  const result = await sync;
  assert.strictEqual(result.push.status, 'cancelled');
  assert.strictEqual(result.pull.status, 'cancelled');
});

check('errors: unreachable peers and bad arguments', async () => {
  const a = new PouchDB(tag + 'i');
  await a.put({ _id: 'z' });
  let errorEvent = null;
  const rep = PouchDB.replicate(a, 'http://127.0.0.1:1/nothing');
  rep.on('error', (e) => { errorEvent = e; });
  await assert.rejects(rep, (e) => e.status === 500 && e.name === 'io_error');
  assert.ok(errorEvent);
  assert.throws(() => PouchDB.replicate(a, 42), (e) => e.status === 400);
  await assert.rejects(PouchDB.replicate(a, tag + 'j', { filter: 'ddoc/f' }), (e) => e.status === 404);
  // A filter function on a remote source runs in the client, on its feed:
  // the unreachable server is the error.
  await assert.rejects(PouchDB.replicate('http://127.0.0.1:1/nothing', tag + 'j', { filter: () => true }),
    (e) => e.status === 500 && e.name === 'io_error');
  // And not together with a selector.
  await assert.rejects(PouchDB.replicate(a, tag + 'j', { filter: () => true, doc_ids: ['z'] }),
    (e) => e.status === 400);
});

async function seedForFilters(name) {
  const src = new PouchDB(name);
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push({ _id: 'f' + String(i).padStart(2, '0'), kind: i % 3 ? 'drop' : 'keep', i });
  await src.bulkDocs(docs);
  return src;
}

check('filters: a design document filter of a local source, with query_params', async () => {
  const src = await seedForFilters(tag + 'fa');
  await src.put({ _id: '_design/app', filters: {
    kind: 'function (doc, req) { return doc.kind === req.query.kind; }' } });
  const dst = new PouchDB(tag + 'fb');
  const info = await PouchDB.replicate(src, dst, { filter: 'app/kind', query_params: { kind: 'keep' } });
  assert.strictEqual(info.docs_written, 10);
  const ids = (await dst.allDocs()).rows.map((r) => r.id);
  assert.strictEqual(ids.length, 10);
  assert.ok(ids.every((id) => Number(id.slice(1)) % 3 === 0), ids.join());
  // The design document itself is a change the filter did not pass.
  await assert.rejects(dst.get('_design/app'), (e) => e.status === 404);
  // A later run resumes from the checkpoint and brings only a new match.
  await src.bulkDocs([{ _id: 'late1', kind: 'keep' }, { _id: 'late2', kind: 'drop' }]);
  const again = await PouchDB.replicate(src, dst, { filter: 'app/kind', query_params: { kind: 'keep' } });
  assert.strictEqual(again.docs_written, 1);
  await dst.get('late1');
});

check('filters: a JS filter function, with req.query and deletions', async () => {
  const src = await seedForFilters(tag + 'fc');
  const dst = new PouchDB(tag + 'fd');
  const rep = PouchDB.replicate(src, dst, {
    filter: function (doc, req) { return doc.i >= req.query.min || doc._deleted === true; },
    query_params: { min: 25 },
  });
  const changed = [];
  rep.on('change', (info) => changed.push(...info.docs.map((d) => d._id)));
  const info = await rep;
  assert.strictEqual(info.docs_written, 5);
  assert.deepStrictEqual(changed.sort(), ['f25', 'f26', 'f27', 'f28', 'f29']);
  // Arrow functions too; a deletion reaches the target when it passes.
  const f25 = await src.get('f25');
  await src.remove(f25);
  const del = await PouchDB.replicate(src, dst, { filter: (doc) => doc._deleted === true });
  assert.strictEqual(del.docs_written, 1);
  await assert.rejects(dst.get('f25'), (e) => e.status === 404);
  // A function that throws fails the replication rather than passing all.
  await assert.rejects(PouchDB.replicate(src, new PouchDB(tag + 'fe'),
    { filter: function () { throw new Error('boom'); } }));
});

done();
