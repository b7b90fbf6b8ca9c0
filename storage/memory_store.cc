#include "storage/memory_store.h"

#include <type_traits>

#include "storage/kv_error_iterator.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>

namespace settee {

namespace {

// Gc tuning: a pass over gc_pending_ visits every pending key, so when many
// keys are pending it runs only after enough writes to pay for it (amortized
// O(kPendingCostPerWrite) visits per written op).
constexpr size_t kPendingAlwaysCollect = 64;
constexpr size_t kPendingCostPerWrite = 8;
// CompactRange holds the exclusive lock for at most this many keys at a time.
constexpr size_t kCompactChunk = 1024;

Status ForeignSnapshot() {
  return Status(Status::Code::kInvalidOperation, "snapshot does not belong to this memory store");
}

}  // namespace

//////// Snapshots:

// A registered sequence number. enable_shared_from_this lets an iterator
// keep the snapshot it was given alive (invariant (4)) even if the caller
// drops its shared_ptr first.
class MemoryStore::Snapshot final : public KVSnapshot,
                                    public std::enable_shared_from_this<MemoryStore::Snapshot> {
 public:
  Snapshot(MemoryStore* store, uint64_t seq) : store_(store), seq_(seq) {}
  ~Snapshot() override { store_->ReleaseSnapshotSeq(seq_); }

  MemoryStore* store() const { return store_; }
  uint64_t seq() const { return seq_; }

 private:
  MemoryStore* const store_;
  const uint64_t seq_;
};

uint64_t MemoryStore::AcquireSnapshotSeq() {
  std::lock_guard<std::mutex> l(snapshots_mu_);
  const uint64_t seq = last_seq_.load(std::memory_order_acquire);
  live_snapshots_.insert(seq);
  return seq;
}

void MemoryStore::ReleaseSnapshotSeq(uint64_t seq) {
  std::lock_guard<std::mutex> l(snapshots_mu_);
  auto it = live_snapshots_.find(seq);
  assert(it != live_snapshots_.end());
  if (it != live_snapshots_.end()) live_snapshots_.erase(it);
}

uint64_t MemoryStore::OldestLiveSeq() {
  std::lock_guard<std::mutex> l(snapshots_mu_);
  if (live_snapshots_.empty()) return last_seq_.load(std::memory_order_acquire);
  return *live_snapshots_.begin();
}

std::shared_ptr<const KVSnapshot> MemoryStore::GetSnapshot() {
  return std::make_shared<Snapshot>(this, AcquireSnapshotSeq());
}

//////// Reads and writes:

MemoryStore::Version* MemoryStore::Version::New(bool deleted, std::string_view value) {
  void* mem = ::operator new(sizeof(Version) + value.size());
  auto* v = new (mem) Version{0, nullptr, static_cast<uint32_t>(value.size()), deleted};
  if (!value.empty()) std::memcpy(v + 1, value.data(), value.size());
  return v;
}

MemoryStore::NodeKey::NodeKey(std::string_view bytes) : size_(static_cast<uint32_t>(bytes.size())) {
  char* dst = inline_;
  if (size_ > kInlineBytes) dst = heap_ = new char[size_];
  if (size_ != 0) std::memcpy(dst, bytes.data(), size_);
}

MemoryStore::NodeKey::~NodeKey() {
  if (size_ > kInlineBytes) delete[] heap_;
}

MemoryStore::MemoryStore() = default;

MemoryStore::~MemoryStore() {
  assert(live_snapshots_.empty());
  for (auto& [key, chain] : map_) {
    for (Version* v = chain; v != nullptr;) {
      Version* older = v->older;
      Version::Free(v);
      v = older;
    }
  }
}

const MemoryStore::Version* MemoryStore::Visible(const Version* chain, uint64_t seq) {
  const Version* v = chain;
  while (v != nullptr && v->seq > seq) v = v->older;
  return (v != nullptr && !v->deleted) ? v : nullptr;
}

Status MemoryStore::Get(const KVReadOptions& options, std::string_view key, std::string* value) {
  const Snapshot* snap = nullptr;
  if (options.snapshot != nullptr) {
    snap = dynamic_cast<const Snapshot*>(options.snapshot);
    if (snap == nullptr || snap->store() != this) return ForeignSnapshot();
  }
  SharedLockGuard l(&lock_);
  const uint64_t seq = snap ? snap->seq() : last_seq_.load(std::memory_order_acquire);
  auto it = map_.find(key);
  if (it == map_.end()) return Status::NotFound();
  const Version* v = Visible(it->second, seq);
  if (v == nullptr) return Status::NotFound();
  value->assign(v->value());
  return Status::OK();
}

Status MemoryStore::Write(const KVWriteOptions&, const KVWriteBatch& batch) {
  return Apply(batch.ops());
}

Status MemoryStore::WriteOwned(const KVWriteOptions&, KVWriteBatch&& batch) {
  return Apply(std::move(batch.mutable_ops()));
}

// `Ops` is `const std::vector<Op>&` (copy the bytes) or `std::vector<Op>&&`
// (take them).
template <typename Ops>
Status MemoryStore::Apply(Ops&& ops) {
  if (ops.empty()) return Status::OK();
  constexpr bool kOwned = std::is_rvalue_reference_v<Ops&&> && !std::is_const_v<std::remove_reference_t<Ops>>;
  for (const auto& op : ops) {
    if (op.value.size() > kMaxValueSize || op.key.size() > kMaxKeySize) {
      return Status(Status::Code::kTooLarge, "key or value too large for the memory store");
    }
  }
  // Allocate and copy values before taking the lock, so readers wait only
  // for the pointer surgery.
  std::vector<Version*> fresh(ops.size());
  for (size_t i = 0; i < ops.size(); i++) {
    fresh[i] = Version::New(ops[i].is_delete, ops[i].value);
    if constexpr (kOwned) std::string().swap(ops[i].value);  // give the copy's source back now
  }
  // Key order (see the header): stable, so the later of two ops on a key wins.
  std::vector<uint32_t> order(ops.size());
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  auto key_less = [&ops](uint32_t a, uint32_t b) { return ops[a].key < ops[b].key; };
  if (!std::is_sorted(order.begin(), order.end(), key_less)) {
    std::stable_sort(order.begin(), order.end(), key_less);
  }
  std::vector<Map::iterator> touched;
  touched.reserve(ops.size());

  ExclusiveLockGuard l(&lock_);
  const uint64_t seq = last_seq_.load(std::memory_order_relaxed) + 1;
  // The node of the previous op and its successor, carried along: after an
  // insert between them the successor is unchanged, and recomputing it
  // would climb the tree.
  Map::iterator prev = map_.end();
  Map::iterator next = map_.end();
  for (uint32_t i : order) {
    Version* v = fresh[i];
    v->seq = seq;
    const std::string_view key = ops[i].key;
    Map::iterator it;
    if (prev != map_.end() && prev->first.view() == key) {
      it = prev;  // the same key again
    } else if (prev != map_.end() && next != map_.end() && next->first.view() == key) {
      it = next;
      next = std::next(next);
    } else if (prev != map_.end() && (next == map_.end() || key < next->first.view())) {
      // Absent, and its place is between prev and next.
      if (v->deleted) {
        Version::Free(v);  // deleting an absent key changes nothing (invariant (3))
        continue;
      }
      it = map_.emplace_hint(next, std::piecewise_construct, std::forward_as_tuple(key),
                             std::forward_as_tuple(nullptr));
    } else {
      if (v->deleted) {
        // Deleting an absent key changes nothing: a missing node is absent
        // at every live sequence (invariant (3)).
        it = map_.find(key);
        if (it == map_.end()) {
          Version::Free(v);
          continue;
        }
      } else {
        it = map_.lower_bound(key);
        if (it == map_.end() || it->first.view() != key) {
          it = map_.emplace_hint(it, std::piecewise_construct, std::forward_as_tuple(key),
                                 std::forward_as_tuple(nullptr));
        }
      }
      next = std::next(it);
    }
    prev = it;
    Version* head = it->second;
    if (head != nullptr && !head->deleted) live_bytes_ -= key.size() + head->size;
    if (!v->deleted) live_bytes_ += key.size() + v->size;
    if (head != nullptr && head->seq == seq) {
      // Overwritten within this batch; nobody can see `head` (seq is not yet
      // published), so replace it. The node is in `touched` already.
      v->older = head->older;
      Version::Free(head);
      it->second = v;
    } else {
      v->older = head;
      it->second = v;
      touched.push_back(it);
    }
  }
  // Publish the batch before reading the oldest snapshot (invariant (5)).
  last_seq_.store(seq, std::memory_order_release);
  const uint64_t oldest = OldestLiveSeq();

  // Each node appears once in `touched` (Collect may erase it).
  for (Map::iterator it : touched) {
    if (Collect(it, oldest)) gc_pending_.emplace(it->first.view());
  }
  writes_since_pending_gc_ += ops.size();
  CollectPending(oldest);
  return Status::OK();
}

bool MemoryStore::Collect(Map::iterator it, uint64_t oldest) {
  Version* head = it->second;
  // The newest version every live snapshot can see; older ones are garbage.
  Version* keep = head;
  while (keep != nullptr && keep->seq > oldest) keep = keep->older;
  if (keep != nullptr) {
    for (Version* v = keep->older; v != nullptr;) {
      Version* older = v->older;
      Version::Free(v);
      v = older;
    }
    keep->older = nullptr;
    if (keep == head && head->deleted) {
      // Invariant (3): a lone deletion no live snapshot predates.
      Version::Free(head);
      map_.erase(it);
      return false;
    }
  }
  return head->older != nullptr || head->deleted;
}

void MemoryStore::CollectPending(uint64_t oldest) {
  if (gc_pending_.empty() || oldest <= gc_pending_oldest_) return;
  if (gc_pending_.size() > kPendingAlwaysCollect &&
      writes_since_pending_gc_ * kPendingCostPerWrite < gc_pending_.size()) {
    return;
  }
  for (auto p = gc_pending_.begin(); p != gc_pending_.end();) {
    auto it = map_.find(*p);
    if (it == map_.end() || !Collect(it, oldest)) {
      p = gc_pending_.erase(p);
    } else {
      ++p;
    }
  }
  gc_pending_oldest_ = oldest;
  writes_since_pending_gc_ = 0;
}

uint64_t MemoryStore::ApproximateSize(std::string_view begin, std::string_view end) {
  if (!end.empty() && end <= begin) return 0;
  // The live total, and a snapshot that sees exactly it: no batch is half
  // applied while the lock is held.
  std::shared_ptr<const KVSnapshot> snapshot;
  uint64_t total;
  {
    SharedLockGuard l(&lock_);
    snapshot = GetSnapshot();
    total = live_bytes_;
  }
  // The range's bytes are its own sum or the total less the rest's sum:
  // walk both sides in step and stop at whichever ends first, so a range
  // that holds most of the store (one big database among a few catalog
  // keys, say) costs only the keys outside it.
  KVIteratorOptions o;
  o.snapshot = snapshot.get();
  o.lower_bound = std::string(begin);
  o.upper_bound = std::string(end);
  std::unique_ptr<KVIterator> inside = NewIterator(o);
  o.lower_bound.clear();
  o.upper_bound.clear();
  std::unique_ptr<KVIterator> outside = NewIterator(o);
  auto skip_range = [&] {
    if (outside->Valid() && outside->key() >= begin && (end.empty() || outside->key() < end)) {
      if (end.empty()) {
        outside->SeekToLast();
        outside->Next();  // past the last key: the range runs to the end
      } else {
        outside->Seek(end);
      }
    }
  };
  uint64_t in_bytes = 0, out_bytes = 0;
  inside->SeekToFirst();
  outside->SeekToFirst();
  skip_range();
  for (;;) {
    if (!inside->Valid()) return in_bytes;
    if (!outside->Valid()) return total - out_bytes;
    in_bytes += inside->key().size() + inside->value().size();
    inside->Next();
    out_bytes += outside->key().size() + outside->value().size();
    outside->Next();
    skip_range();
  }
}

void MemoryStore::CompactRange(std::string_view begin, std::string_view end) {
  std::string resume(begin);
  for (bool done = false; !done;) {
    ExclusiveLockGuard l(&lock_);
    const uint64_t oldest = OldestLiveSeq();
    auto it = map_.lower_bound(resume);
    for (size_t n = 0; n < kCompactChunk && it != map_.end(); n++) {
      if (!end.empty() && it->first.view() >= end) break;
      auto next = std::next(it);
      if (Collect(it, oldest)) gc_pending_.emplace(it->first.view());
      it = next;
    }
    if (it == map_.end() || (!end.empty() && it->first.view() >= end)) {
      done = true;
    } else {
      resume = it->first.view();
    }
  }
}

size_t MemoryStore::TEST_VersionCount() {
  SharedLockGuard l(&lock_);
  size_t n = 0;
  for (const auto& [key, chain] : map_) {
    for (const Version* v = chain; v != nullptr; v = v->older) n++;
  }
  return n;
}

size_t MemoryStore::TEST_NodeCount() {
  SharedLockGuard l(&lock_);
  return map_.size();
}

//////// Iterator:

// Holds a snapshot for its whole life and the lock only within one call.
// it_ and cur_ are read outside the lock; invariants (1)-(4) keep them alive.
class MemoryStore::Iter final : public KVIterator {
 public:
  Iter(MemoryStore* store, std::shared_ptr<const Snapshot> snap, const KVIteratorOptions& o)
      : store_(store),
        snap_(std::move(snap)),
        seq_(snap_->seq()),
        lower_(o.lower_bound),
        upper_(o.upper_bound) {}

