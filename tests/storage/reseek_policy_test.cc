// Tests of ReseekPolicy (storage/reseek_policy.h) on a clock the test moves.
#include "storage/reseek_policy.h"

#include <gtest/gtest.h>

namespace settee {
namespace {

int64_t fake_now = 0;
int64_t FakeNow() { return fake_now; }

// Takes `n` moves, each costing `ns` and returning `bytes`; returns how many
// of them the policy made seeks.
int Moves(ReseekPolicy& p, int n, int64_t ns, size_t bytes = 100) {
  int seeks = 0;
  for (int i = 0; i < n; ++i) {
    p.BeforeMove();
    if (p.Seeking()) ++seeks;
    fake_now += ns;
    p.AfterMove(bytes);
  }
  return seeks;
}

TEST(ReseekPolicyTest, FastStepsNeverSeek) {
  ReseekPolicy p(nullptr, FakeNow);
  EXPECT_EQ(Moves(p, 10000, 200), 0);
}

TEST(ReseekPolicyTest, ASlowWindowSeeksUntilTheProbe) {
  ReseekPolicy p(nullptr, FakeNow);
  EXPECT_EQ(Moves(p, ReseekPolicy::kWindow, 10'000), 0);  // the window that measured it
  EXPECT_TRUE(p.Seeking());
  EXPECT_EQ(Moves(p, ReseekPolicy::kFirstProbe, 1'000), ReseekPolicy::kFirstProbe);
  // The probe: it steps again, and fast steps keep it stepping.
  EXPECT_FALSE(p.Seeking());
  EXPECT_EQ(Moves(p, 1000, 200), 0);
}

TEST(ReseekPolicyTest, ProbesBackOffWhileSteppingStaysSlow) {
  ReseekPolicy p(nullptr, FakeNow);
  Moves(p, ReseekPolicy::kWindow, 10'000);
  int seeks = Moves(p, ReseekPolicy::kFirstProbe, 1'000);
  EXPECT_EQ(seeks, ReseekPolicy::kFirstProbe);
  // The probe window is slow again: twice as many seeks before the next.
  EXPECT_EQ(Moves(p, ReseekPolicy::kWindow, 10'000), 0);
  EXPECT_EQ(Moves(p, 2 * ReseekPolicy::kFirstProbe, 1'000), 2 * ReseekPolicy::kFirstProbe);
  EXPECT_FALSE(p.Seeking());
  // A long slow scan spends at most one window in kMaxProbe seeks stepping.
  int total = 0, steps = 0;
  for (int i = 0; i < 100; ++i) {
    steps += ReseekPolicy::kWindow - Moves(p, ReseekPolicy::kWindow, 10'000);
    while (p.Seeking()) total += Moves(p, 1, 1'000);
  }
  EXPECT_EQ(steps, 100 * ReseekPolicy::kWindow);
  EXPECT_GE(total, 90 * ReseekPolicy::kMaxProbe);
}

TEST(ReseekPolicyTest, LargeValuesAreNotTakenForSkipping) {
  ReseekPolicy p(nullptr, FakeNow);
  // 64 KiB values at 10 us a step: reading them, not skipping versions.
  EXPECT_EQ(Moves(p, 1000, 10'000, 64 << 10), 0);
}

TEST(ReseekPolicyTest, SeeksAndBackwardMovesStartANewWindow) {
  ReseekPolicy p(nullptr, FakeNow);
  Moves(p, ReseekPolicy::kWindow - 1, 200);
  fake_now += 1'000'000;  // a slow Seek() between steps is not a step
  p.Reset();
  EXPECT_EQ(Moves(p, ReseekPolicy::kWindow * 4, 200), 0);
  EXPECT_FALSE(p.Seeking());
}

TEST(ReseekPolicyTest, ANewPolicyStartsFromTheSharedVerdict) {
  std::atomic<int> shared{0};
  {
    ReseekPolicy first(&shared, FakeNow);
    EXPECT_FALSE(first.Seeking());
    Moves(first, ReseekPolicy::kWindow, 10'000);
    Moves(first, ReseekPolicy::kFirstProbe, 1'000);
    Moves(first, ReseekPolicy::kWindow, 10'000);  // slow again: 2 x kFirstProbe seeks next
    EXPECT_EQ(shared.load(), 2 * ReseekPolicy::kFirstProbe);
  }
  ReseekPolicy second(&shared, FakeNow);
  EXPECT_TRUE(second.Seeking());
  EXPECT_EQ(Moves(second, 2 * ReseekPolicy::kFirstProbe, 1'000), 2 * ReseekPolicy::kFirstProbe);
  // Its probe finds stepping fast again: so will the next policy.
  EXPECT_EQ(Moves(second, ReseekPolicy::kWindow, 200), 0);
  EXPECT_EQ(shared.load(), 0);
  ReseekPolicy third(&shared, FakeNow);
  EXPECT_FALSE(third.Seeking());
}

}  // namespace
}  // namespace settee
