// PouchDB 9 with the HTTP adapter (the client under test), the memory
// adapter (for the local side of replication), replication, query()
// (pouchdb-mapreduce) and find() (pouchdb-find).
'use strict';

const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-http'))
  .plugin(require('pouchdb-adapter-memory'))
  .plugin(require('pouchdb-replication'))
  .plugin(require('pouchdb-mapreduce'))
  .plugin(require('pouchdb-find'));

module.exports = PouchDB;
