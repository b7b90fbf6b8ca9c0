// The document layer's overhead over its raw KV backend, measured in one run.
//
// Each Doc* benchmark has a Raw* twin doing the same storage work with bare
// KVStore calls on the same bytes (same ids as keys, same JSON as values):
//   DocPut        vs RawPut          one new small document
//   DocBulk100    vs RawBatch100     100 new small documents in one batch
//                                    (ascending ids, as CouchDB's sequential
//                                    uuids; DocBulk100RandomIds vs
//                                    RawBatch100RandomIds: random ids)
//   DocGet        vs RawGet          a random existing document
//   AllDocs1000   vs RawScan1000     1,000 rows of a range scan
//   Changes1000   vs RawScan1000     1,000 rows of the changes feed
// The first argument is the backend (0 = memory, 1 = leveldb). At exit the
// program prints each pair's time ratio (document layer / raw). DocGetMt runs
// on 1 and 2 threads to show read scaling.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "settee/store.h"

namespace settee {
namespace {

constexpr int kPrefillDocs = 20000;

const char* BackendName(int64_t b) { return b == 0 ? "memory" : "leveldb"; }

std::string DocId(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "doc%012llu", static_cast<unsigned long long>(i));
  return buf;
}

// A small document of the kind PouchDB's perf suite writes (~60 bytes).
std::string DocBody(uint64_t i) {
  return R"({"name":"user)" + std::to_string(i) + R"(","age":)" + std::to_string(i % 90) +
         R"(,"tags":["a","b"],"active":true})";
}

std::string TempPath() {
  static std::atomic<int> counter{0};
  auto p = std::filesystem::temp_directory_path() /
           ("settee_db_bench_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(p);
  return p.string();
}

// A Store with one database, plus a raw KVStore of the same backend for the
// baselines. Cleaned up at exit.
struct Fixture {
  std::unique_ptr<Store> store;
  std::shared_ptr<Database> db;
  std::unique_ptr<KVStore> raw;
  std::vector<std::string> dirs;

  explicit Fixture(int64_t backend) {
    StoreOptions options;
    if (backend == 0) {
      options.backend = StoreOptions::Backend::kMemory;
      raw = NewMemoryStore();
    } else {
      options.backend = StoreOptions::Backend::kLevelDB;
      options.path = TempPath();
      dirs.push_back(options.path);
      std::string raw_dir = TempPath();
      dirs.push_back(raw_dir);
      if (!OpenLevelDBStore(raw_dir, LevelDBOptions(), &raw).ok()) std::abort();
    }
    auto s = Store::Open(options);
    if (!s.ok()) std::abort();
    store = std::move(s).value();
    db = *store->CreateDatabase("bench");
    // A database's document keys are always followed by its other keys
    // (counters, changes), so new ids land inside the keyspace, never at
    // its end. The raw store gets such a neighbour too: an append past the
    // last key of the whole store is cheaper than any document write can be
    // (the memory store places it without a walk), and the ratios would
    // measure key placement instead of the document layer.
    if (!raw->Put({}, "~after-the-ids", "").ok()) std::abort();
  }
  ~Fixture() {
    db.reset();
    store.reset();
    raw.reset();
    for (auto& d : dirs) std::filesystem::remove_all(d);
  }
};

// Fresh fixtures for write benchmarks, prefilled ones for reads.
Fixture* Prefilled(int64_t backend) {
  static std::mutex mu;
  static std::map<int64_t, std::unique_ptr<Fixture>> fixtures;
  std::lock_guard<std::mutex> lock(mu);
  auto& f = fixtures[backend];
  if (!f) {
    f = std::make_unique<Fixture>(backend);
    KVWriteBatch raw_batch;
    std::vector<std::string> docs;
    for (int i = 0; i < kPrefillDocs; ++i) {
      docs.push_back(R"({"_id":")" + DocId(i) + R"(",)" + DocBody(i).substr(1));
      raw_batch.Put(DocId(i), DocBody(i));
      if (docs.size() == 1000) {
        std::vector<std::string_view> views(docs.begin(), docs.end());
        std::vector<DocUpdateResult> results;
        if (!f->db->BulkDocs(views, {}, &results).ok()) std::abort();
        docs.clear();
        if (!f->raw->Write({}, raw_batch).ok()) std::abort();
        raw_batch.Clear();
      }
    }
  }
  return f.get();
}

void RawPut(benchmark::State& state) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  for (auto _ : state) {
    std::string id = DocId(i), body = DocBody(i);
    ++i;
    if (!f.raw->Put({}, id, body).ok()) state.SkipWithError("put failed");
  }
  state.SetLabel(BackendName(state.range(0)));
}

void DocPut(benchmark::State& state) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  for (auto _ : state) {
    std::string id = DocId(i), body = DocBody(i);
    ++i;
    if (!f.db->Put(id, body).ok()) state.SkipWithError("put failed");
  }
  state.SetLabel(BackendName(state.range(0)));
}

