#include "storage/memory_store.h"

#include <type_traits>

#include <snappy.h>

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
  // Count first, then read the sequence: invariant (5).
  snapshot_count_.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t seq = last_seq_.load(std::memory_order_seq_cst);
  live_snapshots_.insert(seq);
  return seq;
}

void MemoryStore::ReleaseSnapshotSeq(uint64_t seq) {
  std::lock_guard<std::mutex> l(snapshots_mu_);
  auto it = live_snapshots_.find(seq);
  assert(it != live_snapshots_.end());
  if (it != live_snapshots_.end()) live_snapshots_.erase(it);
  snapshot_count_.fetch_sub(1, std::memory_order_seq_cst);
}

uint64_t MemoryStore::OldestLiveSeq(uint64_t published) {
  if (snapshot_count_.load(std::memory_order_seq_cst) == 0) return published;
  std::lock_guard<std::mutex> l(snapshots_mu_);
  if (live_snapshots_.empty()) return published;
  return std::min(published, *live_snapshots_.begin());
}

std::shared_ptr<const KVSnapshot> MemoryStore::GetSnapshot() {
  return std::make_shared<Snapshot>(this, AcquireSnapshotSeq());
}

//////// Reads and writes:

std::string_view MemoryStore::Version::Value(std::string* scratch) const {
  switch (form) {
    case Form::kInline:
      return {payload(), size};
    case Form::kAdopted:
      return {reinterpret_cast<const std::string*>(payload())->data(), size};
    case Form::kSnappy: {
      uint32_t compressed;
      std::memcpy(&compressed, payload(), sizeof(compressed));
      // Written by Compressed() from exactly `size` bytes: it uncompresses.
      scratch->resize(size);
      snappy::RawUncompress(payload() + sizeof(compressed), compressed, scratch->data());
      return *scratch;
    }
  }
  return {};
}

MemoryStore::Version* MemoryStore::Version::Compressed(bool deleted, std::string_view value) {
  // Compressed into a buffer the thread keeps (memory already touched),
  // then copied to an allocation of just its size.
  // Bigger values get a buffer of their own, so that one huge value does
  // not leave its size held by the thread for good.
  constexpr size_t kKeepScratchBytes = 8 << 20;
  thread_local std::string kept;
  std::string own;
  const size_t room = snappy::MaxCompressedLength(value.size());
  std::string& scratch = room <= kKeepScratchBytes ? kept : own;
  if (scratch.size() < room) scratch.resize(room);
  size_t compressed = 0;
  snappy::RawCompress(value.data(), value.size(), scratch.data(), &compressed);
  if (compressed > value.size() - value.size() / 8) return nullptr;
  const auto stored = static_cast<uint32_t>(compressed);
  void* mem = ::operator new(sizeof(Version) + sizeof(stored) + compressed);
  auto* v = new (mem) Version{0, nullptr, static_cast<uint32_t>(value.size()), deleted, Form::kSnappy};
  char* p = reinterpret_cast<char*>(v + 1);
  std::memcpy(p, &stored, sizeof(stored));
  std::memcpy(p + sizeof(stored), scratch.data(), compressed);
  return v;
}

MemoryStore::Version* MemoryStore::Version::New(bool deleted, std::string_view value) {
  if (value.size() >= kCompressBytes) {
    if (Version* v = Compressed(deleted, value)) return v;
  }
  void* mem = ::operator new(sizeof(Version) + value.size());
  auto* v = new (mem) Version{0, nullptr, static_cast<uint32_t>(value.size()), deleted, Form::kInline};
  if (!value.empty()) std::memcpy(v + 1, value.data(), value.size());
  return v;
}

MemoryStore::Version* MemoryStore::Version::Adopt(bool deleted, std::string&& value) {
  Version* v = nullptr;
  if (value.size() >= kCompressBytes) v = Compressed(deleted, value);
  if (v == nullptr && value.size() < kCompressBytes) v = New(deleted, value);
  if (v != nullptr) {
    std::string().swap(value);  // give the source back now
    return v;
  }
  void* mem = ::operator new(sizeof(Version) + sizeof(std::string));
  v = new (mem) Version{0, nullptr, static_cast<uint32_t>(value.size()), deleted, Form::kAdopted};
  new (v + 1) std::string(std::move(value));
  value.clear();
  return v;
}

