// The C API's JS runtime calls (capi/settee_c_js.cc) through libsettee.so:
// scripts from files and strings on the isolate threads, calls and evals,
// reports and messages through C callbacks, the store shared with C, limits,
// and misuse (NULLs, bad options, closed runtimes and stores).
//
// With SETTEE_TEST_JITLESS=1 in the environment every runtime starts with
// jitless = 1 (ctest runs the suite that way too: capi_js_jitless).
#include "settee/settee.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/capi/capi_test_util.h"

namespace {

using settee_test::Err;
using settee_test::Str;
using testing::HasSubstr;


// What the runtime's callbacks received.
struct Heard {
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::string> messages;
  std::vector<int> threads;
};

void OnError(void* ctx, int thread, const char* text) {
  auto* h = static_cast<Heard*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu);
  h->errors.push_back(text);
}

void OnMessage(void* ctx, int thread, const char* json) {
  auto* h = static_cast<Heard*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu);
  h->messages.push_back(json);
  h->threads.push_back(thread);
}

bool Jitless() {
  const char* v = std::getenv("SETTEE_TEST_JITLESS");
  return v && std::string(v) == "1";
}

class Runtime : public testing::Test {
 protected:
  void SetUp() override {
    settee_store_options so;
    settee_store_options_init(&so);
    so.backend = SETTEE_BACKEND_MEMORY;
    Err e;
    ASSERT_EQ(settee_store_open(&so, &store_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_create(store_, "shared", &db_, &e), SETTEE_OK);
  }
  void TearDown() override {
    settee_runtime_free(rt_);
    settee_db_free(db_);
    settee_store_free(store_);
  }
  void Start(int threads, uint32_t timeout_ms = 0) {
    settee_runtime_options o;
    settee_runtime_options_init(&o);
    o.threads = threads;
    o.timeout_ms = timeout_ms;
    o.jitless = Jitless() ? 1 : 0;
    o.on_error = OnError;
    o.on_error_context = &heard_;
    o.on_message = OnMessage;
    o.on_message_context = &heard_;
    Err e;
    ASSERT_EQ(settee_runtime_start(store_, &o, &rt_, &e), SETTEE_OK) << e.message();
  }
  std::string Script(const std::string& name, const std::string& source) {
    std::string path = testing::TempDir() + "/settee_capi_" + std::to_string(getpid()) + "_" + name;
    std::ofstream(path) << source;
    return path;
  }

  settee_store* store_ = nullptr;
  settee_db* db_ = nullptr;
  settee_runtime* rt_ = nullptr;
  Heard heard_;
};

TEST_F(Runtime, ThisLibraryHasJs) { EXPECT_EQ(settee_has_js(), 1); }

TEST_F(Runtime, CallsReturnJson) {
  Start(2);
  Err e;
  Str out;
  ASSERT_EQ(settee_runtime_call(rt_, SETTEE_ANY_THREAD, "(x) => x * 2", "21", out.out(), &e), SETTEE_OK)
      << e.message();
  EXPECT_EQ(out.str(), "42");
  ASSERT_EQ(settee_runtime_call(rt_, 1, "() => settee.threadId", nullptr, out.out(), &e), SETTEE_OK);
  EXPECT_EQ(out.str(), "1");
  ASSERT_EQ(settee_runtime_call(rt_, 0, "async (o) => ({sum: o.a + o.b})", "{\"a\":1,\"b\":2}",
                                out.out(), &e),
            SETTEE_OK);
  EXPECT_EQ(out.str(), "{\"sum\":3}");
  ASSERT_EQ(settee_runtime_eval(rt_, 0, "[1, 'two', {three: 3}]", out.out(), &e), SETTEE_OK);
  EXPECT_EQ(out.str(), "[ 1, 'two', { three: 3 } ]");
}

TEST_F(Runtime, JsErrorsComeBackAsCodesWithTheStack) {
  Start(1);
  Err e;
  Str out;
  EXPECT_EQ(settee_runtime_call(rt_, 0, "() => { throw new TypeError('nope'); }", nullptr, out.out(), &e),
            SETTEE_ERR_INTERNAL);
  EXPECT_THAT(e.message(), HasSubstr("TypeError: nope"));
  EXPECT_EQ(out.p, nullptr);
  EXPECT_EQ(settee_runtime_call(rt_, 0, "(", nullptr, out.out(), &e), SETTEE_ERR_INTERNAL);
  EXPECT_THAT(e.message(), HasSubstr("SyntaxError"));
  EXPECT_EQ(settee_runtime_call(rt_, 0, "(x) => x", "{bad json", out.out(), &e), SETTEE_ERR_INTERNAL);
  EXPECT_EQ(settee_runtime_call(rt_, 0, "() => 1n", nullptr, out.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_runtime_call(rt_, 7, "() => 1", nullptr, out.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_runtime_eval(rt_, 0, "no_such_name", out.out(), &e), SETTEE_ERR_INTERNAL);
  EXPECT_THAT(e.message(), HasSubstr("ReferenceError"));
  // The runtime serves on.
  ASSERT_EQ(settee_runtime_call(rt_, 0, "() => 'still here'", nullptr, out.out(), &e), SETTEE_OK);
  EXPECT_EQ(out.str(), "\"still here\"");
}

TEST_F(Runtime, ScriptsShareTheStoreWithC) {
  Start(2);
  Err e;
  ASSERT_EQ(settee_db_put(db_, "from-c", "{\"n\":1}", nullptr, nullptr, &e), SETTEE_OK);
  const char* script =
      "const db = new PouchDB('shared');\n"
      "db.get('from-c').then((d) => db.put({_id: 'from-js-' + settee.threadId, n: d.n + 1}))\n"
      "  .then(() => settee.postMessage({done: settee.threadId}));\n";
  ASSERT_EQ(settee_runtime_run_string(rt_, SETTEE_ALL_THREADS, script, "writer.js", &e), SETTEE_OK)
      << e.message();
  int code = -1;
  ASSERT_EQ(settee_runtime_wait(rt_, &code, &e), SETTEE_OK);
  EXPECT_EQ(code, 0);
  Str doc;
  for (const char* id : {"from-js-0", "from-js-1"}) {
    ASSERT_EQ(settee_db_get(db_, id, nullptr, doc.out(), &e), SETTEE_OK) << id;
    EXPECT_THAT(doc.str(), HasSubstr("\"n\":2"));
  }
  std::lock_guard<std::mutex> lock(heard_.mu);
  EXPECT_THAT(heard_.messages, testing::UnorderedElementsAre("{\"done\":0}", "{\"done\":1}"));
  EXPECT_THAT(heard_.threads, testing::UnorderedElementsAre(0, 1));
}

TEST_F(Runtime, FilesRunAsModulesWithTheirExitStatus) {
  Start(1);
  std::string lib = Script("lib.js", "module.exports = (x) => x + 1;\n");
  std::string main = Script("main.js", "const f = require('./" + lib.substr(lib.rfind('/') + 1) +
                                            "');\nif (f(1) !== 2) throw new Error('bad');\nprocess.exit(3);\n");
  Err e;
  ASSERT_EQ(settee_runtime_run_file(rt_, 0, main.c_str(), &e), SETTEE_OK) << e.message();
  int code = -1;
  ASSERT_EQ(settee_runtime_wait(rt_, &code, &e), SETTEE_OK);
  EXPECT_EQ(code, 3);
  std::remove(lib.c_str());
  std::remove(main.c_str());
}

TEST_F(Runtime, UncaughtErrorsReachTheReportCallback) {
  Start(1);
  Err e;
  ASSERT_EQ(settee_runtime_run_string(rt_, 0, "throw new RangeError('out of range');", nullptr, &e),
            SETTEE_OK);
  int code = -1;
  ASSERT_EQ(settee_runtime_wait(rt_, &code, &e), SETTEE_OK);
  EXPECT_EQ(code, 1);
  std::lock_guard<std::mutex> lock(heard_.mu);
  ASSERT_EQ(heard_.errors.size(), 1u);
  EXPECT_THAT(heard_.errors[0], HasSubstr("RangeError: out of range"));
}

TEST_F(Runtime, ARunawayCallTimesOutAndTheRuntimeLivesOn) {
  Start(1, /*timeout_ms=*/200);
  Err e;
  Str out;
  EXPECT_EQ(settee_runtime_call(rt_, 0, "() => { for (;;) {} }", nullptr, out.out(), &e), SETTEE_ERR_TIMEOUT);
  ASSERT_EQ(settee_runtime_call(rt_, 0, "() => 5", nullptr, out.out(), &e), SETTEE_OK);
  EXPECT_EQ(out.str(), "5");
}

TEST_F(Runtime, BadArgumentsAreCodes) {
  Err e;
  settee_runtime* rt = nullptr;
  EXPECT_EQ(settee_runtime_start(nullptr, nullptr, &rt, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_start(store_, nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  settee_runtime_options o;
  settee_runtime_options_init(&o);
  o.threads = 65;
  EXPECT_EQ(settee_runtime_start(store_, &o, &rt, &e), SETTEE_ERR_INVALID_ARGUMENT);
  o.threads = -3;
  EXPECT_EQ(settee_runtime_start(store_, &o, &rt, &e), SETTEE_ERR_INVALID_ARGUMENT);
  o.threads = 1;
  o.v8_flags = "\xff";
  EXPECT_EQ(settee_runtime_start(store_, &o, &rt, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rt, nullptr);

  Start(1);
  Str out;
  EXPECT_EQ(settee_runtime_call(nullptr, 0, "() => 1", nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_call(rt_, 0, nullptr, nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_call(rt_, 0, "(x) => x", "\"\xc3\"", out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_eval(rt_, 0, nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_eval(nullptr, 0, "1", out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_run_string(rt_, 0, nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_run_string(rt_, 5, "1", nullptr, &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_runtime_run_string(rt_, SETTEE_ANY_THREAD, "1", nullptr, &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_runtime_run_file(rt_, 0, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_run_file(rt_, 0, "/no/such/script.js", &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(settee_runtime_run_file(nullptr, 0, "/x.js", &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_wait(nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_close(nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_runtime_wait(rt_, nullptr, &e), SETTEE_OK);  // the exit code is optional
}

TEST_F(Runtime, AClosedRuntimeAnswersClosed) {
  Start(1);
  Err e;
  ASSERT_EQ(settee_runtime_close(rt_, &e), SETTEE_OK);
  EXPECT_EQ(settee_runtime_close(rt_, &e), SETTEE_OK);  // idempotent
  Str out;
  EXPECT_EQ(settee_runtime_call(rt_, 0, "() => 1", nullptr, out.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_runtime_eval(rt_, 0, "1", out.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_runtime_run_string(rt_, 0, "1", nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_runtime_run_file(rt_, 0, "/x.js", &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_runtime_wait(rt_, nullptr, &e), SETTEE_ERR_CLOSED);
}

TEST_F(Runtime, ClosingTheStoreStopsARunningScript) {
  Start(1);
  Err e;
  ASSERT_EQ(settee_runtime_run_string(rt_, 0, "setInterval(() => {}, 5);", nullptr, &e), SETTEE_OK);
  ASSERT_EQ(settee_store_close(store_, &e), SETTEE_OK);
  Str out;
  EXPECT_EQ(settee_runtime_call(rt_, 0, "() => 1", nullptr, out.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_runtime_wait(rt_, nullptr, &e), SETTEE_ERR_CLOSED);
}

struct Closer {
  settee_store* store = nullptr;
  settee_runtime* rt = nullptr;
  settee_db* db = nullptr;
  std::mutex mu;
  int store_close = -1;
  int rt_close = -1;
  int db_put = -1;
};

void CloseFromReport(void* ctx, int, const char*) {
  auto* c = static_cast<Closer*>(ctx);
  std::lock_guard<std::mutex> lock(c->mu);
  c->store_close = settee_store_close(c->store, nullptr);
  c->rt_close = settee_runtime_close(c->rt, nullptr);
  c->db_put = settee_db_put(c->db, "from-report", "{}", nullptr, nullptr, nullptr);
}

TEST_F(Runtime, ReportCallbacksMayWriteButNotClose) {
  Closer c;
  c.store = store_;
  c.db = db_;
  settee_runtime_options o;
  settee_runtime_options_init(&o);
  o.jitless = Jitless() ? 1 : 0;
  o.on_message = CloseFromReport;
  o.on_message_context = &c;
  Err e;
  ASSERT_EQ(settee_runtime_start(store_, &o, &rt_, &e), SETTEE_OK);
  c.rt = rt_;
  ASSERT_EQ(settee_runtime_run_string(rt_, 0, "settee.postMessage('hi');", nullptr, &e), SETTEE_OK);
  ASSERT_EQ(settee_runtime_wait(rt_, nullptr, &e), SETTEE_OK);
  std::lock_guard<std::mutex> lock(c.mu);
  EXPECT_EQ(c.store_close, SETTEE_ERR_INVALID_OPERATION);
  EXPECT_EQ(c.rt_close, SETTEE_ERR_INVALID_OPERATION);
  EXPECT_EQ(c.db_put, SETTEE_OK);
}

}  // namespace
