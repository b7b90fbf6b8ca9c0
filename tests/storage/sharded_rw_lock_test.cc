// Tests of ShardedRWLock: readers and writers exclude each other, readers
// share, a writer that holds only LockWriter() lets readers in, and readers
// whose slots register while writers write are excluded all the same.
#include "storage/sharded_rw_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace settee {
namespace {

using namespace std::chrono_literals;

// Writers keep two plain (non-atomic) counters equal only outside their
// section; a reader that ever sees them differ was let in mid-write. Plain
// fields so that ThreadSanitizer checks the lock's ordering too.
TEST(ShardedRWLockTest, ReadersNeverSeeAHalfDoneWrite) {
  ShardedRWLock lock;
  uint64_t a = 0, b = 0;
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<int> readers_reading{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      bool counted = false;
      while (!stop.load(std::memory_order_relaxed)) {
        {
          SharedLockGuard g(&lock);
          if (a != b) torn.fetch_add(1);
          reads.fetch_add(1, std::memory_order_relaxed);
        }
        if (!counted) {
          counted = true;
          readers_reading.fetch_add(1);
        }
      }
    });
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, t] {
      // Writers start once every reader reads: on a loaded machine the
      // writers could otherwise finish before a reader was ever scheduled.
      while (readers_reading.load() < 3) std::this_thread::yield();
      for (int i = 0; i < 20000; ++i) {
        if ((i + t) % 2 == 0) {
          ExclusiveLockGuard g(&lock);
          ++a;
          ++b;
        } else {
          // The two-step form: readers may be inside until Exclude().
          lock.LockWriter();
          const uint64_t next = a + 1;  // a read while readers read too
          lock.Exclude();
          a = next;
          b = next;
          lock.Unlock();
        }
      }
    });
  }
  for (auto& w : writers) w.join();
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a, 40000u);  // writers excluded each other too
  EXPECT_EQ(b, 40000u);
  EXPECT_GT(reads.load(), 0u);
}

TEST(ShardedRWLockTest, ReadersShareTheLock) {
  ShardedRWLock lock;
  SharedLockGuard mine(&lock);
  std::atomic<bool> in{false};
  std::thread other([&] {
    SharedLockGuard g(&lock);
    in = true;
  });
  other.join();  // would hang if readers excluded each other
  EXPECT_TRUE(in.load());
}

// Runs `take` (taking the lock) on a thread of its own and checks that it
// has not got through 20 ms later, while the lock is held against it; then
// `release` lets it through, and it must have.
template <class Take, class Release>
void ExpectWaitsUntil(Take take, Release release) {
  std::atomic<bool> through{false};
  std::thread taker([&] {
    take();
    through = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(through.load());
  release();
  taker.join();
  EXPECT_TRUE(through.load());
}

TEST(ShardedRWLockTest, LockWriterAdmitsReadersAndExcludeWaitsForThem) {
  ShardedRWLock lock;
  lock.LockWriter();
  // A reader gets in while the writer only holds LockWriter().
  std::atomic<bool> reader_in{false}, release{false};
  std::thread reader([&] {
    SharedLockGuard g(&lock);
    reader_in = true;
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  while (!reader_in.load()) std::this_thread::sleep_for(1ms);
  // Exclude() waits for that reader to leave.
  ExpectWaitsUntil([&] { lock.Exclude(); },
                   [&] {
                     release = true;
                     reader.join();
                   });
  // Now a new reader waits for Unlock().
  ExpectWaitsUntil([&] { SharedLockGuard g(&lock); }, [&] { lock.Unlock(); });
}

// A writer flags only the slots readers have registered. A reader on a
// slot never used before registers while a writer is inside: it must wait
// for that writer (which did not flag its slot), and the next writer must
// wait for it.
TEST(ShardedRWLockTest, AReaderOnANewSlotWaitsForAWriterInside) {
  ShardedRWLock lock;
  lock.Lock();  // no reader has registered: nothing flagged
  std::atomic<bool> reader_in{false}, release{false};
  std::thread reader([&] {  // a new thread: a slot this lock has not seen
    SharedLockGuard g(&lock);
    reader_in = true;
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(reader_in.load());
  lock.Unlock();
  while (!reader_in.load()) std::this_thread::sleep_for(1ms);
  // Registered now: a writer's Exclude() waits for it.
  ExpectWaitsUntil([&] { ExclusiveLockGuard g(&lock); },
                   [&] {
                     release = true;
                     reader.join();
                   });
}

// Readers that each run on a fresh thread (so most register their slot on
// their first read) while writers write: none sees a half-done write.
TEST(ShardedRWLockTest, ReadersRegisteringDuringWritesNeverSeeAHalfDoneWrite) {
  ShardedRWLock lock;
  uint64_t a = 0, b = 0;
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        ExclusiveLockGuard g(&lock);
        ++a;
        ++b;
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> readers;
    for (int r = 0; r < 4; ++r) {
      readers.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          SharedLockGuard g(&lock);
          if (a != b) torn.fetch_add(1);
        }
      });
    }
    for (auto& r : readers) r.join();
  }
  stop = true;
  for (auto& w : writers) w.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace settee
