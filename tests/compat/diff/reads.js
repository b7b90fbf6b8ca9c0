// Differential script: get options, bulkGet, revsDiff, allDocs with
// conflicts, live changes, callbacks, info, compact and destroy.
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const { step, fresh, done } = require('./lib/report');

(async () => {
  const db = await fresh(PouchDB, 'diff_reads', { adapter: 'memory' });
  await db.bulkDocs([
    { _id: 'k', _rev: '1-a', v: 'k1' },
    { _id: 'k', _rev: '2-b', v: 'k2b', _revisions: { start: 2, ids: ['b', 'a'] } },
    { _id: 'k', _rev: '2-c', v: 'k2c', _revisions: { start: 2, ids: ['c', 'a'] } },
    { _id: 'k', _rev: '3-d', v: 'k3d', _revisions: { start: 3, ids: ['d', 'c', 'a'] } },
    { _id: 'k', _rev: '3-e', _deleted: true, _revisions: { start: 3, ids: ['e', 'b', 'a'] } },
    { _id: 'gone', _rev: '1-x', v: 'gone' },
    { _id: 'gone', _rev: '2-y', _deleted: true, _revisions: { start: 2, ids: ['y', 'x'] } },
  ], { new_edits: false });
  await step('get', db.get('k'));
  await step('get conflicts', db.get('k', { conflicts: true }));
  await step('get revs_info', db.get('k', { revs_info: true }));
  await step('get revs', db.get('k', { revs: true }));
  await step('get old rev', db.get('k', { rev: '2-b' }));
  await step('get old rev revs', db.get('k', { rev: '2-b', revs: true }));
  await step('get deleted leaf', db.get('k', { rev: '3-e' }));
  await step('get latest', db.get('k', { rev: '2-b', latest: true }));
  await step('get missing rev', db.get('k', { rev: '9-z' }));
  await step('get bad rev', db.get('k', { rev: 'junk' }));
  await step('open_revs all', db.get('k', { open_revs: 'all' }).then((r) => r.sort((x, y) => (x.ok._rev < y.ok._rev ? -1 : 1))));
  await step('open_revs some', db.get('k', { open_revs: ['3-d', '3-e', '4-q'], revs: true }));
  await step('open_revs deleted doc', db.get('gone', { open_revs: 'all' }));
  await step('get deleted doc', db.get('gone'));
  await step('get deleted doc by rev', db.get('gone', { rev: '2-y', revs: true }));
  await step('get no id', db.get());
  await step('get empty id', db.get(''));
  await step('allDocs conflicts', db.allDocs({ include_docs: true, conflicts: true }));
  await step('allDocs deleted key', db.allDocs({ key: 'gone' }));
  await step('changes all_docs style', db.changes({ style: 'all_docs' }));
  await step('changes conflicts', db.changes({ include_docs: true, conflicts: true }));
  await step('bulkGet', db.bulkGet({ docs: [{ id: 'k' }, { id: 'k', rev: '2-b' }, { id: 'nope' }, { id: 'k', rev: '7-q' }, { id: 'gone' }] }));
  await step('bulkGet revs', db.bulkGet({ docs: [{ id: 'k', rev: '3-d' }], revs: true }));
  await step('bulkGet no docs', db.bulkGet({}));
  await step('revsDiff', db.revsDiff({ k: ['2-b', '3-d', '4-new', '5-new'], nope: ['1-a'] }));
  await step('callback get', new Promise((resolve) => db.get('k', (err, doc) => resolve({ err, doc }))));
  await step('callback error', new Promise((resolve) => db.get('nope', (err, doc) => resolve({ err, doc }))));
  await step('callback put', new Promise((resolve) => db.put({ _id: 'cb', v: 'cb' }, (err, r) => resolve({ err, r }))));

  // Live: from the current update_seq (no timing involved), cancelled
  // after the two writes arrive.
  const since = (await db.info()).update_seq;
  await step('live changes', new Promise((resolve, reject) => {
    const events = [];
    const feed = db.changes({ live: true, since, include_docs: true });
    feed.on('change', (c) => {
      events.push(['change', c.id, c.doc.v]);
      if (events.length === 2) feed.cancel();
    });
    feed.on('complete', (info) => { events.push(['complete', info.status || null]); resolve(events); });
    feed.on('error', reject);
    db.put({ _id: 'live1', v: 'l1' }).then(() => db.put({ _id: 'live2', v: 'l2' })).catch(reject);
  }));
  await step('live changes cancelled', new Promise((resolve) => {
    const f = db.changes({ live: true, since: 'now' });
    f.on('complete', resolve);
    setTimeout(() => f.cancel(), 30);
  }));
  await step('info', db.info().then((i) => ({ doc_count: i.doc_count, update_seq: i.update_seq, db_name: i.db_name })));
  await step('compact', db.compact());
  await step('after compact old rev', db.get('k', { rev: '2-b' }));
  await step('after compact revs_info', db.get('k', { revs_info: true }));
  await step('info auto_compaction', db.info().then((i) => i.auto_compaction));
  await step('destroy', db.destroy());
  await step('use after destroy', db.get('k'));
  await step('destroy twice', db.destroy());
  const c = new PouchDB('diff_reads_closed', { adapter: 'memory' });
  await c.put({ _id: 'x' });
  await step('close', c.close());
  await step('use after close', c.get('x'));
  await step('reopen after close', new PouchDB('diff_reads_closed', { adapter: 'memory' }).get('x').then((d) => d._id));
  await new PouchDB('diff_reads_closed', { adapter: 'memory' }).destroy();
  await step('reopen empty', new PouchDB('diff_reads', { adapter: 'memory' }).info().then((i) => ({ doc_count: i.doc_count, update_seq: i.update_seq })));
  await new PouchDB('diff_reads', { adapter: 'memory' }).destroy();
})().then(() => done(), done);
