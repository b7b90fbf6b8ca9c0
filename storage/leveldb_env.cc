// MmapLogEnv: see leveldb_env.h.
#include "storage/leveldb_env.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace settee {

namespace {

// Large enough that growing the file (fallocate and a new mapping, two
// system calls) is rare: a log holds about a memtable (4 MiB per database).
constexpr size_t kLogChunkBytes = 1u << 20;

leveldb::Status PosixError(const std::string& context, int err) {
  return leveldb::Status::IOError(context, std::strerror(err));
}

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
      if (used_ == mapped_bytes_) {
        leveldb::Status s = NextChunk();
        if (!s.ok()) return s;
      }
      const size_t n = std::min(left, mapped_bytes_ - used_);
      std::memcpy(base_ + used_, src, n);
      used_ += n;
      src += n;
      left -= n;
    }
    return leveldb::Status::OK();
  }

  // The bytes are in the page cache as soon as they are copied.
  leveldb::Status Flush() override { return leveldb::Status::OK(); }

  leveldb::Status Sync() override {
    if (fd_ < 0) return leveldb::Status::OK();
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return leveldb::Status::OK();
  }

  // Unmaps and cuts the zero tail off, so a closed log is exactly its
  // records.
  leveldb::Status Close() override {
    if (fd_ < 0) return leveldb::Status::OK();
    leveldb::Status s = Unmap();
    if (s.ok() && ::ftruncate(fd_, static_cast<off_t>(chunk_offset_ + used_)) != 0) {
      s = PosixError(fname_, errno);
    }
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  leveldb::Status Unmap() {
    if (base_ == nullptr) return leveldb::Status::OK();
    const int rc = ::munmap(base_, mapped_bytes_);
    base_ = nullptr;
    if (rc != 0) return PosixError(fname_, errno);
    return leveldb::Status::OK();
  }

  // Maps the next chunk of the file, growing the file to hold it.
  leveldb::Status NextChunk() {
    const uint64_t next = chunk_offset_ + used_;
    leveldb::Status s = Unmap();
    if (!s.ok()) return s;
    chunk_offset_ = next;
    used_ = mapped_bytes_ = 0;
    // Blocks are reserved, not just the size set: a store into a hole of a
    // sparse file on a full disk is a SIGBUS that kills the process, where a
    // failed reservation is an IOError LevelDB reports for the write.
    const int err = ::posix_fallocate(fd_, static_cast<off_t>(next),
                                      static_cast<off_t>(chunk_bytes_));
    if (err != 0) return PosixError(fname_, err);
    void* p = ::mmap(nullptr, chunk_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(next));
    if (p == MAP_FAILED) return PosixError(fname_, errno);
    base_ = static_cast<char*>(p);
    mapped_bytes_ = chunk_bytes_;
    return leveldb::Status::OK();
  }

  const std::string fname_;
  int fd_;
  const size_t chunk_bytes_;
  uint64_t chunk_offset_ = 0;  // file offset of the mapping
  char* base_ = nullptr;       // the mapping, or null
  size_t mapped_bytes_ = 0;    // its length
  size_t used_ = 0;            // bytes of it written
};

bool IsLogFile(const std::string& fname) {
  constexpr std::string_view kSuffix = ".log";
  return fname.size() > kSuffix.size() &&
         std::string_view(fname).substr(fname.size() - kSuffix.size()) == kSuffix;
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
  const long page = ::sysconf(_SC_PAGESIZE);
  if (chunk_bytes == 0 || page <= 0 || chunk_bytes % static_cast<size_t>(page) != 0) {
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
