// The attachments group of the PouchDB 9 workload
// (shared/docs/POUCHDB_WORKLOAD.md, cases 24-26, section 4): binary
// attachment writes and reads of a doc with 100 attachments. Case shape:
// bench/workload/runner.js.
'use strict';

const { expect } = require('./util');

function needsAttachments(db) {
  return typeof db.putAttachment === 'function' ? '' : 'attachments (db.putAttachment) are not built yet';
}

// 50,000 random bytes: the low 8 bits of floor(65535 * U), as PouchDB's suite makes them.
function randomBody() {
  const b = Buffer.alloc(50000);
  for (let i = 0; i < b.length; i++) b[i] = Math.floor(65535 * Math.random()) & 0xff;
  return b;
}

async function putHundred(db) {
  const atts = {};
  for (let i = 0; i < 100; i++) atts['att-' + i] = { content_type: 'application/octet-stream', data: randomBody() };
  const res = await db.put({ _id: 'doc1', _attachments: atts });
  expect(res.ok === true, 'put doc1');
  return {};
}

function manyCase(name, opts, check) {
  return {
    name,
    iterations: 100,
    needs: needsAttachments,
    setup: putHundred,
    test: (db) => db.get('doc1', opts),
    verify: (doc) => {
      const names = Object.keys(doc._attachments || {});
      expect(names.length === 100, 'expected 100 attachments, got ' + names.length);
      for (const n of names) check(doc._attachments[n].data, n);
    },
  };
}

module.exports = [
  {
    name: 'basic-attachments',
    iterations: 1000,
    needs: needsAttachments,
    setup: async () => ({ body: randomBody() }),
    test: (db, k, ctx) => db.putAttachment(String(Math.random()), 'foo.txt', ctx.body, 'application/octet-stream'),
    verify: (res) => expect(res && res.ok === true && /^1-/.test(res.rev), 'putAttachment: ' + JSON.stringify(res)),
    finish: async (db, n) => {
      const info = await db.info();
      expect(info.doc_count === n, 'expected ' + n + ' docs, found ' + info.doc_count);
    },
  },
  manyCase('many-attachments-base64', { attachments: true },
    (data, n) => expect(typeof data === 'string' && data.length === 66668, n + ': expected 66,668 base64 characters')),
  manyCase('many-attachments-binary', { attachments: true, binary: true },
    (data, n) => expect(data && data.length === 50000 && typeof data !== 'string', n + ': expected 50,000 bytes')),
];
