// ForwardingKV: a test KVStore that forwards every call to a memory store,
// for fakes that override only what they observe or break (a failing
// Write, a Write held at a gate). Prepare/Commit/WriteOwned keep KVStore's
// defaults, which go through Write().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "settee/kv.h"

namespace settee::testing {

class ForwardingKV : public KVStore {
 public:
  explicit ForwardingKV(std::string name) : name_(std::move(name)) {}

  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override {
    return base_->Get(o, k, v);
  }
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override { return base_->Write(o, b); }
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& o) override {
    return base_->NewIterator(o);
  }
  std::shared_ptr<const KVSnapshot> GetSnapshot() override { return base_->GetSnapshot(); }
  uint64_t ApproximateSize(std::string_view b, std::string_view e) override {
    return base_->ApproximateSize(b, e);
  }
  void CompactRange(std::string_view b, std::string_view e) override { base_->CompactRange(b, e); }
  std::string_view BackendName() const override { return name_; }

 private:
  std::string name_;
  std::unique_ptr<KVStore> base_ = NewMemoryStore();
};

}  // namespace settee::testing
