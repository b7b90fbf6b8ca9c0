// MmapLogEnv: see leveldb_env.h.
#include "storage/leveldb_env.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "storage/spin_wait.h"

namespace settee {

namespace {

// Large enough that growing the file (fallocate and a new mapping, two
// system calls) is rare: a log holds about a memtable (4 MiB per database).
constexpr size_t kLogChunkBytes = 1u << 20;

leveldb::Status PosixError(const std::string& context, int err) {
  return leveldb::Status::IOError(context, std::strerror(err));
}

size_t PageBytes() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

// One mapped piece of a log file.
struct Chunk {
  char* base = nullptr;  // null: none
  size_t bytes = 0;
};

// Reserves the blocks of [offset, offset + bytes) of `fd` and maps them.
// Blocks are reserved, not just the size set: a store into a hole of a
// sparse file on a full disk is a SIGBUS that kills the process, where a
// failed reservation is an IOError LevelDB reports for the write.
leveldb::Status MapChunk(const std::string& fname, int fd, uint64_t offset, size_t bytes,
                         Chunk* chunk) {
  const int err = ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes));
  if (err != 0) return PosixError(fname, err);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) return PosixError(fname, errno);
  *chunk = {static_cast<char*>(p), bytes};
  return leveldb::Status::OK();
}

void UnmapChunk(Chunk* chunk) {
  if (chunk->base != nullptr) (void)::munmap(chunk->base, chunk->bytes);
  *chunk = {};
}

// Loads one byte in a way no compiler or sanitizer treats as a C++ access:
// the writer may be storing to that byte at the same moment, and the value
// is not used (the load only makes the processor's MMU walk the page).
inline void TouchForRead(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("movb (%0), %%al" : : "r"(p) : "al", "memory");
#elif defined(__aarch64__)
  asm volatile("ldrb w9, [%0]" : : "r"(p) : "w9", "memory");
#else
  (void)p;
#endif
}

// A chunk of one log that ChunkMapper maps, and whose pages it faults in,
// ahead of the log's writer. The writer takes the mapping as soon as it is
// made (Take) and appends while the mapper still faults pages in ahead of
// it; it never waits for the faulting, only for the mapping, and not even
// for that if the mapper has not started (it then maps the chunk itself).
// Before unmapping, the writer stops the mapper (Release).
class PendingChunk {
 public:
  PendingChunk(const std::string& fname, int fd, uint64_t offset, size_t bytes)
      : fname_(fname), fd_(fd), offset_(offset), bytes_(bytes) {}

  // The mapper's work: maps the chunk, hands it over, then faults in its
  // pages from the writer's position on, until the end or Release().
  void Run() {
    int queued = kQueued;
    if (!state_.compare_exchange_strong(queued, kMapping, std::memory_order_acq_rel)) return;
    status_ = MapChunk(fname_, fd_, offset_, bytes_, &chunk_);
    const bool mapped = status_.ok();
    Publish(kMapped);
    // MADV_POPULATE_WRITE (Linux 5.14) makes each page present, writable
    // and dirty in the process's page table in one system call; what is
    // left is the first access from user space, which on a paravirtualized
    // VM is itself a fault (its shadow page table learns the page): ~10 us,
    // taken here by a read rather than by the writer's store.
    if (!mapped || ::madvise(chunk_.base, chunk_.bytes, MADV_POPULATE_WRITE) != 0) {
      Publish(kFinished);
      return;
    }
    const size_t page = PageBytes();
    for (size_t off = 0; off < chunk_.bytes; off += page) {
      if (released_.load(std::memory_order_acquire)) break;
      const size_t written = written_.load(std::memory_order_relaxed);
      if (written >= off + page) {
        off = written / page * page;  // the writer is past: skip to it
        continue;
      }
      TouchForRead(chunk_.base + off);
    }
    Publish(kFinished);
  }

