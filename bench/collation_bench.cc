// Micro-benchmarks of storage/collation: JSON key comparison (ICU and raw)
// and index-key encoding, with a std::string memcmp baseline in the same run.
//
// Each benchmark compares a ring of pre-built keys pairwise so that the
// branch predictor cannot learn one answer. Items/s is comparisons (or
// encodings) per second.
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "storage/collation.h"
#include "util/json.h"

namespace settee::collation {
namespace {

constexpr int kRing = 1024;

std::string RandomAscii(std::mt19937& rng, int len) {
  static const char kAlpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
  std::string s = "user-";  // shared prefix, as real keys tend to have
  for (int i = 0; i < len; i++) s.push_back(kAlpha[rng() % (sizeof(kAlpha) - 1)]);
  return s;
}

std::string RandomUnicode(std::mt19937& rng, int len) {
  static const char* const kPieces[] = {"\xC3\xA9", "\xC3\xBC", "\xCE\xB1", "\xD0\xB6",
                                        "\xE4\xB8\xAD", "a", "B", "\xC3\x9F"};
  std::string s = "\xC3\xA9t\xC3\xA9-";
  for (int i = 0; i < len; i++) s += kPieces[rng() % 8];
  return s;
}

enum Kind { kAscii, kUnicode, kNumber, kArray };

json::Document MakeKeys(Kind kind) {
  std::mt19937 rng(42);
  json::Document d;
  d.SetArray();
  auto& al = d.GetAllocator();
  for (int i = 0; i < kRing; i++) {
    switch (kind) {
      case kAscii: d.PushBack(json::StringValue(RandomAscii(rng, 8), al), al); break;
      case kUnicode: d.PushBack(json::StringValue(RandomUnicode(rng, 6), al), al); break;
      case kNumber:
        d.PushBack(json::Value(std::uniform_real_distribution<double>(-1e6, 1e6)(rng)), al);
        break;
      case kArray: {
        // A typical compound view key: [string, number, string].
        json::Value a(rapidjson::kArrayType);
        a.PushBack(json::StringValue(RandomAscii(rng, 2), al), al);
        a.PushBack(json::Value(static_cast<int>(rng() % 4)), al);
        a.PushBack(json::StringValue(RandomAscii(rng, 4), al), al);
        d.PushBack(a, al);
        break;
      }
    }
  }
  return d;
}

// Baseline: memcmp of std::strings of the ASCII keys.
void BM_MemcmpBaseline(benchmark::State& state) {
  json::Document d = MakeKeys(kAscii);
  std::vector<std::string> s;
  for (const auto& v : d.GetArray()) s.emplace_back(json::View(v));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(s[i % kRing].compare(s[(i + 1) % kRing]));
    i++;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemcmpBaseline);

void BM_Compare(benchmark::State& state) {
  json::Document d = MakeKeys(static_cast<Kind>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(Compare(d[i % kRing], d[(i + 1) % kRing]));
    i++;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Compare)->Arg(kAscii)->Arg(kUnicode)->Arg(kNumber)->Arg(kArray)->ArgNames({"kind"});

void BM_CompareIcuOnly(benchmark::State& state) {
  json::Document d = MakeKeys(kAscii);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        TEST_CompareStringsIcuOnly(json::View(d[i % kRing]), json::View(d[(i + 1) % kRing])));
    i++;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CompareIcuOnly);

void BM_CompareRaw(benchmark::State& state) {
  json::Document d = MakeKeys(static_cast<Kind>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(CompareRaw(d[i % kRing], d[(i + 1) % kRing]));
    i++;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CompareRaw)->Arg(kAscii)->Arg(kArray)->ArgNames({"kind"});

void BM_EncodeIndexKey(benchmark::State& state) {
  json::Document d = MakeKeys(static_cast<Kind>(state.range(0)));
  std::string out;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    out.clear();  // reuse capacity, as an index writer would
    AppendIndexKey(d[i % kRing], &out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
    i++;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["key_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_EncodeIndexKey)
    ->Arg(kAscii)->Arg(kUnicode)->Arg(kNumber)->Arg(kArray)->ArgNames({"kind"});

// Comparing pre-encoded keys: what the KV store does with them.
void BM_MemcmpEncodedKeys(benchmark::State& state) {
  json::Document d = MakeKeys(static_cast<Kind>(state.range(0)));
  std::vector<std::string> k;
  for (const auto& v : d.GetArray()) k.push_back(EncodeIndexKey(v));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(k[i % kRing].compare(k[(i + 1) % kRing]));
    i++;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemcmpEncodedKeys)->Arg(kAscii)->Arg(kArray)->ArgNames({"kind"});

}  // namespace
}  // namespace settee::collation

BENCHMARK_MAIN();
