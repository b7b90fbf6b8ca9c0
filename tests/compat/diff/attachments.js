// Differential script: attachments (putAttachment, getAttachment,
// removeAttachment, inline base64, binary, attachments: true, stubs).
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
const { step, fresh, done } = require('./lib/report');

(async () => {
  const db = await fresh(PouchDB, 'diff_atts', { adapter: 'memory' });
  const r1 = await step('putAttachment new doc', db.putAttachment('d', 'a.txt', Buffer.from('hello'), 'text/plain'));
  await step('get stub', db.get('d'));
  await step('getAttachment', db.getAttachment('d', 'a.txt'));
  await step('getAttachment missing att', db.getAttachment('d', 'nope.txt'));
  await step('getAttachment missing doc', db.getAttachment('nodoc', 'a.txt'));
  await step('putAttachment no rev on existing', db.putAttachment('d', 'b.txt', Buffer.from('x'), 'text/plain'));
  const r2 = await step('putAttachment with rev', db.putAttachment('d', 'b.bin', r1.rev, Buffer.from([0, 1, 2, 255]), 'application/octet-stream'));
  await step('putAttachment base64 string', db.putAttachment('d', 'c.txt', r2.rev, Buffer.from('from base64').toString('base64'), 'text/plain'));
  await step('get attachments:true', db.get('d', { attachments: true }));
  await step('get attachments binary', db.get('d', { attachments: true, binary: true }));
  await step('get revs stub', db.get('d', { revs_info: true }));
  const d = await db.get('d');
  await step('removeAttachment', db.removeAttachment('d', 'a.txt', d._rev));
  await step('removeAttachment stale rev', db.removeAttachment('d', 'b.bin', d._rev));
  await step('removeAttachment absent name', db.get('d').then((x) => db.removeAttachment('d', 'never', x._rev)));
  await step('get atts_since', db.get('d', { attachments: true, atts_since: [d._rev] }));
  await step('get after remove', db.get('d'));
  await step('getAttachment old rev', db.getAttachment('d', 'a.txt', { rev: d._rev }));
  await step('bulkDocs inline', db.bulkDocs([{ _id: 'e', _attachments: {
    'x.txt': { content_type: 'text/plain', data: Buffer.from('inline x').toString('base64') },
    'y.json': { content_type: 'application/json', data: Buffer.from('{"a":1}') },
  } }]));
  await step('get e attachments', db.get('e', { attachments: true }));
  const e = await db.get('e');
  const e2 = await step('edit keeping stubs', db.put(Object.assign({}, e, { edited: true })));
  await step('edit with missing stub', db.put({ _id: 'e', _rev: e2.rev, _attachments: { 'z.txt': { stub: true, content_type: 'text/plain' } } }));
  await step('bad base64', db.put({ _id: 'f', _attachments: { 'x': { content_type: 'text/plain', data: '!!!notbase64' } } }));
  await step('allDocs attachments', db.allDocs({ include_docs: true, attachments: true }));
  await step('allDocs attachments binary', db.allDocs({ include_docs: true, attachments: true, binary: true, keys: ['e'] }));
  await step('changes attachments', db.changes({ include_docs: true, attachments: true }).then((c) => c.results.map((r) => r.doc)));
  await step('putAttachment on deleted', (async () => {
    const g = await db.put({ _id: 'g', v: 'g' });
    const gd = await db.remove('g', g.rev);
    return db.putAttachment('g', 'a', gd.rev, Buffer.from('z'), 'text/plain');
  })());
  await step('putAttachment on deleted, no rev', db.putAttachment('g', 'a', Buffer.from('z'), 'text/plain'));
  await step('empty attachment', db.putAttachment('h', 'empty', Buffer.alloc(0), 'text/plain').then(() => db.get('h', { attachments: true })));
  await db.destroy();
})().then(() => done(), done);
