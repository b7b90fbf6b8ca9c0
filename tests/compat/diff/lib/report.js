// Prints every result and error of a differential script as one line of
// canonical JSON, so that the same script's output under node (PouchDB 9)
// and under `settee run` can be compared line by line
// (tests/compat/differential.test.js).
//
// Canonical: object keys sorted; Buffers as {$buffer: base64}, other byte
// views as {$bytes: base64}; errors (thrown, or a bulkDocs row) as
// {$error: {status, name, message, id}}.
// Normalized, because they are legitimately different on each side:
// revision hashes (PouchDB's MD5 and settee's XXH3 digests), generated
// document ids (PouchDB's dashed UUIDs, settee's 32 hex digits) and
// timestamps (start_time/end_time/last_checkpoint of replications). Each
// distinct hash or id becomes G<n> in order of first appearance, so equal
// values still compare equal and different ones different.
'use strict';

const generated = new Map();
function gen(token) {
  if (!generated.has(token)) generated.set(token, 'G' + generated.size);
  return generated.get(token);
}
const kHash = /^[0-9a-f]{32}$/;
const kRev = /^(\d+)-([0-9a-f]{32})$/;
const kUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const kTimes = new Set(['start_time', 'end_time', 'last_checkpoint', 'instance_start_time']);

function normString(s) {
  let m = kRev.exec(s);
  if (m) return m[1] + '-' + gen(m[2]);
  if (kHash.test(s) || kUuid.test(s)) return gen(s.toLowerCase().replace(/-/g, ''));
  return s;
}

function canon(v, key) {
  if (typeof v === 'string') return kTimes.has(key) ? '<time>' : normString(v);
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'function') return '<function>';
    if (v === undefined) return '<undefined>';
    return v;
  }
  if (Buffer.isBuffer(v)) return { $buffer: v.toString('base64') };
  if (ArrayBuffer.isView(v)) return { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  // PouchDB's http adapter rejects with plain objects whose `error` is
  // CouchDB's error name.
  if (v instanceof Error || (v.error !== undefined && v.error !== false && typeof v.name === 'string')) {
    // Compared: status, name, message, and the id of a bulkDocs row.
    // Not compared: a thrown error's id, `reason` (settee's errors always carry CouchDB's,
    // PouchDB's only some) and PouchDB's `docId`.
    const e = {};
    for (const k of ['status', 'name', 'message']) if (v[k] !== undefined) e[k] = v[k];
    if (key === '[]' && v.id !== undefined) e.id = v.id;
    return { $error: canon(e) };
  }
  if (Array.isArray(v)) return v.map((x) => canon(x, '[]'));
  const out = {};
  for (const k of Object.keys(v).sort()) {
    if (v[k] === undefined) continue;
    out[normString(k)] = canon(v[k], k);
  }
  return out;
}

function line(label, v) {
  console.log(label + '\t' + JSON.stringify(canon(v)));
}

// Awaits `p` (a promise, or a function returning one) and prints its value
// or its error; returns the value (undefined after an error).
async function step(label, p) {
  try {
    const v = await (typeof p === 'function' ? p() : p);
    line(label, v);
    return v;
  } catch (e) {
    line(label + ' !', e !== null && typeof e === 'object' ? e : { $thrown: e });
    return undefined;
  }
}

// An error's whole shape, where step() compares only status, name and
// message: its own enumerable members in order (`stack` aside: PouchDB's
// createError copies it to an enumerable member, settee keeps the usual
// non-enumerable one) with their values, and String(err) for PouchDB's
// own errors (error: true); a TypeError or other built-in error as its
// class and message. Prints a line as step() does.
function shapeOf(e) {
  if (e === null || typeof e !== 'object') return { $thrown: canon(e) };
  if (e instanceof Error && !('status' in e)) return { $class: e.constructor.name, message: e.message };
  const members = [];
  for (const k of Object.keys(e)) if (k !== 'stack') members.push([k, canon(e[k], k)]);
  const out = { members };
  if (e.error === true) out.string = String(e);
  return out;
}
async function shapeStep(label, p) {
  try {
    const v = await (typeof p === 'function' ? p() : p);
    console.log(label + '\t' + JSON.stringify(Array.isArray(v)
      ? v.map((r) => (r instanceof Error || (r && r.error) ? shapeOf(r) : canon(r))) : canon(v)));
  } catch (e) {
    console.log(label + ' !\t' + JSON.stringify(shapeOf(e)));
  }
}

// A fresh database: a previous run's is destroyed first.
async function fresh(PouchDB, name, opts) {
  await new PouchDB(name, opts).destroy();
  return new PouchDB(name, opts);
}

function done(e) {
  if (e) {
    console.log('uncaught ' + (e && e.stack || e));
    process.exitCode = 1;
  } else {
    console.log('end');
  }
}

module.exports = { step, shapeStep, line, canon, fresh, done };
