// Preloaded into node (`node -r ./node_pouchdb.js script.js`) by the
// differential test: require('pouchdb') gives what the npm package
// `pouchdb` (pouchdb-node) gives, built from the pinned packages in
// tests/compat/node_modules (core, the http adapter, map/reduce and
// replication), except that the local adapter is the memory one (the
// scripts add pouchdb-adapter-memory and open databases with it).
'use strict';

const Module = require('node:module');
const path = require('node:path');

const self = path.join(__dirname, 'node_pouchdb.js');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'pouchdb') return self;
  return resolve.call(this, request, ...rest);
};
const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-http'))
  .plugin(require('pouchdb-mapreduce'))
  .plugin(require('pouchdb-replication'));
module.exports = PouchDB;