void MemoryStore::Version::Free(Version* v) {
  if (v->form == Form::kAdopted) {
    using String = std::string;
    reinterpret_cast<String*>(v + 1)->~String();
  }
  ::operator delete(v);
}

MemoryStore::NodeKey::NodeKey(std::string_view bytes) : size_(static_cast<uint32_t>(bytes.size())) {
  char* dst = inline_;
  if (size_ > kInlineBytes) dst = heap_ = new char[size_];
  if (size_ != 0) std::memcpy(dst, bytes.data(), size_);
}

MemoryStore::NodeKey::~NodeKey() {
  if (size_ > kInlineBytes) delete[] heap_;
}

MemoryStore::MemoryStore() : MemoryStore(Options()) {}

MemoryStore::MemoryStore(const Options& options)
    : options_{std::max<size_t>(options.partitions, 1), options.lead, options.id_bytes},
      parts_(new Partition[options_.partitions]) {}

MemoryStore::~MemoryStore() {
  assert(live_snapshots_.empty());
  for (size_t p = 0; p < options_.partitions; ++p) {
    for (auto& [key, chain] : parts_[p].map) {
      for (Version* v = chain; v != nullptr;) {
        Version* older = v->older;
        Version::Free(v);
        v = older;
      }
    }
  }
}

size_t MemoryStore::PartitionOf(std::string_view key) const {
  const size_t n = options_.partitions;
  const std::string& lead = options_.lead;
  if (n == 1 || key.size() < lead.size() + options_.id_bytes || key.substr(0, lead.size()) != lead) {
    return 0;
  }
  uint64_t id = 0;
  for (size_t i = 0; i < options_.id_bytes; ++i) {
    id = (id << 8) | static_cast<uint8_t>(key[lead.size() + i]);
  }
  return 1 + id % (n - 1);
}

std::vector<size_t> MemoryStore::PartitionsOf(std::string_view lower,
                                              std::string_view upper) const {
  const size_t n = options_.partitions;
  if (n == 1) return {0};
  const std::string& lead = options_.lead;
  // Entirely below or above the keys that start with `lead`: partition 0.
  if (!lead.empty()) {
    if (!upper.empty() && upper <= lead) return {0};
    if (lower > lead && lower.substr(0, lead.size()) != lead) return {0};
  }
  // Within one lead + id prefix: that prefix's partition alone.
  const size_t prefix_len = lead.size() + options_.id_bytes;
  if (!upper.empty() && lower.size() >= prefix_len && lower.substr(0, lead.size()) == lead) {
    std::string end(lower.substr(0, prefix_len));
    while (!end.empty() && static_cast<uint8_t>(end.back()) == 0xff) end.pop_back();
    if (!end.empty()) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      if (upper <= end) return {PartitionOf(lower)};
    }
  }
  std::vector<size_t> all(n);
  for (size_t p = 0; p < n; ++p) all[p] = p;
  return all;
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
  Partition& part = parts_[PartitionOf(key)];
  SharedLockGuard l(&part.lock);
  const uint64_t seq = snap ? snap->seq() : kLatest;
  auto it = part.map.find(key);
  if (it == part.map.end()) return Status::NotFound();
  const Version* v = Visible(it->second, seq);
  if (v == nullptr) return Status::NotFound();
  if (v->form == Version::Form::kSnappy) {
    v->Value(value);  // uncompressed straight into *value
  } else {
    value->assign(v->Value(nullptr));
  }
  return Status::OK();
}

Status MemoryStore::Write(const KVWriteOptions&, const KVWriteBatch& batch) {
  Prepared prepared;
  prepared.ops = &batch.ops();
  PrepareOps<false>(&prepared);
  return CommitPrepared(prepared);
}

