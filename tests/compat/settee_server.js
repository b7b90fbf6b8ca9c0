// Starts `settee serve --port 0` for a test file and stops it afterwards. The
// binary comes from $SETTEE_BIN (scripts/test_compat.sh sets it) or
// build/settee; the backend from $SETTEE_BACKEND (memory, the default, or
// leveldb in a fresh temporary directory removed when the server stops).
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function binaryPath() {
  return process.env.SETTEE_BIN || path.resolve(__dirname, '../../build/settee');
}

// The backend under test, and for leveldb a fresh temporary data directory
// (the caller removes it): the `--backend`/`--data` arguments of a settee
// command.
function backendArgs(prefix = 'settee-compat-') {
  const backend = process.env.SETTEE_BACKEND || 'memory';
  const dataDir = backend === 'leveldb' ? fs.mkdtempSync(path.join(os.tmpdir(), prefix)) : null;
  return { dataDir, args: ['--backend', backend, ...(dataDir ? ['--data', dataDir] : [])] };
}

// Resolves to { url, pid, stop() } once the server prints its listening line.
function startSettee(extraArgs = []) {
  return new Promise((resolve, reject) => {
    const { dataDir, args: storeArgs } = backendArgs();
    const args = ['serve', ...storeArgs, '--port', '0', '--threads', '2',
                  '--log-level', process.env.SETTEE_LOG_LEVEL || 'warning',
                  ...extraArgs];
    const child = spawn(binaryPath(), args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('settee did not start: ' + out)), 10000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`settee exited early with ${code}: ${out}`));
    });
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/[^/\s]+)\//.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url: m[1],
        pid: child.pid,
        stop: () => new Promise((done) => {
          child.on('exit', (code, signal) => {
            if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
            done({ code, signal });
          });
          child.kill('SIGTERM');
        }),
      });
    });
  });
}

// For a test file: starts settee serve before its tests and, after them,
// stops it and checks that it exited cleanly on SIGTERM. The returned
// object's url and pid are set once the server listens.
function serveDuringTests(extraArgs = []) {
  const { before, after } = require('node:test');
  const assert = require('node:assert/strict');
  const handle = { url: null, pid: null };
  let server;
  before(async () => {
    server = await startSettee(extraArgs);
    handle.url = server.url;
    handle.pid = server.pid;
  });
  after(async () => {
    const { code } = await server.stop();
    assert.equal(code, 0, 'settee exits cleanly on SIGTERM');
  });
  return handle;
}

module.exports = { startSettee, serveDuringTests, binaryPath, backendArgs };
