// node's Buffer in settee run: encodings, searching, copying, filling and
// the fixed-width reads and writes; runs unchanged in node, which is where
// the expected values come from.
'use strict';
const assert = require('assert');
const { Buffer: ModuleBuffer, constants } = require('buffer');
const { check, done } = require('./lib/harness');

check('encodings round-trip and decode as node does', () => {
  const s = 'h\u00e9llo \u20ac \ud83d\ude00';
  for (const enc of ['utf8', 'utf16le', 'ucs2', 'base64', 'base64url', 'hex', 'latin1']) {
    const b = Buffer.from(s, enc === 'hex' || enc.startsWith('base64') ? undefined : enc);
    const text = b.toString(enc);
    assert.deepStrictEqual(Buffer.from(text, enc), b, enc);
  }
  assert.strictEqual(Buffer.from('h\u00e9llo', 'latin1').toString('hex'), '68e96c6c6f');
  assert.strictEqual(Buffer.from('\u20ac', 'utf16le').toString('hex'), 'ac20');
  assert.strictEqual(Buffer.from('abz1ff', 'hex').toString('hex'), 'ab');  // stops at the first bad pair
  assert.strictEqual(Buffer.from([0xfa, 0xfb, 0xfc]).toString('base64url'), '-vv8');
  assert.strictEqual(Buffer.from('\u00ff\u0100', 'ascii').toString('hex'), 'ff00');
  assert.strictEqual(Buffer.from('hello').toString('utf8', 1, 3), 'el');
  assert.strictEqual(Buffer.byteLength('\u20ac'), 3);
  assert.strictEqual(Buffer.byteLength('\u20ac', 'utf16le'), 2);
  assert.strictEqual(Buffer.byteLength('aGk=', 'base64'), 2);
  assert.ok(Buffer.isEncoding('UTF-8') && Buffer.isEncoding('binary') && !Buffer.isEncoding('utf-7') && !Buffer.isEncoding(''));
  assert.throws(() => Buffer.from('x', 'utf-7'), { code: 'ERR_UNKNOWN_ENCODING' });
  assert.deepStrictEqual(Buffer.from({ type: 'Buffer', data: [1, 2] }), Buffer.from([1, 2]));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(Buffer.from('ab'))), { type: 'Buffer', data: [97, 98] });
  assert.strictEqual(ModuleBuffer, Buffer);
  assert.strictEqual(constants.MAX_LENGTH > 0, true);
});

check('from an ArrayBuffer shares memory; slice shares, copy copies', () => {
  const ab = new ArrayBuffer(8);
  const b = Buffer.from(ab, 2, 4);
  b[0] = 7;
  assert.strictEqual(new Uint8Array(ab)[2], 7);
  const whole = Buffer.from('abcdef');
  const part = whole.slice(1, 3);
  part[0] = 0x42;
  assert.strictEqual(whole.toString(), 'aBcdef');
  const target = Buffer.alloc(4, '.');
  assert.strictEqual(whole.copy(target, 1, 2), 3);
  assert.strictEqual(target.toString(), '.cde');
  assert.strictEqual(Buffer.concat([Buffer.from('ab'), new Uint8Array([99])]).toString(), 'abc');
  assert.strictEqual(Buffer.concat([Buffer.from('abcdef')], 3).toString(), 'abc');
  assert.strictEqual(Buffer.from('b').compare(Buffer.from('a')), 1);
  assert.strictEqual(Buffer.from('abc').compare(Buffer.from('xbcx'), 1, 3, 1), 0);
});

check('write, fill, indexOf, lastIndexOf, includes, swap', () => {
  const b = Buffer.alloc(6);
  assert.strictEqual(b.write('h\u00e9!', 1), 4);
  assert.strictEqual(b.toString('hex'), '0068c3a92100');
  // A character that does not fit whole is left out.
  assert.strictEqual(Buffer.alloc(2).write('a\u20ac'), 1);
  assert.strictEqual(b.write('ffee', 4, 'hex'), 2);
  assert.strictEqual(b.toString('hex'), '0068c3a9ffee');
  assert.strictEqual(Buffer.alloc(5, 'ab').toString(), 'ababa');
  assert.strictEqual(Buffer.alloc(4).fill('xy', 1, 3).toString('hex'), '00787900');
  assert.strictEqual(Buffer.alloc(3).fill(0x101).toString('hex'), '010101');
  assert.strictEqual(Buffer.alloc(4, 'aGk=', 'base64').toString(), 'hihi');
  const hay = Buffer.from('one two one two');
  assert.strictEqual(hay.indexOf('two'), 4);
  assert.strictEqual(hay.indexOf('two', 5), 12);
  assert.strictEqual(hay.indexOf(Buffer.from('one'), -5), -1);
  assert.strictEqual(hay.lastIndexOf('one'), 8);
  assert.strictEqual(hay.lastIndexOf('one', 7), 0);
  assert.strictEqual(hay.indexOf(0x74), 4);
  assert.strictEqual(hay.indexOf('74', 'hex'), 4);
  assert.ok(hay.includes('e t') && !hay.includes('three'));
  assert.strictEqual(Buffer.from([1, 2, 3, 4]).swap16().toString('hex'), '02010403');
  assert.strictEqual(Buffer.from([1, 2, 3, 4]).swap32().toString('hex'), '04030201');
  assert.throws(() => Buffer.from([1, 2, 3]).swap16(), { code: 'ERR_INVALID_BUFFER_SIZE' });
});

check('fixed-width reads and writes with node bounds errors', () => {
  const b = Buffer.alloc(16);
  assert.strictEqual(b.writeUInt32BE(0xdeadbeef, 0), 4);
  assert.strictEqual(b.readUInt32LE(0), 0xefbeadde);
  assert.strictEqual(b.readUint16BE(1), 0xadbe);
  assert.strictEqual(b.writeInt16LE(-2, 4), 6);
  assert.strictEqual(b.readInt16LE(4), -2);
  assert.strictEqual(b.readUInt8(4), 0xfe);
  b.writeDoubleLE(Math.PI, 8);
  assert.strictEqual(b.readDoubleLE(8), Math.PI);
  b.writeFloatBE(1.5, 0);
  assert.strictEqual(b.readFloatBE(0), 1.5);
  b.writeBigUInt64BE(2n ** 63n + 5n, 8);
  assert.strictEqual(b.readBigUInt64BE(8), 2n ** 63n + 5n);
  assert.strictEqual(b.readBigInt64BE(8), -(2n ** 63n) + 5n);
  assert.strictEqual(b.writeUIntBE(0x123456, 0, 3), 3);
  assert.strictEqual(b.readUIntLE(0, 3), 0x563412);
  assert.strictEqual(b.writeIntLE(-0x123456, 0, 3), 3);
  assert.strictEqual(b.readIntLE(0, 3), -0x123456);
  assert.throws(() => b.readUInt32LE(13), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => b.writeUInt8(256, 0), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => b.writeInt8(-129, 0), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => b.writeBigInt64LE(1, 0), TypeError);
  assert.throws(() => Buffer.alloc(2).readUInt32LE(0), { code: 'ERR_BUFFER_OUT_OF_BOUNDS' });
  assert.throws(() => b.readUInt8('1'), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => Buffer.alloc(-1), { code: 'ERR_OUT_OF_RANGE' });
});

done();