Status MemoryStore::WriteOwned(const KVWriteOptions&, KVWriteBatch&& batch) {
  Prepared prepared;
  prepared.owned = std::move(batch.mutable_ops());
  prepared.ops = &prepared.owned;
  PrepareOps<true>(&prepared);
  return CommitPrepared(prepared);
}

std::unique_ptr<KVPreparedWrite> MemoryStore::Prepare(KVWriteBatch&& batch) {
  auto prepared = std::make_unique<Prepared>();
  prepared->owned = std::move(batch.mutable_ops());
  prepared->ops = &prepared->owned;
  PrepareOps<true>(prepared.get());
  return prepared;
}

Status MemoryStore::Commit(const KVWriteOptions&, std::unique_ptr<KVPreparedWrite> prepared) {
  auto* mine = dynamic_cast<Prepared*>(prepared.get());
  if (mine == nullptr || mine->store != this) {
    return Status(Status::Code::kInvalidOperation, "write not prepared by this memory store");
  }
  return CommitPrepared(*mine);
}

Status MemoryStore::CommitAll(const KVWriteOptions& options,
                              std::vector<std::unique_ptr<KVPreparedWrite>> prepared) {
  // Every failure shows before anything is applied: all or nothing.
  for (auto& p : prepared) {
    auto* mine = dynamic_cast<Prepared*>(p.get());
    if (mine == nullptr || mine->store != this) {
      return Status(Status::Code::kInvalidOperation, "write not prepared by this memory store");
    }
    if (!mine->status.ok()) return mine->status;
  }
  // Every batch's status was checked above, and that is the only way
  // CommitPrepared fails: none can fail now, so none is half applied.
  for (auto& p : prepared) {
    [[maybe_unused]] const Status s = CommitPrepared(static_cast<Prepared&>(*p));
    assert(s.ok());
  }
  return Status::OK();
}

MemoryStore::Prepared::~Prepared() {
  // Versions a commit did not take (it never ran, or failed).
  for (Version* v : fresh) {
    if (v != nullptr) Version::Free(v);
  }
}

// `kOwned`: the values are taken from prepared->owned instead of copied.
template <bool kOwned>
void MemoryStore::PrepareOps(Prepared* prepared) {
  Prepared& p = *prepared;
  p.store = this;
  const std::vector<KVWriteBatch::Op>& ops = *p.ops;
  for (const auto& op : ops) {
    if (op.value.size() > kMaxValueSize || op.key.size() > kMaxKeySize) {
      p.status = Status(Status::Code::kTooLarge, "key or value too large for the memory store");
      return;
    }
  }
  // Allocate and copy values, and the map nodes a new key needs, before
  // taking the lock, so readers wait only for the pointer surgery (a fresh
  // allocation may fault in a page: microseconds on a VM). A node that is
  // not needed (its key exists) is freed after the lock.
  p.fresh.resize(ops.size());
  p.nodes.resize(ops.size());
  {
    Map maker;  // makes the nodes: each emplaced, then extracted
    for (size_t i = 0; i < ops.size(); i++) {
      if constexpr (kOwned) {
        p.fresh[i] = Version::Adopt(ops[i].is_delete, std::move(p.owned[i].value));
      } else {
        p.fresh[i] = Version::New(ops[i].is_delete, ops[i].value);
      }
      if (!ops[i].is_delete) {
        p.nodes[i] = maker.extract(maker.emplace_hint(maker.end(), std::piecewise_construct,
                                                      std::forward_as_tuple(ops[i].key),
                                                      std::forward_as_tuple(nullptr)));
      }
    }
  }
  // Partitions ascending, key order within each (see the header): stable,
  // so the later of two ops on a key wins.
  if (options_.partitions > 1) {
    p.part_of.resize(ops.size());
    for (size_t i = 0; i < ops.size(); i++) p.part_of[i] = static_cast<uint32_t>(PartitionOf(ops[i].key));
  }
  auto part = [&p](uint32_t i) -> uint32_t { return p.part_of.empty() ? 0 : p.part_of[i]; };
  p.order.resize(ops.size());
  for (uint32_t i = 0; i < p.order.size(); i++) p.order[i] = i;
  auto op_less = [&](uint32_t a, uint32_t b) {
    if (part(a) != part(b)) return part(a) < part(b);
    return ops[a].key < ops[b].key;
  };
  if (!std::is_sorted(p.order.begin(), p.order.end(), op_less)) {
    std::stable_sort(p.order.begin(), p.order.end(), op_less);
  }
  for (uint32_t i : p.order) {
    if (p.locked.empty() || p.locked.back() != part(i)) p.locked.push_back(part(i));
  }
}

