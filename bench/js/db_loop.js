// A PouchDB-API loop for `settee run`: 100 rounds of a 100-document bulkDocs,
// allDocs with include_docs, and 100 gets, on a memory store. Prints one JSON
// line {"thread", "ms"} like string_loop.js. JS-heavy (document objects made
// and read in JS) next to the engine's C++ work.
const ROUNDS = 100;
const db = new PouchDB('loop');
async function dotest() {
  let total = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const docs = [];
    for (let i = 0; i < 100; i++) docs.push({ _id: `r${round}-${i}`, n: i, tags: ['a', 'b'], text: 'x'.repeat(40) });
    await db.bulkDocs(docs);
    const all = await db.allDocs({ include_docs: true, startkey: `r${round}-`, endkey: `r${round}-\uffff` });
    for (const row of all.rows) total += row.doc.n;
    for (let i = 0; i < 100; i++) total += (await db.get(`r${round}-${i}`)).tags.length;
  }
  return total;
}
const t0 = performance.now();
dotest().then((total) => {
  const ms = performance.now() - t0;
  if (total !== ROUNDS * (4950 + 200)) {
    console.error('wrong total ' + total);
    process.exit(1);
  }
  console.log(JSON.stringify({ thread: settee.threadId, ms: Math.round(ms * 100) / 100 }));
});
