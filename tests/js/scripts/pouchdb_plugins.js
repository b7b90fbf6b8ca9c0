// PouchDB.plugin, PouchDB.defaults and require() of PouchDB's npm names, as
// scripts written for PouchDB in node use them (bench/workload/runner.js).
// Run by `settee run`; any failed assertion exits non-zero.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

check("require('pouchdb') and require('pouchdb-core') are the built-in PouchDB", () => {
  assert.strictEqual(require('pouchdb'), PouchDB);
  assert.strictEqual(require('node:pouchdb'), PouchDB);
  assert.strictEqual(require('pouchdb-core'), PouchDB);
});

check('the npm plugins settee builds in are no-op plugins', () => {
  const before = Object.getOwnPropertyNames(PouchDB.prototype).sort();
  assert.strictEqual(PouchDB.plugin(require('pouchdb-find')), PouchDB);
  assert.strictEqual(PouchDB.plugin(require('pouchdb-adapter-memory')), PouchDB);
  assert.strictEqual(PouchDB.plugin(require('pouchdb-adapter-leveldb')), PouchDB);
  assert.deepStrictEqual(Object.getOwnPropertyNames(PouchDB.prototype).sort(), before);
});

check('an object plugin adds its methods to every database', async () => {
  const Sub = PouchDB.defaults({});
  PouchDB.plugin({
    countDocs() { return this.info().then((i) => i.doc_count); },
  });
  const db = new PouchDB('plugin_obj_' + settee.threadId);
  await db.put({ _id: 'a' });
  assert.strictEqual(await db.countDocs(), 1);
  // A constructor made by defaults() before the plugin gets it as well.
  assert.strictEqual(await new Sub('plugin_obj_' + settee.threadId).countDocs(), 1);
  await db.destroy();
  delete PouchDB.prototype.countDocs;
});

check('a function plugin is called with PouchDB', () => {
  let seen;
  PouchDB.plugin((P) => { seen = P; });
  assert.strictEqual(seen, PouchDB);
});

check('a plugin that is neither object nor function is an Error, as in pouchdb-core', () => {
  const plain = (e) => e instanceof Error && e.constructor === Error && /^Invalid plugin: got "42"/.test(e.message);
  assert.throws(() => PouchDB.plugin(42), plain);
  assert.throws(() => PouchDB.plugin(null), (e) => e.constructor === Error);
});

check('defaults() gives a constructor whose options sit under the call\'s own', async () => {
  const Mem = PouchDB.defaults({ adapter: 'memory', size: 3000 });
  const db = new Mem('defaults_' + settee.threadId, { size: 10 });
  assert.ok(db instanceof PouchDB);
  assert.deepStrictEqual(db.__opts, { adapter: 'memory', size: 10 });
  const byObject = new Mem({ name: 'defaults_' + settee.threadId });
  assert.strictEqual(byObject.name, 'defaults_' + settee.threadId);
  assert.deepStrictEqual(byObject.__opts.adapter, 'memory');
  // Statics are inherited, defaults nest.
  assert.strictEqual(typeof Mem.plugin, 'function');
  const Nested = Mem.defaults({ auto_compaction: false });
  assert.deepStrictEqual(new Nested('defaults_' + settee.threadId).__opts,
    { adapter: 'memory', size: 3000, auto_compaction: false });
  await db.put({ _id: 'x' });
  assert.strictEqual((await new PouchDB('defaults_' + settee.threadId).get('x'))._id, 'x');
  await db.destroy();
  assert.throws(() => PouchDB.defaults(null), TypeError);
});

done();