Status MemoryStore::CommitPrepared(Prepared& p) {
  if (!p.status.ok()) return p.status;
  const std::vector<KVWriteBatch::Op>& ops = *p.ops;
  if (ops.empty()) return Status::OK();
  Garbage garbage;  // freed after the locks are released (declared before)
  struct Touched {
    Partition* part;
    Map::iterator it;
  };
  SmallVector<Touched> touched;
  touched.reserve(ops.size());
  auto part = [&p](uint32_t i) -> uint32_t { return p.part_of.empty() ? 0 : p.part_of[i]; };

  // Where each op goes is looked up holding the partitions' writer locks
  // only: the map's descents (cache misses in a big map) are most of a small
  // batch's time, and readers need not wait for them. Only writers change
  // the map, so the positions stay valid; the changes themselves (links,
  // rebalancing, stamps) are made once readers are excluded.
  for (uint32_t q : p.locked) parts_[q].lock.LockWriter();
  // Per op: lower_bound of its key before the batch. The previous op's is
  // carried along: a key that belongs before it or its successor (a sorted
  // run of new ids, the counters after a database's records) costs one
  // comparison instead of a descent that compares long shared key prefixes
  // at every level.
  SmallVector<Map::iterator> place(ops.size());
  SmallVector<int> finger(ops.size(), -1);  // per op: the finger that placed it
  {
    Partition* cur = nullptr;
    Map::iterator last;
    for (uint32_t i : p.order) {
      const std::string_view key = ops[i].key;
      if (cur != &parts_[part(i)]) {
        cur = &parts_[part(i)];
        last = Place(*cur, key, &finger[i]);
      } else if (last == cur->map.end() || key <= last->first.view()) {
        // Keys ascend: still lower_bound(key).
      } else if (auto n = std::next(last); n == cur->map.end() || key <= n->first.view()) {
        last = n;
      } else {
        last = Place(*cur, key, &finger[i]);
      }
      place[i] = last;
    }
  }
  for (uint32_t q : p.locked) parts_[q].lock.Exclude();
  Partition* cur = nullptr;
  Map::iterator prev;  // the previous op's node
  for (uint32_t i : p.order) {
    Version* v = p.fresh[i];
    p.fresh[i] = nullptr;  // linked below, or garbage
    v->seq = kUnstamped;
    const std::string_view key = ops[i].key;
    if (cur != &parts_[part(i)]) {
      cur = &parts_[part(i)];
      prev = cur->map.end();
    }
    Map& map = cur->map;
    Map::iterator it;
    bool inserted = false;
    if (prev != map.end() && prev->first.view() == key) {
      it = prev;  // the same key again (inserted by this batch, perhaps)
    } else if (place[i] != map.end() && place[i]->first.view() == key) {
      it = place[i];
    } else if (v->deleted) {
      // Deleting an absent key changes nothing: a missing node is absent at
      // every live sequence (invariant (3)).
      garbage.versions.push_back(v);
      continue;
    } else {
      // Before its lower_bound: the hint makes the insertion a link and a
      // rebalance, no descent.
      it = map.insert(place[i], std::move(p.nodes[i]));
      inserted = true;
      NoteInsert(*cur, it, place[i]);
    }
    prev = it;
    NoteFinger(*cur, it, inserted, inserted ? place[i] : map.end(), finger[i]);
    Version* head = it->second;
    if (head != nullptr && !head->deleted) cur->live_bytes -= key.size() + head->size;
    if (!v->deleted) cur->live_bytes += key.size() + v->size;
    if (head != nullptr && head->seq == kUnstamped) {
      // Overwritten within this batch; nobody can see `head` (the partition
      // is locked until the batch is stamped), so replace it. The node is
      // in `touched` already.
      v->older = head->older;
      garbage.versions.push_back(head);
      it->second = v;
    } else {
      v->older = head;
      it->second = v;
      touched.push_back({cur, it});
    }
  }
  // Take and publish the next sequence in one step, then stamp the batch's
  // versions (each touched node's head). A snapshot may already read as of
  // seq while the stamps are being written: it reaches these partitions
  // only through their locks, which are released after the stamps (see
  // Partitions). Publish before reading the oldest snapshot (invariant (5)).
  const uint64_t seq = last_seq_.fetch_add(1, std::memory_order_seq_cst) + 1;
  for (const Touched& t : touched) t.it->second->seq = seq;
  const uint64_t oldest = OldestLiveSeq(seq);

  // Each node appears once in `touched` (Collect may erase it).
  for (const Touched& t : touched) {
    if (Collect(*t.part, t.it, oldest, &garbage)) t.part->gc_pending.emplace(t.it->first.view());
  }
  for (uint32_t q : p.locked) {
    Partition& lp = parts_[q];
    lp.writes_since_pending_gc += ops.size();
    CollectPending(lp, oldest, &garbage);
  }
  for (auto q = p.locked.rbegin(); q != p.locked.rend(); ++q) parts_[*q].lock.Unlock();
  return Status::OK();
}

