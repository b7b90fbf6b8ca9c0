// node's fs module in settee run: the sync, callback and promise forms, and
// node's error shape. Runs unchanged in node (the test compares).
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { check, done } = require('./lib/harness');

const root = path.join(process.env.TMPDIR || '/tmp', 'settee-fs-' + process.pid + '-' + Date.now());

check('write, read, append, stat, exists', () => {
  fs.mkdirSync(root, { recursive: true });
  const f = path.join(root, 'a.txt');
  fs.writeFileSync(f, 'caf\u00e9');
  assert.strictEqual(fs.readFileSync(f, 'utf8'), 'caf\u00e9');
  const bytes = fs.readFileSync(f);
  assert.ok(Buffer.isBuffer(bytes));
  assert.strictEqual(bytes.length, 5);
  fs.appendFileSync(f, Buffer.from([0x21]));
  assert.strictEqual(fs.readFileSync(f, { encoding: 'utf8' }), 'caf\u00e9!');
  const st = fs.statSync(f);
  assert.ok(st.isFile());
  assert.ok(!st.isDirectory());
  assert.strictEqual(st.size, 6);
  assert.ok(st.mtime instanceof Date);
  assert.ok(fs.statSync(root).isDirectory());
  assert.strictEqual(fs.existsSync(f), true);
  assert.strictEqual(fs.existsSync(path.join(root, 'nope')), false);
  assert.strictEqual(fs.statSync(path.join(root, 'nope'), { throwIfNoEntry: false }), undefined);
  // "Do not overwrite" is kept: the x flags and COPYFILE_EXCL fail with
  // EEXIST and leave the file as it was (they overwrote it).
  assert.throws(() => fs.writeFileSync(f, 'lost', { flag: 'wx' }), { code: 'EEXIST' });
  assert.throws(() => fs.appendFileSync(f, 'lost', { flag: 'ax' }), { code: 'EEXIST' });
  const copy = path.join(root, 'copy.txt');
  fs.writeFileSync(copy, 'kept');
  assert.strictEqual(fs.constants.COPYFILE_EXCL, 1);
  assert.throws(() => fs.copyFileSync(f, copy, fs.constants.COPYFILE_EXCL), { code: 'EEXIST' });
  assert.strictEqual(fs.readFileSync(copy, 'utf8'), 'kept');
  assert.strictEqual(fs.readFileSync(f, 'utf8'), 'caf\u00e9!');
  fs.copyFileSync(f, copy);
  assert.strictEqual(fs.readFileSync(copy, 'utf8'), 'caf\u00e9!');
  const fresh = path.join(root, 'fresh.txt');
  fs.writeFileSync(fresh, 'new', { flag: 'wx' });
  fs.writeFileSync(fresh, '+', { flag: 'a' });
  assert.strictEqual(fs.readFileSync(fresh, 'utf8'), 'new+');
});

check('directories: mkdir -p, readdir (names and Dirents), rename, rm', () => {
  const deep = path.join(root, 'x', 'y', 'z');
  assert.strictEqual(fs.mkdirSync(deep, { recursive: true }), path.join(root, 'x'));
  fs.writeFileSync(path.join(root, 'x', 'b.json'), JSON.stringify({ n: 1 }));
  assert.deepStrictEqual(fs.readdirSync(path.join(root, 'x')), ['b.json', 'y']);
  const kinds = fs.readdirSync(path.join(root, 'x'), { withFileTypes: true })
    .map((d) => d.name + ':' + (d.isDirectory() ? 'dir' : 'file'));
  assert.deepStrictEqual(kinds, ['b.json:file', 'y:dir']);
  fs.renameSync(path.join(root, 'x', 'b.json'), path.join(root, 'x', 'c.json'));
  assert.deepStrictEqual(require(path.join(root, 'x', 'c.json')), { n: 1 });
  fs.copyFileSync(path.join(root, 'x', 'c.json'), path.join(root, 'x', 'd.json'));
  fs.unlinkSync(path.join(root, 'x', 'c.json'));
  assert.deepStrictEqual(fs.readdirSync(path.join(root, 'x')), ['d.json', 'y']);
  fs.rmSync(path.join(root, 'x'), { recursive: true });
  assert.strictEqual(fs.existsSync(path.join(root, 'x')), false);
  fs.rmSync(path.join(root, 'x'), { force: true });
});

