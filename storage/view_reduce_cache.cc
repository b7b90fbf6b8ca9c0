#include "storage/view_reduce_cache.h"

#include "storage/keys.h"

namespace settee::views {

ReduceCache::ReduceCache(std::string prefix)
    : prefix_(std::move(prefix)), end_(keys::PrefixEnd(prefix_)) {
  blocks_.emplace(prefix_, Block());
}

std::map<std::string, ReduceCache::Block>::iterator ReduceCache::BlockOf(std::string_view key) {
  auto it = blocks_.upper_bound(std::string(key));
  // The first block starts at the prefix, which no row key precedes.
  if (it != blocks_.begin()) --it;
  return it;
}

ReduceCache::Lookup ReduceCache::LookupOf(std::map<std::string, Block>::iterator it, uint64_t seq) {
  Lookup out;
  out.start = it->first;
  auto next = std::next(it);
  out.end = next == blocks_.end() ? end_ : next->first;
  const Block& b = it->second;
  // Valid from computed_at until the next change after it.
  const bool changed_since = b.last_change > b.computed_at;
  if (b.valid && b.computed_at <= seq && (!changed_since || seq < b.last_change)) {
    out.summary = b.summary;
  }
  return out;
}

ReduceCache::Lookup ReduceCache::Find(std::string_view key, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  return LookupOf(BlockOf(key), seq);
}

ReduceCache::Lookup ReduceCache::FindBefore(std::string_view end, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.lower_bound(std::string(end));
  // The first block starts at the prefix, below every end.
  if (it != blocks_.begin()) --it;
  return LookupOf(it, seq);
}

void ReduceCache::Store(const std::string& start, uint64_t seq,
                        std::vector<std::pair<std::string, BlockSummary>> parts, const std::string& end) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(start);
  if (it == blocks_.end() || parts.empty() || parts.front().first < start) return;
  const uint64_t last_change = it->second.last_change;
  // A change after the snapshot: what was read is already stale.
  if (last_change > seq) return;
  auto next = std::next(it);
  const std::string block_end = next == blocks_.end() ? end_ : next->first;
  if (parts.front().first >= block_end || (!end.empty() && (end > block_end || end <= parts.front().first))) return;
  // The rest of the block after the parts, and its head before them: rows
  // not read, summaries unknown.
  if (!end.empty() && end < block_end) {
    Block& rest = blocks_[end];
    rest.valid = false;
    rest.last_change = last_change;
  }
  if (parts.front().first != start) it->second.valid = false;
  for (auto& [key, summary] : parts) {
    // Parts must lie inside the block (a concurrent cut may have added a
    // boundary; then only the parts before it are ours).
    if (next != blocks_.end() && key >= next->first) break;
    Block& b = blocks_[key];
    b.summary = std::move(summary);
    b.valid = true;
    b.computed_at = seq;
    b.last_change = last_change;
  }
}

void ReduceCache::NoteChange(std::string_view key, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  Block& b = BlockOf(key)->second;
  if (seq > b.last_change) b.last_change = seq;
}

std::shared_ptr<ReduceCache> ReduceCaches::Get(const std::string& prefix, const std::string& reduce) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = caches_[{prefix, reduce}];
  if (!slot) slot = std::make_shared<ReduceCache>(prefix);
  return slot;
}

std::shared_ptr<ReduceCache> ReduceCaches::Find(const std::string& prefix, const std::string& reduce) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = caches_.find({prefix, reduce});
  return it == caches_.end() ? nullptr : it->second;
}

void ReduceCaches::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  caches_.clear();
}

std::pair<ReduceCaches::Map::iterator, ReduceCaches::Map::iterator> ReduceCaches::RangeOf(const std::string& base) {
  auto first = caches_.lower_bound({base, std::string()});
  auto last = first;
  while (last != caches_.end() && last->first.first.compare(0, base.size(), base) == 0) ++last;
  return {first, last};
}

void ReduceCaches::Drop(const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [first, last] = RangeOf(base);
  caches_.erase(first, last);
}

bool ReduceCaches::Any(const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [first, last] = RangeOf(base);
  return first != last;
}

void ReduceCaches::NoteChanges(const std::string& base, const std::vector<std::string>& keys,
                               uint64_t seq) {
  std::vector<std::shared_ptr<ReduceCache>> found;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [first, last] = RangeOf(base);
    for (auto it = first; it != last; ++it) found.push_back(it->second);
  }
  for (const std::string& key : keys) {
    for (auto& cache : found) {
      if (key.compare(0, cache->prefix().size(), cache->prefix()) == 0) cache->NoteChange(key, seq);
    }
  }
}

}  // namespace settee::views
