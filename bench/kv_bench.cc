// Micro-benchmarks of the two KVStore backends.
//
// The first argument selects the backend (0 = memory, 1 = leveldb). Reads run
// against a store prefilled with kPrefillKeys keys of ~100-byte values.
// MtGet runs the same random-Get loop with 1 and 2 threads; at exit the
// program prints the 2-thread/1-thread throughput ratio of each backend,
// both measured in this run (readers must scale: see memory_store.h).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <random>
#include <string>

#include "settee/kv.h"

namespace settee {
namespace {

constexpr int kPrefillKeys = 100000;
constexpr size_t kValueBytes = 100;

std::string Key(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "key%012llu", static_cast<unsigned long long>(i));
  return buf;
}

std::string Value(uint64_t i) {
  std::string v(kValueBytes, 'v');
  for (size_t j = 0; j < v.size(); j += 8) v[j] = static_cast<char>('a' + (i + j) % 26);
  return v;
}

const char* BackendName(int64_t arg) { return arg == 0 ? "memory" : "leveldb"; }

std::string TempDir(const char* tag) {
  static int counter = 0;
  auto p = std::filesystem::temp_directory_path() /
           ("settee_kv_bench_" + std::to_string(getpid()) + "_" + tag + std::to_string(counter++));
  std::filesystem::remove_all(p);
  return p.string();
}

// Owns a store and, for LevelDB, its directory.
struct BenchStore {
  std::unique_ptr<KVStore> store;
  std::string dir;