MemoryStore::Map::iterator MemoryStore::Place(Partition& part, std::string_view key, int* slot) {
  // Of the fingers at or before `key`, only the greatest can be its
  // predecessor: the only one whose successor (a walk up the tree, on
  // lines another core's inserts may have taken) is worth looking up.
  int best = -1;
  std::string_view best_key;
  for (size_t j = 0; j < part.finger_count; ++j) {
    const std::string_view f = part.fingers[j].it->first.view();
    if (f <= key && (best < 0 || f > best_key)) {
      best = static_cast<int>(j);
      best_key = f;
    }
  }
  if (best >= 0) {
    Partition::Finger& finger = part.fingers[best];
    if (best_key != key && !finger.next_known) {
      finger.next = std::next(finger.it);
      finger.next_known = true;
    }
    const Map::iterator at = best_key == key ? finger.it : finger.next;
    if (best_key == key || at == part.map.end() || key <= at->first.view()) {
      *slot = best;
      ++part.finger_hits;
      return at;
    }
  }
  *slot = -1;
  return part.map.lower_bound(key);
}

void MemoryStore::NoteFinger(Partition& part, Map::iterator it, bool inserted,
                             Map::iterator next, int slot) {
  const uint64_t now = ++part.finger_clock;
  for (size_t j = 0; j < part.finger_count; ++j) {
    if (part.fingers[j].it == it) {
      part.fingers[j].used = now;
      return;
    }
  }
  size_t j = 0;
  if (slot >= 0) {
    j = static_cast<size_t>(slot);
  } else if (part.finger_count < Partition::kFingers) {
    j = part.finger_count++;
  } else {
    for (size_t k = 1; k < Partition::kFingers; ++k) {
      if (part.fingers[k].used < part.fingers[j].used) j = k;
    }
  }
  part.fingers[j] = {it, next, inserted, now};
}

void MemoryStore::NoteInsert(Partition& part, Map::iterator it, Map::iterator next) {
  for (size_t j = 0; j < part.finger_count; ++j) {
    Partition::Finger& f = part.fingers[j];
    if (f.next_known && f.next == next && f.it->first.view() < it->first.view()) f.next = it;
  }
}

MemoryStore::Garbage::~Garbage() {
  for (Version* v : versions) Version::Free(v);
}

