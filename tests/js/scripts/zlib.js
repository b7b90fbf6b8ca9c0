// node's zlib module without streams in settee run: the *Sync forms, the
// callback forms (on the thread pool) and their promisified forms, crc32,
// and node's errors; runs unchanged in node.
'use strict';
const assert = require('assert');
const util = require('util');
const zlib = require('zlib');
const { check, done } = require('./lib/harness');

const input = Buffer.from('hello hello hello hello '.repeat(50));
const bytes = Buffer.from(Array.from({ length: 256 * 8 }, (_, i) => (i * 7) % 256));

check('every format round-trips, and unzip reads gzip and zlib', () => {
  const pairs = [['gzipSync', 'gunzipSync'], ['deflateSync', 'inflateSync'], ['deflateRawSync', 'inflateRawSync'],
    ['gzipSync', 'unzipSync'], ['deflateSync', 'unzipSync']];
  for (const [pack, unpack] of pairs) {
    for (const data of [input, bytes, Buffer.alloc(0)]) {
      const packed = zlib[pack](data, { level: 9 });
      assert.ok(Buffer.isBuffer(packed));
      assert.deepStrictEqual(zlib[unpack](packed), data, pack + '/' + unpack);
    }
  }
  assert.ok(zlib.gzipSync(input).length < input.length / 10);
  assert.strictEqual(zlib.gzipSync('x').subarray(0, 3).toString('hex'), '1f8b08');
  assert.strictEqual(zlib.deflateSync('x', { level: zlib.constants.Z_BEST_SPEED })[0], 0x78);
  assert.strictEqual(zlib.gunzipSync(Buffer.concat([zlib.gzipSync('ab'), zlib.gzipSync('cd')])).toString(), 'abcd');
  assert.strictEqual(zlib.crc32('hello'), 907060870);
  assert.strictEqual(zlib.crc32('world', zlib.crc32('hello ')), zlib.crc32('hello world'));
});

check('bad input gets node\'s errors', () => {
  assert.throws(() => zlib.gunzipSync(Buffer.from('nope')), { code: 'Z_DATA_ERROR', errno: -3, message: 'incorrect header check' });
  assert.throws(() => zlib.inflateSync(zlib.deflateSync(input).subarray(0, 20)), { code: 'Z_BUF_ERROR', errno: -5, message: 'unexpected end of file' });
  assert.throws(() => zlib.gzipSync('x', { level: 42 }), { code: 'ERR_OUT_OF_RANGE', name: 'RangeError' });
  assert.throws(() => zlib.gzipSync(42), { code: 'ERR_INVALID_ARG_TYPE' });
});

check('callback and promise forms run off the thread and answer alike', async () => {
  const packed = await new Promise((resolve, reject) => zlib.gzip(input, (e, b) => (e ? reject(e) : resolve(b))));
  assert.deepStrictEqual(zlib.gunzipSync(packed), input);
  assert.deepStrictEqual(await util.promisify(zlib.gunzip)(packed), input);
  assert.deepStrictEqual(await util.promisify(zlib.inflateRaw)(zlib.deflateRawSync(bytes)), bytes);
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => util.promisify(zlib.deflate)(Buffer.from('n' + i))));
  assert.deepStrictEqual(results.map((b) => zlib.inflateSync(b).toString()), Array.from({ length: 8 }, (_, i) => 'n' + i));
  await assert.rejects(util.promisify(zlib.inflate)(Buffer.from('bad')), { code: 'Z_DATA_ERROR' });
});

done();
