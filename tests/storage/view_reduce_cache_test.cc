// ReduceCache / ReduceCaches (storage/view_reduce_cache.h): which blocks'
// summaries a query may use, and the per-database set of caches.
#include "storage/view_reduce_cache.h"

#include <gtest/gtest.h>

namespace settee::views {
namespace {

BlockSummary Rows(uint64_t n) {
  BlockSummary s;
  s.rows = n;
  s.value = std::to_string(n);
  return s;
}

TEST(ReduceCacheTest, ASummaryServesSnapshotsUntilItsBlockChanges) {
  ReduceCache cache("P");
  cache.Store("P", 5, {{"P", Rows(3)}}, "");
  EXPECT_FALSE(cache.Find("Pa", 4).summary.has_value());  // older than the summary
  ASSERT_TRUE(cache.Find("Pa", 5).summary.has_value());
  EXPECT_EQ(cache.Find("Pa", 9).summary->rows, 3u);
  cache.NoteChange("Pb", 7);
  EXPECT_TRUE(cache.Find("Pa", 6).summary.has_value());    // before the change
  EXPECT_FALSE(cache.Find("Pa", 7).summary.has_value());   // at and after it
}

TEST(ReduceCachesTest, DropForgetsEveryCacheOfOneIndexOnly) {
  ReduceCaches caches;
  auto a_sum = caches.Get("Aview1", "_sum");
  auto a_count = caches.Get("Aview2", "_count");
  auto b_sum = caches.Get("Bview1", "_sum");
  EXPECT_EQ(caches.Get("Aview1", "_sum"), a_sum);  // one cache per (rows, reduce)
  caches.Drop("A");
  EXPECT_FALSE(caches.Any("A"));
  EXPECT_EQ(caches.Find("Aview1", "_sum"), nullptr);
  EXPECT_EQ(caches.Find("Aview2", "_count"), nullptr);
  EXPECT_EQ(caches.Find("Bview1", "_sum"), b_sum);
  EXPECT_NE(caches.Get("Aview1", "_sum"), a_sum);  // a new index starts empty
}

}  // namespace
}  // namespace settee::views