bool MemoryStore::Collect(Partition& part, Map::iterator it, uint64_t oldest, Garbage* garbage) {
  Version* head = it->second;
  // The newest version every live snapshot can see; older ones are garbage.
  Version* keep = head;
  while (keep != nullptr && keep->seq > oldest) keep = keep->older;
  if (keep != nullptr) {
    for (Version* v = keep->older; v != nullptr; v = v->older) garbage->versions.push_back(v);
    keep->older = nullptr;
    if (keep == head && head->deleted) {
      // Invariant (3): a lone deletion no live snapshot predates.
      garbage->versions.push_back(head);
      for (size_t j = 0; j < part.finger_count; ++j) {
        if (part.fingers[j].it == it) {
          part.fingers[j--] = part.fingers[--part.finger_count];
        } else if (part.fingers[j].next_known && part.fingers[j].next == it) {
          part.fingers[j].next_known = false;
        }
      }
      garbage->nodes.push_back(part.map.extract(it));
      return false;
    }
  }
  return head->older != nullptr || head->deleted;
}

void MemoryStore::CollectPending(Partition& part, uint64_t oldest, Garbage* garbage) {
  if (part.gc_pending.empty() || oldest <= part.gc_pending_oldest) return;
  if (part.gc_pending.size() > kPendingAlwaysCollect &&
      part.writes_since_pending_gc * kPendingCostPerWrite < part.gc_pending.size()) {
    return;
  }
  for (auto p = part.gc_pending.begin(); p != part.gc_pending.end();) {
    auto it = part.map.find(*p);
    if (it == part.map.end() || !Collect(part, it, oldest, garbage)) {
      p = part.gc_pending.erase(p);
    } else {
      ++p;
    }
  }
  part.gc_pending_oldest = oldest;
  part.writes_since_pending_gc = 0;
}

uint64_t MemoryStore::ApproximateSize(std::string_view begin, std::string_view end) {
  if (!end.empty() && end <= begin) return 0;
  uint64_t size = 0;
  for (size_t p : PartitionsOf(begin, end)) size += PartitionSize(p, begin, end);
  return size;
}

void MemoryStore::CompactRange(std::string_view begin, std::string_view end) {
  for (size_t p : PartitionsOf(begin, end)) CompactPartition(parts_[p], begin, end);
}

void MemoryStore::CompactPartition(Partition& part, std::string_view begin, std::string_view end) {
  std::string resume(begin);
  for (bool done = false; !done;) {
    Garbage garbage;  // freed after the lock (declared before it)
    ExclusiveLockGuard l(&part.lock);
    // Every version of the locked partition is published: invariant (5).
    const uint64_t oldest = OldestLiveSeq(last_seq_.load(std::memory_order_seq_cst));
    auto it = part.map.lower_bound(resume);
    for (size_t n = 0; n < kCompactChunk && it != part.map.end(); n++) {
      if (!end.empty() && it->first.view() >= end) break;
      auto next = std::next(it);
      if (Collect(part, it, oldest, &garbage)) part.gc_pending.emplace(it->first.view());
      it = next;
    }
    if (it == part.map.end() || (!end.empty() && it->first.view() >= end)) {
      done = true;
    } else {
      resume = it->first.view();
    }
  }
}

size_t MemoryStore::TEST_VersionCount() {
  size_t n = 0;
  for (size_t p = 0; p < options_.partitions; ++p) {
    SharedLockGuard l(&parts_[p].lock);
    for (const auto& [key, chain] : parts_[p].map) {
      for (const Version* v = chain; v != nullptr; v = v->older) n++;
    }
  }
  return n;
}

uint64_t MemoryStore::TEST_FingerHits() {
  uint64_t n = 0;
  for (size_t p = 0; p < options_.partitions; ++p) {
    ExclusiveLockGuard l(&parts_[p].lock);
    n += parts_[p].finger_hits;
  }
  return n;
}

