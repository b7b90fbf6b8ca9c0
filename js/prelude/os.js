// Part of the isolate prelude (js/prelude/begin.js): node's `os` module, from
// libuv's view of the machine (js/bindings_node.cc's osInfo). A fragment, not
// a module.

// ---------------------------------------------------------------------------
// os

const os = (() => {
  const info = () => native.osInfo();
  const sysname = () => info().sysname || 'Linux';
  return {
    EOL: '\n',
    devNull: '/dev/null',
    constants: { signals: { SIGINT: 2, SIGTERM: 15, SIGKILL: 9, SIGHUP: 1 } },
    arch: () => process.arch,
    platform: () => process.platform,
    type: sysname,
    release: () => info().release || '',
    version: () => info().version || '',
    machine: () => info().machine || '',
    hostname: () => info().hostname,
    homedir: () => info().homedir,
    tmpdir: () => info().tmpdir,
    totalmem: () => info().totalmem,
    freemem: () => info().freemem,
    uptime: () => info().uptime,
    loadavg: () => info().loadavg,
    cpus: () => info().cpus,
    availableParallelism: () => Math.max(1, info().cpus.length),
    endianness: () => (new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE'),
    userInfo: () => ({ uid: -1, gid: -1, username: process.env.USER || process.env.LOGNAME || '', homedir: info().homedir, shell: process.env.SHELL || null }),
  };
})();