// The batch benchmarks build their 100 inputs with the timer paused, so
// both sides measure storage work only. `next_id` gives the ids in order.
using IdSource = std::function<std::string(uint64_t)>;

void RawBatchOf100(benchmark::State& state, const IdSource& next_id) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    KVWriteBatch batch;
    for (int k = 0; k < 100; ++k, ++i) batch.Put(next_id(i), DocBody(i));
    state.ResumeTiming();
    if (!f.raw->Write({}, batch).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetLabel(BackendName(state.range(0)));
}

void DocBulkOf100(benchmark::State& state, const IdSource& next_id) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  std::vector<std::string> docs(100);
  std::vector<std::string_view> views(100);
  std::vector<DocUpdateResult> results;
  for (auto _ : state) {
    state.PauseTiming();
    for (int k = 0; k < 100; ++k, ++i) {
      docs[k] = R"({"_id":")" + next_id(i) + R"(",)" + DocBody(i).substr(1);
      views[k] = docs[k];
    }
    state.ResumeTiming();
    if (!f.db->BulkDocs(views, {}, &results).ok()) state.SkipWithError("bulk failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetLabel(BackendName(state.range(0)));
}

void RawBatch100(benchmark::State& state) { RawBatchOf100(state, DocId); }
void DocBulk100(benchmark::State& state) { DocBulkOf100(state, DocId); }

// Random ids (PouchDB's default: uuid v4), which land among the existing
// ones, so every document of a batch needs a lookup. Same ids both sides.
IdSource RandomIds() {
  auto rng = std::make_shared<std::mt19937_64>(7);
  return [rng](uint64_t) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>((*rng)()),
                  static_cast<unsigned long long>((*rng)()));
    return std::string(buf);
  };
}
void RawBatch100RandomIds(benchmark::State& state) { RawBatchOf100(state, RandomIds()); }
void DocBulk100RandomIds(benchmark::State& state) { DocBulkOf100(state, RandomIds()); }