  // The writer's side: the mapped chunk, from the mapper or (if it had not
  // started) mapped here, its pages then faulted in by the writer's stores.
  leveldb::Status Take(Chunk* chunk) {
    int queued = kQueued;
    if (state_.compare_exchange_strong(queued, kCancelled, std::memory_order_acq_rel)) {
      return MapChunk(fname_, fd_, offset_, bytes_, chunk);
    }
    WaitFor(kMapped);  // two system calls: tens of microseconds
    *chunk = chunk_;
    return status_;
  }

  // The writer has written `bytes` of the chunk (the mapper skips them).
  void Written(size_t bytes) { written_.store(bytes, std::memory_order_relaxed); }

  // Stops the mapper's faulting and waits until it no longer touches the
  // chunk, which may then be unmapped. Take() must have been called.
  void Release() {
    released_.store(true, std::memory_order_release);
    if (state_.load(std::memory_order_acquire) != kCancelled) WaitFor(kFinished);
  }

 private:
  enum State : int { kQueued, kMapping, kMapped, kFinished, kCancelled };

  void Publish(State state) {
    std::lock_guard<std::mutex> lock(mu_);
    state_.store(state, std::memory_order_release);
    changed_.notify_all();
  }

  // The mapper's steps take microseconds to a page fault's ~10: spin first.
  void WaitFor(State state) {
    SpinBackoff backoff;
    while (state_.load(std::memory_order_acquire) < state && !backoff.Exhausted()) backoff.Pause();
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return state_.load(std::memory_order_acquire) >= state; });
  }

  const std::string fname_;
  const int fd_;
  const uint64_t offset_;
  const size_t bytes_;
  std::atomic<int> state_{kQueued};
  std::atomic<size_t> written_{0};
  std::atomic<bool> released_{false};
  // Written by the mapper before state_ becomes kMapped.
  Chunk chunk_;
  leveldb::Status status_;
  std::mutex mu_;
  std::condition_variable changed_;
};

// The process's one thread that maps log chunks ahead of their writers, so
// that the first access to each 4 KiB page of a log (a fault of ~10-30 us
// on a paravirtualized VM, about a microsecond per small-document put) is
// not taken inside LevelDB's serialized write. Never destroyed, as
// leveldb::Env::Default()'s background thread.
class ChunkMapper {
 public:
  static ChunkMapper& Instance() {
    static ChunkMapper* const mapper = new ChunkMapper();
    return *mapper;
  }

  void Submit(std::shared_ptr<PendingChunk> chunk) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(chunk));
    }
    wake_.notify_one();
  }

 private:
  ChunkMapper() { std::thread([this] { Run(); }).detach(); }

  void Run() {
    // Named so that a per-thread CPU split (write_scaling_bench's
    // thread_cpu, top -H) tells its faulting apart from LevelDB's own.
    pthread_setname_np(pthread_self(), "settee-logmap");
    for (;;) {
      std::shared_ptr<PendingChunk> chunk;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return !queue_.empty(); });
        chunk = std::move(queue_.front());
        queue_.pop_front();
      }
      chunk->Run();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<PendingChunk>> queue_;  // GUARDED_BY(mu_)
};

class MmapLogFile final : public leveldb::WritableFile {
 public:
  MmapLogFile(std::string fname, int fd, size_t chunk_bytes)
      : fname_(std::move(fname)), fd_(fd), chunk_bytes_(chunk_bytes) {}
  ~MmapLogFile() override { (void)Close(); }

  leveldb::Status Append(const leveldb::Slice& data) override {
    if (fd_ < 0) return leveldb::Status::IOError(fname_, "append after close");
    const char* src = data.data();
    size_t left = data.size();
    while (left > 0) {
      if (used_ == current_.bytes) {
        leveldb::Status s = NextChunk();
        if (!s.ok()) return s;
      }
      const size_t n = std::min(left, current_.bytes - used_);
      std::memcpy(current_.base + used_, src, n);
      used_ += n;
      src += n;
      left -= n;
    }
    if (current_ahead_ != nullptr) current_ahead_->Written(used_);
    // A log being written asks for its next chunk a quarter into this one:
    // time enough for the mapper, and a log that stays small (an idle
    // database's) never has a chunk of dirty zeros mapped ahead.
    if (next_ == nullptr && !synced_ && used_ >= current_.bytes / 4) {
      next_ = std::make_shared<PendingChunk>(fname_, fd_, chunk_offset_ + current_.bytes,
                                             chunk_bytes_);
      ChunkMapper::Instance().Submit(next_);
    }
    return leveldb::Status::OK();
  }

