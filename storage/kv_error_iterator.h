// An always-invalid KVIterator carrying the error that prevented iteration.
// KVStore::NewIterator never returns nullptr; backends return this instead
// when the options are unusable (e.g. a snapshot from another store).
#pragma once

#include <memory>
#include <utility>

#include "settee/kv.h"

namespace settee {

class KVErrorIterator final : public KVIterator {
 public:
  explicit KVErrorIterator(Status s) : status_(std::move(s)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(std::string_view) override {}
  void SeekForPrev(std::string_view) override {}
  void Next() override {}
  void Prev() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  Status status() const override { return status_; }

 private:
  const Status status_;
};

inline std::unique_ptr<KVIterator> NewErrorIterator(Status s) {
  return std::make_unique<KVErrorIterator>(std::move(s));
}

}  // namespace settee
