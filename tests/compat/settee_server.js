// Starts `settee serve --backend memory --port 0` for a test file and stops it
// afterwards. The binary comes from $SETTEE_BIN (scripts/test_compat.sh sets
// it) or build/settee.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

function binaryPath() {
  return process.env.SETTEE_BIN || path.resolve(__dirname, '../../build/settee');
}

// Resolves to { url, stop() } once the server prints its listening line.
function startSettee(extraArgs = []) {
  return new Promise((resolve, reject) => {
    const args = ['serve', '--backend', 'memory', '--port', '0', '--threads', '2',
                  '--log-level', process.env.SETTEE_LOG_LEVEL || 'warning', ...extraArgs];
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
        stop: () => new Promise((done) => {
          child.on('exit', (code, signal) => done({ code, signal }));
          child.kill('SIGTERM');
        }),
      });
    });
  });
}

module.exports = { startSettee };
