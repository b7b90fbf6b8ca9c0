// PoolViewFunctions (js/view_functions_js.h): how MapShares fans a map out
// over the isolate threads. Each share is read, mapped and handed on once,
// on isolate threads (never the caller's), mostly mapped by thread 0 while
// the others read ahead and hand on, the shares cover the work once, and a
// failing read or hand-off is the call's error. The map semantics
// themselves are tested through the view endpoints (tests/runtime) and the
// JS scripts (tests/js/scripts).
#include "js/view_functions_js.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "settee/store.h"
#include "util/json.h"

namespace settee::js {
namespace {

class PoolViewFunctionsTest : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    StoreOptions so;
    so.backend = StoreOptions::Backend::kMemory;
    store_ = std::move(Store::Open(so)).value();
    PoolOptions po;
    po.threads = GetParam();
    po.store = store_.get();
    fns_ = std::make_unique<PoolViewFunctions>(po);
    code_.maps = {"function (doc) { emit(doc.n, doc.n * 2); }"};
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<PoolViewFunctions> fns_;
  views::MapCode code_;
};

INSTANTIATE_TEST_SUITE_P(Threads, PoolViewFunctionsTest, testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "Threads"; });

// One document per unit, {"n": unit}.
std::vector<std::string> DocsOf(size_t from, size_t to) {
  std::vector<std::string> docs;
  for (size_t i = from; i < to; ++i) docs.push_back(R"({"_id":"d)" + std::to_string(i) + R"(","n":)" + std::to_string(i) + "}");
  return docs;
}

// Every share is read once, then mapped and handed on once, all on isolate
// threads (a share read ahead by one may be mapped by another, and handed
// on by either), and the shares tile the work.
TEST_P(PoolViewFunctionsTest, SharesAreReadMappedAndHandedOnByIsolateThreads) {
  const size_t n = 5000;
  std::mutex mu;
  std::map<size_t, size_t> fetched;  // from -> to
  std::set<size_t> delivered;
  std::set<std::thread::id> threads;
  size_t mapped = 0;
  Status s = fns_->MapShares(
      code_, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        std::lock_guard<std::mutex> g(mu);
        EXPECT_TRUE(fetched.emplace(from, to).second) << "share " << from << " read twice";
        threads.insert(std::this_thread::get_id());
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t from, size_t to, std::string_view out) {
        std::lock_guard<std::mutex> g(mu);
        auto it = fetched.find(from);
        EXPECT_TRUE(it != fetched.end() && it->second == to) << "share " << from << " handed on before it was read";
        EXPECT_TRUE(delivered.insert(from).second) << "share " << from << " handed on twice";
        threads.insert(std::this_thread::get_id());
        json::Document d;
        EXPECT_TRUE(json::Parse(out, &d).ok());
        EXPECT_EQ(d.Size(), to - from);
        // Document i emitted [i, 2i].
        for (size_t i = 0; i < d.Size(); ++i) {
          EXPECT_EQ(d[i][0][0][0].GetInt64(), static_cast<int64_t>(from + i));
          EXPECT_EQ(d[i][0][0][1].GetInt64(), static_cast<int64_t>(2 * (from + i)));
        }
        mapped += d.Size();
        return Status::OK();
      });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(mapped, n);
  EXPECT_EQ(delivered.size(), fetched.size());
  // The shares tile [0, n), none bigger than the cap, and several (so the
  // threads can share the work).
  size_t at = 0;
  for (const auto& [from, to] : fetched) {
    EXPECT_EQ(from, at);
    EXPECT_LE(to - from, 2048u);
    at = to;
  }
  EXPECT_EQ(at, n);
  EXPECT_GT(fetched.size(), 2u);
  EXPECT_FALSE(threads.count(std::this_thread::get_id())) << "the caller only waits";
  EXPECT_LE(threads.size(), static_cast<size_t>(GetParam()));
}

