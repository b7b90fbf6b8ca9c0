// Differential script: writes (put, post, bulkDocs, new_edits=false,
// conflicts, deletion and re-creation, _local documents, revs_limit).
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const { step, fresh, done } = require('./lib/report');

(async () => {
  const db = await fresh(PouchDB, 'diff_writes', { adapter: 'memory' });
  const a1 = await step('put new', db.put({ _id: 'a', v: 1 }));
  await step('put conflict (no rev)', db.put({ _id: 'a', v: 2 }));
  await step('put conflict (old rev)', db.put({ _id: 'a', _rev: '1-0123456789abcdef0123456789abcdef', v: 2 }));
  const a2 = await step('put update', db.put({ _id: 'a', _rev: a1.rev, v: 2 }));
  await step('put bad rev', db.put({ _id: 'a', _rev: 'bogus', v: 3 }));
  await step('put no id', db.put({ v: 1 }));
  await step('put empty id', db.put({ _id: '', v: 1 }));
  await step('put non-string id', db.put({ _id: 5, v: 1 }));
  await step('put underscore id', db.put({ _id: '_foo', v: 1 }));
  await step('put bad member', db.put({ _id: 'b', _foo: 'b' }));
  await step('put array', db.put([1, 2]));
  await step('put null', db.put(null));
  await step('put string', db.put('x'));
  await step('put with id arg', db.put({ _id: 'c', n: 'c1' }, { force: false }));
  const p = await step('post', db.post({ v: 'posted' }));
  await step('get posted', db.get(p.id));
  await step('post with id', db.post({ _id: 'postid', v: 'pid' }));
  await step('post with id again', db.post({ _id: 'postid', v: 'pid' }));
  await step('get a', db.get('a'));
  await step('remove stale', db.remove('a', a1.rev));
  const a3 = await step('remove', db.remove({ _id: 'a', _rev: a2.rev }));
  await step('get deleted', db.get('a'));
  await step('get deleted by rev', db.get('a', { rev: a3.rev }));
  await step('remove again', db.remove('a', a3.rev));
  await step('remove missing', db.remove('nope', '1-0123456789abcdef0123456789abcdef'));
  await step('remove no rev', db.remove('a'));
  await step('put deleted: true', db.put({ _id: 'del', _deleted: true, v: 'del' }));
  const a4 = await step('recreate', db.put({ _id: 'a', v: 'again' }));
  await step('recreate with stale rev', db.put({ _id: 'a', _rev: a2.rev, v: 'again2' }));
  await step('get recreated revs', db.get('a', { revs: true }));
  await step('put deleted via put', db.put({ _id: 'a', _rev: a4.rev, _deleted: true, keep: 'me' }));
  await step('get deleted body', db.get('a', { rev: '5-' + 'x'.repeat(32) }));

  // bulkDocs
  const b = await step('bulkDocs mixed', db.bulkDocs([
    { _id: 'b1', v: 'b1' }, { _id: 'b2', v: 'b2' }, { _id: 'c', v: 'conflict' }, { v: 'noid' }, { _id: 'b1', v: 'dup' },
  ]));
  await step('bulkDocs {docs}', db.bulkDocs({ docs: [{ _id: 'b3' }] }));
  await step('bulkDocs bad id', db.bulkDocs([{ _id: 'ok1' }, { _id: '_bad' }]));
  await step('bulkDocs not array', db.bulkDocs('x'));
  await step('bulkDocs empty', db.bulkDocs([]));
  await step('bulkDocs null doc', db.bulkDocs([null]));
  await step('bulkDocs delete', db.bulkDocs([{ _id: 'b1', _rev: b[0].rev, _deleted: true }]));
  await step('bulkDocs rev on new', db.bulkDocs([{ _id: 'newrev', _rev: '1-abc' }]));

  // new_edits=false and conflicts
  await step('replicated no rev', db.bulkDocs([{ _id: 'r', v: 0 }], { new_edits: false }));
  await step('replicated 1', db.bulkDocs([{ _id: 'r', _rev: '1-a', v: 1 }], { new_edits: false }));
  await step('replicated 2a', db.bulkDocs([
    { _id: 'r', _rev: '2-b', v: 2, _revisions: { start: 2, ids: ['b', 'a'] } },
  ], { new_edits: false }));
  await step('replicated 2c', db.bulkDocs({ docs: [
    { _id: 'r', _rev: '2-c', v: 3, _revisions: { start: 2, ids: ['c', 'a'] } },
  ], new_edits: false }));
  await step('replicated same again', db.bulkDocs([{ _id: 'r', _rev: '2-c', v: 'changed' }], { new_edits: false }));
  await step('get r conflicts', db.get('r', { conflicts: true }));
  await step('get r 2-b', db.get('r', { rev: '2-b' }));
  await step('get r open_revs all', db.get('r', { open_revs: 'all' }));
  await step('get r open_revs list', db.get('r', { open_revs: ['2-b', '2-c', '9-z'] }));
  await step('get r revs_info', db.get('r', { revs_info: true }));
  await step('get r revs', db.get('r', { revs: true, rev: '2-b' }));
  await step('resolve: delete loser', db.remove('r', '2-b'));
  await step('get r conflicts after', db.get('r', { conflicts: true }));
  await step('put on winner', db.put({ _id: 'r', _rev: '2-c', v: 4 }));
  await step('put on deleted loser', db.put({ _id: 'r', _rev: '3-' + 'x'.repeat(32), v: 4 }));
  await step('replicated deleted leaf', db.bulkDocs([
    { _id: 'r2', _rev: '1-a', _deleted: true },
  ], { new_edits: false }));
  await step('get r2', db.get('r2'));
  await step('put on replicated deleted', db.put({ _id: 'r2', v: 'new' }));
  await step('put new_edits false', db.put({ _id: 'r3', _rev: '4-d', v: 'r3' }, { new_edits: false }));
  await step('get r3 revs', db.get('r3', { revs: true }));

  // _local documents
  const l1 = await step('local put', db.put({ _id: '_local/x', v: 1 }));
  await step('local get', db.get('_local/x'));
  await step('local put no rev', db.put({ _id: '_local/x', v: 2 }));
  const l2 = await step('local put rev', db.put({ _id: '_local/x', _rev: l1.rev, v: 2 }));
  await step('local get revs', db.get('_local/x', { revs: true }));
  await step('local in allDocs', db.allDocs({ keys: ['_local/x'] }));
  await step('local remove', db.remove('_local/x', l2.rev));
  await step('local get removed', db.get('_local/x'));
  await step('local bulkDocs', db.bulkDocs([{ _id: '_local/y', v: 1 }]));
  await step('local bulkDocs no rev', db.bulkDocs([{ _id: '_local/y', v: 2 }, { _id: 'after-local', v: 'al' }]));
  await step('local put rev on missing', db.put({ _id: '_local/z', _rev: '0-1', v: 1 }));
  await step('local remove stale', db.remove('_local/y', '0-7'));
  await step('local info', db.info().then((i) => i.doc_count));

  // revs_limit
  const lim = await fresh(PouchDB, 'diff_writes_limit', { adapter: 'memory', revs_limit: 2 });
  let r = await lim.put({ _id: 'x', n: 0 });
  for (let i = 1; i < 5; i++) r = await lim.put({ _id: 'x', _rev: r.rev, n: i });
  await step('revs_limit revs', lim.get('x', { revs: true }));
  await step('revs_limit revs_info', lim.get('x', { revs_info: true }));
  await step('revs_limit old rev', lim.get('x', { rev: '1-' + 'x'.repeat(32) }));
  await lim.destroy();
  await step('info', db.info().then((i) => ({ doc_count: i.doc_count, update_seq: i.update_seq, db_name: i.db_name })));
  await db.destroy();
})().then(() => done(), done);
