// Differential script: the whole shape of the common errors (shapeStep:
// every member in order, the reason among them, the id and docId that
// put, post, remove and get add, String(err)) for the same calls on a
// local database and, with DIFF_REMOTE, through the http adapter; and
// remove()'s argument forms, whose wrong ones PouchDB answers with the
// TypeError of reading them.
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const { shapeStep, fresh, done } = require('./lib/report');

async function calls(db, p) {
  // The written documents name their part, so that settee's revisions on
  // its server are not those of its local part (PouchDB's local ones are
  // MD5 digests, numbered apart from the server's by the report).
  const a1 = await db.put({ _id: 'a', part: p });
  const a2 = await db.put({ _id: 'a', _rev: a1.rev, part: p });
  await shapeStep(p + 'put conflict', db.put({ _id: 'a' }));
  await shapeStep(p + 'put stale rev', db.put({ _id: 'a', _rev: a1.rev }));
  await shapeStep(p + 'post conflict', db.post({ _id: 'a' }));
  await shapeStep(p + 'bulkDocs conflict row', db.bulkDocs([{ _id: 'a' }, { _id: 'ok1', part: p }]));
  await shapeStep(p + 'bulkDocs reserved id', db.bulkDocs([{ _id: '_foo' }]));
  await shapeStep(p + 'bulkDocs invalid rev', db.bulkDocs([{ _id: 'b', _rev: 'bad' }]));
  await shapeStep(p + 'get missing', db.get('missing'));
  await shapeStep(p + 'get reserved id', db.get('_foo'));
  await shapeStep(p + 'put reserved id', db.put({ _id: '_foo' }));
  await shapeStep(p + 'put invalid rev', db.put({ _id: 'c', _rev: 'invalid' }));
  await shapeStep(p + 'put no _id', db.put({ v: 1 }));
  await shapeStep(p + 'put number _id', db.put({ _id: 5 }));
  await shapeStep(p + 'put null', db.put(null));
  await shapeStep(p + 'remove stale rev', db.remove('a', a1.rev));
  await shapeStep(p + 'remove doc stale rev', db.remove({ _id: 'a', _rev: a1.rev }));
  await shapeStep(p + 'remove null', () => db.remove(null));
  await shapeStep(p + 'remove undefined', () => db.remove(undefined));
  await shapeStep(p + 'remove 42', () => db.remove(42));
  await shapeStep(p + 'remove {}', () => db.remove({}));
  await shapeStep(p + 'remove bare id', () => db.remove('a'));
  await shapeStep(p + 'remove {_id} live', () => db.remove({ _id: 'a' }));
  await shapeStep(p + 'remove {_id} never written', () => db.remove({ _id: 'x' }));
  await shapeStep(p + 'remove garbage rev', () => db.remove('a', 'garbage'));
  await shapeStep(p + 'remove number rev', () => db.remove({ _id: 'a', _rev: 5 }));
  await shapeStep(p + 'remove number _id', () => db.remove({ _id: 5, _rev: '1-abc' }));
  await shapeStep(p + 'remove reserved id', () => db.remove({ _id: '_foo', _rev: '1-abc' }));
  await shapeStep(p + 'remove null id with rev', () => db.remove(null, '1-abc'));
  await shapeStep(p + 'remove null callback', () => new Promise((resolve, reject) => db.remove(null, (e, r) => (e ? reject(e) : resolve(r)))));
  // Malformed revs: pouchdb-core refuses what is not a number, '-' and
  // no other '-' (400); the rest it looks up, and a rev that can name no
  // revision ('1-', '0-abc', a generation beyond 64 bits) is a conflict,
  // or a never-written document's 404 for a removal. (Each 'new' id is
  // never written: PouchDB takes a root-making '0-x' on a deleted one.)
  const badRevs = ['1-', '0-abc', '0-', '99999999999999999999-abc', '1-abc-def', '-abc', 'x-1', '+1-abc'];
  for (const [i, rev] of badRevs.entries()) {
    await shapeStep(p + `put rev ${rev}`, () => db.put({ _id: 'a', _rev: rev }));
    await shapeStep(p + `put new rev ${rev}`, () => db.put({ _id: 'new' + i, _rev: rev }));
    await shapeStep(p + `post rev ${rev}`, () => db.post({ _id: 'a', _rev: rev }));
    await shapeStep(p + `bulkDocs rev ${rev}`, () => db.bulkDocs([{ _id: 'ok' + i, part: p + i }, { _id: 'a', _rev: rev }]));
    await shapeStep(p + `remove rev ${rev}`, () => db.remove('a', rev));
    await shapeStep(p + `remove opts.rev ${rev}`, () => db.remove({ _id: 'a' }, { rev }));
    await shapeStep(p + `remove never written rev ${rev}`, () => db.remove('new' + i, rev));
  }
  await shapeStep(p + 'bulkDocs reserved id bad rev', db.bulkDocs([{ _id: '_foo', _rev: 'x-1' }]));
  await shapeStep(p + 'put reserved id bad rev', db.put({ _id: '_foo', _rev: 'x-1' }));
  await db.put({ _id: '_local/l' });
  for (const rev of ['1-', '0-abc', '1-abc-def']) {
    await shapeStep(p + `local put rev ${rev}`, () => db.put({ _id: '_local/l', _rev: rev }));
    await shapeStep(p + `local bulkDocs rev ${rev}`, () => db.bulkDocs([{ _id: '_local/l', _rev: rev }]));
    await shapeStep(p + `local remove rev ${rev}`, () => db.remove({ _id: '_local/l', _rev: rev }));
  }
  await shapeStep(p + 'local remove number rev', () => db.remove({ _id: '_local/l', _rev: 5 }));
  await shapeStep(p + 'local put conflict', db.put({ _id: '_local/l' }));
  await shapeStep(p + 'local get missing', db.get('_local/nope'));
  await shapeStep(p + 'local remove missing', db.remove({ _id: '_local/nope', _rev: '0-1' }));
  await shapeStep(p + 'local remove no rev', db.remove({ _id: '_local/l' }));
  await shapeStep(p + 'remove', db.remove('a', a2.rev));
  await shapeStep(p + 'get deleted', db.get('a'));
  await shapeStep(p + 'remove deleted', db.remove('a', a2.rev));
  await shapeStep(p + 'remove deleted no rev', () => db.remove({ _id: 'a' }));
}

(async () => {
  const db = await fresh(PouchDB, 'diff_errors', { adapter: 'memory' });
  await calls(db, '');
  await db.destroy();
  if (process.env.DIFF_REMOTE) {
    // Each side its own database on the one server; one a failed run left
    // behind goes first (a missing one's destroy() PouchDB resolves and
    // settee rejects: replication.js's 'remote destroy').
    const url = process.env.DIFF_REMOTE + '/diff_errors_' + (typeof settee === 'object' ? 'settee' : 'node');
    await new PouchDB(url).destroy().catch(() => {});
    const remote = new PouchDB(url);
    await calls(remote, 'http ');
    await remote.destroy();
  }
})().then(() => done(), done);
