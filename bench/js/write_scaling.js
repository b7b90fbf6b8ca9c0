// Issue 14's measurement as a `settee run` script: each isolate thread does
// awaited single-document writes, the PouchDB way. Prints one JSON line per
// thread; run_write_scaling.py runs it on 1 and 2 threads and prints ratios.
//
//   settee run --threads N write_scaling.js MODE DOCS
//   MODE own     each thread puts DOCS new docs into its own database
//   MODE shared  every thread puts DOCS new docs into one database
//   MODE storm   thread 0 times db.get of DOCS prefilled docs (median of
//                groups of 16, in ns) while any other thread puts into the
//                same database until thread 0 is done
const [mode, docsArg] = process.argv.slice(2);
const docs = Number(docsArg || 20000);
const tid = settee.threadId;
const pad = (i) => String(i).padStart(8, '0');

async function puts(db, prefix) {
  const start = Date.now();
  for (let i = 0; i < docs; i++) await db.put({_id: prefix + pad(i), v: i});
  return {start, end: Date.now()};
}

async function storm() {
  const db = new PouchDB('storm');
  if (tid === 0) {
    const batch = [];
    for (let i = 0; i < docs; i++) batch.push({_id: 'r' + pad(i), v: i});
    await db.bulkDocs(batch);
    await db.put({_id: '_local/ready'});
    const samples = [];
    let x = 12345;
    for (let g = 0; g < docs / 16; g++) {
      const t0 = performance.now();
      for (let k = 0; k < 16; k++) {
        x = (x * 1103515245 + 12345) % 2147483648;
        await db.get('r' + pad(x % docs));
      }
      samples.push((performance.now() - t0) * 1e6 / 16);
    }
    await db.put({_id: '_local/stop'});
    samples.sort((a, b) => a - b);
    return {get_ns: samples[samples.length >> 1]};
  }
  // A writer: wait for the reader's prefill, then write until it is done.
  for (;;) {
    try { await db.get('_local/ready'); break; } catch (e) { await new Promise((r) => setTimeout(r, 1)); }
  }
  let n = 0;
  for (;; n++) {
    await db.put({_id: 'w' + tid + '_' + pad(n), v: n});
    if (n % 256 === 0) {
      try { await db.get('_local/stop'); break; } catch (e) { /* still reading */ }
    }
  }
  return {writes: n};
}

(async () => {
  let result;
  if (mode === 'own') result = await puts(new PouchDB('own' + tid), 't' + tid + '_');
  else if (mode === 'shared') result = await puts(new PouchDB('shared'), 't' + tid + '_');
  else if (mode === 'storm') result = await storm();
  else throw new Error('mode: own, shared or storm');
  console.log(JSON.stringify(Object.assign({thread: tid}, result)));
})();