  bool Valid() const override { return valid_; }

  void SeekToFirst() override { Seek(lower_); }

  void SeekToLast() override {
    SharedLockGuard l(&store_->lock_);
    BackwardFrom(upper_.empty() ? store_->map_.end() : store_->map_.lower_bound(upper_));
  }

  void Seek(std::string_view target) override {
    if (target < lower_) target = lower_;
    SharedLockGuard l(&store_->lock_);
    ForwardFrom(store_->map_.lower_bound(target));
  }

  void SeekForPrev(std::string_view target) override {
    if (!upper_.empty() && target >= upper_) {
      SeekToLast();
      return;
    }
    SharedLockGuard l(&store_->lock_);
    BackwardFrom(store_->map_.upper_bound(target));
  }

  void Next() override {
    if (!valid_) return;  // REQUIRES: Valid(); tolerated as a no-op
    SharedLockGuard l(&store_->lock_);
    ForwardFrom(std::next(it_));
  }

  void Prev() override {
    if (!valid_) return;
    SharedLockGuard l(&store_->lock_);
    BackwardFrom(it_);
  }

  std::string_view key() const override {
    assert(valid_);
    return it_->first.view();
  }
  std::string_view value() const override {
    assert(valid_);
    return cur_->value();
  }
  Status status() const override { return Status::OK(); }

