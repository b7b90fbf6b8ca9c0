// WritePipeline: see write_pipeline.h.
#include "storage/write_pipeline.h"

#include <algorithm>
#include <functional>

#include "storage/spin_wait.h"

namespace settee {

uint64_t WritePipeline::HashKey(std::string_view key) { return std::hash<std::string_view>()(key); }

uint64_t WritePipeline::Enqueue(const KVWriteBatch& batch) {
  Prune();
  const uint64_t ticket = next_ticket_++;
  InFlight entry{ticket, {}};
  if (!spare_.empty()) {  // a finished entry's storage: no allocation per batch
    entry.key_hashes = std::move(spare_.back());
    spare_.pop_back();
    entry.key_hashes.clear();
  }
  entry.key_hashes.reserve(batch.ops().size());
  for (const KVWriteBatch::Op& op : batch.ops()) {
    if (!remembered_ || remembered_(op.key)) entry.key_hashes.push_back(HashKey(op.key));
  }
  std::sort(entry.key_hashes.begin(), entry.key_hashes.end());
  in_flight_.push_back(std::move(entry));
  return ticket;
}

void WritePipeline::Prune() {
  if (in_flight_.empty()) return;
  const uint64_t finished = finished_.load(std::memory_order_acquire);
  auto live = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [&](const InFlight& f) { return f.ticket >= finished; });
  for (auto f = in_flight_.begin(); f != live; ++f) {
    // Small ones only: a bulk batch's would stay allocated per database.
    if (spare_.size() < kMaxSpare && f->key_hashes.capacity() <= kMaxSpareKeys) {
      spare_.push_back(std::move(f->key_hashes));
    }
  }
  in_flight_.erase(in_flight_.begin(), live);
}

bool WritePipeline::Idle() {
  Prune();
  return in_flight_.empty();
}

void WritePipeline::BeforeRead(std::string_view key) {
  if (Idle()) return;
  if (remembered_ && !remembered_(key)) return Drain();  // not remembered: wait for all
  const uint64_t h = HashKey(key);
  // The newest batch that writes the key: waiting for it waits for the
  // older ones too.
  for (auto f = in_flight_.rbegin(); f != in_flight_.rend(); ++f) {
    if (std::binary_search(f->key_hashes.begin(), f->key_hashes.end(), h)) {
      WaitFinished(f->ticket, false);
      Prune();
      return;
    }
  }
}

void WritePipeline::Drain() {
  if (Idle()) return;
  WaitFinished(in_flight_.back().ticket, false);
  Prune();
}

bool WritePipeline::TakeFailure() {
  if (!broken_.load(std::memory_order_acquire)) return false;
  Drain();
  broken_.store(false, std::memory_order_relaxed);
  return true;
}

bool WritePipeline::WaitTurn(uint64_t ticket, bool sleep_at_once) {
  if (ticket > 0) WaitFinished(ticket - 1, sleep_at_once);
  return !broken_.load(std::memory_order_acquire);
}

void WritePipeline::Finish(uint64_t ticket, bool ok) {
  if (!ok) broken_.store(true, std::memory_order_release);
  finished_.store(ticket + 1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    cv_.notify_all();
  }
}

void WritePipeline::WaitFinished(uint64_t ticket, bool sleep_at_once) {
  // seq_cst: a sleeper's check after registering pairs with Finish's store
  // and its check for sleepers (see sleepers_).
  auto done = [&] { return finished_.load(std::memory_order_seq_cst) > ticket; };
  if (done()) return;
  if (!sleep_at_once) {
    // Spin, then sleep: no yield phase. The awaited batch's thread may
    // itself be waiting (for the batch before it, or for a core): a yield
    // on a busy machine hands the core to any runnable process for up to a
    // scheduler tick, and two writers waiting on each other in turn would
    // then lose a tick per write. A sleeper is woken by Finish at once.
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 1;; ++i) {
      CpuRelax();
      if (done()) return;
      if ((i & 31) == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
    }
  }
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(sleep_mu_);
    cv_.wait(lock, done);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace settee