  // The bytes are in the page cache as soon as they are copied.
  leveldb::Status Flush() override { return leveldb::Status::OK(); }

  leveldb::Status Sync() override {
    if (fd_ < 0) return leveldb::Status::OK();
    // fdatasync cleans every page, those faulted in ahead too (they fault
    // again when written): a synced log maps its chunks as it needs them.
    synced_ = true;
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return leveldb::Status::OK();
  }

  // Unmaps and cuts the zero tail off, so a closed log is exactly its
  // records.
  leveldb::Status Close() override {
    if (fd_ < 0) return leveldb::Status::OK();
    if (next_ != nullptr) {
      Chunk ahead;
      (void)next_->Take(&ahead);
      next_->Release();
      next_.reset();
      UnmapChunk(&ahead);
    }
    ReleaseCurrent();
    leveldb::Status s;
    if (::ftruncate(fd_, static_cast<off_t>(chunk_offset_ + used_)) != 0) {
      s = PosixError(fname_, errno);
    }
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  void ReleaseCurrent() {
    if (current_ahead_ != nullptr) current_ahead_->Release();
    current_ahead_.reset();
    UnmapChunk(&current_);
  }

  // Replaces the full (or no) chunk with the next one of the file.
  leveldb::Status NextChunk() {
    const uint64_t next = chunk_offset_ + used_;
    ReleaseCurrent();
    chunk_offset_ = next;
    used_ = 0;
    leveldb::Status s;
    if (next_ != nullptr) {
      s = next_->Take(&current_);
      current_ahead_ = std::move(next_);
    } else {
      // Not mapped ahead (the first chunk, or a synced log's): this writer
      // faults its pages in as it appends. The first is a quarter of the
      // others, so the mapper's first one is soon ahead.
      const size_t page = PageBytes();
      const size_t bytes = next > 0 ? chunk_bytes_ : std::max(page, chunk_bytes_ / 4 / page * page);
      s = MapChunk(fname_, fd_, next, bytes, &current_);
    }
    return s;
  }

  const std::string fname_;
  int fd_;
  const size_t chunk_bytes_;
  uint64_t chunk_offset_ = 0;  // file offset of current_
  Chunk current_;              // the chunk appended to, or none
  size_t used_ = 0;            // bytes of it written
  // The mapper's hold on current_ (null: mapped here), and the chunk after
  // current_ being mapped ahead (null: none asked for).
  std::shared_ptr<PendingChunk> current_ahead_;
  std::shared_ptr<PendingChunk> next_;
  bool synced_ = false;  // Sync() was called
};

bool IsLogFile(const std::string& fname) {
  return fname.size() > 4 && std::string_view(fname).ends_with(".log");
}

class MmapLogEnvImpl final : public leveldb::EnvWrapper {
 public:
  MmapLogEnvImpl() : EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewWritableFile(const std::string& fname,
                                  leveldb::WritableFile** result) override {
    if (!IsLogFile(fname)) return target()->NewWritableFile(fname, result);
    return NewMmapLogFile(fname, kLogChunkBytes, result);
  }
};

}  // namespace

leveldb::Status NewMmapLogFile(const std::string& fname, size_t chunk_bytes,
                               leveldb::WritableFile** result) {
  *result = nullptr;
  const size_t page = PageBytes();
  if (chunk_bytes == 0 || page == 0 || chunk_bytes % page != 0) {
    return leveldb::Status::InvalidArgument(fname, "log chunk is not a multiple of the page size");
  }
  const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(fname, errno);
  *result = new MmapLogFile(fname, fd, chunk_bytes);
  return leveldb::Status::OK();
}

leveldb::Env* MmapLogEnv() {
  static leveldb::Env* const env = new MmapLogEnvImpl();  // never destroyed, as Env::Default()
  return env;
}

}  // namespace settee
