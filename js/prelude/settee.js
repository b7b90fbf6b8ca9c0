// Part of the isolate prelude (js/prelude/begin.js): the settee object: threads, tasks, messages.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// settee: threads, tasks, messages

const pendingTasks = new Map();
let nextTaskId = 1;
const messageEmitter = new EventEmitter();

function fnSource(fn) {
  if (typeof fn === 'function') return Function.prototype.toString.call(fn);
  if (typeof fn === 'string') return fn;
  throw new TypeError('a task is a function or its source text');
}
function postTask(target, fn, arg) {
  const src = fnSource(fn);
  const argJson = arg === undefined ? 'null' : native.toJson(arg);
  return new Promise((resolve, reject) => {
    const id = nextTaskId++;
    pendingTasks.set(id, { resolve, reject });
    native.postTask(target, src, argJson, id);
  });
}
hooks.onTaskReply = function (id, ok, json) {
  const t = pendingTasks.get(id);
  if (!t) return;
  pendingTasks.delete(id);
  if (ok) {
    t.resolve(JSON.parse(json));
  } else {
    t.reject(remoteError(json));
  }
};
// An error from another thread, from its stack text: of its own type when
// that is one of JavaScript's (as node's structured clone of an error
// between workers keeps it), else an Error; the remote stack kept.
const kRemoteErrorTypes = { EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
function remoteError(stack) {
  // The header is everything before the first frame (a message may span
  // lines).
  const frames = stack.indexOf('\n    at ');
  const head = frames < 0 ? stack : stack.slice(0, frames);
  const m = /^([A-Za-z]*Error): /.exec(head);
  const Type = m && Object.prototype.hasOwnProperty.call(kRemoteErrorTypes, m[1]) ? kRemoteErrorTypes[m[1]] : Error;
  const e = new Type(m ? head.slice(m[0].length) : head);
  e.stack = stack;
  e.remote = true;
  return e;
}

// A task's result that is JSON text already (a view share's map results,
// settee._views.mapText): handed to the host as it is, instead of quoted as
// a JSON string that the host would parse back into the same text.
class TaskJsonText {
  constructor(text) { this.text = text; }
}

// Runs a task sent by settee.tasks.run*/IsolatePool::Run; settles through
// native.taskDone (value as JSON, or the error's stack text).
hooks.runTask = function (taskId, src, argJson) {
  let p;
  try {
    const fn = (0, eval)('(' + src + '\n)');
    if (typeof fn !== 'function') throw new TypeError('task source is not a function');
    p = Promise.resolve(fn(JSON.parse(argJson)));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then((v) => (v instanceof TaskJsonText ? native.taskDone(taskId, true, v.text, true)
                                           : native.taskDone(taskId, true, v === undefined ? null : v, false)),
         (e) => native.taskDone(taskId, false, errorText(e), true));
};
hooks.evalScript = function (taskId, src) {
  let p;
  try {
    p = Promise.resolve(native.runScript(src, '[eval]'));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then((v) => native.taskDone(taskId, true, inspect(v), true),
         (e) => native.taskDone(taskId, false, errorText(e), true));
};

function errorText(e) {
  if (e instanceof Error && e.stack) return String(e.stack);
  return 'Uncaught ' + inspect(e);
}
hooks.errorText = errorText;
hooks.inspect = inspect;
hooks.onMessage = function (json, from) {
  messageEmitter.emit('message', JSON.parse(json), from);
};

const settee = {
  threadId: native.threadId,
  threadCount: native.threadCount,
  restartCount: native.restartCount,
  version: native.version,
  db: (name, opts) => new PouchDB(name, opts),
  PouchDB: PouchDBExport,
  // Sends `msg` (JSON-serializable) to thread `to` (-1: the host/main
  // thread, the default; '*': every other isolate thread).
  postMessage(msg, to = -1) {
    native.postMessage(to === '*' ? -2 : Number(to), native.toJson(msg === undefined ? null : msg));
  },
  on(ev, fn) { messageEmitter.on(ev, fn); return settee; },
  once(ev, fn) { messageEmitter.once(ev, fn); return settee; },
  off(ev, fn) { messageEmitter.off(ev, fn); return settee; },
  tasks: {
    // Runs fn(arg) on some isolate thread (the least busy); resolves with its result.
    run: (fn, arg) => postTask(-1, fn, arg),
    // Runs fn(arg) on thread `id`.
    runOn: (id, fn, arg) => postTask(Number(id), fn, arg),
    // Runs fn(arg) on every isolate thread (this one too); resolves with the results by thread id.
    runOnAll: (fn, arg) => {
      const all = [];
      for (let i = 0; i < native.threadCount; i++) all.push(postTask(i, fn, arg));
      return Promise.all(all);
    },
  },
};

