// node's readline in settee run: line splitting as node splits it (\n,
// \r\n also across chunks, a lone \r, a last line without newline, UTF-8
// split across chunks), question/prompt/write, readline/promises, for
// await, and process.stdin read through it. Runs unchanged in node:
//   printf 'one\r\ntwo\n\nlast' | node readline.js '["one","two","","last"]'
// argv[2]: the lines stdin must give (JSON, or seq:N for seq 1 N's lines:
// an argument has at most 128 KB); with argv[3] 'first', the
// script takes stdin's first line only and must end although stdin has not.
'use strict';
const assert = require('assert');
const EventEmitter = require('events');
const readline = require('node:readline');
const readlinePromises = require('readline/promises');
const { check, done } = require('./lib/harness');

// A readable's shape as readline needs it: 'data' and 'end', pause/resume.
function fakeInput() {
  const input = new EventEmitter();
  input.paused = 0;
  input.pause = () => { input.paused++; };
  input.resume = () => {};
  return input;
}
function fakeOutput() {
  return { text: '', write(s) { this.text += s; return true; } };
}
function linesOf(chunks, options = {}) {
  const input = fakeInput();
  const rl = readline.createInterface({ input, ...options });
  const lines = [];
  rl.on('line', (l) => lines.push(l));
  let closed = false;
  rl.on('close', () => { closed = true; });
  for (const c of chunks) input.emit('data', c);
  input.emit('end');
  assert.ok(closed, 'closed at the input\'s end');
  return lines;
}

check('lines split as node splits them', () => {
  assert.deepStrictEqual(linesOf(['a\nb\n']), ['a', 'b']);
  assert.deepStrictEqual(linesOf(['a\r\nb\r\nc']), ['a', 'b', 'c']);
  assert.deepStrictEqual(linesOf(['x\ry\n\nz']), ['x', 'y', '', 'z']);
  assert.deepStrictEqual(linesOf([]), []);
  assert.deepStrictEqual(linesOf(['']), []);
  assert.deepStrictEqual(linesOf(['\n']), ['']);
  assert.deepStrictEqual(linesOf(['par', 'tial\nne', 'xt']), ['partial', 'next']);
  // \r\n across two chunks is one ending (within crlfDelay), as is a string chunk.
  assert.deepStrictEqual(linesOf([Buffer.from('a\r'), Buffer.from('\nb\n')], { crlfDelay: Infinity }), ['a', 'b']);
  assert.deepStrictEqual(linesOf(['a\r', '\nb']), ['a', 'b']);
  // A character split between chunks is decoded whole.
  const euro = Buffer.from('€\n');
  assert.deepStrictEqual(linesOf([euro.subarray(0, 1), euro.subarray(1)]), ['€']);
});

check('question, prompt, setPrompt and write', () => {
  const input = fakeInput();
  const output = fakeOutput();
  const rl = readline.createInterface({ input, output, prompt: 'P> ', terminal: false });
  assert.strictEqual(rl.terminal, false);
  assert.strictEqual(rl.getPrompt(), 'P> ');
  let answer;
  rl.question('name? ', (a) => { answer = a; });
  const seen = [];
  rl.on('line', (l) => seen.push(l));
  input.emit('data', 'bob\nnext\n');
  assert.strictEqual(answer, 'bob');
  assert.deepStrictEqual(seen, ['next']);
  assert.strictEqual(rl.getPrompt(), 'P> ', 'the prompt is back after the question');
  rl.prompt();
  rl.setPrompt('$ ');
  rl.prompt();
  rl.write('typed\n');
  assert.deepStrictEqual(seen, ['next', 'typed']);
  assert.strictEqual(output.text, 'name? P> $ ');
  rl.close();
  assert.strictEqual(rl.closed, true);
  assert.ok(input.paused > 0, 'close pauses the input');
  assert.throws(() => rl.question('again? ', () => {}), { code: 'ERR_USE_AFTER_CLOSE' });
});

check('readline/promises question answers with a promise', async () => {
  const input = fakeInput();
  const output = fakeOutput();
  const rl = readlinePromises.createInterface({ input, output });
  const p = rl.question('sure? ');
  input.emit('data', Buffer.from('yes\n'));
  assert.strictEqual(await p, 'yes');
  assert.strictEqual(output.text, 'sure? ');
  assert.strictEqual(readline.promises.Interface, readlinePromises.Interface);
  rl.close();
});

check('for await over an interface ends at close', async () => {
  const input = fakeInput();
  const rl = readline.createInterface({ input });
  setTimeout(() => { input.emit('data', 'a\nb'); input.emit('end'); }, 5);
  const lines = [];
  for await (const l of rl) lines.push(l);
  assert.deepStrictEqual(lines, ['a', 'b']);
});

check('cursor functions write node\'s escapes', () => {
  const out = fakeOutput();
  readline.cursorTo(out, 3);
  readline.cursorTo(out, 1, 2);
  readline.moveCursor(out, -2, 1);
  readline.clearLine(out, 0);
  readline.clearScreenDown(out);
  assert.strictEqual(out.text, '\x1b[4G\x1b[3;2H\x1b[2D\x1b[1B\x1b[2K\x1b[0J');
});

check('process.stdin through readline', async () => {
  const arg = process.argv[2];
  const expected = arg.startsWith('seq:')
    ? Array.from({ length: Number(arg.slice(4)) }, (_, i) => String(i + 1)) : JSON.parse(arg);
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  // A timer meanwhile: stdin is read on the loop, not by blocking it.
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 1);
  const lines = [];
  for await (const line of rl) {
    lines.push(line);
    if (process.argv[3] === 'first') break;
  }
  clearInterval(timer);
  assert.deepStrictEqual(lines, process.argv[3] === 'first' ? expected.slice(0, 1) : expected);
  // stdin left unread must not keep the script alive.
  rl.close();
  process.stdin.pause();
});

done();
