// Differential script: plugin/defaults API, replicate/sync between two
// local databases, and both against `settee serve` over HTTP when
// DIFF_REMOTE names a server's base URL (the test starts one).
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const { step, fresh, done } = require('./lib/report');

// A replication's result: what both sides report the same way.
function outcome(r) {
  return { ok: r.ok, status: r.status, docs_read: r.docs_read, docs_written: r.docs_written,
    doc_write_failures: r.doc_write_failures, errors: r.errors };
}
const ids = (db) => db.allDocs({ include_docs: true, conflicts: true }).then((r) => r.rows.map((x) => x.doc));

(async () => {
  // plugin and defaults
  PouchDB.plugin({ hello() { return 'hello ' + this.name; } });
  let called = null;
  PouchDB.plugin((P) => { called = typeof P.plugin; });
  await step('plugin fn called', Promise.resolve(called));
  await step('plugin method', Promise.resolve(new PouchDB('diff_plug', { adapter: 'memory' }).hello()));
  await step('plugin bad', async () => PouchDB.plugin(42));
  const Mem = PouchDB.defaults({ adapter: 'memory' });
  const dm = new Mem('diff_defaults');
  await step('defaults db works', dm.put({ _id: 'x', v: 'defaults' }).then(() => dm.get('x')));
  await step('defaults has plugin', Promise.resolve(typeof dm.hello));
  await step('defaults name', Promise.resolve(dm.name));
  await dm.destroy();
  // pouchdb-core's constructors construct when called without `new`.
  await step('PouchDB without new', PouchDB('diff_nonew', { adapter: 'memory' }).info().then((i) => i.db_name));
  await step('defaults without new', Mem('diff_nonew').info().then((i) => i.db_name));
  await step('without new instanceof', Promise.resolve(PouchDB('diff_nonew', { adapter: 'memory' }) instanceof PouchDB));

  const a = await fresh(PouchDB, 'diff_rep_a', { adapter: 'memory' });
  const b = await fresh(PouchDB, 'diff_rep_b', { adapter: 'memory' });
  await a.bulkDocs([{ _id: 'a1', v: 'a1' }, { _id: 'a2', v: 'a2' }, { _id: '_design/f', filters: {
    odd: 'function (doc, req) { return doc.n % 2 === 1; }' } }]);
  await a.bulkDocs([{ _id: 'n1', n: 1 }, { _id: 'n2', n: 2 }, { _id: 'n3', n: 3 }]);
  await a.putAttachment('a1', 'att.txt', (await a.get('a1'))._rev, Buffer.from('replicated bytes'), 'text/plain');
  await step('replicate a->b', PouchDB.replicate(a, b).then(outcome));
  await step('b docs', ids(b));
  await step('b attachment', b.getAttachment('a1', 'att.txt'));
  await step('replicate again', a.replicate.to(b).then(outcome));
  // Conflict on both sides with given revisions (so the winner does not
  // depend on the hash function), then sync.
  await a.bulkDocs([{ _id: 'c', _rev: '1-aaa', v: 'a' }], { new_edits: false });
  await b.bulkDocs([{ _id: 'c', _rev: '1-bbb', v: 'b' }], { new_edits: false });
  await step('sync', a.sync(b).then((r) => ({ push: outcome(r.push), pull: outcome(r.pull) })));
  await step('a c conflicts', a.get('c', { conflicts: true }));
  await step('b c conflicts', b.get('c', { conflicts: true }));
  const fa = await fresh(PouchDB, 'diff_rep_f', { adapter: 'memory' });
  await step('filtered ddoc', a.replicate.to(fa, { filter: 'f/odd' }).then(outcome));
  await step('filtered docs', fa.allDocs().then((r) => r.rows.map((x) => x.id)));
  const fb = await fresh(PouchDB, 'diff_rep_g', { adapter: 'memory' });
  await step('filtered doc_ids', a.replicate.to(fb, { doc_ids: ['a2', 'n3', 'nope'] }).then(outcome));
  await step('doc_ids docs', fb.allDocs().then((r) => r.rows.map((x) => x.id)));
  const fc = await fresh(PouchDB, 'diff_rep_h', { adapter: 'memory' });
  await step('filtered selector', a.replicate.to(fc, { selector: { n: { $gte: 2 } } }).then(outcome));
  await step('selector docs', fc.allDocs().then((r) => r.rows.map((x) => x.id)));
  const fd = await fresh(PouchDB, 'diff_rep_i', { adapter: 'memory' });
  await step('filtered fn', a.replicate.to(fd, { filter: (doc) => doc.n === 2 }).then(outcome));
  await step('fn docs', fd.allDocs().then((r) => r.rows.map((x) => x.id)));
  const events = [];
  await step('events', new Promise((resolve, reject) => {
    const rep = PouchDB.replicate(a, fd);
    rep.on('change', (info) => events.push('change ' + info.docs_written));
    rep.on('complete', (info) => { events.push('complete ' + info.status); resolve(events); });
    rep.on('error', reject);
  }));

  // A target that cannot be reached: the error's result is PouchDB's
  // aborted one, and a live replication not asked to retry ends with that
  // error (settee's retried for ever).
  const unreachable = 'http://127.0.0.1:1/diff_unreachable';
  await step('unreachable result', a.replicate.to(unreachable).then(outcome, (e) => outcome(e.result)));
  await step('unreachable live', new Promise((resolve) => {
    const rep = a.replicate.to(unreachable, { live: true });
    const timer = setTimeout(() => { rep.cancel(); resolve('still running after 20s'); }, 20000);
    rep.on('error', (e) => { clearTimeout(timer); resolve(outcome(e.result)); });
    rep.on('complete', (info) => { clearTimeout(timer); resolve(outcome(info)); });
  }));
  await step('unreachable live promise', a.replicate.to(unreachable, { live: true }).then(outcome, (e) => outcome(e.result)));

  if (process.env.DIFF_REMOTE) {
    const url = process.env.DIFF_REMOTE + '/diff_remote';
    const r = new PouchDB(url);
    await r.destroy().catch(() => {});
    const remote = new PouchDB(url);
    await step('remote info', remote.info().then((i) => ({ doc_count: i.doc_count, db_name: i.db_name })));
    await step('push to remote', a.replicate.to(remote).then(outcome));
    await step('remote docs', ids(remote));
    await step('remote put conflict', remote.put({ _id: 'a2', v: 'x' }));
    await step('remote get missing', remote.get('nope'));
    await step('remote attachment', remote.getAttachment('a1', 'att.txt'));
    await step('remote allDocs', remote.allDocs({ startkey: 'a', endkey: 'n2', include_docs: true }));
    await step('remote allDocs keys', remote.allDocs({ keys: ['n1', 'zz'] }));
    await step('remote changes', remote.changes({ since: 0, limit: 3 }).then((r) => r.results.map((c) => c.id)));
    // A live feed whose 'change' listener throws keeps following (the
    // throw rejected settee's poll: an unhandled rejection ended the run).
    await step('remote live listener throws', new Promise((resolve) => {
      const seen = [];
      const feed = remote.changes({ live: true, since: 'now' });
      const timer = setTimeout(() => { feed.cancel(); resolve({ seen, timedOut: true }); }, 20000);
      feed.on('change', (c) => {
        seen.push(c.id);
        if (c.id === 'live1') { remote.put({ _id: 'live2' }); throw new Error('listener bug'); }
        if (c.id === 'live2') { clearTimeout(timer); feed.cancel(); resolve({ seen }); }
      });
      feed.on('error', (e) => { clearTimeout(timer); resolve({ error: e.message, seen }); });
      setTimeout(() => remote.put({ _id: 'live1' }), 100);
    }));
    await step('remote changes filter fn', remote.changes({ filter: (doc) => doc.n === 3 }).then((r) => r.results.map((c) => c.id)));
    await step('remote bulkDocs', remote.bulkDocs([{ _id: 'n1', n: 9 }, { _id: 'rnew', v: 'rnew' }]));
    await step('remote bulkDocs bad id', remote.bulkDocs([{ _id: '_bad' }]));
    await step('remote get revs', remote.get('a1', { revs: true, attachments: true }));
    await step('remote get open_revs', remote.get('a2', { open_revs: 'all' }));
    await step('remote query temp', remote.query((doc, emit) => { if (doc.n) emit(doc.n); }, { reduce: false }));
    await step('remote query ddoc missing view', remote.query('f/nope'));
    await step('remote put local', remote.put({ _id: '_local/r', v: 1 }).then(() => remote.get('_local/r')));
    await step('remote revsDiff', remote.revsDiff({ a2: ['1-abc', '9-x'] }));
    await step('remote bulkGet', remote.bulkGet({ docs: [{ id: 'a2' }, { id: 'zz' }] }).then((r) => r.results.map((x) => Object.keys(x.docs[0]))));
    await step('remote putAttachment', remote.get('rnew').then((d) => remote.putAttachment('rnew', 'r.bin', d._rev, Buffer.from([1, 2, 3]), 'application/octet-stream')).then(() => remote.getAttachment('rnew', 'r.bin')));
    await step('remote removeAttachment', remote.get('rnew').then((d) => remote.removeAttachment('rnew', 'r.bin', d._rev)).then(() => remote.get('rnew')));
    const back = await fresh(PouchDB, 'diff_rep_back', { adapter: 'memory' });
    await step('pull from remote', back.replicate.from(remote).then(outcome));
    await step('pulled docs', ids(back));
    await step('remote destroy', remote.destroy());
  }
  for (const d of [a, b, fa, fb, fc, fd]) await d.destroy();
})().then(() => done(), done);