 private:
  // Rests on the first visible entry at or after `it`.
  // REQUIRES: lock held shared.
  void ForwardFrom(Map::iterator it) {
    const Map& map = store_->map_;
    for (; it != map.end(); ++it) {
      if (!upper_.empty() && it->first.view() >= upper_) break;
      if (const Version* v = Visible(it->second, seq_)) {
        Rest(it, v);
        return;
      }
    }
    valid_ = false;
  }

  // Rests on the last visible entry strictly before `it`.
  // REQUIRES: lock held shared.
  void BackwardFrom(Map::iterator it) {
    const Map& map = store_->map_;
    while (it != map.begin()) {
      --it;
      if (it->first.view() < lower_) break;
      if (const Version* v = Visible(it->second, seq_)) {
        Rest(it, v);
        return;
      }
    }
    valid_ = false;
  }

  void Rest(Map::iterator it, const Version* v) {
    it_ = it;
    cur_ = v;
    valid_ = true;
  }

  MemoryStore* const store_;
  const std::shared_ptr<const Snapshot> snap_;
  const uint64_t seq_;
  const std::string lower_;
  const std::string upper_;
  bool valid_ = false;
  Map::iterator it_;
  const Version* cur_ = nullptr;
};


std::unique_ptr<KVIterator> MemoryStore::NewIterator(const KVIteratorOptions& options) {
  std::shared_ptr<const Snapshot> snap;
  if (options.snapshot != nullptr) {
    const Snapshot* given = dynamic_cast<const Snapshot*>(options.snapshot);
    if (given == nullptr || given->store() != this) {
      return NewErrorIterator(ForeignSnapshot());
    }
    snap = given->shared_from_this();
  } else {
    snap = std::make_shared<Snapshot>(this, AcquireSnapshotSeq());
  }
  return std::make_unique<Iter>(this, std::move(snap), options);
}

std::unique_ptr<KVStore> NewMemoryStore() { return std::make_unique<MemoryStore>(); }

}  // namespace settee
