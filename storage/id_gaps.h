// IdGaps: a few ranges of document ids a database knows hold no document,
// so that a write of a new document there needs no lookup.
//
// A write of a document must know whether its id exists. Ids past the
// largest stored one are new (DatabaseImpl's largest_doc_id_); every other
// id costs a store read, on LevelDB a Get that takes the DB's mutex twice,
// beside the writer's own Write: readers of the database contend with it.
// Several writers that each write ascending ids (a per-device or per-client
// prefix with a counter or a timestamp: "t0_00000041", "t1_00000042") put
// all but the largest of those prefixes below the largest id, so each of
// their writes read the store to learn that a document did not exist.
//
// A gap (after, before) says no document id lies strictly between the two.
// The writer learns one from a seek (the first id after the one it writes)
// instead of a Get; while ids keep falling into the gap, they are new with
// no read at all, and each one written moves the gap's lower end up to it.
// Seeks cost about a Get each, and pay off only for ids that come in runs:
// they are spent from a budget that hits refill, so scattered ids (random
// uuids) soon go back to plain Gets, with a probe now and then.
//
// The invariant the database keeps: every document it creates is reported
// (Created) before any later write consults Contains, so no gap ever holds
// an existing id. Documents are never removed, so a gap never goes stale
// the other way.
//
// Thread safety: none; the database uses it under its writer lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace settee {

class IdGaps {
 public:
  // At most this many gaps (one per writer with a run of ids, in practice);
  // a new one replaces the least recently used.
  static constexpr size_t kMaxGaps = 8;

  // True if `id` lies strictly inside a known gap (so no document has it);
  // counts as a hit for the seek budget.
  bool Contains(std::string_view id);
  // A document `id` now exists (or is being written): a gap holding it
  // keeps only its part above `id`.
  void Created(std::string_view id);
  // No document id lies strictly between `after` and `before` (after <
  // before).
  void Add(std::string_view after, std::string_view before);

  // Whether a lookup of an id outside every gap should seek (learning a
  // gap) rather than Get: while the budget lasts, and then once every
  // kProbeInterval lookups.
  bool ShouldSeek();

  size_t size() const { return gaps_.size(); }

 private:
  struct Gap {
    std::string after;
    std::string before;
    uint64_t used;  // the clock value of its last hit or creation
  };
  static constexpr int kInitialBudget = 2;
  static constexpr int kMaxBudget = 16;
  static constexpr uint32_t kProbeInterval = 256;

  std::vector<Gap> gaps_;
  uint64_t clock_ = 0;
  int budget_ = kInitialBudget;
  uint32_t since_probe_ = 0;
};

}  // namespace settee
