// ReduceCache: a view's reductions (built-in or JavaScript) kept per block
// of its index rows, so that a reduce over a large range (or a group spanning many rows)
// combines one stored value per block instead of re-reducing every row.
// CouchDB keeps a reduction in every b-tree node; settee's index rows live
// in a flat ordered KV range, so the blocks are key ranges of it, cut as
// queries first scan them (kBlockRows rows each) and remembered in memory.
//
// Validity: an index update names every row key it writes or deletes
// (NoteChange, before its batch commits) with the index seq it moves to;
// the block holding the key is then stale for snapshots at or after that
// seq. A summary is stored with the index seq of the snapshot it was read
// from, and is used only by queries whose snapshot lies between that seq
// and the block's next change, so a query never mixes index states.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace settee::views {

// What a query needs of a block of rows.
struct BlockSummary {
  uint64_t rows = 0;
  std::string first_key, last_key;  // JSON keys of the first and last rows
  std::string value;                // the reduce's reduction of the rows (JSON)
};

class ReduceCache {
 public:
  // Rows per block when a scanned block is cut.
  static constexpr uint64_t kBlockRows = 64;

  // `prefix`: the view's row key prefix (every row key starts with it).
  explicit ReduceCache(std::string prefix);

  struct Lookup {
    std::string start;  // the block's first key (a row key or the prefix)
    std::string end;    // its end, exclusive (the next block's start, or
                        // the end of the view's key range)
    std::optional<BlockSummary> summary;  // when valid at the asked seq
  };
  // The block holding row key `key`, with its summary if it is valid for a
  // snapshot at index seq `seq`.
  Lookup Find(std::string_view key, uint64_t seq);
  // The block holding the keys just below `end` (a descending walk's next
  // block), likewise.
  Lookup FindBefore(std::string_view end, uint64_t seq);

  // After a scan of the block starting at `start` on a snapshot at index
  // seq `seq`: its rows from parts.front().first (`start`, or a row key in
  // the block) to `end` (empty: the block's end) as consecutive parts, each
  // given by its start key and summary. What the parts leave of the block
  // before and after them becomes blocks of unknown summary. Ignored when
  // the block changed after `seq` or no longer starts at `start`.
  void Store(const std::string& start, uint64_t seq,
             std::vector<std::pair<std::string, BlockSummary>> parts, const std::string& end = {});

  // Called by an index update about to move the index to `seq` and to
  // write or delete row key `key`.
  void NoteChange(std::string_view key, uint64_t seq);

  const std::string& prefix() const { return prefix_; }

 private:
  struct Block {
    BlockSummary summary;
    bool valid = false;
    uint64_t computed_at = 0;  // index seq the summary was read at
    uint64_t last_change = 0;  // the latest update that touched the block
  };
  std::map<std::string, Block>::iterator BlockOf(std::string_view key);  // REQUIRES mu_
  Lookup LookupOf(std::map<std::string, Block>::iterator it, uint64_t seq);  // REQUIRES mu_

  const std::string prefix_;
  const std::string end_;  // the end of the prefix's key range
  std::mutex mu_;
  std::map<std::string, Block> blocks_;  // by start key; GUARDED_BY(mu_)
};

// The ReduceCaches of one database's indexes (kept with the database, so
// they go with it). Only in memory: after a restart a reduce reads its rows
// once and leaves the blocks for the queries after it.
class ReduceCaches {
 public:
  // The cache of the view with row prefix `prefix` for the reduce named by
  // `reduce` (its source: "_sum", or a JavaScript function's text; views of
  // one map with different reduces share the rows, not the reductions).
  std::shared_ptr<ReduceCache> Get(const std::string& prefix, const std::string& reduce);
  // That cache if it exists, else nullptr.
  std::shared_ptr<ReduceCache> Find(const std::string& prefix, const std::string& reduce);
  // Drops every cache (a benchmark's cold runs).
  void Clear();
  // Forgets every cache of the index at `base` (an index deleted by
  // _view_cleanup: the same code indexed again must not find them).
  void Drop(const std::string& base);
  // True if some cache exists under index key base `base`.
  bool Any(const std::string& base);
  // ReduceCache::NoteChange for every cache of the index at `base`.
  void NoteChanges(const std::string& base, const std::vector<std::string>& keys, uint64_t seq);

 private:
  using Map = std::map<std::pair<std::string, std::string>, std::shared_ptr<ReduceCache>>;
  // The caches of the index at `base`. REQUIRES mu_
  std::pair<Map::iterator, Map::iterator> RangeOf(const std::string& base);

  std::mutex mu_;
  Map caches_;  // (prefix, reduce) -> cache; GUARDED_BY(mu_)
};

}  // namespace settee::views
