// MmapLogEnv (storage/leveldb_env.h): log files appended through a mapping
// hold exactly what was appended once closed (chunks mapped ahead by the
// mapper thread too), a zero tail while open, and a LevelDB left in that
// state (as a killed process leaves it) recovers every write; a writer
// whose chunks the mapper prepared takes no page faults.
#include "storage/leveldb_env.h"

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/options.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Bytes of every value 0-250 in turn, none zero, so a zero tail shows.
std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(1 + (i * 7 + seed) % 250);
  return s;
}

TEST(MmapLogFile, AppendsAcrossChunksAndClosesToTheBytesAppended) {
  const std::string dir = testing::FreshTempDir("mmap-log");
  std::filesystem::create_directories(dir);
  const std::string name = dir + "/000001.log";
  leveldb::WritableFile* raw = nullptr;
  // No append is large enough to be written directly.
  ASSERT_TRUE(NewMmapLogFile(name, PageSize(), PageSize() * 100, &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  std::string expected;
  // Pieces smaller than a chunk, one crossing several, one ending exactly
  // at a chunk's end.
  for (size_t n : {size_t{100}, PageSize() * 3 + 17, size_t{5}, PageSize() - 122}) {
    const std::string piece = Pattern(n, static_cast<int>(expected.size()));
    ASSERT_TRUE(file->Append(piece).ok());
    ASSERT_TRUE(file->Flush().ok());
    expected += piece;
  }
  ASSERT_EQ(0u, expected.size() % PageSize()) << "the last piece ends a chunk";
  const std::string tail = Pattern(33, 9);
  ASSERT_TRUE(file->Append(tail).ok());
  ASSERT_TRUE(file->Flush().ok());
  expected += tail;

  // Open: the data, then zeros to the end of the mapped chunk.
  const std::string open = ReadFile(name);
  ASSERT_EQ(0u, open.size() % PageSize());
  ASSERT_GE(open.size(), expected.size());
  EXPECT_EQ(expected, open.substr(0, expected.size()));
  EXPECT_EQ(std::string(open.size() - expected.size(), '\0'), open.substr(expected.size()));

  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(expected, ReadFile(name)) << "closed: exactly the bytes appended";
  EXPECT_FALSE(file->Append("x").ok()) << "no append after close";
  std::filesystem::remove_all(dir);
}

// Chunks after the first are mapped by the env's mapper thread while the
// writer appends: appends of every size, a Sync (after which chunks are
// mapped by the writer again) and a Close right after entering a new chunk
// (the one after it still being mapped ahead) leave exactly the bytes
// appended.
TEST(MmapLogFile, ChunksMappedAheadHoldExactlyTheBytesAppended) {
  const std::string dir = testing::FreshTempDir("mmap-log-ahead");
  std::filesystem::create_directories(dir);
  for (int closing_at_boundary = 0; closing_at_boundary < 2; ++closing_at_boundary) {
    const std::string name = dir + "/00000" + std::to_string(closing_at_boundary) + ".log";
    leveldb::WritableFile* raw = nullptr;
    ASSERT_TRUE(NewMmapLogFile(name, PageSize() * 4, PageSize() * 100, &raw).ok());
    std::unique_ptr<leveldb::WritableFile> file(raw);
    std::string expected;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 400; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const size_t n = 1 + x % (i % 50 == 0 ? PageSize() * 9 : 700);
      const std::string piece = Pattern(n, i);
      ASSERT_TRUE(file->Append(piece).ok());
      expected += piece;
      if (i == 300) {
        ASSERT_TRUE(file->Sync().ok());
      }
    }
    if (closing_at_boundary) {
      // Fill to the end of a chunk of 4 pages (the first is 1 page), then
      // one byte into the next.
      const size_t first = PageSize(), chunk = PageSize() * 4;
      const size_t to_end = (chunk - (expected.size() - first) % chunk) % chunk;
      const std::string piece = Pattern(to_end + 1, 7);
      ASSERT_TRUE(file->Append(piece).ok());
      expected += piece;
    }
    ASSERT_TRUE(file->Close().ok());
    EXPECT_EQ(expected, ReadFile(name)) << "closed: exactly the bytes appended";
  }
  std::filesystem::remove_all(dir);
}

long ThreadMinorFaults() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt;
}

