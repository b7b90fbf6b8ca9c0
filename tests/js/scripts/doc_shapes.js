// Documents built from their shapes (js/doc_shapes.h: db.get(id) and
// allDocs' include_docs rows) against JSON.parse of the text the store
// holds: a randomized differential test. Each document is read back
//  - by db.get(id) (the shape path, or the text one for what it declines),
//  - by db.get(id, {}) (Database::Get's JSON text, JSON.parse'd: the old path),
//  - by allDocs({include_docs}) over ranges and with keys (the shape path)
//    and the same with update_seq (AllDocsJson's text, JSON.parse'd),
// and compared with a strict deep-equal (own names in order, Object.is on
// every value, plain prototypes, ordinary data members), and with
// JSON.parse(JSON.stringify(what was put)) plus _id and _rev.
// Seeded: `settee run doc_shapes.js [seed] [count]`; a failure prints the
// seed and the document. Each thread uses its own database and seed + its
// id, so --threads N runs N different sequences at once (each thread's own
// shape table, docs/architecture.md).
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const baseSeed = Number(process.argv[2] || 20261202) >>> 0;
const count = Number(process.argv[3] || 1500);
const tid = typeof settee === 'object' ? settee.threadId : 0;
const seed = (baseSeed + tid) >>> 0;

// mulberry32: small, seeded, reproducible.
function rng(s) {
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(seed);
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
// o[k] = v as JSON.parse sets it: an own data member even for __proto__.
function set(o, k, v) {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

// Strict deep equality: '' if equal, else where and how they differ.
function diff(a, b, path) {
  if (Object.is(a, b)) return '';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return path + ': ' + show(a) + ' vs ' + show(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return path + ': array vs not';
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return path + ': prototypes differ';
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) {
    return path + ': names ' + show(ka) + ' vs ' + show(kb);
  }
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k);
    const db = Object.getOwnPropertyDescriptor(b, k);
    if (!('value' in da) || !('value' in db) || da.writable !== db.writable ||
        da.enumerable !== db.enumerable || da.configurable !== db.configurable) {
      return path + '.' + String(k) + ': descriptors differ';
    }
    const d = diff(da.value, db.value, path + '[' + show(k) + ']');
    if (d) return d;
  }
  return '';
}
function show(v) {
  if (Object.is(v, -0)) return '-0';
  try {
    return JSON.stringify(v, (k, x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  } catch (e) {
    return String(v);
  }
}
function same(a, b, what) {
  const d = diff(a, b, '');
  if (d) throw new Error(what + ' differs (seed ' + baseSeed + ', thread ' + tid + ') at ' + d + '\n  got ' + show(a).slice(0, 2000) + '\n  expected ' + show(b).slice(0, 2000));
}

// Names: ordinary ones, and those an object literal or an engine might
// treat differently from JSON.parse.
const oddNames = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype',
  '1', '0', '01', '-1', '-0', '4294967295', '4294967294', '4294967296', '9007199254740993', '1.5', '1e3',
  'NaN', 'Infinity', 'undefined', 'null', 'true', '', ' ', 'a b', 'a"b', 'a\\b', 'a\nb', 'tab\t', '\u0000',
  '\u0001', '\u001f', '\u007f', 'caf\u00e9', '\u20ac', '\u{1F600}', '\u2028', '\u2029', 'x\u2028y',
  '\ufeff', '\uffff', 'get', 'set', 'async', 'static', 'await', 'yield', 'let', 'v', 'arguments', 'eval',
  'this', 'super', 'new', 'class', 'function', 'return'];
function name() {
  const r = rand();
  if (r < 0.15) return pick(oddNames);
  if (r < 0.2) return String(int(100));
  // Mostly a small vocabulary, so that shapes repeat.
  if (r < 0.7) return pick(['foo', 'bar', 'baz', 'title', 'n', 'count', 'type', 'created', 'tags', 'x', 'y', 'z']);
  let s = '';
  const n = 1 + int(12);
  for (let i = 0; i < n; i++) s += String.fromCharCode(97 + int(26));
  return s;
}

const chars = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u0001', '\u001f',
  '\u007f', '\u0080', '\u00e9', '\u00ff', '\u0100', '\u07ff', '\u0800', '\u20ac', '\u2028', '\u2029',
  '\ud7ff', '\ue000', '\ufeff', '\ufffd', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', '<', '>', '&', "'"];
function string() {
  const r = rand();
  if (r < 0.3) {  // plain ASCII of any length (the scanner goes 8 bytes at a time)
    let s = '';
    const n = int(40);
    for (let i = 0; i < n; i++) s += String.fromCharCode(32 + int(95));
    return s;
  }
  let s = '';
  const n = int(24);
  for (let i = 0; i < n; i++) s += rand() < 0.5 ? pick(chars) : String.fromCharCode(97 + int(26));
  return s;
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const specialNumbers = [0, -0, 1, -1, 0.1, 0.2 + 0.1, 1.5, -2.25e-7, 1e21, 1e-7, 123e-20, 1e300, -1.5e300,
  5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
  -1.7976931348623157e308, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 32, 2 ** 32 - 1, 2 ** 53, 2 ** 53 + 2,
  -(2 ** 53), 2 ** 53 - 1, 2 ** 64, 2 ** 63, 1e16, 123456789012345680000, 4.35, 0.000001, 1e-6, 1e-7];
function number() {
  const r = rand();
  if (r < 0.3) return pick(specialNumbers);
  if (r < 0.5) return int(2000) - 1000;
  if (r < 0.6) return (int(1 << 30) * 4294967296 + int(4294967296)) * (rand() < 0.5 ? -1 : 1);
  if (r < 0.7) return Math.round(rand() * 1e6) / 100;
  // Any finite double, bit by bit.
  for (;;) {
    u32[0] = int(4294967296);
    u32[1] = int(4294967296);
    if (Number.isFinite(f64[0])) return f64[0];
  }
}

function flatValue() {
  const r = rand();
  if (r < 0.4) return string();
  if (r < 0.8) return number();
  if (r < 0.87) return true;
  if (r < 0.94) return false;
  return null;
}
function value(depth) {
  if (depth < 3 && rand() < 0.05) {
    if (rand() < 0.5) return Array.from({ length: int(4) }, () => value(depth + 1));
    const o = {};
    for (let i = int(4); i > 0; i--) set(o, name(), value(depth + 1));
    return o;
  }
  return flatValue();
}

// Ids: plain, non-ASCII, with characters JSON escapes, design docs.
function docId(i) {
  const r = rand();
  const n = String(i).padStart(6, '0');
  if (r < 0.6) return 'doc_' + n;
  if (r < 0.7) return '_design/d' + n;
  if (r < 0.8) return 'caf\u00e9_' + n + '\u{1F600}';
  if (r < 0.9) return 'q"' + n + '\\\n\u2028\u0001';
  return n + string().replace(/^_/, 'u');
}

// Documents of many shapes: a few shapes repeated often, and more distinct
// shapes in all than one thread's table holds (kMaxShapes, 1024).
function makeDoc(i) {
  const doc = { _id: docId(i) };
  const r = rand();
  const members = r < 0.05 ? 0 : r < 0.1 ? 33 + int(8) : int(12);
  const nested = rand() < 0.1;
  for (let k = 0; k < members; k++) {
    // 'z' + i: a name only this document has (a new shape).
    // (No other name starting with '_': the engine refuses them.)
    const key = k === 0 && rand() < 0.7 ? 'z' + i : name();
    if (key[0] !== '_') set(doc, key, nested ? value(0) : flatValue());
  }
  return doc;
}

const db = new PouchDB('shapes_' + tid);
const docs = new Map();  // id -> what was put, as JSON text
let big;

check('documents of every sort are stored', async () => {
  for (let i = 0; i < count; i++) {
    const doc = makeDoc(i);
    const r = await db.put(doc);
    assert.strictEqual(r.ok, true);
    docs.set(doc._id, { text: JSON.stringify(doc), rev: r.rev });
  }
  // Over 64 KiB (dbGetFlat lets its buffers go after it).
  big = { _id: 'big', s: 'x'.repeat(70000) + '\u20ac', n: -0, t: true };
  const r = await db.put(big);
  docs.set('big', { text: JSON.stringify(big), rev: r.rev });
});

// What JSON.parse makes of what was put, as the store gives it back:
// _id first, then _rev, then the rest in their order.
function expected(id) {
  const d = docs.get(id);
  const put = JSON.parse(d.text);
  const out = { _id: id, _rev: d.rev };
  for (const k of Object.keys(put)) if (k !== '_id') set(out, k, put[k]);
  return JSON.parse(JSON.stringify(out));
}

check('db.get(id) is JSON.parse of the stored text and of what was put', async () => {
  for (const id of docs.keys()) {
    const got = await db.get(id);
    same(got, await db.get(id, {}), 'db.get(' + show(id) + ') against the text path');
    same(got, expected(id), 'db.get(' + show(id) + ') against what was put');
    // And again, now that its shape's function exists.
    same(await db.get(id), got, 'db.get(' + show(id) + ') a second time');
  }
});

check('db.get with options answers as before; rev= and conflicts: true without conflicts as db.get', async () => {
  let n = 0;
  for (const [id, d] of docs) {
    if (n++ % 17) continue;
    const plain = await db.get(id);
    same(await db.get(id, { rev: d.rev }), plain, 'rev=');
    same(await db.get(id, { conflicts: true }), plain, 'conflicts: true');
    const withRevs = await db.get(id, { revs: true, revs_info: true });
    assert.strictEqual(withRevs._revisions.start, 1);
    assert.deepStrictEqual(withRevs._revs_info, [{ rev: d.rev, status: 'available' }]);
    delete withRevs._revisions;
    delete withRevs._revs_info;
    same(withRevs, plain, 'revs, revs_info');
    const open = await db.get(id, { open_revs: 'all' });
    assert.strictEqual(open.length, 1);
    same(open[0].ok, plain, 'open_revs');
  }
});

function rowsOf(r) {
  return { total_rows: r.total_rows, offset: r.offset, rows: r.rows };
}
check('allDocs with include_docs, over ranges and with keys, is JSON.parse of its text', async () => {
  const ids = [...docs.keys()].sort();  // the store's order for these ids (code units of ASCII and UTF-8 agree)
  const option = [
    { include_docs: true },
    { include_docs: true, descending: true },
    { include_docs: true, limit: 50, skip: 7 },
    { include_docs: true, startkey: 'doc_000100', endkey: 'doc_000300' },
    { include_docs: true, startkey: '_design/', endkey: '_design/\uffff' },
    {},
    { keys: [] },
    { keys: ids.slice(0, 5) },
  ];
  for (let k = 0; k < 20; k++) {
    const keys = Array.from({ length: 1 + int(30) }, () => pick(ids));
    option.push({ include_docs: true, keys });
  }
  for (const o of option) {
    const got = await db.allDocs(o);
    const text = await db.allDocs(Object.assign({ update_seq: true }, o));
    assert.strictEqual(typeof text.update_seq, 'number');
    same(rowsOf(got), rowsOf(text), 'allDocs(' + show(o).slice(0, 80) + ')');
    for (const row of got.rows) {
      if (o.include_docs) same(row.doc, expected(row.id), 'allDocs row ' + show(row.id));
    }
  }
});

check('deleted, _local, conflicted and attached documents answer as before', async () => {
  const ids = [...docs.keys()];
  // Deleted: 404 'deleted' on both paths; with keys, a deleted row.
  const gone = ids[3];
  await db.remove(gone, docs.get(gone).rev);
  for (const get of [() => db.get(gone), () => db.get(gone, {})]) {
    await assert.rejects(get(), { status: 404, name: 'not_found', reason: 'deleted' });
  }
  const kept = ids[4];
  const withDeleted = await db.allDocs({ include_docs: true, keys: [kept, gone] });
  same(rowsOf(withDeleted), rowsOf(await db.allDocs({ include_docs: true, keys: [kept, gone], update_seq: true })), 'keys with a deleted one');
  assert.strictEqual(withDeleted.rows[1].value.deleted, true);
  await assert.rejects(db.get('no such doc'), { status: 404, name: 'not_found' });
  docs.delete(gone);

  // _local documents: flat and not, through the fast path.
  for (let i = 0; i < 20; i++) {
    const doc = makeDoc(count + i);
    doc._id = '_local/' + doc._id;
    await db.put(doc);
    const got = await db.get(doc._id);
    same(got, await db.get(doc._id, {}), 'db.get(' + show(doc._id) + ')');
    const want = JSON.parse(JSON.stringify(doc));
    assert.strictEqual(got._id, doc._id);
    assert.strictEqual(got._rev, '0-1');
    delete got._rev;
    same(got, JSON.parse(JSON.stringify(want)), 'local ' + show(doc._id));
  }

  // Conflicts: the winner's flat body, with _conflicts only when asked.
  const cid = 'conflicted';
  await db.bulkDocs([{ _id: cid, _rev: '1-aaaa', a: 1, b: 'x' }, { _id: cid, _rev: '1-bbbb', a: 2, b: 'y' }], { new_edits: false });
  const winner = await db.get(cid);
  same(winner, await db.get(cid, {}), 'conflicted db.get');
  same(winner, { _id: cid, _rev: '1-bbbb', a: 2, b: 'y' }, 'conflicted winner');
  const withConflicts = await db.get(cid, { conflicts: true });
  assert.deepStrictEqual(withConflicts._conflicts, ['1-aaaa']);
  const all = await db.allDocs({ include_docs: true, conflicts: true, keys: [cid] });
  assert.deepStrictEqual(all.rows[0].doc._conflicts, ['1-aaaa']);
  same((await db.allDocs({ include_docs: true, keys: [cid] })).rows[0].doc, winner, 'allDocs conflicted');

  // Attachments: stubs (not flat) unless asked for, data with binary.
  const aid = 'attached';
  await db.put({ _id: aid, t: 'x', _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from('hello').toString('base64') } } });
  const stubbed = await db.get(aid);
  same(stubbed, await db.get(aid, {}), 'attached db.get');
  assert.strictEqual(stubbed._attachments['a.txt'].stub, true);
  const inline = await db.get(aid, { attachments: true });
  assert.strictEqual(inline._attachments['a.txt'].data, Buffer.from('hello').toString('base64'));
  const binary = await db.get(aid, { attachments: true, binary: true });
  assert.strictEqual(Buffer.from(binary._attachments['a.txt'].data).toString(), 'hello');
  const row = (await db.allDocs({ include_docs: true, keys: [aid] })).rows[0];
  same(row.doc, stubbed, 'attached allDocs');
});

check('the big document, then small ones again', async () => {
  same(await db.get('big'), expected('big'), 'big');
  same(await db.get('big'), await db.get('big', {}), 'big against the text path');
  const id = [...docs.keys()][0];
  same(await db.get(id), expected(id), 'after big');
});

check('members a script adds to Array.prototype never stand in for a shape', async () => {
  // The prelude's shape-function cache is indexed by shape number; a hole
  // must not find an inherited element.
  const hijack = () => ({ hijacked: true });
  for (let i = 0; i < 1100; i++) Array.prototype[i] = hijack;  // eslint-disable-line no-extend-native
  try {
    const r = await db.put({ _id: 'proto_probe', zzz_fresh_shape_member: 1, qqq_second: 'x' });
    const got = await db.get('proto_probe');
    assert.deepStrictEqual(got, { _id: 'proto_probe', _rev: r.rev, zzz_fresh_shape_member: 1, qqq_second: 'x' });
    const rows = (await db.allDocs({ keys: ['proto_probe'], include_docs: true })).rows;
    assert.deepStrictEqual(rows[0].doc, got);
  } finally {
    for (let i = 0; i < 1100; i++) delete Array.prototype[i];
  }
});

done();
