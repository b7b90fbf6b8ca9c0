// node's child_process without streams in settee run: spawnSync, execSync,
// execFileSync, exec and execFile (callback and promisified), input,
// env, cwd, timeouts, kill, and node's errors; runs unchanged in node.
'use strict';
const assert = require('assert');
const cp = require('child_process');
const util = require('util');
const { check, done } = require('./lib/harness');

check('synchronous forms: output, input, env, cwd, exit status', () => {
  assert.strictEqual(cp.execSync('echo hi; echo err >&2', { stdio: 'pipe' }).toString(), 'hi\n');
  assert.strictEqual(cp.execFileSync('printf', ['%s-%s', 'a', 'b'], { encoding: 'utf8' }), 'a-b');
  const r = cp.spawnSync('cat', [], { input: 'piped in', encoding: 'utf8' });
  assert.strictEqual(r.status, 0);
  assert.strictEqual(r.signal, null);
  assert.strictEqual(r.stdout, 'piped in');
  assert.ok(r.pid > 0);
  assert.deepStrictEqual(r.output, [null, 'piped in', '']);
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  assert.deepStrictEqual(cp.spawnSync('cat', { input: bytes }).stdout, bytes);
  assert.strictEqual(cp.execSync('echo $FOO', { env: { FOO: 'bar', PATH: process.env.PATH } }).toString(), 'bar\n');
  assert.strictEqual(cp.execSync('pwd', { cwd: '/' }).toString(), '/\n');
  assert.throws(() => cp.execSync('exit 3', { stdio: 'pipe' }), (e) => e.status === 3 && /^Command failed: exit 3/.test(e.message));
});

check('missing programs, timeouts and maxBuffer', () => {
  const missing = cp.spawnSync('no-such-program-settee');
  assert.strictEqual(missing.error.code, 'ENOENT');
  assert.strictEqual(missing.status, null);
  assert.throws(() => cp.execFileSync('no-such-program-settee'), { code: 'ENOENT' });
  const slow = cp.spawnSync('sleep', ['5'], { timeout: 100 });
  assert.strictEqual(slow.signal, 'SIGTERM');
  assert.strictEqual(slow.error.code, 'ETIMEDOUT');
  const big = cp.spawnSync('head', ['-c', '100000', '/dev/zero'], { maxBuffer: 1000 });
  assert.strictEqual(big.error.code, 'ENOBUFS');
});

check('exec and execFile: callbacks, promisify, exit events, kill', async () => {
  const child = await new Promise((resolve) => {
    const c = cp.exec('echo async; exit 2', (err, stdout, stderr) => {
      assert.strictEqual(err.code, 2);
      assert.strictEqual(stdout, 'async\n');
      assert.strictEqual(stderr, '');
      resolve(c);
    });
    assert.ok(c.pid > 0);
  });
  assert.strictEqual(child.exitCode, 2);
  assert.deepStrictEqual(await util.promisify(cp.execFile)('echo', ['p1']), { stdout: 'p1\n', stderr: '' });
  await assert.rejects(util.promisify(cp.exec)('echo out; exit 1'), (e) => e.code === 1 && e.stdout === 'out\n');
  const exits = [];
  const killed = await new Promise((resolve) => {
    const k = cp.exec('exec sleep 5', (e) => resolve(e));  // exec: no orphan sleep holding the pipes 5 s
    k.on('exit', (code, signal) => exits.push(signal));
    setTimeout(() => assert.strictEqual(k.kill(), true), 50);
  });
  assert.strictEqual(killed.killed, true);
  assert.strictEqual(killed.signal, 'SIGTERM');
  assert.deepStrictEqual(exits, ['SIGTERM']);
  const outputs = await Promise.all([1, 2, 3].map((i) => util.promisify(cp.execFile)('echo', [String(i)])));
  assert.deepStrictEqual(outputs.map((o) => o.stdout), ['1\n', '2\n', '3\n']);
});

done();