// Raw puts of the document layer's own write set for the same 100 documents:
// per document a record (body + ~70 bytes of header and revision tree) under
// a docid key, and one change block of ~55 bytes per document under one
// sequence key. The ratio DocBulk100 / RawWriteSet100 is the cost of the
// document logic alone (parse, revision, existence check), without the
// extra bytes it stores.
void RawWriteSet100(benchmark::State& state) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  const std::string record_overhead(70, 'r');
  for (auto _ : state) {
    state.PauseTiming();
    KVWriteBatch batch;
    for (int k = 0; k < 100; ++k, ++i) {
      batch.Put("D0000000d" + DocId(i), DocBody(i) + record_overhead);
    }
    char seq_key[32];
    std::snprintf(seq_key, sizeof seq_key, "D0000000s%016llu", static_cast<unsigned long long>(i));
    batch.Put(seq_key, std::string(55 * 100, 's'));
    state.ResumeTiming();
    if (!f.raw->Write({}, batch).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetLabel(BackendName(state.range(0)));
}

// bulkDocs of 100 documents without _id: ids are generated, as PouchDB's
// post() and its perf suite's inserts do.
void DocBulk100GeneratedIds(benchmark::State& state) {
  Fixture f(state.range(0));
  uint64_t i = 0;
  std::vector<std::string> docs(100);
  std::vector<std::string_view> views(100);
  std::vector<DocUpdateResult> results;
  for (auto _ : state) {
    state.PauseTiming();
    for (int k = 0; k < 100; ++k, ++i) {
      docs[k] = DocBody(i);
      views[k] = docs[k];
    }
    state.ResumeTiming();
    if (!f.db->BulkDocs(views, {}, &results).ok()) state.SkipWithError("bulk failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetLabel(BackendName(state.range(0)));
}

void RawGet(benchmark::State& state) {
  Fixture* f = Prefilled(state.range(0));
  std::mt19937_64 rng(state.thread_index());
  std::string value;
  for (auto _ : state) {
    if (!f->raw->Get({}, DocId(rng() % kPrefillDocs), &value).ok()) state.SkipWithError("get");
    benchmark::DoNotOptimize(value);
  }
  state.SetLabel(BackendName(state.range(0)));
}

void DocGet(benchmark::State& state) {
  Fixture* f = Prefilled(state.range(0));
  std::mt19937_64 rng(state.thread_index());
  for (auto _ : state) {
    auto doc = f->db->Get(DocId(rng() % kPrefillDocs));
    if (!doc.ok()) state.SkipWithError("get");
    benchmark::DoNotOptimize(doc);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(BackendName(state.range(0)));
}

void RawScan1000(benchmark::State& state) {
  Fixture* f = Prefilled(state.range(0));
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    KVIteratorOptions io;
    auto it = f->raw->NewIterator(io);
    size_t rows = 0;
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(1000);
    for (it->Seek(DocId(rng() % (kPrefillDocs - 1000))); it->Valid() && rows < 1000;
         it->Next(), ++rows) {
      out.emplace_back(it->key(), it->value());
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(BackendName(state.range(0)));
}

void AllDocs1000(benchmark::State& state) {
  Fixture* f = Prefilled(state.range(0));
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    AllDocsOptions o;
    o.start_key = DocId(rng() % (kPrefillDocs - 1000));
    o.limit = 1000;
    AllDocsResult r;
    if (!f->db->AllDocs(o, &r).ok() || r.rows.size() != 1000) state.SkipWithError("all_docs");
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(BackendName(state.range(0)));
}

void Changes1000(benchmark::State& state) {
  Fixture* f = Prefilled(state.range(0));
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    ChangesOptions o;
    o.since = rng() % (kPrefillDocs - 1000);
    o.limit = 1000;
    size_t rows = 0;
    uint64_t last = 0;
    std::vector<std::string> ids;
    ids.reserve(1000);
    Status s = f->db->Changes(o, [&](const ChangeRow& r) {
      ids.push_back(r.id);
      ++rows;
      return true;
    }, &last);
    if (!s.ok() || rows != 1000) state.SkipWithError("changes");
    benchmark::DoNotOptimize(ids);
  }
  state.SetLabel(BackendName(state.range(0)));
}

BENCHMARK(RawPut)->Arg(0)->Arg(1);
BENCHMARK(DocPut)->Arg(0)->Arg(1);
BENCHMARK(RawBatch100)->Arg(0)->Arg(1);
BENCHMARK(DocBulk100)->Arg(0)->Arg(1);
BENCHMARK(RawWriteSet100)->Arg(0)->Arg(1);
BENCHMARK(DocBulk100GeneratedIds)->Arg(0)->Arg(1);
BENCHMARK(RawBatch100RandomIds)->Arg(0)->Arg(1);
BENCHMARK(DocBulk100RandomIds)->Arg(0)->Arg(1);
BENCHMARK(RawGet)->Arg(0)->Arg(1);
BENCHMARK(DocGet)->Arg(0)->Arg(1);
BENCHMARK(RawScan1000)->Arg(0)->Arg(1);
BENCHMARK(AllDocs1000)->Arg(0)->Arg(1);
BENCHMARK(Changes1000)->Arg(0)->Arg(1);
BENCHMARK(DocGet)->Name("DocGetMt")->Arg(0)->Threads(1)->Threads(2)->UseRealTime();

// Prints the console output and remembers each run's time for the ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      std::string name = r.benchmark_name();
      // CPU time: the pairs are single-threaded, and CPU time is less
      // disturbed than wall time by other work on a shared machine.
      times_[name] = r.GetAdjustedCPUTime();
      items_[name] = r.counters.count("items_per_second")
                         ? static_cast<double>(r.counters.at("items_per_second"))
                         : 0;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nDocument layer / raw backend, CPU-time ratios measured in this run:\n");
    for (const char* backend : {"0", "1"}) {
      const char* label = backend[0] == '0' ? "memory" : "leveldb";
      Ratio(label, "DocPut", "RawPut", backend);
      Ratio(label, "DocBulk100", "RawBatch100", backend);
      Ratio(label, "DocBulk100", "RawWriteSet100", backend);
      Ratio(label, "DocBulk100GeneratedIds", "RawBatch100", backend);
      Ratio(label, "DocBulk100RandomIds", "RawBatch100RandomIds", backend);
      Ratio(label, "DocGet", "RawGet", backend);
      Ratio(label, "AllDocs1000", "RawScan1000", backend);
      Ratio(label, "Changes1000", "RawScan1000", backend);
    }
    double t1 = items_["DocGetMt/0/real_time/threads:1"];
    double t2 = items_["DocGetMt/0/real_time/threads:2"];
    if (t1 > 0 && t2 > 0) {
      std::printf("  memory  DocGet throughput, 2 threads / 1 thread: %.2fx\n", t2 / t1);
    }
  }

 private:
  void Ratio(const char* label, const std::string& doc, const std::string& raw,
             const std::string& backend) {
    auto d = times_.find(doc + "/" + backend);
    auto r = times_.find(raw + "/" + backend);
    if (d == times_.end() || r == times_.end() || r->second <= 0) return;
    std::printf("  %-8s %-22s / %-14s %6.2fx\n", label, doc.c_str(), raw.c_str(),
                d->second / r->second);
  }
  std::map<std::string, double> times_;
  std::map<std::string, double> items_;
};

}  // namespace
}  // namespace settee

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  settee::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