bool MemoryStore::TEST_FingersConsistent() {
  for (size_t p = 0; p < options_.partitions; ++p) {
    Partition& part = parts_[p];
    ExclusiveLockGuard l(&part.lock);
    for (size_t j = 0; j < part.finger_count; ++j) {
      const Partition::Finger& f = part.fingers[j];
      auto found = part.map.find(f.it->first.view());
      if (found != f.it) return false;
      if (f.next_known && f.next != std::next(f.it)) return false;
    }
  }
  return true;
}

size_t MemoryStore::TEST_NodeCount() {
  size_t n = 0;
  for (size_t p = 0; p < options_.partitions; ++p) {
    SharedLockGuard l(&parts_[p].lock);
    n += parts_[p].map.size();
  }
  return n;
}

//////// Iterators:

// One partition's entries. Holds a snapshot for its whole life and the
// partition's lock only within one call. it_ and cur_ are read outside the
// lock; invariants (1)-(4) keep them alive.
class MemoryStore::Iter final : public KVIterator {
 public:
  Iter(Partition* part, std::shared_ptr<const Snapshot> snap, const KVIteratorOptions& o)
      : part_(part),
        snap_(std::move(snap)),
        seq_(snap_->seq()),
        lower_(o.lower_bound),
        upper_(o.upper_bound) {}

  bool Valid() const override { return valid_; }

  void SeekToFirst() override { Seek(lower_); }

  void SeekToLast() override {
    SharedLockGuard l(&part_->lock);
    BackwardFrom(upper_.empty() ? part_->map.end() : part_->map.lower_bound(upper_));
  }

  void Seek(std::string_view target) override {
    if (target < lower_) target = lower_;
    SharedLockGuard l(&part_->lock);
    ForwardFrom(part_->map.lower_bound(target));
  }

  void SeekForPrev(std::string_view target) override {
    if (!upper_.empty() && target >= upper_) {
      SeekToLast();
      return;
    }
    SharedLockGuard l(&part_->lock);
    BackwardFrom(part_->map.upper_bound(target));
  }

  void Next() override {
    if (!valid_) return;  // REQUIRES: Valid(); tolerated as a no-op
    SharedLockGuard l(&part_->lock);
    ForwardFrom(std::next(it_));
  }

  void Prev() override {
    if (!valid_) return;
    SharedLockGuard l(&part_->lock);
    BackwardFrom(it_);
  }

  std::string_view key() const override {
    assert(valid_);
    return it_->first.view();
  }
  std::string_view value() const override {
    assert(valid_);
    if (cur_->form != Version::Form::kSnappy) return cur_->Value(nullptr);
    if (scratch_of_ != cur_) {
      cur_->Value(&scratch_);
      scratch_of_ = cur_;  // the snapshot keeps it: the address is not reused
    }
    return scratch_;
  }
  // value().size(), without uncompressing it.
  size_t value_size() const {
    assert(valid_);
    return cur_->size;
  }
  Status status() const override { return Status::OK(); }

 private:
  // Rests on the first visible entry at or after `it`.
  // REQUIRES: lock held shared.
  void ForwardFrom(Map::iterator it) {
    const Map& map = part_->map;
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
    const Map& map = part_->map;
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

  Partition* const part_;
  const std::shared_ptr<const Snapshot> snap_;
  const uint64_t seq_;
  const std::string lower_;
  const std::string upper_;
  bool valid_ = false;
  Map::iterator it_;
  const Version* cur_ = nullptr;
  mutable std::string scratch_;  // a compressed value, uncompressed
  mutable const Version* scratch_of_ = nullptr;  // the version scratch_ holds
};

// Several partitions' iterators (one snapshot) merged into key order, as
// LevelDB's MergingIterator does. A key lives in one partition only, so the
// children never show equal keys.
class MemoryStore::MergeIter final : public KVIterator {
 public:
  explicit MergeIter(std::vector<std::unique_ptr<Iter>> children)
      : children_(std::move(children)) {}

  bool Valid() const override { return current_ != nullptr; }

