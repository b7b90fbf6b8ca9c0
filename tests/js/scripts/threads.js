// Several isolate threads running this same script (settee run --threads N):
// identities, tasks across threads, messages, and a counter document updated
// from every thread through the shared store with no lost update.
// argv[2] = the expected thread count.
'use strict';
const assert = require('assert');
const { check, done } = require('./lib/harness');

const expected = Number(process.argv[2] || 1);
const me = settee.threadId;
const n = settee.threadCount;

// Registered while the main script runs, before any other thread can have
// sent anything (messages queue behind every thread's main script).
const inbox = [];
settee.on('message', (msg, from) => inbox.push({ msg, from }));

function until(pred, what, ms = 20000) {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    (function poll() {
      Promise.resolve(pred()).then((ok) => {
        if (ok) return resolve();
        if (Date.now() - start > ms) return reject(new Error('gave up waiting for ' + what));
        setTimeout(poll, 2);
      }, reject);
    })();
  });
}

check('each thread knows its id and the count', () => {
  assert.strictEqual(n, expected);
  assert.ok(me >= 0 && me < n);
  assert.strictEqual(process.threadId, me);
});

check('tasks.runOnAll reaches every thread; run/runOn return values and errors', async () => {
  const ids = await settee.tasks.runOnAll((base) => base + settee.threadId, 100);
  assert.deepStrictEqual(ids, Array.from({ length: n }, (_, i) => 100 + i));
  const v = await settee.tasks.run(async (o) => ({ doubled: o.x * 2, on: typeof settee.threadId }), { x: 21 });
  assert.deepStrictEqual(v, { doubled: 42, on: 'number' });
  await assert.rejects(settee.tasks.runOn((me + 1) % n, () => { throw new RangeError('remote'); }),
    (e) => e instanceof RangeError && e.message === 'remote' && e.remote === true);
  await assert.rejects(settee.tasks.run(() => { null.x; }), TypeError);
  await assert.rejects(settee.tasks.run(() => { throw new Error('two\nlines'); }),
    (e) => e.message === 'two\nlines');
  await assert.rejects(settee.tasks.run(() => { class MyError extends Error {} throw new MyError('mine'); }),
    (e) => e.constructor === Error && e.message === 'mine');
  await assert.rejects(settee.tasks.run(() => () => 'a function'), /function cannot be stored/);
  await assert.rejects(settee.tasks.runOn(n + 5, () => 1), /no isolate thread/);
});

check('messages between threads', async () => {
  settee.postMessage({ hello: me }, (me + 1) % n);
  const from = (me - 1 + n) % n;
  await until(() => inbox.some((e) => e.from === from && e.msg.hello === from), 'a message from thread ' + from);
});

check('a shared counter has no lost update', async () => {
  const db = settee.db('threads_counter');
  const per = 50;
  for (let i = 0; i < per; i++) {
    for (;;) {
      let doc;
      try {
        doc = await db.get('counter');
      } catch (e) {
        if (e.status !== 404) throw e;
        doc = { _id: 'counter', value: 0 };
      }
      doc.value++;
      try {
        await db.put(doc);
        break;
      } catch (e) {
        if (e.status !== 409) throw e;
      }
    }
  }
  // Every thread's increments land; the total is exact.
  await until(async () => (await db.get('counter')).value >= per * n, 'all increments');
  assert.strictEqual((await db.get('counter')).value, per * n);
});

done();
