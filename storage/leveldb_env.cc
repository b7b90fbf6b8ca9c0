// MmapLogEnv: see leveldb_env.h.
#include "storage/leveldb_env.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
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

// Appends from this size on are written with pwritev rather than through
// the mapping, unless it lands in pages the mapper has already faulted in.
// LevelDB appends a record in fragments that fill its 32 KiB log blocks, so
// an append this large is a record or fragment of 24-32 KiB, mostly the
// fragments of a record larger than a block (a batch of 100 2 KiB
// documents is ~190 KiB): such
// a log outruns the mapper, and a store into a page it has not reached is
// a fault of ~10-30 us, where a system call is ~1-4 us. A batch of 100
// small documents (~20 KiB) stays mapped: measured, writing it directly
// cost it more than it saved (bulk-inserts min 0.061-0.064 -> 0.066-0.070
// ms with 16 KiB here), while large-docs' batches went from 0.72-0.79 to
// 0.61-0.66 ms (medians, alternating runs, load 4-5).
constexpr size_t kLogDirectBytes = 24u << 10;

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
        faulted_.store(off, std::memory_order_release);
        continue;
      }
      TouchForRead(chunk_.base + off);
      faulted_.store(off + page, std::memory_order_release);
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

  // Bytes from the chunk's start whose pages the mapper has faulted in (or
  // the writer had passed): a store there takes no fault.
  size_t Faulted() const { return faulted_.load(std::memory_order_acquire); }

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
  std::atomic<size_t> faulted_{0};
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
  MmapLogFile(std::string fname, int fd, size_t chunk_bytes, size_t direct_bytes)
      : fname_(std::move(fname)), fd_(fd), chunk_bytes_(chunk_bytes), direct_bytes_(direct_bytes) {
    pending_.reserve(direct_bytes_);
  }
  ~MmapLogFile() override { (void)Close(); }

  // LevelDB's log writer appends a record's fragments as a 7-byte header
  // then the payload, and flushes after each. Small appends wait in
  // pending_ until the flush (or a large append) so that a header goes out
  // with its payload, by the payload's route.
  leveldb::Status Append(const leveldb::Slice& data) override {
    if (fd_ < 0) return leveldb::Status::IOError(fname_, "append after close");
    if (data.size() >= direct_bytes_) {
      // Through the mapping where the mapper has faulted the pages in (a
      // copy, no system call), else directly.
      if (!FaultedAhead(pending_.size() + data.size())) return WriteDirect(data);
      leveldb::Status s = WriteMapped(pending_.data(), pending_.size());
      pending_.clear();
      return s.ok() ? WriteMapped(data.data(), data.size()) : s;
    }
    pending_.append(data.data(), data.size());
    if (pending_.size() >= direct_bytes_) return WriteDirect({});
    return leveldb::Status::OK();
  }

  // Moves pending_ to the page cache: through the mapping, unless a large
  // append was written directly less than 4 x direct_bytes_ before (the
  // small fragments a large record starts and ends with, and its padding:
  // the mapper maps nothing ahead of a log written directly, so a store
  // there would fault fresh pages).
  leveldb::Status Flush() override {
    if (fd_ < 0 || pending_.empty()) return leveldb::Status::OK();
    if (pos_ + pending_.size() - large_end_ <= 4 * direct_bytes_ && large_end_ > 0) {
      return WriteDirect({});
    }
    leveldb::Status s = WriteMapped(pending_.data(), pending_.size());
    pending_.clear();
    return s;
  }

  leveldb::Status Sync() override {
    if (fd_ < 0) return leveldb::Status::OK();
    leveldb::Status s = Flush();
    if (!s.ok()) return s;
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
    leveldb::Status s = Flush();
    DropAhead();
    ReleaseCurrent();
    if (::ftruncate(fd_, static_cast<off_t>(pos_)) != 0 && s.ok()) s = PosixError(fname_, errno);
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  // Whether the next `bytes` of the file lie in pages the mapper has
  // faulted in.
  bool FaultedAhead(size_t bytes) const {
    if (current_ahead_ == nullptr || pos_ < chunk_offset_) return false;
    return pos_ + bytes <= chunk_offset_ + current_ahead_->Faulted();
  }

  // pending_ and then `data`, with one pwritev at the end of the file: the
  // kernel copies into the page cache without this process's page table
  // learning the pages, so a large append takes no page faults.
  leveldb::Status WriteDirect(const leveldb::Slice& data) {
    const bool large = pending_.size() + data.size() >= direct_bytes_;
    leveldb::Status s = PWrite(pending_.data(), pending_.size(), data.data(), data.size());
    pending_.clear();
    if (s.ok() && large) large_end_ = pos_;
    return s;
  }

  leveldb::Status PWrite(const char* a, size_t a_bytes, const char* b, size_t b_bytes) {
    iovec iov[2] = {{const_cast<char*>(a), a_bytes}, {const_cast<char*>(b), b_bytes}};
    int first = a_bytes == 0 ? 1 : 0;
    const int count = b_bytes == 0 ? 1 : 2;
    while (first < count) {
      const ssize_t n = ::pwritev(fd_, iov + first, count - first, static_cast<off_t>(pos_));
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      if (n == 0) return leveldb::Status::IOError(fname_, "pwritev wrote nothing");
      pos_ += static_cast<uint64_t>(n);
      for (size_t left = static_cast<size_t>(n); left > 0 && first < count;) {
        const size_t used = std::min(left, iov[first].iov_len);
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + used;
        iov[first].iov_len -= used;
        left -= used;
        if (iov[first].iov_len == 0) ++first;
      }
      while (first < count && iov[first].iov_len == 0) ++first;
    }
    return leveldb::Status::OK();
  }

  // Copies through the mapping, mapping chunks as the end of the file
  // reaches them.
  leveldb::Status WriteMapped(const char* src, size_t left) {
    while (left > 0) {
      if (current_.base == nullptr || pos_ >= chunk_offset_ + current_.bytes) {
        leveldb::Status s = NextChunk();
        if (!s.ok()) return s;
      }
      const size_t at = static_cast<size_t>(pos_ - chunk_offset_);
      const size_t n = std::min(left, current_.bytes - at);
      std::memcpy(current_.base + at, src, n);
      pos_ += n;
      mapped_in_chunk_ += n;
      src += n;
      left -= n;
    }
    const size_t at = static_cast<size_t>(pos_ - chunk_offset_);
    if (current_ahead_ != nullptr) current_ahead_->Written(at);
    // A log being written through the mapping asks for its next chunk a
    // quarter into this one: time enough for the mapper, and a log that
    // stays small (an idle database's) or that is written directly (large
    // records) never has a chunk of dirty zeros mapped ahead.
    if (next_ == nullptr && !synced_ && mapped_in_chunk_ >= current_.bytes / 4) {
      next_offset_ = chunk_offset_ + current_.bytes;
      next_ = std::make_shared<PendingChunk>(fname_, fd_, next_offset_, chunk_bytes_);
      ChunkMapper::Instance().Submit(next_);
    }
    return leveldb::Status::OK();
  }

  void ReleaseCurrent() {
    if (current_ahead_ != nullptr) current_ahead_->Release();
    current_ahead_.reset();
    UnmapChunk(&current_);
  }

  // Lets go of the chunk being mapped ahead, if any.
  void DropAhead() {
    if (next_ == nullptr) return;
    Chunk ahead;
    (void)next_->Take(&ahead);
    next_->Release();
    next_.reset();
    UnmapChunk(&ahead);
  }

  // Replaces the current (full, passed or no) chunk with one holding pos_:
  // the one mapped ahead if it does, else one mapped here from pos_'s page.
  leveldb::Status NextChunk() {
    ReleaseCurrent();
    mapped_in_chunk_ = 0;
    if (next_ != nullptr && pos_ >= next_offset_ && pos_ < next_offset_ + chunk_bytes_) {
      chunk_offset_ = next_offset_;
      leveldb::Status s = next_->Take(&current_);
      current_ahead_ = std::move(next_);
      return s;
    }
    DropAhead();  // direct writes went past it
    // Not mapped ahead (the first chunk, a synced log's, or after direct
    // writes): this writer faults its pages in as it appends. The first is
    // a quarter of the others, so the mapper's first one is soon ahead.
    chunk_offset_ = pos_ / page_ * page_;
    const size_t bytes =
        chunk_offset_ > 0 ? chunk_bytes_ : std::max(page_, chunk_bytes_ / 4 / page_ * page_);
    return MapChunk(fname_, fd_, chunk_offset_, bytes, &current_);
  }

  const std::string fname_;
  int fd_;
  const size_t chunk_bytes_;
  // Appends of at least this many bytes are written with pwritev instead
  // of through the mapping.
  const size_t direct_bytes_;
  const size_t page_ = PageBytes();
  uint64_t pos_ = 0;          // bytes of the file written (its end, once closed)
  uint64_t large_end_ = 0;    // where the last large direct write ended
  std::string pending_;       // small appends not yet written
  uint64_t chunk_offset_ = 0; // file offset of current_
  Chunk current_;             // the chunk written through, or none
  size_t mapped_in_chunk_ = 0;  // bytes of current_ written through it
  // The mapper's hold on current_ (null: mapped here), and the chunk at
  // next_offset_ being mapped ahead (null: none asked for).
  std::shared_ptr<PendingChunk> current_ahead_;
  std::shared_ptr<PendingChunk> next_;
  uint64_t next_offset_ = 0;
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
    return NewMmapLogFile(fname, kLogChunkBytes, kLogDirectBytes, result);
  }

  // LevelDB's one background thread (flushes and compactions of every
  // database) is started by the first Schedule, from whichever thread wrote
  // first, and would inherit that thread's name ("isolate-0", a server
  // loop): profiles and per-thread CPU figures then charge its table
  // building to the writer. It is named on its first job.
  void Schedule(void (*function)(void*), void* arg) override {
    struct Job {
      void (*function)(void*);
      void* arg;
    };
    target()->Schedule(
        [](void* p) {
          std::unique_ptr<Job> job(static_cast<Job*>(p));
          thread_local bool named = false;
          if (!named) {
            pthread_setname_np(pthread_self(), kLevelDBBackgroundThreadName);
            named = true;
          }
          job->function(job->arg);
        },
        new Job{function, arg});
  }
};

}  // namespace

leveldb::Status NewMmapLogFile(const std::string& fname, size_t chunk_bytes, size_t direct_bytes,
                               leveldb::WritableFile** result) {
  *result = nullptr;
  const size_t page = PageBytes();
  if (chunk_bytes == 0 || page == 0 || chunk_bytes % page != 0) {
    return leveldb::Status::InvalidArgument(fname, "log chunk is not a multiple of the page size");
  }
  const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(fname, errno);
  *result = new MmapLogFile(fname, fd, chunk_bytes, std::max<size_t>(direct_bytes, 1));
  return leveldb::Status::OK();
}

leveldb::Env* MmapLogEnv() {
  static leveldb::Env* const env = new MmapLogEnvImpl();  // never destroyed, as Env::Default()
  return env;
}

}  // namespace settee
