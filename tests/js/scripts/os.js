// node's os module in settee run: the same answers node gives on this
// machine for what does not change between two processes.
'use strict';
const assert = require('assert');
const os = require('os');
const { check, done } = require('./lib/harness');

check('os answers as node does', () => {
  assert.strictEqual(os.EOL, '\n');
  assert.strictEqual(os.platform(), process.platform);
  assert.strictEqual(os.arch(), process.arch);
  assert.strictEqual(os.type(), 'Linux');
  assert.strictEqual(typeof os.release(), 'string');
  assert.ok(os.release().length > 0);
  assert.strictEqual(typeof os.hostname(), 'string');
  assert.ok(os.hostname().length > 0);
  assert.ok(os.homedir().startsWith('/'));
  assert.ok(os.tmpdir().startsWith('/'));
  assert.ok(os.totalmem() > os.freemem() && os.freemem() > 0);
  assert.ok(os.uptime() > 0);
  assert.strictEqual(os.loadavg().length, 3);
  const cpus = os.cpus();
  assert.ok(cpus.length >= 1);
  assert.strictEqual(typeof cpus[0].model, 'string');
  assert.strictEqual(typeof cpus[0].times.idle, 'number');
  assert.strictEqual(os.availableParallelism(), cpus.length);
  assert.strictEqual(os.endianness(), 'LE');
  // The facts one process can compare with node's (argv[2], when given).
  if (process.argv[2]) {
    const node = JSON.parse(process.argv[2]);
    assert.deepStrictEqual([os.hostname(), os.homedir(), os.tmpdir(), os.release(), os.cpus().length], node);
  }
});

done();
