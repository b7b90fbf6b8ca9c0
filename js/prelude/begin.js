// The JS half of every settee isolate: node-like globals (console, timers,
// process, require, Buffer, TextEncoder/TextDecoder, performance), the
// PouchDB-compatible database API and the `settee` object (threads, tasks,
// messages). Compiled once per isolate by js/isolate_thread.cc and called with
// `native`, the C++ bindings (js/bindings_*.cc). Returns the hooks object C++
// calls back into (timers, immediates, ticks, tasks, messages, feeds).
//
// The prelude is one function expression, assembled by js/CMakeLists.txt
// from this file, the fragments listed there (inspect.js ... settee.js),
// then end.js; the fragments share this function's scope. It is embedded
// as a C++ raw string with delimiter "JS": never write a closing
// parenthesis directly followed by JS and a double quote in these files.
(function (native, global) {
'use strict';

const hooks = Object.create(null);
const ObjectToString = Object.prototype.toString;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