// With helper threads, thread 0 maps and the others read ahead and hand
// on: while hand-ons are slow (a store write, say), the helpers are kept
// busy handing on and the mapper keeps mapping the shares read ahead for
// it, so it maps most documents (the helpers map a small share only when
// they have nothing to read or hand on). Which isolate mapped a share
// shows in its rows (the map emits settee.threadId).
TEST_P(PoolViewFunctionsTest, OneThreadMapsWhileTheOthersReadAndHandOn) {
  if (GetParam() < 2) GTEST_SKIP() << "needs helper threads";
  views::MapCode code;
  code.maps = {"function (doc) { emit(doc.n, settee.threadId); }"};
  const size_t n = 8000;
  std::mutex mu;
  std::map<int, size_t> docs_by_isolate;
  Status s = fns_->MapShares(
      code, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t, size_t, std::string_view out) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        json::Document d;
        EXPECT_TRUE(json::Parse(out, &d).ok());
        std::lock_guard<std::mutex> g(mu);
        const int isolate = d[0][0][0][1].GetInt();
        for (size_t i = 0; i < d.Size(); ++i) EXPECT_EQ(d[i][0][0][1].GetInt(), isolate) << "a share mapped by one isolate";
        docs_by_isolate[isolate] += d.Size();
        return Status::OK();
      });
  ASSERT_TRUE(s.ok()) << s.ToString();
  size_t total = 0;
  for (const auto& [isolate, docs] : docs_by_isolate) total += docs;
  EXPECT_EQ(total, n);
  // Each thread mapping its own shares would split them about evenly.
  EXPECT_GE(docs_by_isolate[0], 3 * n / 4) << "isolate 1 mapped " << docs_by_isolate[1];
}

// How many documents each isolate mapped in a MapShares of `n` units whose
// hand-ons each sleep `hand_on` (which isolate mapped a share shows in its
// rows: the map emits settee.threadId as the value).
std::map<int, size_t> DocsMappedByIsolate(PoolViewFunctions* fns, const views::MapCode& code, size_t n,
                                          std::chrono::milliseconds hand_on) {
  std::mutex mu;
  std::map<int, size_t> docs_by_isolate;
  Status s = fns->MapShares(
      code, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t, size_t, std::string_view out) {
        std::this_thread::sleep_for(hand_on);
        json::Document d;
        EXPECT_TRUE(json::Parse(out, &d).ok());
        std::lock_guard<std::mutex> g(mu);
        docs_by_isolate[d[0][0][0][1].GetInt()] += d.Size();
        return Status::OK();
      });
  EXPECT_TRUE(s.ok()) << s.ToString();
  size_t total = 0;
  for (const auto& [isolate, docs] : docs_by_isolate) total += docs;
  EXPECT_EQ(total, n);
  return docs_by_isolate;
}

// A helper with nothing to read or hand on waits for the mapper's results
// while the mapper keeps up (a unit's map costs less than twice its read
// and hand-on), instead of mapping a share at an unoptimized isolate's
// pace: here the hand-ons (3 ms a share) outweigh the map, and thread 0
// maps every document once the isolates are warm (on a pool's first call
// the mapper's own code is not optimized yet, and it may well be behind).
TEST_P(PoolViewFunctionsTest, IdleHelpersWaitWhileTheMapperKeepsUp) {
  if (GetParam() < 2) GTEST_SKIP() << "needs helper threads";
  views::MapCode code;
  code.maps = {"function (doc) { emit(doc.n, settee.threadId); }"};
  (void)DocsMappedByIsolate(fns_.get(), code, 8000, std::chrono::milliseconds(3));
  for (int run = 0; run < 3; ++run) {
    auto by_isolate = DocsMappedByIsolate(fns_.get(), code, 8000, std::chrono::milliseconds(3));
    EXPECT_EQ(by_isolate[0], 8000u) << "run " << run << ": isolate 1 mapped " << by_isolate[1];
  }
}

// When the map is what the update waits for (a map function that computes
// much more than it emits), an idle helper maps small shares too.
TEST_P(PoolViewFunctionsTest, IdleHelpersMapWhenTheMapperIsBehind) {
  if (GetParam() < 2) GTEST_SKIP() << "needs helper threads";
  views::MapCode code;
  // ~20-50 us a document, against ~1 us to read and hand one on.
  code.maps = {"function (doc) { var x = 0; for (var i = 0; i < 30000; i++) x = (x + i * doc.n) % 1000003;"
               " emit(doc.n, settee.threadId); }"};
  auto by_isolate = DocsMappedByIsolate(fns_.get(), code, 4000, std::chrono::milliseconds(0));
  EXPECT_GT(by_isolate[1], 0u) << "the idle helper never mapped";
  EXPECT_GT(by_isolate[0], 0u);
}