// The point of mapping ahead: the writer's stores into a chunk the mapper
// had time to prepare take no page faults (the mapper made each page
// present and dirty; the shadow-page-table fault of a paravirtualized VM's
// first access, which no fault counter shows, its reads took).
TEST(MmapLogFile, AWriterGivenTimeTakesNoPageFaultsAfterTheFirstChunk) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer's shadow memory faults on the writer's stores too";
#endif
  const std::string dir = testing::FreshTempDir("mmap-log-faults");
  std::filesystem::create_directories(dir);
  const std::string name = dir + "/000001.log";
  constexpr size_t kChunkPages = 16;
  constexpr int kChunks = 8;
  leveldb::WritableFile* raw = nullptr;
  ASSERT_TRUE(NewMmapLogFile(name, PageSize() * kChunkPages, PageSize() * 2, &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  const std::string page = Pattern(PageSize(), 3);
  // Each append a page, flushed: below the direct size, so mapped.
  // A quarter into a chunk the writer asks for the next one; it then
  // pauses, giving the mapper time, before it writes the rest.
  auto append_pages = [&](size_t n) {
    for (size_t p = 0; p < n; ++p) ASSERT_TRUE(file->Append(page).ok() && file->Flush().ok());
  };
  // The first chunk (a quarter: 4 pages) the writer faults in itself.
  append_pages(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  append_pages(kChunkPages / 4 - 1);
  long writer_faults = 0;
  for (int c = 0; c < kChunks; ++c) {
    long before = ThreadMinorFaults();
    append_pages(kChunkPages / 4);
    writer_faults += ThreadMinorFaults() - before;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    before = ThreadMinorFaults();
    append_pages(kChunkPages - kChunkPages / 4);
    writer_faults += ThreadMinorFaults() - before;
  }
  const long pages = static_cast<long>(kChunks * kChunkPages);
  EXPECT_LT(writer_faults, pages / 4) << "of " << pages << " pages written";
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(static_cast<size_t>(pages + kChunkPages / 4) * PageSize(), ReadFile(name).size());
  std::filesystem::remove_all(dir);
}

// Large appends are written with pwritev, small ones through the mapping
// once flushed, a fragment's header with its payload: any mix, in chunks
// mapped ahead or not, with a Sync between, leaves exactly the bytes
// appended, and each flush leaves the file holding everything appended
// before it (what LevelDB acknowledges).
TEST(MmapLogFile, LargeAppendsWrittenDirectlyKeepTheFileTheBytesAppended) {
  const std::string dir = testing::FreshTempDir("mmap-log-direct");
  std::filesystem::create_directories(dir);
  for (int variant = 0; variant < 3; ++variant) {
    const std::string name = dir + "/00000" + std::to_string(variant) + ".log";
    leveldb::WritableFile* raw = nullptr;
    ASSERT_TRUE(NewMmapLogFile(name, PageSize() * 4, 2048, &raw).ok());
    std::unique_ptr<leveldb::WritableFile> file(raw);
    std::string expected;
    uint64_t x = 0x2545F4914F6CDD1DULL + static_cast<uint64_t>(variant);
    for (int i = 0; i < 600; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      // Runs of small records, runs of large ones (variant 1: alternating),
      // each a 7-byte header then a payload, as LevelDB's log writer. A
      // run of small ones is longer than the 8 KiB after a large append
      // that small ones are written directly too, so both routes are taken.
      const bool large = variant == 1 ? (i % 2 == 0) : ((i / 100) % 2 == 1);
      const size_t n = large ? 2048 + x % (PageSize() * 3) : 1 + x % 300;
      const std::string header = Pattern(7, i + 1);
      const std::string payload = Pattern(n, i);
      ASSERT_TRUE(file->Append(header).ok());
      ASSERT_TRUE(file->Append(payload).ok());
      ASSERT_TRUE(file->Flush().ok());
      expected += header;
      expected += payload;
      if (i % 97 == 0) {
        const std::string open = ReadFile(name);
        ASSERT_GE(open.size(), expected.size()) << i;
        ASSERT_EQ(expected, open.substr(0, expected.size())) << "flushed record " << i;
      }
      if (variant == 2 && i == 400) {
        ASSERT_TRUE(file->Sync().ok());
      }
    }
    // Small appends without a flush reach the file on Close.
    const std::string unflushed = Pattern(100, 5);
    ASSERT_TRUE(file->Append(unflushed).ok());
    expected += unflushed;
    ASSERT_TRUE(file->Close().ok());
    EXPECT_EQ(expected, ReadFile(name)) << "variant " << variant;
  }
  std::filesystem::remove_all(dir);
}

// A log of large records only never maps anything ahead, so the writer
// takes no page faults for it at all.
TEST(MmapLogFile, LargeRecordsTakeNoPageFaults) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer's shadow memory faults on the writer's stores too";
#endif
  const std::string dir = testing::FreshTempDir("mmap-log-direct-faults");
  std::filesystem::create_directories(dir);
  const std::string name = dir + "/000001.log";
  leveldb::WritableFile* raw = nullptr;
  ASSERT_TRUE(NewMmapLogFile(name, PageSize() * 16, PageSize(), &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  const std::string header = Pattern(7, 1), payload = Pattern(PageSize() * 8 - 7, 2);
  const long before = ThreadMinorFaults();
  constexpr int kRecords = 64;  // 2 MiB of log
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(file->Append(header).ok() && file->Append(payload).ok() && file->Flush().ok());
  }
  const long faults = ThreadMinorFaults() - before;
  EXPECT_LT(faults, kRecords * 8 / 16) << "of " << kRecords * 8 << " pages written";
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(kRecords * PageSize() * 8, ReadFile(name).size());
  std::filesystem::remove_all(dir);
}

TEST(MmapLogFile, RefusesAChunkThatIsNotWholePages) {
  leveldb::WritableFile* raw = nullptr;
  EXPECT_FALSE(NewMmapLogFile("/nonexistent/x.log", PageSize() + 1, PageSize(), &raw).ok());
  EXPECT_EQ(nullptr, raw);
  EXPECT_FALSE(NewMmapLogFile("/nonexistent/x.log", PageSize(), PageSize(), &raw).ok())
      << "no such directory";
  EXPECT_EQ(nullptr, raw);
}

// A copy of the directory of an open LevelDB is what a killed process
// leaves: its log not closed, the mapped tail zeros. The copy opens with
// every write (LevelDB's log reader skips the zero tail), and takes more.
TEST(MmapLogEnv, ALevelDBLeftOpenRecoversEveryWrite) {
  const std::string dir = testing::FreshTempDir("mmap-env");
  std::filesystem::create_directories(dir);
  const std::string live = dir + "/live", copy = dir + "/copy";
  leveldb::Options options;
  options.create_if_missing = true;
  options.env = MmapLogEnv();
  options.paranoid_checks = true;  // a corrupt log fails the open
  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(options, live, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  constexpr int kKeys = 3000;  // ~1 MiB of log: past the first chunk
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(db->Put({}, "k" + std::to_string(i), Pattern(300, i)).ok());
  }
  bool saw_zero_tail = false;
  for (const auto& entry : std::filesystem::directory_iterator(live)) {
    if (entry.path().extension() != ".log") continue;
    const std::string bytes = ReadFile(entry.path().string());
    saw_zero_tail = saw_zero_tail || (!bytes.empty() && bytes.back() == '\0');
  }
  EXPECT_TRUE(saw_zero_tail) << "the open log ends in its mapped zeros";
  std::filesystem::copy(live, copy);
  std::filesystem::remove(copy + "/LOCK");

  leveldb::DB* raw_copy = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, copy, &raw_copy);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<leveldb::DB> recovered(raw_copy);
  for (int i = 0; i < kKeys; ++i) {
    std::string value;
    ASSERT_TRUE(recovered->Get({}, "k" + std::to_string(i), &value).ok()) << i;
    ASSERT_EQ(Pattern(300, i), value) << i;
  }
  ASSERT_TRUE(recovered->Put({}, "after", "crash").ok());
  recovered.reset();
  ASSERT_TRUE(leveldb::DB::Open(options, copy, &raw_copy).ok());
  recovered.reset(raw_copy);
  std::string value;
  EXPECT_TRUE(recovered->Get({}, "after", &value).ok());
  EXPECT_TRUE(recovered->Get({}, "k0", &value).ok());
  recovered.reset();
  db.reset();
  std::filesystem::remove_all(dir);
}

// LevelDB's background thread is started by whichever thread schedules
// first and would carry that thread's name into profiles.
TEST(MmapLogEnv, BackgroundJobsRunOnAThreadNamedForLevelDB) {
  ASSERT_EQ(0, pthread_setname_np(pthread_self(), "some-writer"));
  std::promise<std::string> name;
  MmapLogEnv()->Schedule(
      [](void* p) {
        char buf[16] = {};
        pthread_getname_np(pthread_self(), buf, sizeof buf);
        static_cast<std::promise<std::string>*>(p)->set_value(buf);
      },
      &name);
  EXPECT_EQ(name.get_future().get(), kLevelDBBackgroundThreadName);
}

}  // namespace
}  // namespace settee
