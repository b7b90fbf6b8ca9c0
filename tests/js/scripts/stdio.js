// process.stdin, process.stdout and process.stderr as node's streams: one
// pattern per run, argv[2] naming it, printing what node 20 prints for the
// same stdin (run_command_test's JsScripts.StdioAsInNode feeds it a pipe, a
// file, an empty pipe, /dev/null, a closed stdin and a reset socket).
// Runs unchanged in node:
//   printf 'abc\ndef' | node stdio.js events
'use strict';
// Required by the patterns: 'duck' must run without the stream library.
const stream = () => require('stream');

const patterns = {
  // 'data' / 'end' / 'close' / 'error', as a Readable that does not flow
  // until asked; a file has no 'close' after its end, a pipe has.
  events() {
    const s = process.stdin;
    console.log('Readable', s instanceof stream().Readable, 'flowing', s.readableFlowing, 'hwm', s.readableHighWaterMark);
    let total = 0;
    s.on('data', (c) => { total += c.length; });
    s.on('end', () => console.log('end', total, s.readableEnded));
    s.on('close', () => console.log('close'));
    s.on('error', (e) => console.log('error', e.code, e.syscall, e.message, e.errno));
  },
  // Bytes as they are, and stdout is not ended by the pipe.
  pipe() {
    process.stdin.pipe(process.stdout);
    process.stdin.on('end', () => setImmediate(() => process.stdout.write('[still open]\n')));
  },
  iterate() {
    (async () => {
      let n = 0, total = 0, buffers = true;
      for await (const c of process.stdin) {
        n++;
        total += c.length;
        buffers = buffers && Buffer.isBuffer(c);
      }
      console.log('chunks', n > 0, 'total', total, 'buffers', buffers);
    })().catch((e) => console.log('rejected', e.code));
  },
  // Paused mode: read() after 'readable', strings through setEncoding,
  // a character split between reads decoded whole.
  encoding() {
    process.stdin.setEncoding('utf8');
    let s = '';
    process.stdin.on('readable', () => {
      let c;
      while ((c = process.stdin.read()) !== null) s += c;
    });
    process.stdin.on('end', () => console.log(JSON.stringify(s)));
  },
  // A read error reaches a stream that is not being read from: 'error'
  // and 'close' at once, not at a later read().
  unread() {
    process.stdin.on('readable', () => console.log('readable'));
    process.stdin.on('error', (e) => console.log('error', e.code));
    process.stdin.on('close', () => console.log('close'));
  },
  // read(n) takes n bytes; the rest stays for the next read.
  readn() {
    process.stdin.once('readable', () => {
      const first = process.stdin.read(3);
      console.log('first', first === null ? null : first.toString());
      process.stdin.on('data', (c) => console.log('rest', c.length));
      process.stdin.on('end', () => console.log('end'));
    });
  },
  // A consumer that never takes more: stdin is not read beyond what the
  // streams hold (16 KB, 64 KB for a file), whatever the input's size.
  backpressure() {
    let got = 0;
    process.stdin.pipe(new (stream().Writable)({ highWaterMark: 1024, write(c, e, cb) { got += c.length; } }));
    setTimeout(() => {
      const held = got + process.stdin.readableLength;
      console.log(held > 0 && held <= 256 * 1024 ? 'bounded' : 'read ' + held);
      process.exit(0);
    }, 500);
  },
  // Leaving a for await early destroys stdin, and the script ends though
  // its input has not.
  first() {
    (async () => {
      for await (const c of process.stdin) {
        console.log('first chunk', c.length > 0);
        break;
      }
      console.log('destroyed', process.stdin.destroyed);
    })();
  },
  // process.stdout and process.stderr are Writables: writes answer true
  // (written at once), pipeline ends stdout and calls back, pipe() does not
  // end it. Run with stdout to a file: node's stdout as a pipe is a socket.
  stdout() {
    const { Readable, Writable, pipeline } = stream();
    const out = process.stdout;
    console.log('Writable', out instanceof Writable, process.stderr instanceof Writable, typeof out._writableState);
    console.log('write', out.write('abc\n', 'utf8', (e) => console.log('write cb', e == null)));
    const err = process.stderr;
    console.log('big write', err.write('x'.repeat(20000) + '\n'), err.writableLength);
    out.write(Buffer.from('6869', 'hex'));
    out.write('0a', 'hex');
    pipeline(Readable.from(['piped\n']), out, (e) => {
      console.log('pipeline called back', e);
      Readable.from(['from pipe()\n']).pipe(out).on('unpipe', () => setImmediate(() => console.log('done')));
    });
  },
  // end() says 'finish' and 'close' but leaves the descriptor open: later
  // writes go out. (node's stdout takes one end: pipeline after it never
  // calls back, a second end loses the next write.)
  end() {
    const out = process.stdout;
    const events = [];
    out.on('finish', () => events.push('finish'));
    out.on('close', () => events.push('close'));
    out.end('last\n', () => events.push('end cb'));
    setTimeout(() => {
      console.log(events.sort().join(', '));
      console.log('after end', out.destroyed, out.writableEnded);
    }, 10);
  },
  // Run with stdout a pipe whose reader has gone (run_command_test's
  // RunOnClosedPipe; `| head -2` for a long output). console ignores the
  // EPIPE and goes on: 'done' and status 0.
  'epipe-console'() {
    for (let i = 0; i < 100000; i++) console.log('line ' + i);
    console.error('done');
  },
  // process.stdout.write answers false, its callback gets the EPIPE, and
  // the 'error' nothing listens for ends the script (status 1).
  'epipe-write'() {
    if (process.argv[3] === 'stream') stream();
    console.error('write', process.stdout.write('x\n', (e) => console.error('callback', e.code)));
    setTimeout(() => console.error('not reached'), 100);
  },
  // With a listener: node's error, once for the failed writes of a tick,
  // the stream still open; console's writes reach the listener too.
  'epipe-listen'() {
    if (process.argv[3] === 'stream') stream();
    const out = process.stdout;
    out.on('error', (e) => console.error('error', e.code, e.errno, e.syscall, e.message, out.destroyed, out.writable));
    console.error('writes', out.write('x\n'), out.write('y\n', (e) => console.error('callback', e.code)));
    setTimeout(() => {
      console.log('from console');
      setTimeout(() => console.error('done'), 10);
    }, 10);
  },
  // A terminal's WriteStream (run in a pseudo-terminal of 100 columns and
  // 40 rows, TERM=xterm-256color): isTTY, the window's size, colours, and
  // console's colours; elsewhere no isTTY at all.
  tty() {
    const out = process.stdout;
    const line = (s) => [s.isTTY, 'isTTY' in s, s.columns, s.rows].join(' ');
    console.error('stdin', process.stdin.isTTY, 'stdout', line(out), 'stderr', line(process.stderr));
    if (out.isTTY) {
      console.error(JSON.stringify(out.getWindowSize()), out.getColorDepth(), out.hasColors(), out.hasColors(256),
        out.hasColors(2 ** 24), out.getColorDepth({ TERM: 'dumb' }), out.hasColors({ NO_COLOR: '1' }));
      out.cursorTo(0);
    }
    console.log('colours', true, { a: 1 });
  },
  // 4 MB, as 64 KB writes and console.log lines, to a stdout that another
  // process made non-blocking and that is read slowly: every byte arrives.
  big() {
    const chunk = 'x'.repeat(65535) + '\n';
    for (let i = 0; i < 32; i++) process.stdout.write(chunk);
    for (let i = 0; i < 32; i++) console.log(chunk.slice(1, -1));
    console.error('written');
  },
};

// Light stdout: without the stream library, a look at its Writable state
// makes it one (is-stream's check).
if (process.argv[2] === 'duck') {
  const out = process.stdout;
  console.log(typeof out._write, typeof out._writableState, out.writable);
  console.log(out instanceof stream().Writable);
} else {
  patterns[process.argv[2]]();
}
