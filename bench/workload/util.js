// Helpers shared by the workload groups (bench/workload/*.js).
'use strict';

// PouchDB's suite's id helper: doc_ and the index padded to 10 digits.
function docId(i) {
  return 'doc_' + String(i).padStart(10, '0');
}

// A workload check: throws when `cond` is false.
function expect(cond, what) {
  if (!cond) throw new Error(what);
}

// Every entry of a bulkDocs response is ok.
function expectAllOk(res, count, what) {
  expect(Array.isArray(res) && res.length === count, what + ': expected ' + count + ' results, got ' +
    (Array.isArray(res) ? res.length : typeof res));
  for (let i = 0; i < res.length; i++) {
    const r = res[i];
    if (!r || r.ok !== true || typeof r.id !== 'string' || typeof r.rev !== 'string') {
      throw new Error(what + ': result ' + i + ' is not ok: ' + JSON.stringify(r));
    }
  }
}

// The documents a database holds (live ones, as info() counts them).
async function expectDocCount(db, count) {
  const info = await db.info();
  expect(info.doc_count === count, 'expected ' + count + ' documents at the end, found ' + info.doc_count);
}

module.exports = { docId, expect, expectAllOk, expectDocCount };