  explicit BenchStore(int64_t backend, const char* tag) {
    if (backend == 0) {
      store = NewMemoryStore();
    } else {
      dir = TempDir(tag);
      Status s = OpenLevelDBStore(dir, LevelDBOptions(), &store);
      if (!s.ok()) {
        std::fprintf(stderr, "open %s: %s\n", dir.c_str(), s.ToString().c_str());
        std::abort();
      }
    }
  }
  ~BenchStore() {
    store.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
};

// A prefilled store per backend, built on first use and shared by the read
// benchmarks (and their threads) for the whole run.
KVStore* Prefilled(int64_t backend) {
  static std::mutex mu;
  static std::map<int64_t, std::unique_ptr<BenchStore>> stores;
  std::lock_guard<std::mutex> l(mu);
  auto& slot = stores[backend];
  if (!slot) {
    slot = std::make_unique<BenchStore>(backend, "prefilled");
    for (int i = 0; i < kPrefillKeys; i += 1000) {
      KVWriteBatch b;
      for (int j = i; j < i + 1000; j++) b.Put(Key(j), Value(j));
      if (!slot->store->Write(KVWriteOptions(), b).ok()) std::abort();
    }
    slot->store->CompactRange("", "");
  }
  return slot->store.get();
}

void PutSingle(benchmark::State& state) {
  BenchStore s(state.range(0), "put");
  std::mt19937_64 rng(1);
  const std::string value = Value(0);
  for (auto _ : state) {
    if (!s.store->Put(KVWriteOptions(), Key(rng() % 1000000), value).ok()) {
      state.SkipWithError("put failed");
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(BackendName(state.range(0)));
}

void PutBatch100(benchmark::State& state) {
  BenchStore s(state.range(0), "batch");
  std::mt19937_64 rng(2);
  const std::string value = Value(0);
  KVWriteBatch b;
  for (auto _ : state) {
    b.Clear();
    for (int i = 0; i < 100; i++) b.Put(Key(rng() % 1000000), value);
    if (!s.store->Write(KVWriteOptions(), b).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetLabel(BackendName(state.range(0)));
}

void GetRandom(benchmark::State& state) {
  KVStore* store = Prefilled(state.range(0));
  std::mt19937_64 rng(3 + state.thread_index());
  std::string value;
  for (auto _ : state) {
    if (!store->Get(KVReadOptions(), Key(rng() % kPrefillKeys), &value).ok()) {
      state.SkipWithError("get failed");
    }
    benchmark::DoNotOptimize(value.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(BackendName(state.range(0)));
}

void Iterate1000(benchmark::State& state) {
  KVStore* store = Prefilled(state.range(0));
  std::mt19937_64 rng(4);
  size_t bytes = 0;
  for (auto _ : state) {
    auto it = store->NewIterator(KVIteratorOptions());
    int n = 0;
    for (it->Seek(Key(rng() % (kPrefillKeys - 1000))); it->Valid() && n < 1000; it->Next(), n++) {
      bytes += it->key().size() + it->value().size();
    }
    if (n != 1000) state.SkipWithError("short scan");
  }
  benchmark::DoNotOptimize(bytes);
  state.SetItemsProcessed(state.iterations() * 1000);
  state.SetLabel(BackendName(state.range(0)));
}

// Baseline for MtGet: the same keys in a std::map behind one std::shared_mutex
// (every reader writes the mutex's cache line), measured in the same run.
void MtGetSharedMutexBaseline(benchmark::State& state) {
  static std::shared_mutex mu;
  static const std::map<std::string, std::string, std::less<>>* map = [] {
    auto* m = new std::map<std::string, std::string, std::less<>>();
    for (int i = 0; i < kPrefillKeys; i++) m->emplace(Key(i), Value(i));
    return m;
  }();
  std::mt19937_64 rng(3 + state.thread_index());
  std::string value;
  for (auto _ : state) {
    const std::string key = Key(rng() % kPrefillKeys);
    std::shared_lock<std::shared_mutex> l(mu);
    auto it = map->find(key);
    if (it == map->end()) {
      state.SkipWithError("get failed");
      break;
    }
    value.assign(it->second);
    benchmark::DoNotOptimize(value.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("std::shared_mutex");
}

// Baseline for MtGet: shared-nothing CPU work (format and hash a key), so its
// 2-thread/1-thread ratio is the parallelism the machine delivers right now
// (less than 2x when other processes compete for the two cores).
void MtCpuBaseline(benchmark::State& state) {
  std::mt19937_64 rng(5 + state.thread_index());
  uint64_t h = 0;
  for (auto _ : state) {
    const std::string key = Key(rng() % kPrefillKeys);
    for (int round = 0; round < 8; round++) {
      for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("no shared state");
}

BENCHMARK(PutSingle)->Arg(0)->Arg(1)->MinTime(0.2);
BENCHMARK(PutBatch100)->Arg(0)->Arg(1)->MinTime(0.2);
BENCHMARK(GetRandom)->Arg(0)->Arg(1)->MinTime(0.2);
BENCHMARK(Iterate1000)->Arg(0)->Arg(1)->MinTime(0.2);
// Read scaling: the same loop with 1 and 2 threads; real time, so
// items_per_second is the aggregate throughput.
BENCHMARK(GetRandom)->Name("MtGet")->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime()->MinTime(0.5);
BENCHMARK(MtCpuBaseline)->Name("MtGet")->Arg(8)->Threads(1)->Threads(2)->UseRealTime()->MinTime(0.5);
BENCHMARK(MtGetSharedMutexBaseline)->Name("MtGet")->Arg(9)->Threads(1)->Threads(2)->UseRealTime()->MinTime(0.5);

// Console output plus the MtGet 2-thread/1-thread ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_name.function_name != "MtGet" || r.error_occurred) continue;
      auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      Rates& rates = rates_[r.run_name.args][r.threads];
      rates.wall = it->second.value;
      rates.cpu_ns_per_op = r.GetAdjustedCPUTime();
    }
  }
  static const char* Describe(const std::string& args) {
    if (args == "0") return "memory";
    if (args == "1") return "leveldb";
    if (args == "8") return "CPU-only baseline";
    return "std::shared_mutex map baseline";
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const auto& [args, by_threads] : rates_) {
      auto one = by_threads.find(1), two = by_threads.find(2);
      if (one == by_threads.end() || two == by_threads.end() || one->second.wall <= 0 ||
          two->second.cpu_ns_per_op <= 0) {
        continue;
      }
      // The wall-clock ratio is what readers get; on a machine busy with
      // other work two threads cannot get two cores, so also print the
      // ratio implied by per-operation CPU cost (contention shows up there).
      std::printf(
          "MtGet/%s (%s): 2-thread/1-thread read throughput ratio = %.2fx wall-clock, "
          "%.2fx CPU-normalized (2 x cpu/op 1T / cpu/op 2T)\n",
          args.c_str(), Describe(args), two->second.wall / one->second.wall,
          2 * one->second.cpu_ns_per_op / two->second.cpu_ns_per_op);
    }
    const double mem = Ratio("0"), base = Ratio("8");
    if (mem > 0 && base > 0) {
      std::printf(
          "memory store read scaling relative to the CPU-only baseline = %.2f "
          "(1.00 = scales as well as shared-nothing work; on two free cores 2x wall-clock "
          "needs ~1.0)\n",
          mem / base);
    }
  }

 private:
  // Wall-clock 2-thread/1-thread ratio of one MtGet variant, 0 if missing.
  double Ratio(const std::string& args) const {
    auto a = rates_.find(args);
    if (a == rates_.end()) return 0;
    auto one = a->second.find(1), two = a->second.find(2);
    if (one == a->second.end() || two == a->second.end() || one->second.wall <= 0) return 0;
    return two->second.wall / one->second.wall;
  }

  struct Rates {
    double wall = 0;           // items per wall-clock second, all threads
    double cpu_ns_per_op = 0;  // CPU time per item
  };
  std::map<std::string, std::map<int64_t, Rates>> rates_;
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
