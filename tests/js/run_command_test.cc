// `settee run` / `settee eval` end to end (runtime/run_command.cc), through
// the settee-js executable: output, exit status, error reports with stack
// traces, --threads, --keep, limits, and the JS test scripts in scripts/.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#ifdef SETTEE_BINARY
#include "tests/replication/serve_child.h"
#endif

namespace {

using testing::HasSubstr;
using testing::Not;

const std::string kBinary = SETTEE_JS_BINARY;
const std::string kScripts = SETTEE_JS_SCRIPTS_DIR;

struct Outcome {
  int code = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

// Runs `before` settee-js `args` (shell-quoted here) `after` as one shell
// line, for a stdin other than Settee's file: `before` may pipe into it
// ("printf x | "), `after` may redirect it (" <&-").
Outcome SetteeShell(const std::string& before, const std::vector<std::string>& args,
                    const std::string& after = "") {
  std::string dir = testing::TempDir();
  std::string out = dir + "/settee_out_" + std::to_string(getpid());
  std::string err = dir + "/settee_err_" + std::to_string(getpid());
  std::string cmd = before + Quote(kBinary);
  for (auto& a : args) cmd += " " + Quote(a);
  cmd += after + " >" + out + " 2>" + err;
  int status = std::system(cmd.c_str());
  Outcome o;
  if (WIFEXITED(status)) o.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) o.code = 128 + WTERMSIG(status);
  o.out = Slurp(out);
  o.err = Slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return o;
}

// Runs settee-js with `args` (shell-quoted here), feeding `input` on stdin.
Outcome Settee(const std::vector<std::string>& args, const std::string& input = "") {
  std::string in = testing::TempDir() + "/settee_in_" + std::to_string(getpid());
  std::ofstream(in) << input;
  Outcome o = SetteeShell("timeout 120 ", args, " <" + in);
  std::remove(in.c_str());
  return o;
}

// The scripts Script() wrote, removed when the test program ends.
struct ScriptFiles {
  std::vector<std::string> paths;
  ~ScriptFiles() {
    for (const auto& p : paths) std::remove(p.c_str());
  }
} script_files;

// Writes `source` to a temporary script and returns its path, named for
// this process too: /tmp is shared, and the same test run at once from
// another build (another worktree, a repeated run) wrote the same name.
std::string Script(const std::string& name, const std::string& source) {
  std::string dir = testing::TempDir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  std::string path = dir + "/settee_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << source;
  script_files.paths.push_back(path);
  return path;
}

TEST(EvalCommand, PrintsValuesLikeNode) {
  auto o = Settee({"eval", "1 + 1"});
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out, "2\n");
  o = Settee({"eval", "({a: [1, 'x'], b: {c: null}})"});
  EXPECT_EQ(o.out, "{ a: [ 1, 'x' ], b: { c: null } }\n");
  o = Settee({"eval", "'text'"});
  EXPECT_EQ(o.out, "'text'\n");
  o = Settee({"eval", "Promise.resolve([undefined, -0])"});
  EXPECT_EQ(o.out, "[ undefined, -0 ]\n");
}

TEST(EvalCommand, ErrorsExitNonZeroWithStack) {
  auto o = Settee({"eval", "nope()"});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.err, HasSubstr("ReferenceError: nope is not defined"));
  EXPECT_THAT(o.err, HasSubstr("at [eval]:1"));
  o = Settee({"eval", "let = ;"});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.err, HasSubstr("SyntaxError"));
}

TEST(EvalCommand, UsesTheDatabase) {
  auto o = Settee({"eval", "(async () => { const db = settee.db('e'); await db.put({_id: 'a', v: 5}); "
                           "return (await db.get('a')).v; })()"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "5\n");
}

TEST(RunCommand, ReadsTheScriptFromStdin) {
  auto o = Settee({"run", "-"}, "console.log(6 * 7, typeof require, process.argv.length)\n");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "42 function 2\n");
}

