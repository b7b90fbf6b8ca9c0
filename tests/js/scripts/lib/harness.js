// A tiny TAP-style harness for the JS test scripts: check(name, fn)
// registers a (possibly async) test, done() runs them in order, prints one
// line per test and exits non-zero if any failed. With several threads each
// thread runs the whole list and reports under its thread id.
'use strict';

const tests = [];

function check(name, fn) {
  tests.push({ name, fn });
}

async function runAll() {
  const tid = typeof settee === 'object' ? settee.threadId : 0;
  const prefix = typeof settee === 'object' && settee.threadCount > 1 ? '[thread ' + tid + '] ' : '';
  let failed = 0;
  for (let i = 0; i < tests.length; i++) {
    const t = tests[i];
    try {
      await t.fn();
      console.log(prefix + 'ok ' + (i + 1) + ' - ' + t.name);
    } catch (e) {
      failed++;
      console.log(prefix + 'not ok ' + (i + 1) + ' - ' + t.name);
      console.log(String(e && e.stack ? e.stack : e).split('\n').map((l) => prefix + '  # ' + l).join('\n'));
    }
  }
  console.log(prefix + (failed ? failed + ' of ' + tests.length + ' failed' : 'all ' + tests.length + ' passed'));
  if (failed) process.exit(1);
}

function done() {
  runAll().catch((e) => {
    console.error('harness failure', e);
    process.exit(2);
  });
}

module.exports = { check, done };
