// Differential conformance: each script in diff/ runs in node with PouchDB 9
// (this folder's node_modules, memory adapter; diff/node_pouchdb.js makes
// require('pouchdb') resolve) and in `settee run`, and the two outputs
// (one canonical JSON line per result or error, diff/lib/report.js) must
// be the same, line by line. A line may differ only where `known` below
// says why: a difference that was judged and kept, not a skipped check.
// Such a line must still be what settee answered when it was judged
// (diff/known_settee_lines.json), so a regression there fails too;
// DIFF_RECORD_KNOWN=1 rewrites that file from the run (review the diff).
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startSettee, binaryPath, backendArgs } = require('./settee_server');

const bin = binaryPath();
const dir = path.join(__dirname, 'diff');
const knownLinesFile = path.join(dir, 'known_settee_lines.json');
const knownLines = JSON.parse(fs.readFileSync(knownLinesFile, 'utf8'));
const recording = process.env.DIFF_RECORD_KNOWN === '1';

// script -> { label: why the difference is kept }. Each was judged against
// PouchDB 9 (the JS API's reference) and CouchDB (the HTTP API's) and kept
// on purpose; one that is settee's to fix says "not fixed".
const known = {
  'writes.js': {
    'put bad member': 'PouchDB answers 500 doc_validation for a bad special member; settee 400, as CouchDB',
    'put new_edits false': 'pouchdb-core put({new_edits:false}) resolves to [] (bulkDocs\' result); settee to {ok, id, rev}',
    'get r open_revs all': 'order of open_revs=all leaves: PouchDB\'s tree order, settee\'s winner first',
    'replicated no rev': 'message for a new_edits=false doc without _rev: settee says which members are missing',
  },
  'attachments.js': {
    'bad base64': 'PouchDB answers 500 badarg for invalid base64, settee 400 bad_request as CouchDB',
    'get atts_since': 'PouchDB\'s local get ignores atts_since (every body inline); settee leaves the ones the rev has as stubs, as CouchDB',
  },
  'options.js': {
    'changes doc_ids selector': 'last_seq of a doc_ids feed: PouchDB the last matching row\'s, settee the end of the scan as CouchDB',
    'query update_seq': 'string collation: PouchDB compares code points (Odd < even), settee ICU as CouchDB (even < Odd)',
    'query collation': 'string collation: PouchDB compares code points, settee ICU as CouchDB',
    'query stale update_after': 'string collation: PouchDB compares code points, settee ICU as CouchDB',
    'query approx': 'settee has CouchDB\'s _approx_count_distinct; PouchDB 9 does not',
    'query bad reduce fn': 'an unknown built-in reduce: PouchDB a plain Error, settee CouchDB\'s compilation_error',
    'find $regex bad': 'PouchDB\'s local find throws plain Errors; settee CouchDB\'s bad_request',
    'find $in not array': 'PouchDB\'s local find throws plain Errors; settee CouchDB\'s bad_request',
    'createIndex no fields': 'PouchDB 9 throws a TypeError (its bug); settee 400 bad_request',
    'createIndex bad': 'PouchDB 9 throws a TypeError (its bug); settee 400 bad_request',
  },
  'queries.js': {
    'allDocs keys': 'PouchDB adds doc: null to a deleted row of a keys query without include_docs',
    'allDocs keys+startkey': 'PouchDB\'s generic message; settee names the parameters',
    'createIndex': 'default index name: PouchDB idx-<md5>, settee CouchDB\'s <hash>',
    'createIndex again': 'default index name: PouchDB idx-<md5>, settee CouchDB\'s <hash>',
    'getIndexes': 'default index names, and CouchDB 3\'s partitioned member',
    'explain': 'default index names; settee\'s opts and fields are CouchDB\'s _explain',
    'find sort without index': 'PouchDB\'s local find throws plain Errors; settee CouchDB\'s named 400s (as PouchDB over HTTP)',
    'find bad selector': 'PouchDB\'s local find throws plain Errors; settee CouchDB\'s invalid_operator',
    'find no selector': 'PouchDB\'s local find throws plain Errors; settee CouchDB\'s bad_request',
    'find $regex $exists': 'no sort given: settee\'s planner picks the index on n (as CouchDB may), PouchDB _all_docs',
    'deleteIndex missing': 'PouchDB 9 throws a TypeError (its bug); settee 404 not_found',
  },
  'reads.js': {
    'get bad rev': 'a malformed rev: PouchDB 404 missing, settee 400 Invalid rev format as CouchDB',
    'get no id': 'PouchDB 9 throws a TypeError (cb is not a function); settee 400 bad_request, as its get(undefined)',
    'changes all_docs style': 'seqs within one new_edits=false batch (PouchDB numbers by its own grouping) and leaf order (settee: winner first, as CouchDB)',
    'changes conflicts': 'seqs within one new_edits=false batch',
    'bulkGet': 'PouchDB\'s local bulkGet shim merges requests for one id (a rev-less request beside a rev\'d one is dropped: its TODO) and answers {missing: rev} and Error objects; settee answers as CouchDB\'s _bulk_get, which PouchDB\'s http adapter returns too (one result per request, {error: {id, rev, error, reason}}), so code written for a remote database reads it unchanged',
    'bulkGet no docs': 'PouchDB 9 throws a TypeError (its bug); settee 400 bad_request',
    'revsDiff': 'settee adds CouchDB\'s possible_ancestors',
  },
  'replication.js': {
    'remote destroy': 'PouchDB\'s http adapter resolves destroy() to its fetch result ({ok, status, data})',
  },
};