TEST(RunCommand, PassesArgumentsAndWaitsForTimers) {
  std::string s = Script("args.js",
                         "setTimeout(() => console.log('later', process.argv.slice(2).join(',')), 30);\n"
                         "console.log('now');\n");
  auto o = Settee({"run", s, "a", "--b", "c"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "now\nlater a,--b,c\n");
}

TEST(RunCommand, UncaughtExceptionPrintsLocationAndStack) {
  std::string s = Script("throws.js",
                         "function inner() {\n  throw new Error('kaboom');\n}\nfunction outer() { inner(); }\nouter();\n"
                         "console.log('not reached');\n");
  auto o = Settee({"run", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.out, Not(HasSubstr("not reached")));
  EXPECT_THAT(o.err, HasSubstr(s + ":2\n  throw new Error('kaboom');\n  ^"));
  EXPECT_THAT(o.err, HasSubstr("Error: kaboom\n    at inner (" + s + ":2:9)"));
  EXPECT_THAT(o.err, HasSubstr("at outer (" + s + ":4"));
}

TEST(RunCommand, SyntaxErrorsAreReported) {
  std::string s = Script("syntax.js", "const ok = 1;\nlet broken = ;\n");
  auto o = Settee({"run", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.err, HasSubstr(s + ":2"));
  EXPECT_THAT(o.err, HasSubstr("SyntaxError: Unexpected token ';'"));
}

TEST(RunCommand, UnhandledRejectionsFailTheRun) {
  std::string s = Script("rejects.js", "async function f() { throw new TypeError('no handler'); }\nf();\n");
  auto o = Settee({"run", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.err, HasSubstr("Unhandled promise rejection: TypeError: no handler\n    at f ("));
  // A handler attached in the same turn is enough.
  s = Script("handled.js", "const p = Promise.reject(new Error('x'));\np.catch(() => console.log('caught'));\n");
  o = Settee({"run", s});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "caught\n");
}

TEST(RunCommand, ProcessExitSetsTheStatusAndStopsAtOnce) {
  std::string s = Script("exit.js",
                         "process.on('exit', (c) => console.log('exiting with', c));\n"
                         "setTimeout(() => console.log('timer must not run'), 10);\n"
                         "process.exit(7);\nconsole.log('not reached');\n");
  auto o = Settee({"run", "--threads", "2", s});
  EXPECT_EQ(o.code, 7);
  EXPECT_THAT(o.out, HasSubstr("exiting with 7"));
  EXPECT_THAT(o.out, Not(HasSubstr("not reached")));
  EXPECT_THAT(o.out, Not(HasSubstr("timer must not run")));
}

TEST(RunCommand, ScriptEndsAsInNodeWithBeforeExitExitAndExitCode) {
  // beforeExit may schedule more work (then fires again when that is done);
  // exit runs once at the end; process.exitCode is the status.
  std::string s = Script("ends.js",
                         "let rounds = 0;\n"
                         "process.on('beforeExit', (c) => {\n"
                         "  console.log('beforeExit', c, rounds);\n"
                         "  if (rounds++ === 0) setTimeout(() => { process.exitCode = 5; }, 5);\n"
                         "});\n"
                         "process.on('exit', (c) => console.log('exit', c));\n"
                         "console.log('main');\n");
  auto o = Settee({"run", s});
  EXPECT_EQ(o.code, 5) << o.err;
  EXPECT_EQ(o.out, "main\nbeforeExit 0 0\nbeforeExit 5 1\nexit 5\n");
}

// A script an uncaught error or an unhandled rejection ends runs its 'exit'
// listeners with code 1 (process.exitCode 1), as node's
// createOnGlobalUncaughtException does; they never ran. The error is still
// reported and the run's status is 1.
TEST(RunCommand, AnErrorThatEndsTheScriptRunsItsExitListeners) {
  std::string s = Script("fatal_exit.js",
                         "process.on('exit', (c) => console.log('exit', c, process.exitCode));\n"
                         "setTimeout(() => { throw new Error('late'); }, 1);\n");
  auto o = Settee({"run", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "exit 1 1\n");
  EXPECT_THAT(o.err, HasSubstr("Error: late"));
  s = Script("fatal_rejection.js",
             "process.on('exit', (c) => { console.log('exit', c); throw new Error('in exit'); });\n"
             "Promise.reject(new Error('rejected'));\n");
  o = Settee({"run", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "exit 1\n");
  EXPECT_THAT(o.err, HasSubstr("Error: rejected"));
  EXPECT_THAT(o.err, Not(HasSubstr("in exit")));
}

// 'exit' listeners run once and leave the status, as in node: a
// process.exit(3) in one ends with 3 (it re-emitted 'exit' until the stack
// overflowed, and the run ended with 0), and process.exitCode set in one is
// the status (it was read before they ran).
TEST(RunCommand, ExitListenersRunOnceAndLeaveTheStatus) {
  struct Case {
    const char* name;
    const char* script;
    int code;
    const char* out;
  };
  const Case cases[] = {
      {"exit_in_exit.js", "process.on('exit', (c) => { console.log('exit', c); process.exit(3); });\n", 3,
       "exit 0\n"},
      {"exit_code_in_exit.js",
       "process.exitCode = 4;\n"
       "process.on('exit', (c) => { console.log('exit', c); process.exitCode = 6; });\n",
       6, "exit 4\n"},
      {"exit_call_in_exit.js",
       "process.on('exit', (c) => { console.log('exit', c); process.exitCode = 7; });\n"
       "setTimeout(() => process.exit(5), 1);\n",
       7, "exit 5\n"},
  };
  for (const Case& c : cases) {
    auto o = Settee({"run", Script(c.name, c.script)});
    EXPECT_EQ(o.code, c.code) << c.name << ": " << o.err;
    EXPECT_EQ(o.out, c.out) << c.name;
  }
}

TEST(RunCommand, KeepRestartsAThreadAfterAnUncaughtError) {
  std::string keep = kScripts + "/keep.js";
  auto o = Settee({"run", "--keep", keep});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "survived after 2 restarts\n");
  EXPECT_THAT(o.err, HasSubstr("Error: crash number 0\n    at Timeout.crash"));
  EXPECT_THAT(o.err, HasSubstr("Error: crash number 1"));
  EXPECT_THAT(o.err, HasSubstr("restarting " + keep + " (restart 2)"));

  o = Settee({"run", keep});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_THAT(o.err, HasSubstr("crash number 0"));
  EXPECT_THAT(o.err, Not(HasSubstr("restarting")));
}

TEST(RunCommand, RunawayScriptIsStoppedByTheTimeout) {
  std::string s = Script("spin.js", "console.log('start');\nwhile (true) {}\n");
  auto o = Settee({"run", "--timeout-ms", "100", s});
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "start\n");
  EXPECT_THAT(o.err, HasSubstr("Script execution timed out after 100ms"));
}

TEST(RunCommand, HeapLimitEndsTheScriptNotTheProcess) {
  std::string s = Script("hog.js", "const keep = [];\nfor (;;) keep.push(new Array(1e5).fill(Math.random()));\n");
  auto o = Settee({"run", "--max-heap-mb", "48", s});
  EXPECT_EQ(o.code, 1);  // a status, not a signal
  EXPECT_THAT(o.err, HasSubstr("JavaScript heap out of memory (limit 48 MB)"));
}

TEST(RunCommand, MessagesToTheMainThreadAreShown) {
  std::string s = Script("msg.js", "settee.postMessage({from: settee.threadId});\n");
  auto o = Settee({"run", "-t", "2", s});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("[message from thread 0] {\"from\":0}"));
  EXPECT_THAT(o.out, HasSubstr("[message from thread 1] {\"from\":1}"));
}

TEST(RunCommand, BadArgumentsAreRefused) {
  EXPECT_NE(Settee({"run", "/no/such/file.js"}).code, 0);
  EXPECT_NE(Settee({"run", "--threads", "0", "x.js"}).code, 0);
  EXPECT_NE(Settee({"run", "--backend", "paper", "x.js"}).code, 0);
}

// Settee's options go before the script, and every word after it is the
// script's (process.argv), as written, as node has it: `app.js --help -t 2
// --` reached the script only in part (settee took --help and -t 2 for
// itself, and refused `--`'s next word), and an option settee does not
// know before the script was passed to the script (or, with a value, ran
// that value as the script) instead of being refused.
TEST(RunCommand, WordsAfterTheScriptAreTheScriptsAndUnknownOptionsBeforeItAreRefused) {
  std::string s = Script("argv.js", "console.log(JSON.stringify(process.argv.slice(2)), settee.threadId)\n");
  auto o = Settee({"run", s, "--help", "-t", "2", "--threads", "3", "--keep", "--", "x", "[1,2]", "[]"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "[\"--help\",\"-t\",\"2\",\"--threads\",\"3\",\"--keep\",\"--\",\"x\",\"[1,2]\",\"[]\"] 0\n");
  o = Settee({"run", "--keep", "--timeout-ms=0", "-t2", s, "-t"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("[\"-t\"] 1\n"));
  o = Settee({"run", "--threads", "2", s, "a"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("[\"a\"] 0\n"));
  EXPECT_THAT(o.out, HasSubstr("[\"a\"] 1\n"));
  o = Settee({"run", "--bogus", s});
  EXPECT_NE(o.code, 0);
  EXPECT_EQ(o.out, "");
  EXPECT_THAT(o.err, HasSubstr("--bogus"));
  o = Settee({"run", "--thread", "4", s});
  EXPECT_NE(o.code, 0);
  EXPECT_EQ(o.out, "");
  EXPECT_THAT(o.err, HasSubstr("--thread"));
  o = Settee({"eval", "process.argv.slice(1).join()", "--threads", "2", "b"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "'--threads,2,b'\n");
  o = Settee({"eval", "--bogus", "1 + 1"});
  EXPECT_NE(o.code, 0);
  EXPECT_EQ(o.out, "");
}

// `--data DIR` alone means the LevelDB store in DIR: it was ignored (the
// default backend is memory), so what a script wrote there was gone at exit.
// `--backend memory` with `--data` is a contradiction, refused.
TEST(RunCommand, DataDirectoryAloneMeansLevelDb) {
  std::string dir = testing::TempDir() + "/settee_js_data_" + std::to_string(getpid());
  std::system(("rm -rf " + Quote(dir)).c_str());
  auto o = Settee({"eval", "--data", dir, "settee.db('kept').put({_id: 'a', v: 7}).then(r => r.ok)"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "true\n");
  o = Settee({"run", "--data", dir, "-"},
             "settee.db('kept').get('a').then(d => console.log(d.v), e => console.log(e.status))\n");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "7\n");
  o = Settee({"run", "--backend", "leveldb", "--data", dir, "-"},
             "settee.db('kept').get('a').then(d => console.log(d.v))\n");
  EXPECT_EQ(o.out, "7\n");
  o = Settee({"run", "--backend", "memory", "--data", dir, "-"}, "console.log('ran')\n");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_THAT(o.err, HasSubstr("--data"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

//////// The JS test scripts (tests/js/scripts), each asserting internally.

// Runs scripts/`script` on one thread (with `args` after it) and expects it
// to exit 0 after printing "all `count` passed".
void ExpectScriptPasses(const std::string& script, int count, std::vector<std::string> args = {}) {
  std::vector<std::string> command = {"run", kScripts + "/" + script};
  command.insert(command.end(), args.begin(), args.end());
  auto o = Settee(command);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all " + std::to_string(count) + " passed"));
}

TEST(JsScripts, NodeBasics) { ExpectScriptPasses("node_basics.js", 11, {"--flag", "value"}); }

TEST(JsScripts, PouchDbApiOnMemory) { ExpectScriptPasses("pouchdb_api.js", 26); }

TEST(JsScripts, PouchDbPluginsDefaultsAndRequire) { ExpectScriptPasses("pouchdb_plugins.js", 6); }

TEST(JsScripts, PouchDbApiOnLevelDbInThreeThreads) {
  std::string dir = testing::TempDir() + "/settee_js_leveldb_" + std::to_string(getpid());
  auto o = Settee({"run", "--threads", "3", "--backend", "leveldb", "--data", dir, kScripts + "/pouchdb_api.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 3; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 26 passed"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

// Documents built from their shapes against JSON.parse of the stored text
// (randomized, seeded): four threads on memory, each its own sequence and
// shape table, and two on LevelDB.
TEST(JsScripts, DocShapesOnMemoryAndLevelDb) {
  auto o = Settee({"run", "--threads", "4", kScripts + "/doc_shapes.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 4; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 7 passed"));
  std::string dir = testing::TempDir() + "/settee_js_shapes_" + std::to_string(getpid());
  o = Settee({"run", "--threads", "2", "--backend", "leveldb", "--data", dir, kScripts + "/doc_shapes.js", "7"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 2; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 7 passed"));
  std::system(("rm -rf " + Quote(dir)).c_str());
  // Without new Function (a hardening flag V8 and node offer): the shapes'
  // objects are built member by member, the same as before.
  o = Settee({"run", "--v8-flags", "--disallow-code-generation-from-strings", kScripts + "/doc_shapes.js", "3", "500"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 7 passed"));
}

// Isolates run on one thread one after another (--keep's restart) share
// the thread's shape table while each builds its own shape functions: the
// second reads the first's shapes in another order, and a new one.
TEST(JsScripts, DocShapesOfAnIsolateBeforeARestart) {
  std::string script = Script("settee_keep_shapes.js", R"JS(
const db = new PouchDB('keep_shapes');
(async () => {
  if (settee.restartCount === 0) {
    await db.put({ _id: 'a', x: 1 });
    await db.put({ _id: 'b', y: 's', z: true });
    await db.put({ _id: 'c', w: null, v: -1.5 });
    await db.get('a');
    await db.get('b');
    setTimeout(() => { throw new Error('first isolate ends'); }, 1);
    return;
  }
  const docs = [await db.get('c'), await db.get('b'), await db.get('a'), await db.get('c')];
  console.log(JSON.stringify(docs.map((d) => [Object.keys(d), Object.values(d).slice(2)])));
})();
)JS");
  auto o = Settee({"run", "--keep", script});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, R"([[["_id","_rev","w","v"],[null,-1.5]],[["_id","_rev","y","z"],["s",true]],)"
                   R"([["_id","_rev","x"],[1]],[["_id","_rev","w","v"],[null,-1.5]]])" "\n");
  EXPECT_THAT(o.err, HasSubstr("first isolate ends"));
}

TEST(JsScripts, AttachmentsOnMemoryAndLevelDb) {
  auto o = Settee({"run", kScripts + "/attachments.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 7 passed"));
  std::string dir = testing::TempDir() + "/settee_js_atts_" + std::to_string(getpid());
  o = Settee({"run", "--threads", "2", "--backend", "leveldb", "--data", dir, kScripts + "/attachments.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 2; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 7 passed"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

TEST(JsScripts, Replication) { ExpectScriptPasses("replication.js", 7); }

TEST(JsScripts, ViewsOnBothBackends) {
  auto o = Settee({"run", kScripts + "/views.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 9 passed"));
  std::string dir = testing::TempDir() + "/settee_js_views_" + std::to_string(getpid());
  o = Settee({"run", "--threads", "2", "--backend", "leveldb", "--data", dir, kScripts + "/views.js"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 2; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 9 passed"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

TEST(JsScripts, Find) { ExpectScriptPasses("find.js", 4); }

TEST(JsScripts, FsModuleAsInNode) { ExpectScriptPasses("fs.js", 6); }

TEST(JsScripts, UrlAndUrlSearchParamsAsInNode) { ExpectScriptPasses("url.js", 2); }

TEST(JsScripts, UtilEventsAbortAndFriendsAsInNode) { ExpectScriptPasses("node_util.js", 12); }

TEST(JsScripts, BufferAsInNode) { ExpectScriptPasses("buffer.js", 4); }

#ifdef SETTEE_BINARY
TEST(JsScripts, FetchAgainstSetteeServeInThreeThreads) {
  settee::testing::ServeChild server(SETTEE_BINARY, ::testing::TempDir() + "/run_command_fetch_" + std::to_string(getpid()) + ".log");
  const std::string url = server.Url();
  ASSERT_FALSE(url.empty()) << server.Log();
  auto o = Settee({"run", "--threads", "3", kScripts + "/fetch.js", url});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 3; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 4 passed"));
}
#endif

TEST(JsScripts, EsModulesAsInNodeInTwoThreads) {
  auto o = Settee({"run", "--threads", "2", kScripts + "/esm.mjs"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 2; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 4 passed"));
}

// import of a .json file skips a UTF-8 byte order mark, as require() does
// and node's JSON loader does (settee imports JSON without an import
// attribute, which node would ask for, so this is not in esm.mjs).
TEST(RunCommand, AnEsModulesJsonImportSkipsAByteOrderMark) {
  std::string dir = ::testing::TempDir() + "/settee_esm_bom_" + std::to_string(getpid());
  std::system(("mkdir -p " + Quote(dir)).c_str());
  {
    std::ofstream(dir + "/data.json") << "\xEF\xBB\xBF{\"saved\": \"with a BOM\"}\n";
    std::ofstream(dir + "/main.mjs") << "import d from './data.json';\n"
                                        "const m = await import('./data.json');\n"
                                        "console.log(d.saved + '|' + m.default.saved);\n";
  }
  auto o = Settee({"run", dir + "/main.mjs"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("with a BOM|with a BOM"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

TEST(RunCommand, AnEsModulesUncaughtErrorFailsTheRunWithItsLocation) {
  std::string dir = ::testing::TempDir() + "/settee_esm_" + std::to_string(getpid());
  std::system(("mkdir -p " + Quote(dir)).c_str());
  {
    std::ofstream(dir + "/boom.mjs") << "export const x = 1;\nawait null;\nthrow new Error('esm boom');\n";
  }
  auto o = Settee({"run", dir + "/boom.mjs"});
  EXPECT_NE(o.code, 0);
  EXPECT_THAT(o.err, HasSubstr("boom.mjs:3\nthrow new Error"));
  EXPECT_THAT(o.err, HasSubstr("Error: esm boom"));
  std::system(("rm -rf " + Quote(dir)).c_str());
}

TEST(JsScripts, ZlibAsInNode) { ExpectScriptPasses("zlib.js", 3); }

TEST(JsScripts, StreamAsInNode) { ExpectScriptPasses("stream.js", 9); }

// stream.pipeline into process.stdout calls back once the source is written,
// as node 20's does (which then ends stdout: not in stream.js, whose later
// output that would break in node). Later writes still print here.
TEST(RunCommand, StreamPipelineIntoStdoutCallsBack) {
  auto o = Settee({"run", "-"},
                  "const { pipeline, Readable } = require('stream');\n"
                  "pipeline(Readable.from(['a\\n', Buffer.from('b\\n')]), process.stdout, (e) => {\n"
                  "  console.log('called back', e);\n"
                  "  require('stream/promises').pipeline(Readable.from(['c\\n']), process.stderr).then(() => console.log('resolved'));\n"
                  "});\n");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "a\nb\ncalled back undefined\nresolved\n");
  EXPECT_EQ(o.err, "c\n");
}

// readline.js's last check reads stdin through readline: a pipe (CRLF, a
// blank line, a last line without newline), a file, an empty pipe, and a
// closed stdin, which reads as empty.
TEST(JsScripts, ReadlineOverStdin) {
  const std::string script = kScripts + "/readline.js";
  auto o = SetteeShell("printf 'one\\r\\ntwo\\n\\nlast' | ", {"run", script, R"(["one","two","","last"])"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 6 passed"));
  // Many 64 KB reads from a file; seq's lines.
  std::string many;
  for (int i = 1; i <= 100000; ++i) many += std::to_string(i) + "\n";
  o = Settee({"run", script, "seq:100000"}, many);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 6 passed"));
  o = SetteeShell("true | ", {"run", script, "[]"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 6 passed"));
  o = SetteeShell("", {"run", script, "[]"}, " <&-");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 6 passed"));
}

// process.stdin as node's: 'readable' and read() (paused mode), 'data'
// with setEncoding, and 'close' after 'end' for a pipe but not for a file
// (node's fs.ReadStream without autoClose); node 20 prints the same.
TEST(RunCommand, ProcessStdinReadsAsNodes) {
  std::string paused = Script("stdin_readable.js",
      "let total = 0;\n"
      "process.stdin.on('readable', () => { let c; while ((c = process.stdin.read()) !== null) total += c.length; });\n"
      "process.stdin.on('end', () => console.log('end', total));\n"
      "process.stdin.on('close', () => console.log('close'));\n");
  auto o = SetteeShell("printf 'abc\\ndef' | ", {"run", paused});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "end 7\nclose\n");
  o = Settee({"run", paused}, std::string(200000, 'x'));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "end 200000\n");
  std::string flowing = Script("stdin_data.js",
      "process.stdin.setEncoding('utf8');\n"
      "let s = '';\n"
      "process.stdin.on('data', (c) => { s += c; });\n"
      "process.stdin.on('end', () => console.log(JSON.stringify(s)));\n");
  o = SetteeShell("printf '\\342\\202\\254 x' | ", {"run", flowing});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "\"\u20ac x\"\n");
}

// scripts/stdio.js's patterns, each with the stdins that tell its cases
// apart; every expected output is node 20's for the same stdin.
struct StdinCase {
  std::string before;  // shell text before the command (a pipe into it)
  std::string after;   // shell text after it (a redirection)
};
const StdinCase kPipe{"printf 'abc\\ndef' | ", ""};
const StdinCase kEmptyPipe{"true | ", ""};
const StdinCase kDevNull{"", " </dev/null"};
const StdinCase kClosed{"", " <&-"};

Outcome StdioPattern(const std::string& pattern, const StdinCase& in) {
  return SetteeShell("timeout 60 " + in.before, {"run", kScripts + "/stdio.js", pattern}, in.after);
}

// Runs the pattern with stdin a socket whose peer is gone with data unread:
// the first read fails with ECONNRESET.
Outcome StdioPatternOnResetSocket(const std::string& pattern) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return {};
  EXPECT_EQ(write(sv[0], "x", 1), 1);
  close(sv[1]);  // unread data: sv[0] reads ECONNRESET
  Outcome o = StdioPattern(pattern, {"", " <&" + std::to_string(sv[0])});
  close(sv[0]);
  return o;
}

void ExpectStdio(const std::string& pattern, const StdinCase& in, const std::string& out) {
  Outcome o = StdioPattern(pattern, in);
  EXPECT_EQ(o.code, 0) << pattern << " " << in.before << in.after << "\n" << o.err;
  EXPECT_EQ(o.out, out) << pattern << " " << in.before << in.after;
}

// process.stdin is a stream.Readable as node's: a file (and /dev/null, and
// a closed stdin, which node reads as /dev/null) buffers 64 KB and says no
// 'close' after its end, a pipe 16 KB and closes; for await gives Buffers;
// a read error destroys it at once with node's error.
TEST(JsScripts, StdinAsInNode) {
  const std::string pipe_head = "Readable true flowing null hwm 16384\n";
  const std::string file_head = "Readable true flowing null hwm 65536\n";
  ExpectStdio("events", kPipe, pipe_head + "end 7 true\nclose\n");
  Outcome o = Settee({"run", kScripts + "/stdio.js", "events"}, "abc\ndef");
  EXPECT_EQ(o.out, file_head + "end 7 true\n");
  ExpectStdio("events", kEmptyPipe, pipe_head + "end 0 true\nclose\n");
  ExpectStdio("events", kDevNull, file_head + "end 0 true\n");
  ExpectStdio("events", kClosed, file_head + "end 0 true\n");
  o = StdioPatternOnResetSocket("events");
  EXPECT_EQ(o.out, pipe_head + "error ECONNRESET read read ECONNRESET -104\nclose\n");

  ExpectStdio("iterate", kPipe, "chunks true total 7 buffers true\n");
  ExpectStdio("iterate", kEmptyPipe, "chunks false total 0 buffers true\n");
  ExpectStdio("iterate", kClosed, "chunks false total 0 buffers true\n");
  EXPECT_EQ(StdioPatternOnResetSocket("iterate").out, "rejected ECONNRESET\n");

  ExpectStdio("encoding", {"printf '\\342\\202\\254 x' | ", ""}, "\"\u20ac x\"\n");
  ExpectStdio("encoding", kDevNull, "\"\"\n");
  ExpectStdio("readn", kPipe, "first abc\nrest 4\nend\n");
  ExpectStdio("readn", kEmptyPipe, "first null\nend\n");

  // Nothing reads the stream, and the error still comes (before: never).
  EXPECT_EQ(StdioPatternOnResetSocket("unread").out, "error ECONNRESET\nclose\n");
}

// pipe() into stdout passes bytes as they are and leaves stdout open; a
// consumer that stops taking stops the reads (50 MB through a pipe, 3 MB
// from a file); leaving for await early ends a script whose input goes on
// (timeout's 124 if the reads kept it alive).
TEST(JsScripts, StdinPipesWithBackpressure) {
  ExpectStdio("pipe", kPipe, "abc\ndef[still open]\n");
  ExpectStdio("pipe", kClosed, "[still open]\n");
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>(i);
  Outcome o = Settee({"run", kScripts + "/stdio.js", "pipe"}, binary);
  EXPECT_EQ(o.out, binary + "[still open]\n");

  ExpectStdio("backpressure", {"head -c 50000000 /dev/zero | ", ""}, "bounded\n");
  o = Settee({"run", kScripts + "/stdio.js", "backpressure"}, std::string(3000000, 'x'));
  EXPECT_EQ(o.out, "bounded\n");

  o = SetteeShell("(printf abc; sleep 3) | timeout 2 ", {"run", kScripts + "/stdio.js", "first"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "first chunk true\ndestroyed true\n");
}

// process.stdout and process.stderr are Writables (instanceof, write's
// callback, pipeline's end and callback) that end() leaves open; without
// the stream library, a look at _writableState makes stdout one.
TEST(JsScripts, StdoutIsAWritableAsInNode) {
  ExpectStdio("stdout", kDevNull,
              "Writable true true object\nabc\nwrite true\nbig write true 0\nhi\nwrite cb true\n"
              "piped\npipeline called back undefined\nfrom pipe()\ndone\n");
  ExpectStdio("end", kDevNull, "last\nclose, end cb, finish\nafter end false false\n");
  ExpectStdio("duck", kDevNull, "function object true\ntrue\n");
}

// Starts settee-js run scripts/stdio.js `pattern` `extra` with the given
// descriptors as its stdout and stderr (stdin /dev/null, or the terminal
// `out` is), and only `env` as its environment when given; the process id.
pid_t StartStdio(const std::vector<std::string>& pattern, int out, int err,
                 const std::vector<std::string>* env = nullptr, bool terminal = false) {
  std::vector<std::string> args = {kBinary, "run", kScripts + "/stdio.js"};
  args.insert(args.end(), pattern.begin(), pattern.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_copy = env ? *env : std::vector<std::string>{};
  std::vector<char*> envp;
  for (auto& e : env_copy) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    if (terminal) {
      setsid();
      ioctl(out, TIOCSCTTY, 0);
      dup2(out, 0);
    } else {
      int null = open("/dev/null", O_RDONLY);
      dup2(null, 0);
    }
    dup2(out, 1);
    dup2(err, 2);
    if (env) execve(argv[0], argv.data(), envp.data());
    else execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitStatus(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Reads `fd` to its end (or EIO, a terminal's end).
std::string ReadToEnd(int fd) {
  std::string all;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return all;
    all.append(buf, static_cast<size_t>(n));
  }
}

// Runs a stdio.js pattern with stdout a pipe whose reader has already gone
// (as after `| head`): every write to it fails with EPIPE (or, without
// SIGPIPE ignored, kills the process: 141).
Outcome RunOnClosedPipe(const std::vector<std::string>& pattern) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return {};
  close(out[0]);
  pid_t pid = StartStdio(pattern, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  Outcome o;
  o.err = ReadToEnd(err[0]);
  close(err[0]);
  o.code = WaitStatus(pid);
  return o;
}

// node's console ignores errors on its streams: `settee run x.js | head`
// is not killed by SIGPIPE (before: status 141, no 'done') but goes on to
// its end; process.stdout.write reports the EPIPE as node's does (false,
// the callback's error, then 'error', uncaught without a listener). The
// same for the light StdioWriter and, after require('stream'), the
// StdioWritable. Every expected output is node 20's.
TEST(JsScripts, StdoutToAClosedPipeAsInNode) {
  Outcome o = RunOnClosedPipe({"epipe-console"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "done\n");
  for (std::string kind : {"light", "stream"}) {
    o = RunOnClosedPipe({"epipe-write", kind});
    EXPECT_EQ(o.code, 1) << kind << " " << o.err;
    EXPECT_THAT(o.err, testing::StartsWith("write false\ncallback EPIPE\n")) << kind;
    EXPECT_THAT(o.err, HasSubstr("Error: write EPIPE")) << kind;
    EXPECT_THAT(o.err, Not(HasSubstr("not reached"))) << kind;
    o = RunOnClosedPipe({"epipe-listen", kind});
    EXPECT_EQ(o.code, 0) << kind << " " << o.err;
    EXPECT_EQ(o.err,
              "writes false false\ncallback EPIPE\n"
              "error EPIPE -32 write write EPIPE false true\n"
              "error EPIPE -32 write write EPIPE false true\ndone\n")
        << kind;
  }
}

// A write to a stdout another process made non-blocking, read slowly,
// waits for room rather than drop the rest (before: the first 64 KB, the
// pipe's size, and nothing after).
TEST(JsScripts, StdoutNonBlockingLosesNothing) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  fcntl(out[1], F_SETFL, fcntl(out[1], F_GETFL) | O_NONBLOCK);
  int err = open("/dev/null", O_WRONLY);
  pid_t pid = StartStdio({"big"}, out[1], err);
  close(out[1]);
  close(err);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string all = ReadToEnd(out[0]);
  close(out[0]);
  EXPECT_EQ(WaitStatus(pid), 0);
  EXPECT_EQ(all.size(), 32u * 65536u + 32u * 65535u);  // console.log lines 65535
}

// On a terminal stdout and stderr are node's tty.WriteStreams (isTTY, the
// window's size, colours by TERM, cursor moves) and console colours what
// it inspects; elsewhere they have no isTTY at all (before: isTTY false
// everywhere, no columns, no colours). node 20 prints the same.
TEST(JsScripts, StdioOnATerminalAsInNode) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  winsize ws{};
  ws.ws_col = 100;
  ws.ws_row = 40;
  ASSERT_EQ(ioctl(slave, TIOCSWINSZ, &ws), 0);
  const std::vector<std::string> env = {"TERM=xterm-256color"};
  pid_t pid = StartStdio({"tty"}, slave, slave, &env, true);
  close(slave);
  std::string all = ReadToEnd(master);
  close(master);
  EXPECT_EQ(WaitStatus(pid), 0) << all;
  const std::string y = "\x1b[33m", e = "\x1b[39m";
  EXPECT_EQ(all, "stdin " + y + "true" + e + " stdout true true 100 40 stderr true true 100 40\r\n"
                 "[100,40] " + y + "8" + e + " " + y + "true" + e + " " + y + "true" + e + " " + y + "false" + e +
                 " " + y + "1" + e + " " + y + "false" + e + "\r\n"
                 "\x1b[1Gcolours " + y + "true" + e + " { a: " + y + "1" + e + " }\r\n");

  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  pid = StartStdio({"tty"}, out[1], err[1], &env);
  close(out[1]);
  close(err[1]);
  EXPECT_EQ(ReadToEnd(out[0]), "colours true { a: 1 }\n");
  EXPECT_EQ(ReadToEnd(err[0]), "stdin undefined stdout  false   stderr  false  \n");
  close(out[0]);
  close(err[0]);
  EXPECT_EQ(WaitStatus(pid), 0);
}

// settee run ignores SIGPIPE as node does; its children get the default
// back, as libuv's do: `yes | head -1` in a child ends quietly (before,
// with SIGPIPE ignored, yes said "Broken pipe").
TEST(RunCommand, ChildrenGetTheDefaultSigpipe) {
  auto o = Settee({"run", "-"},
                  "const r = require('child_process').spawnSync('sh', ['-c', 'yes | head -1']);\n"
                  "console.log(JSON.stringify(r.stdout.toString()), JSON.stringify(r.stderr.toString()), r.status);\n");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "\"y\\n\" \"\" 0\n");
}

// Compiling the stream library costs an isolate about 20 ms: printing,
// console.log or process.stdout.write, does not load it (stdout stays the
// light StdioWriter), require('stream') does and makes stdout a Writable.
TEST(RunCommand, StdioStaysOffTheStreamLibraryUntilAsked) {
  auto o = Settee({"run", "-"},
                  "const kind = () => Object.getPrototypeOf(process.stdout).constructor.name;\n"
                  "console.log(kind());\n"
                  "process.stdout.write('written\\n', () => console.log(kind()));\n"
                  "setTimeout(() => { require('stream'); console.log(kind(), kind() === Object.getPrototypeOf(process.stderr).constructor.name); }, 5);\n");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "StdioWriter\nwritten\nStdioWriter\nStdioWritable true\n");
}

// A script that stops reading a stdin that has not ended still ends: the
// paused pipe keeps nothing alive (timeout's 124 if it waited for the pipe).
TEST(JsScripts, ReadlineStopsReadingAnEndlessStdin) {
  auto o = SetteeShell("(echo first; sleep 3) | timeout 2 ",
                       {"run", kScripts + "/readline.js", R"(["first"])", "first"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 6 passed"));
}

TEST(JsScripts, ChildProcessAsInNode) { ExpectScriptPasses("child_process.js", 3); }

TEST(JsScripts, CryptoAsInNode) { ExpectScriptPasses("crypto.js", 4); }

TEST(JsScripts, OsAsInNode) {
  // node's own answers for this machine, when node is installed (the
  // project's setup installs it for the compat tests).
  std::string node_facts;
  if (FILE* p = popen("node -e \"const os=require('os');console.log(JSON.stringify([os.hostname(),"
                      "os.homedir(),os.tmpdir(),os.release(),os.cpus().length]))\" 2>/dev/null",
                      "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) node_facts.append(buf, n);
    pclose(p);
    while (!node_facts.empty() && node_facts.back() == '\n') node_facts.pop_back();
  }
  std::vector<std::string> args{"run", kScripts + "/os.js"};
  if (!node_facts.empty()) args.push_back(node_facts);
  auto o = Settee(args);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("all 1 passed"));
}

TEST(JsScripts, ThreadsShareTheStore) {
  auto o = Settee({"run", "--threads", "4", kScripts + "/threads.js", "4"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (int t = 0; t < 4; ++t) EXPECT_THAT(o.out, HasSubstr("[thread " + std::to_string(t) + "] all 4 passed"));
}

}  // namespace