// Every thread gets a chain of shares at once, not after another's share:
// the first share's read can wait for a share read on every other thread.
TEST_P(PoolViewFunctionsTest, EveryThreadTakesSharesFromTheStart) {
  const size_t n = 5000;
  std::mutex mu;
  std::condition_variable cv;
  std::set<std::thread::id> readers;
  bool first_taken = false;
  bool waited_out = false;
  Status s = fns_->MapShares(
      code_, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        std::unique_lock<std::mutex> g(mu);
        readers.insert(std::this_thread::get_id());
        cv.notify_all();
        if (!first_taken) {
          first_taken = true;
          waited_out = !cv.wait_for(g, std::chrono::seconds(20),
                                    [&] { return readers.size() == static_cast<size_t>(GetParam()); });
        }
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t, size_t, std::string_view) { return Status::OK(); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(waited_out) << "only " << readers.size() << " thread(s) read while the first share waited";
  EXPECT_EQ(readers.size(), static_cast<size_t>(GetParam()));
}

TEST_P(PoolViewFunctionsTest, AFailingReadOrHandOffIsTheError) {
  const size_t n = 3000;
  std::atomic<int> handed{0};
  Status s = fns_->MapShares(
      code_, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        if (from > 0) return Status::Corruption("bad change block");
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t, size_t, std::string_view) {
        ++handed;
        return Status::OK();
      });
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_LE(handed.load(), 1);
  s = fns_->MapShares(
      code_, n,
      [&](size_t from, size_t to, std::vector<std::string>* docs) {
        *docs = DocsOf(from, to);
        return Status::OK();
      },
      [&](size_t, size_t, std::string_view) { return Status::Internal("write failed"); });
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_EQ(s.reason(), "write failed");
  // The pool is still good.
  std::string out;
  ASSERT_TRUE(fns_->Map(code_, DocsOf(0, 3), &out).ok());
  EXPECT_EQ(out, "[[[[0,0]]],[[[1,2]]],[[[2,4]]]]");
}

// The map results reach the caller as the JSON text JS made of them, not a
// JSON string of it to be unquoted: strings with quotes, backslashes and
// non-ASCII characters come through encoded once, from shares whose
// documents are all ASCII (big enough to be read by V8 in place) and from
// one that is not. Code that does not compile is still its error.
TEST_P(PoolViewFunctionsTest, MapResultsAreTheirJsonText) {
  views::MapCode code;
  code.maps = {"function (doc) { emit(doc.s, doc._id.length); }"};
  const std::string pad(100, 'p');
  std::vector<std::string> docs;
  for (int i = 0; i < 600; ++i) {
    docs.push_back(R"({"_id":"d)" + std::to_string(i) + R"(","pad":")" + pad + R"(","s":"a \"q\" \\ )" +
                   std::to_string(i) + R"("})");
  }
  docs.push_back(std::string(R"({"_id":"u","s":")") + "\u00e9 \u2603" + R"("})");  // UTF-8, not escapes
  std::string out;
  ASSERT_TRUE(fns_->Map(code, docs, &out).ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(out, &d).ok()) << out.substr(0, 200);
  ASSERT_TRUE(d.IsArray());
  ASSERT_EQ(d.Size(), 601u);
  EXPECT_EQ(json::View(d[5][0][0][0]), "a \"q\" \\ 5");
  EXPECT_EQ(d[5][0][0][1].GetInt(), 2);
  EXPECT_EQ(json::View(d[600][0][0][0]), "\u00e9 \u2603");
  EXPECT_NE(out.find("\u00e9 \u2603"), std::string::npos) << "non-ASCII as UTF-8";
  code.maps = {"function (doc) { emit("};
  EXPECT_EQ(fns_->Map(code, docs, &out).code(), Status::Code::kCompilationError);
}

TEST_P(PoolViewFunctionsTest, FewUnitsAndNone) {
  int calls = 0;
  auto fetch = [&](size_t from, size_t to, std::vector<std::string>* docs) {
    ++calls;
    *docs = DocsOf(from, to);
    return Status::OK();
  };
  auto each = [&](size_t from, size_t to, std::string_view) {
    EXPECT_EQ(from, 0u);
    EXPECT_EQ(to, 3u);
    return Status::OK();
  };
  ASSERT_TRUE(fns_->MapShares(code_, 0, fetch, each).ok());
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(fns_->MapShares(code_, 3, fetch, each).ok());
  EXPECT_EQ(calls, 1);
  // A share with nothing to map (deleted and design docs only) is handed
  // on as an empty result.
  std::string got;
  ASSERT_TRUE(fns_->MapShares(
                      code_, 3,
                      [](size_t, size_t, std::vector<std::string>* docs) {
                        docs->clear();
                        return Status::OK();
                      },
                      [&](size_t, size_t, std::string_view out) {
                        got = std::string(out);
                        return Status::OK();
                      })
                  .ok());
  EXPECT_EQ(got, "[]");
}

}  // namespace
}  // namespace settee::js