function run(cmd, args, script, remote) {
  const r = spawnSync(cmd, [...args, script], {
    cwd: __dirname, encoding: 'utf8', timeout: 60000, maxBuffer: 64 << 20,
    env: Object.assign({}, process.env, { NODE_OPTIONS: '', DIFF_REMOTE: remote }),
  });
  assert.strictEqual(r.error, undefined, `${cmd} ${script}: ${r.error}`);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  assert.strictEqual(lines[lines.length - 1], 'end', `${cmd} ${script} did not finish:\n${r.stdout}\n${r.stderr}`);
  return lines;
}

// A step's label; ' !' marks an error, and a known difference may be one
// side's error and the other's result.
const labelOf = (l) => l.split('\t')[0].replace(/ !$/, '');

// One `settee serve` for the scripts' remote databases (DIFF_REMOTE): both
// sides talk to the same server, one after the other.
let server = null;
test.before(async () => { if (fs.existsSync(bin)) server = await startSettee(); });
test.after(async () => { if (server) await server.stop(); });

for (const script of fs.readdirSync(dir).filter((f) => f.endsWith('.js') && f !== 'node_pouchdb.js').sort()) {
  test(`differential: ${script}`, { skip: !fs.existsSync(bin) && `no settee binary at ${bin}` }, () => {
    const file = path.join(dir, script);
    const node = run(process.execPath, ['-r', path.join(dir, 'node_pouchdb.js')], file, server.url);
    // On the backend under test (scripts/test_compat.sh runs each).
    const { dataDir, args } = backendArgs('settee-diff-');
    let settee;
    try {
      settee = run(bin, ['run', ...args], file, server.url);
    } finally {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
    const accepted = known[script] || {};
    if (recording) knownLines[script] = {};  // rebuilt: a line off the list leaves it
    const diffs = [];
    const used = new Set();
    const n = Math.max(node.length, settee.length);
    for (let i = 0; i < n; i++) {
      if (node[i] === settee[i]) continue;
      const label = labelOf(node[i] || settee[i] || '');
      if (node[i] !== undefined && settee[i] !== undefined && labelOf(settee[i]) === label && label in accepted) {
        used.add(label);
        const judged = (knownLines[script] || {})[label];
        if (recording) (knownLines[script] = knownLines[script] || {})[label] = settee[i];
        else if (settee[i] !== judged) diffs.push(`settee changed on a listed line:\nwas: ${judged}\nnow: ${settee[i]}`);
        continue;
      }
      diffs.push(`node:   ${node[i]}\nsettee: ${settee[i]}`);
    }
    assert.deepStrictEqual(diffs, [], `${script}: ${diffs.length} lines differ`);
    // A listed difference that is gone (fixed) comes off the list.
    assert.deepStrictEqual(Object.keys(accepted).filter((l) => !used.has(l)), [], `${script}: listed but equal`);
    if (recording) fs.writeFileSync(knownLinesFile, JSON.stringify(knownLines, null, 1) + '\n');
  });
}