check('mkdtemp: a new private directory per call, in the three forms', async () => {
  fs.mkdirSync(root, { recursive: true });
  const a = fs.mkdtempSync(path.join(root, 'tmp-'));
  const b = fs.mkdtempSync(path.join(root, 'tmp-'));
  assert.match(path.basename(a), /^tmp-[A-Za-z0-9]{6}$/);
  assert.notStrictEqual(a, b);
  assert.ok(fs.statSync(a).isDirectory());
  assert.strictEqual(fs.statSync(a).mode & 0o777, 0o700);
  const c = await new Promise((resolve, reject) => fs.mkdtemp(path.join(root, 'cb-'), (e, d) => (e ? reject(e) : resolve(d))));
  const d = await fs.promises.mkdtemp(path.join(root, 'p-'));
  assert.ok(fs.existsSync(c) && fs.existsSync(d));
  assert.throws(() => fs.mkdtempSync(path.join(root, 'none', 'x-')), {
    code: 'ENOENT', syscall: 'mkdtemp', path: path.join(root, 'none', 'x-XXXXXX'),
    message: "ENOENT: no such file or directory, mkdtemp '" + path.join(root, 'none', 'x-XXXXXX') + "'",
  });
  for (const dir of [a, b, c, d]) fs.rmdirSync(dir);
});

check('errors have node\'s code, syscall and path', () => {
  const missing = path.join(root, 'missing.txt');
  assert.throws(() => fs.readFileSync(missing), (e) => {
    assert.strictEqual(e.code, 'ENOENT');
    assert.strictEqual(e.syscall, 'open');
    assert.strictEqual(e.path, missing);
    assert.strictEqual(e.message, "ENOENT: no such file or directory, open '" + missing + "'");
    return true;
  });
  assert.throws(() => fs.mkdirSync(root), { code: 'EEXIST' });
  assert.throws(() => fs.readdirSync(missing), { code: 'ENOENT', syscall: 'scandir' });
  assert.throws(() => fs.rmdirSync(root), { code: 'ENOTEMPTY' });
});

check('a path that is not one throws at the call, as node\'s checks', () => {
  const typeMsg = 'The "path" argument must be of type string or an instance of Buffer or URL. Received ';
  for (const [bad, got] of [[42, 'type number (42)'], [null, 'null'], [{}, 'an instance of Object']]) {
    // (not readFileSync: node reads a number there as a file descriptor)
    for (const call of [() => fs.statSync(bad), () => fs.mkdirSync(bad), () => fs.createReadStream(bad),
      () => fs.createWriteStream(bad)]) {
      assert.throws(call, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: typeMsg + got });
    }
  }
  const nulMsg = "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received 'a\\x00b'";
  assert.throws(() => fs.readFileSync('a\0b'), { code: 'ERR_INVALID_ARG_VALUE', message: nulMsg });
  assert.throws(() => fs.createReadStream('a\0b'), { code: 'ERR_INVALID_ARG_VALUE', message: nulMsg });
  assert.throws(() => fs.readFileSync(new URL('http://x/y')), { code: 'ERR_INVALID_URL_SCHEME' });
  assert.strictEqual(fs.existsSync('a\0b'), false);
  fs.createReadStream(null, { fd: 0 }).destroy();  // a descriptor needs no path
});

check('callbacks and fs.promises answer on a later tick', async () => {
  const f = path.join(root, 'p.txt');
  let sameTick = true;
  const written = new Promise((resolve, reject) => fs.writeFile(f, 'promised', (err) => (err ? reject(err) : resolve(sameTick))));
  sameTick = false;
  assert.strictEqual(await written, false);
  assert.strictEqual(await fs.promises.readFile(f, 'utf8'), 'promised');
  assert.strictEqual(await require('fs/promises').readFile(f, 'utf8'), 'promised');
  await assert.rejects(fs.promises.readFile(path.join(root, 'none')), { code: 'ENOENT' });
  const err = await new Promise((resolve) => fs.stat(path.join(root, 'none'), (e) => resolve(e)));
  assert.strictEqual(err.code, 'ENOENT');
  fs.rmSync(root, { recursive: true, force: true });
});

done();
