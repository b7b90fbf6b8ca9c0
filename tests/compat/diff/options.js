// Differential script: less common options of allDocs, changes, query()
// and find(), and get('') .
'use strict';
const PouchDB = require('pouchdb');
PouchDB.plugin(require('pouchdb-adapter-memory'));
PouchDB.plugin(require('pouchdb-find'));
const { step, fresh, done } = require('./lib/report');

(async () => {
  const db = await fresh(PouchDB, 'diff_options', { adapter: 'memory' });
  const docs = [];
  for (let i = 0; i < 12; i++) docs.push({ _id: 'doc' + String(i).padStart(2, '0'), i, g: i % 3, arr: [i, i % 2], name: i % 2 ? 'Odd' : 'even' });
  docs.push({ _id: 'linked', ref: 'doc03' });
  await db.bulkDocs(docs);
  await step('get empty id', db.get(''));
  await step('allDocs update_seq', db.allDocs({ limit: 1, update_seq: true }));
  await step('allDocs endkey prefix', db.allDocs({ startkey: 'doc0', endkey: 'doc0\ufff0', limit: 3 }));
  await step('allDocs descending keys', db.allDocs({ keys: ['doc01', 'doc02'], descending: true }));
  await step('allDocs inclusive_end false desc', db.allDocs({ startkey: 'doc05', endkey: 'doc02', descending: true, inclusive_end: false }));
  await step('allDocs skip past end', db.allDocs({ skip: 100 }));
  await step('allDocs numeric startkey', db.allDocs({ startkey: 5, limit: 2 }));
  await step('changes return_docs false', db.changes({ return_docs: false, limit: 3 }));
  await step('changes since last', db.changes({ since: 13 }));
  await step('changes since future', db.changes({ since: 99 }));
  await step('changes descending limit', db.changes({ descending: true, limit: 2 }));
  await step('changes filter fn query_params', db.changes({ filter: (doc, req) => doc.g === req.query.g, query_params: { g: 2 } }));
  await step('changes selector include_docs', db.changes({ selector: { arr: { $elemMatch: { $eq: 11 } } }, include_docs: true }));
  await step('changes doc_ids selector', db.changes({ doc_ids: ['doc01', 'doc02'], selector: { g: 1 } }));
  // A 'change' listener that throws is its own bug: PouchDB logs it and the
  // feed goes on to complete (settee failed the feed with the error).
  await step('changes listener throws', new Promise((resolve) => {
    const seen = [];
    const feed = db.changes({ limit: 3 });
    feed.on('change', (c) => { seen.push(c.id); throw new Error('listener bug'); });
    feed.on('complete', (r) => resolve({ seen, results: r.results.length }));
    feed.on('error', (e) => resolve({ error: e.message, seen }));
  }));
  await db.put({ _id: '_design/q', views: {
    linked: { map: 'function (doc) { if (doc.ref) emit(doc._id, { _id: doc.ref }); }' },
    byg: { map: 'function (doc) { if (doc.g !== undefined) emit([doc.g, doc.i], doc.i); }', reduce: '_sum' },
    names: { map: 'function (doc) { if (doc.name) emit(doc.name, null); }' },
    count: { map: 'function (doc) { if (doc.g !== undefined) emit(doc.g); }', reduce: '_count' },
    approx: { map: 'function (doc) { if (doc.g !== undefined) emit(doc.g, doc.i); }', reduce: '_approx_count_distinct' },
  } });
  await step('query linked docs', db.query('q/linked', { include_docs: true }));
  await step('query update_seq', db.query('q/names', { update_seq: true, limit: 1 }));
  await step('query collation', db.query('q/names'));
  await step('query group_level 1 desc', db.query('q/byg', { group_level: 1, descending: true }));
  await step('query key array range', db.query('q/byg', { startkey: [1], endkey: [1, {}], reduce: false }));
  await step('query keys reduce group', db.query('q/byg', { keys: [[0, 0], [2, 5]], group: true }));
  await step('query keys multi no group', db.query('q/count', { keys: [0, 1] }));
  await step('query count grouped', db.query('q/count', { group: true }));
  await step('query limit on reduce', db.query('q/count', { group: true, limit: 2, skip: 1 }));
  await step('query startkey > endkey', db.query('q/count', { startkey: 2, endkey: 0, reduce: false }));
  await step('query stale update_after', db.query('q/names', { stale: 'update_after', limit: 1 }));
  await step('query approx', db.query('q/approx', { reduce: true }));
  await step('query bad reduce fn', db.query({ map: (doc) => emit(doc._id), reduce: '_bogus' }));
  await step('query bad stale', db.query('q/count', { stale: 'bogus', reduce: false, limit: 2 }));

  await db.createIndex({ index: { fields: ['g', 'i'] } });
  await step('find sort desc', db.find({ selector: { g: 1, i: { $gt: 0 } }, sort: [{ g: 'desc' }, { i: 'desc' }], fields: ['_id'] }).then((r) => r.docs));
  await step('find skip limit', db.find({ selector: { g: { $gte: 0 } }, sort: ['g', 'i'], skip: 3, limit: 3, fields: ['i'] }).then((r) => r.docs));
  await step('find $size $mod', db.find({ selector: { arr: { $size: 2 }, i: { $mod: [4, 1] } }, fields: ['_id'] }).then((r) => r.docs));
  await step('find $nin $ne', db.find({ selector: { g: { $nin: [0, 1] }, i: { $ne: 5 } }, fields: ['_id'] }).then((r) => r.docs));
  await step('find $not $all', db.find({ selector: { arr: { $all: [1] }, $not: { g: 0 } }, fields: ['_id'] }).then((r) => r.docs));
  await step('find $type $exists false', db.find({ selector: { ref: { $exists: false }, name: { $type: 'string' }, i: { $lt: 3 } }, fields: ['_id'] }).then((r) => r.docs));
  await step('find nested fields', db.find({ selector: { 'arr.1': 1, i: { $gt: 8 } }, fields: ['_id', 'arr.0'] }).then((r) => r.docs));
  await step('find $regex bad', db.find({ selector: { name: { $regex: '(' } } }));
  await step('find $in not array', db.find({ selector: { g: { $in: 1 } } }));
  await step('find limit 0', db.find({ selector: { g: 1 }, limit: 0 }).then((r) => r.docs));
  await step('createIndex no fields', db.createIndex({ index: {} }));
  await step('createIndex bad', db.createIndex({}));
  await db.destroy();
})().then(() => done(), done);
