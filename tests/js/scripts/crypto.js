// node's crypto module (hashes, HMACs, random bytes, UUIDs) and the web's
// crypto global in settee run; runs unchanged in node.
'use strict';
const assert = require('assert');
const nodeCrypto = require('crypto');
const { check, done } = require('./lib/harness');

check('hashes and HMACs give the standard digests', () => {
  assert.strictEqual(nodeCrypto.createHash('md5').update('').digest('hex'), 'd41d8cd98f00b204e9800998ecf8427e');
  assert.strictEqual(nodeCrypto.createHash('sha1').update('abc').digest('hex'), 'a9993e364706816aba3e25717850c26c9cd0d89d');
  const h = nodeCrypto.createHash('SHA256');
  h.update('a').update(Buffer.from('b')).update(new Uint8Array([0x63]));
  assert.strictEqual(h.copy().digest('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.strictEqual(h.digest('base64'), 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=');
  assert.throws(() => h.digest(), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
  assert.ok(Buffer.isBuffer(nodeCrypto.createHash('sha512').update('x').digest()));
  assert.strictEqual(nodeCrypto.createHmac('sha256', 'key').update('The quick brown fox jumps over the lazy dog').digest('hex'),
    'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
  assert.throws(() => nodeCrypto.createHash('nope'), /Digest method not supported/);
  // An empty key, a key longer than the block (hashed first) and a binary key.
  assert.strictEqual(nodeCrypto.createHmac('sha256', '').update('').digest('hex'),
    'b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad');
  assert.strictEqual(nodeCrypto.createHmac('sha1', 'k'.repeat(200)).update('abc').digest('base64'),
    'glq1W/kMeXxA0QY+T3WZ9FQMfBE=');
  assert.strictEqual(nodeCrypto.createHmac('md5', Buffer.from([0, 1, 2])).update('x').update('y').digest('hex'),
    '96a1186e4bfc658eee45151fe0673d3e');
});

check('random bytes, UUIDs, integers and getRandomValues', () => {
  const a = nodeCrypto.randomBytes(32), b = nodeCrypto.randomBytes(32);
  assert.strictEqual(a.length, 32);
  assert.ok(!a.equals(b));
  const uuid = nodeCrypto.randomUUID();
  assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notStrictEqual(uuid, crypto.randomUUID());
  const seen = new Set();
  for (let i = 0; i < 200; i++) {
    const n = nodeCrypto.randomInt(3, 7);
    assert.ok(n >= 3 && n < 7 && Number.isInteger(n));
    seen.add(n);
  }
  assert.strictEqual(seen.size, 4);
  const v = crypto.getRandomValues(new Uint32Array(8));
  assert.ok(v.some((x) => x !== 0));
  assert.throws(() => crypto.getRandomValues(new Float64Array(2)), /integer-type TypedArray/);
  assert.ok(nodeCrypto.timingSafeEqual(Buffer.from('ab'), Buffer.from('ab')));
  assert.ok(!nodeCrypto.timingSafeEqual(Buffer.from('ab'), Buffer.from('ac')));
});

check('randomBytes with a callback answers later', async () => {
  let later = false;
  const buf = await new Promise((resolve, reject) => {
    nodeCrypto.randomBytes(4, (err, b) => (err ? reject(err) : resolve(later && b)));
    later = true;
  });
  assert.strictEqual(buf.length, 4);
});

check('randomFillSync and randomFill fill in place (uuid and nanoid use them)', async () => {
  const buf = Buffer.alloc(64);
  assert.strictEqual(nodeCrypto.randomFillSync(buf), buf);
  assert.ok(buf.some((x) => x !== 0));
  // offset and size count elements of the view.
  const u32 = new Uint32Array(4);
  nodeCrypto.randomFillSync(u32, 1, 2);
  assert.strictEqual(u32[0], 0);
  assert.strictEqual(u32[3], 0);
  assert.ok(u32[1] !== 0 || u32[2] !== 0);
  const ab = new ArrayBuffer(16);
  assert.strictEqual(nodeCrypto.randomFillSync(ab), ab);
  assert.ok(new Uint8Array(ab).some((x) => x !== 0));
  assert.throws(() => nodeCrypto.randomFillSync(Buffer.alloc(2), 3), { code: 'ERR_OUT_OF_RANGE', name: 'RangeError' });
  assert.throws(() => nodeCrypto.randomFillSync('str'), TypeError);
  let later = false;
  const filled = await new Promise((resolve, reject) => {
    nodeCrypto.randomFill(Buffer.alloc(8), 4, (err, b) => (err ? reject(err) : resolve(later && b)));
    later = true;
  });
  assert.strictEqual(filled.length, 8);
  assert.strictEqual(filled.readUInt32BE(0), 0);
});

done();
