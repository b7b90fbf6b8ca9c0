// Test helpers: a Store on either backend in a fresh temporary directory.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "settee/store.h"

namespace settee::testing {

// `n` incompressible bytes, the same for the same `seed` (Snappy and gzip
// would shrink repeated ones, hiding what a test measures).
inline std::string Noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

inline std::string FreshTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::path(::testing::TempDir()) /
             ("settee-" + tag + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++));
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Owns a store and the directory it lives in.
class TempStore {
 public:
  explicit TempStore(StoreOptions::Backend backend) {
    options_.backend = backend;
    if (backend == StoreOptions::Backend::kLevelDB) options_.path = FreshTempDir("store");
    Reopen();
  }
  ~TempStore() {
    store_.reset();
    if (!options_.path.empty()) std::filesystem::remove_all(options_.path);
  }
  // Closes and reopens (LevelDB keeps the data; memory starts empty).
  void Reopen() {
    store_.reset();
    auto s = Store::Open(options_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  // Closes the store (Reopen() opens it again), so a test can open its
  // files itself.
  void Close() { store_.reset(); }
  Store* get() { return store_.get(); }
  Store* operator->() { return store_.get(); }
  StoreOptions& options() { return options_; }

 private:
  StoreOptions options_;
  std::unique_ptr<Store> store_;
};

inline std::string BackendName(const ::testing::TestParamInfo<StoreOptions::Backend>& info) {
  return info.param == StoreOptions::Backend::kMemory ? "memory" : "leveldb";
}

}  // namespace settee::testing
