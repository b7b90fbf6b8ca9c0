// RetainingPageAllocator (js/v8_page_allocator.h): a heap page V8 made
// read-write and then inaccessible (its page pool's uncommit) stays
// committed and is read-write again for free; everything else reaches the
// wrapped allocator as asked.
#include "js/v8_page_allocator.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace settee::js {
namespace {

constexpr size_t kPage = 256 * 1024;

// Records the calls that reach it; hands out made-up addresses.
class FakePageAllocator final : public v8::PageAllocator {
 public:
  struct Call {
    std::string what;
    uintptr_t address;
    size_t length;
    int permission;
  };
  std::vector<Call> calls;

  size_t AllocatePageSize() override { return kPage; }
  size_t CommitPageSize() override { return 4096; }
  void SetRandomMmapSeed(int64_t) override {}
  void* GetRandomMmapAddr() override { return nullptr; }
  void* AllocatePages(void* address, size_t length, size_t, Permission p) override {
    calls.push_back({"allocate", reinterpret_cast<uintptr_t>(address), length, p});
    return address;
  }
  bool FreePages(void* address, size_t length) override {
    calls.push_back({"free", reinterpret_cast<uintptr_t>(address), length, -1});
    return true;
  }
  bool ReleasePages(void* address, size_t length, size_t new_length) override {
    calls.push_back({"release", reinterpret_cast<uintptr_t>(address), length - new_length, -1});
    return true;
  }
  bool SetPermissions(void* address, size_t length, Permission p) override {
    calls.push_back({"permissions", reinterpret_cast<uintptr_t>(address), length, p});
    return !fail_permissions;
  }
  bool DiscardSystemPages(void* address, size_t size) override {
    calls.push_back({"discard", reinterpret_cast<uintptr_t>(address), size, -1});
    return true;
  }
  bool DecommitPages(void* address, size_t size) override {
    calls.push_back({"decommit", reinterpret_cast<uintptr_t>(address), size, -1});
    return true;
  }
  bool fail_permissions = false;
};

void* At(uintptr_t a) { return reinterpret_cast<void*>(a); }

class RetainingPageAllocatorTest : public ::testing::Test {
 protected:
  FakePageAllocator base_;
  RetainingPageAllocator pages_{&base_, kPage};
};

TEST_F(RetainingPageAllocatorTest, PoolUncommitAndRecommitOfAPageCostNothing) {
  const uintptr_t a = 16 * kPage;
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  ASSERT_EQ(base_.calls.size(), 1u);
  // Uncommit: not forwarded, the page is retained.
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  EXPECT_EQ(base_.calls.size(), 1u);
  EXPECT_EQ(pages_.retained_pages(), 1u);
  // Commit again: still read-write, nothing to do.
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  EXPECT_EQ(base_.calls.size(), 1u);
  EXPECT_EQ(pages_.retained_pages(), 0u);
  // And the cycle repeats.
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  EXPECT_EQ(base_.calls.size(), 1u);
}

TEST_F(RetainingPageAllocatorTest, MakingAReadWritePageReadWriteCostsNothing) {
  const uintptr_t a = 8 * kPage;
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  EXPECT_EQ(base_.calls.size(), 1u);
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

TEST_F(RetainingPageAllocatorTest, EverythingElseIsForwarded) {
  const uintptr_t a = 32 * kPage;
  // Inaccessible without having been read-write here (a reservation, a guard).
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  // Other sizes, read-write or not.
  ASSERT_TRUE(pages_.SetPermissions(At(a + kPage), 2 * kPage, v8::PageAllocator::kReadWrite));
  ASSERT_TRUE(pages_.SetPermissions(At(a + kPage), 2 * kPage, v8::PageAllocator::kNoAccess));
  // Executable pages, even of the page size.
  ASSERT_TRUE(pages_.SetPermissions(At(a + 4 * kPage), kPage, v8::PageAllocator::kReadWriteExecute));
  ASSERT_TRUE(pages_.SetPermissions(At(a + 4 * kPage), kPage, v8::PageAllocator::kNoAccess));
  ASSERT_TRUE(pages_.DiscardSystemPages(At(a), 4096));
  ASSERT_TRUE(pages_.DecommitPages(At(a), kPage));
  EXPECT_EQ(base_.calls.size(), 7u);
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

TEST_F(RetainingPageAllocatorTest, AReadWritePageMadeExecutableIsNoLongerRetained) {
  const uintptr_t a = 48 * kPage;
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadExecute));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  EXPECT_EQ(base_.calls.size(), 3u);
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

TEST_F(RetainingPageAllocatorTest, FreedPagesAreForgotten) {
  const uintptr_t a = 64 * kPage;
  for (uintptr_t p = a; p < a + 4 * kPage; p += kPage) {
    ASSERT_TRUE(pages_.SetPermissions(At(p), kPage, v8::PageAllocator::kReadWrite));
    ASSERT_TRUE(pages_.SetPermissions(At(p), kPage, v8::PageAllocator::kNoAccess));
  }
  EXPECT_EQ(pages_.retained_pages(), 4u);
  // V8 releases pooled pages: they are unmapped, whatever they were.
  ASSERT_TRUE(pages_.FreePages(At(a), kPage));
  EXPECT_EQ(pages_.retained_pages(), 3u);
  // The tail of a region given back.
  ASSERT_TRUE(pages_.ReleasePages(At(a + kPage), 3 * kPage, kPage));
  EXPECT_EQ(pages_.retained_pages(), 1u);
  const size_t forwarded = base_.calls.size();
  // A new mapping at a freed address is new: its first commit and its
  // uncommit-without-commit go to the base.
  ASSERT_TRUE(pages_.SetPermissions(At(a + 3 * kPage), kPage, v8::PageAllocator::kNoAccess));
  EXPECT_EQ(base_.calls.size(), forwarded + 1);
  ASSERT_TRUE(pages_.SetPermissions(At(a + 2 * kPage), kPage, v8::PageAllocator::kReadWrite));
  EXPECT_EQ(base_.calls.size(), forwarded + 2);
  // The one still retained (a + kPage) comes back for free.
  ASSERT_TRUE(pages_.SetPermissions(At(a + kPage), kPage, v8::PageAllocator::kReadWrite));
  EXPECT_EQ(base_.calls.size(), forwarded + 2);
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

TEST_F(RetainingPageAllocatorTest, AFreeInsideAPageForgetsIt) {
  const uintptr_t a = 80 * kPage;
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  ASSERT_TRUE(pages_.FreePages(At(a + 4096), 4096));
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

TEST_F(RetainingPageAllocatorTest, AFailedCommitIsNotRemembered) {
  const uintptr_t a = 96 * kPage;
  base_.fail_permissions = true;
  EXPECT_FALSE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kReadWrite));
  base_.fail_permissions = false;
  // Not known read-write: the uncommit is forwarded.
  ASSERT_TRUE(pages_.SetPermissions(At(a), kPage, v8::PageAllocator::kNoAccess));
  EXPECT_EQ(base_.calls.size(), 2u);
  EXPECT_EQ(pages_.retained_pages(), 0u);
}

}  // namespace
}  // namespace settee::js
