// IdGaps: see id_gaps.h.
#include "storage/id_gaps.h"

#include <algorithm>

namespace settee {

bool IdGaps::Contains(std::string_view id) {
  for (Gap& g : gaps_) {
    if (g.after < id && id < g.before) {
      g.used = ++clock_;
      budget_ = std::min(budget_ + 1, kMaxBudget);
      return true;
    }
  }
  return false;
}

void IdGaps::Created(std::string_view id) {
  for (Gap& g : gaps_) {
    if (g.after < id && id < g.before) {
      // The part below `id` stays empty too, but writers' runs ascend.
      g.after.assign(id);
      return;  // gaps do not overlap (Add merges them)
    }
  }
}

void IdGaps::Add(std::string_view after, std::string_view before) {
  if (!(after < before)) return;
  // Overlapping gaps merge into one (their union is empty of ids too), so
  // that Created has one gap to cut.
  std::string lo(after), hi(before);
  for (size_t i = 0; i < gaps_.size();) {
    const Gap& g = gaps_[i];
    if (g.after < hi && lo < g.before) {
      lo = std::min(lo, g.after);
      hi = std::max(hi, g.before);
      gaps_.erase(gaps_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (gaps_.size() >= kMaxGaps) {
    gaps_.erase(std::min_element(gaps_.begin(), gaps_.end(),
                                 [](const Gap& a, const Gap& b) { return a.used < b.used; }));
  }
  gaps_.push_back(Gap{std::move(lo), std::move(hi), ++clock_});
}

bool IdGaps::ShouldSeek() {
  if (budget_ > 0) {
    --budget_;
    return true;
  }
  if (++since_probe_ >= kProbeInterval) {
    since_probe_ = 0;
    return true;
  }
  return false;
}

}  // namespace settee
