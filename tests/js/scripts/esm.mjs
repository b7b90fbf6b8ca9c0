// ES modules in settee run, resolved as node 20 resolves them: static and
// dynamic imports of files, packages (the "import" condition), built-ins and
// CommonJS modules, import cycles, top-level await, import.meta, require()
// of ES modules, and the errors node gives; runs unchanged in node 20.
import assert from 'node:assert';
import { strictEqual } from 'assert';
import * as pathNs from 'path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readFileSync } from 'fs';
import { createRequire } from 'node:module';
import harness from './lib/harness.js';
import { check, done } from './lib/harness.js';
import { flavour, extra } from './lib/modules_fixture/esm_entry.mjs';
import cjs, { answer } from './lib/esm_fixture/cjs_dep.cjs';
import { both } from './lib/esm_fixture/cycle_a.mjs';
import { twice, meta } from './lib/esm_fixture/typed/util.js';
import { value as awaited } from './lib/esm_fixture/tla.mjs';

const here = fileURLToPath(import.meta.url);
const require = createRequire(import.meta.url);

check('static imports of built-ins, packages, CommonJS and ES modules', () => {
  strictEqual(typeof pathNs.join, 'function');
  strictEqual(pathNs.default.join('a', 'b'), 'a/b');
  strictEqual(typeof readFileSync, 'function');
  strictEqual(harness.check, check);
  strictEqual(flavour, 'esm');
  strictEqual(createRequire(new URL('./lib/modules_fixture/esm_entry.mjs', import.meta.url))('dual').flavour, 'cjs');
  strictEqual(extra(), 'extra');
  assert.deepStrictEqual(cjs, { answer: 42, name: 'cjs' });
  strictEqual(answer, 42);
  strictEqual(both(), 'aba');
  strictEqual(twice(4), 8);
  strictEqual(awaited, 'awaited');
});

check('import.meta and file URLs', () => {
  strictEqual(import.meta.url, pathToFileURL(here).href);
  strictEqual(pathNs.basename(here), 'esm.mjs');
  strictEqual(import.meta.filename, here);
  strictEqual(import.meta.dirname, pathNs.dirname(here));
  strictEqual(meta.filename, pathNs.join(pathNs.dirname(here), 'lib/esm_fixture/typed/util.js'));
  strictEqual(meta.url, pathToFileURL(meta.filename).href);
  strictEqual(pathToFileURL('/tmp/a b#c').href, 'file:///tmp/a%20b%23c');
  strictEqual(fileURLToPath('file:///tmp/a%20b'), '/tmp/a b');
  assert.throws(() => fileURLToPath('http://x/'), { code: 'ERR_INVALID_URL_SCHEME' });
  strictEqual(readFileSync(here, 'utf8').includes('import.meta.url'), true);
});

check('dynamic import() from ES modules and from CommonJS', async () => {
  const util = await import('./lib/esm_fixture/typed/util.js');
  strictEqual(util.twice(5), 10);
  strictEqual((await import('node:os')).default.EOL, '\n');
  strictEqual(await require('./lib/esm_fixture/import_from_cjs.cjs')(), 42);
  const again = await import('./lib/esm_fixture/typed/util.js');
  strictEqual(again, util);  // one module instance per file
});

check('resolution errors as node reports them', async () => {
  await assert.rejects(import('./lib/esm_fixture/missing.mjs'), { code: 'ERR_MODULE_NOT_FOUND' });
  await assert.rejects(import('no-such-package'), { code: 'ERR_MODULE_NOT_FOUND' });
  await assert.rejects(import('./lib/esm_fixture/typed'), { code: 'ERR_UNSUPPORTED_DIR_IMPORT' });
  // require() of an ES module works as in node 20 unless it awaits at the top.
  strictEqual(require('./lib/esm_fixture/typed/util.js').twice(3), 6);
  assert.throws(() => require('./lib/esm_fixture/requires_esm.cjs')(), { code: 'ERR_REQUIRE_ASYNC_MODULE' });
});

done();