  void SeekToFirst() override {
    for (auto& c : children_) c->SeekToFirst();
    PickSmallest();
  }
  void SeekToLast() override {
    for (auto& c : children_) c->SeekToLast();
    PickLargest();
  }
  void Seek(std::string_view target) override {
    for (auto& c : children_) c->Seek(target);
    PickSmallest();
  }
  void SeekForPrev(std::string_view target) override {
    for (auto& c : children_) c->SeekForPrev(target);
    PickLargest();
  }

  void Next() override {
    if (current_ == nullptr) return;
    if (!forward_) {
      // The others rest before key(): move each to its first entry after it.
      const std::string key(current_->key());
      for (auto& c : children_) {
        if (c.get() != current_) c->Seek(key);
      }
    }
    current_->Next();
    PickSmallest();
  }

  void Prev() override {
    if (current_ == nullptr) return;
    if (forward_) {
      // The others rest after key(): move each to its last entry before it.
      const std::string key(current_->key());
      for (auto& c : children_) {
        if (c.get() != current_) c->SeekForPrev(key);
      }
    }
    current_->Prev();
    PickLargest();
  }

  std::string_view key() const override { return current_->key(); }
  std::string_view value() const override { return current_->value(); }
  Status status() const override { return Status::OK(); }

 private:
  void PickSmallest() {
    forward_ = true;
    current_ = nullptr;
    for (auto& c : children_) {
      if (c->Valid() && (current_ == nullptr || c->key() < current_->key())) current_ = c.get();
    }
  }
  void PickLargest() {
    forward_ = false;
    current_ = nullptr;
    for (auto& c : children_) {
      if (c->Valid() && (current_ == nullptr || c->key() > current_->key())) current_ = c.get();
    }
  }

  const std::vector<std::unique_ptr<Iter>> children_;
  Iter* current_ = nullptr;
  bool forward_ = true;
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
  const std::vector<size_t> parts = PartitionsOf(options.lower_bound, options.upper_bound);
  if (parts.size() == 1) return std::make_unique<Iter>(&parts_[parts[0]], std::move(snap), options);
  std::vector<std::unique_ptr<Iter>> children;
  for (size_t p : parts) children.push_back(std::make_unique<Iter>(&parts_[p], snap, options));
  return std::make_unique<MergeIter>(std::move(children));
}

uint64_t MemoryStore::PartitionSize(size_t p, std::string_view begin, std::string_view end) {
  Partition& part = parts_[p];
  // The partition's live total, and a snapshot that sees exactly it: while
  // its lock is held no batch of it is half applied or unpublished.
  std::shared_ptr<const Snapshot> snapshot;
  uint64_t total;
  {
    SharedLockGuard l(&part.lock);
    snapshot = std::make_shared<Snapshot>(this, AcquireSnapshotSeq());
    total = part.live_bytes;
  }
  // The range's bytes are its own sum or the total less the rest's sum:
  // walk both sides in step and stop at whichever ends first, so a range
  // that holds most of the partition (one big database, say) costs only
  // the keys outside it.
  KVIteratorOptions o;
  o.lower_bound = std::string(begin);
  o.upper_bound = std::string(end);
  Iter inside(&part, snapshot, o);
  Iter outside(&part, snapshot, KVIteratorOptions());
  auto skip_range = [&] {
    if (outside.Valid() && outside.key() >= begin && (end.empty() || outside.key() < end)) {
      if (end.empty()) {
        outside.SeekToLast();
        outside.Next();  // past the last key: the range runs to the end
      } else {
        outside.Seek(end);
      }
    }
  };
  uint64_t in_bytes = 0, out_bytes = 0;
  inside.SeekToFirst();
  outside.SeekToFirst();
  skip_range();
  for (;;) {
    if (!inside.Valid()) return in_bytes;
    if (!outside.Valid()) return total - out_bytes;
    in_bytes += inside.key().size() + inside.value_size();
    inside.Next();
    out_bytes += outside.key().size() + outside.value_size();
    outside.Next();
    skip_range();
  }
}

std::unique_ptr<KVStore> NewMemoryStore() { return std::make_unique<MemoryStore>(); }

}  // namespace settee
