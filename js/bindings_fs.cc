// The system calls behind the prelude's `fs` module (js/prelude/fs.js):
// synchronous, on the isolate's own thread, failing with node's error shape
// (code "ENOENT", errno, syscall, path; message "ENOENT: no such file or
// directory, open '/x'").
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <uv.h>
#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

v8::Local<v8::String> Str(v8::Isolate* isolate, std::string_view s) { return ToV8String(isolate, s); }

void Set(v8::Isolate* isolate, v8::Local<v8::Object> obj, const char* key, v8::Local<v8::Value> value) {
  obj->Set(isolate->GetCurrentContext(), Str(isolate, key), value).Check();
}

// Throws node's error for a failed system call: `err` is an errno value.
void ThrowErrno(v8::Isolate* isolate, int err, const char* syscall, const std::string& path,
                const std::string& dest = {}) {
  std::string code = uv_err_name(-err);
  // A call on a descriptor names no path: "EISDIR: ..., read".
  std::string message = code + ": " + uv_strerror(-err) + ", " + syscall + (path.empty() ? "" : " '" + path + "'");
  if (!dest.empty()) message += " -> '" + dest + "'";
  v8::Local<v8::Object> e = v8::Exception::Error(Str(isolate, message)).As<v8::Object>();
  Set(isolate, e, "errno", v8::Integer::New(isolate, -err));
  Set(isolate, e, "code", Str(isolate, code));
  Set(isolate, e, "syscall", Str(isolate, syscall));
  if (!path.empty()) Set(isolate, e, "path", Str(isolate, path));
  if (!dest.empty()) Set(isolate, e, "dest", Str(isolate, dest));
  isolate->ThrowException(e);
}

// fsReadFile(path) -> Uint8Array of the whole file.
void ReadFile(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ThrowErrno(isolate, errno, "open", path);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return ThrowErrno(isolate, EISDIR, "read", path);
  }
  std::string data;
  if (st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ThrowErrno(isolate, err, "read", path);
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  auto ab = v8::ArrayBuffer::New(isolate, data.size());
  std::copy(data.begin(), data.end(), static_cast<char*>(ab->GetBackingStore()->Data()));
  args.GetReturnValue().Set(v8::Uint8Array::New(ab, 0, data.size()));
}

// fsWriteFile(path, bytes: Uint8Array, append: bool, mode, exclusive: bool)
// (exclusive: fail with EEXIST when the file exists, node's "x" flags)
void WriteFile(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  if (!args[1]->IsArrayBufferView()) {
    isolate->ThrowException(v8::Exception::TypeError(Str(isolate, "data must be bytes")));
    return;
  }
  auto view = args[1].As<v8::ArrayBufferView>();
  const char* data = static_cast<const char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset();
  size_t len = view->ByteLength();
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (args[2]->IsTrue() ? O_APPEND : O_TRUNC) |
              (args[4]->IsTrue() ? O_EXCL : 0);
  int mode = args[3]->IsNumber() ? args[3]->Int32Value(isolate->GetCurrentContext()).FromMaybe(0666) : 0666;
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) return ThrowErrno(isolate, errno, "open", path);
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ThrowErrno(isolate, err, "write", path);
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return ThrowErrno(isolate, errno, "close", path);
}

double Millis(const struct timespec& t) { return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

// fsStat(path, followLinks) -> {kind, dev, ino, mode, nlink, uid, gid, size,
// blksize, blocks, atimeMs, mtimeMs, ctimeMs}; kind is "file", "dir",
// "link" or "other". Missing: null when args[2] is true (existsSync,
// statSync's throwIfNoEntry: false), else throws.
void Stat(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  bool follow = args[1]->IsTrue();
  struct stat st;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) {
    if (args[2]->IsTrue() && (errno == ENOENT || errno == ENOTDIR)) return args.GetReturnValue().SetNull();
    return ThrowErrno(isolate, errno, follow ? "stat" : "lstat", path);
  }
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  const char* kind = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : "other";
  Set(isolate, o, "kind", Str(isolate, kind));
  auto num = [&](const char* k, double v) { Set(isolate, o, k, v8::Number::New(isolate, v)); };
  num("dev", static_cast<double>(st.st_dev));
  num("ino", static_cast<double>(st.st_ino));
  num("mode", st.st_mode);
  num("nlink", static_cast<double>(st.st_nlink));
  num("uid", st.st_uid);
  num("gid", st.st_gid);
  num("size", static_cast<double>(st.st_size));
  num("blksize", static_cast<double>(st.st_blksize));
  num("blocks", static_cast<double>(st.st_blocks));
  num("atimeMs", Millis(st.st_atim));
  num("mtimeMs", Millis(st.st_mtim));
  num("ctimeMs", Millis(st.st_ctim));
  args.GetReturnValue().Set(o);
}

// fsReaddir(path) -> [[name, kind], ...] sorted by name, as libuv's scandir
// gives node.
void Readdir(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ThrowErrno(isolate, errno, "scandir", path);
  std::vector<std::pair<std::string, const char*>> entries;
  while (struct dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const char* kind = e->d_type == DT_REG ? "file" : e->d_type == DT_DIR ? "dir" : e->d_type == DT_LNK ? "link" : "other";
    if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      std::string full = path + "/" + name;
      if (::lstat(full.c_str(), &st) == 0) {
        kind = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : "other";
      }
    }
    entries.emplace_back(std::move(name), kind);
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end());
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Array> out = v8::Array::New(isolate, static_cast<int>(entries.size()));
  for (size_t i = 0; i < entries.size(); ++i) {
    v8::Local<v8::Array> pair = v8::Array::New(isolate, 2);
    pair->Set(ctx, 0, Str(isolate, entries[i].first)).Check();
    pair->Set(ctx, 1, Str(isolate, entries[i].second)).Check();
    out->Set(ctx, static_cast<uint32_t>(i), pair).Check();
  }
  args.GetReturnValue().Set(out);
}

// fsMkdir(path, recursive, mode) -> the first directory created (recursive),
// as node's mkdirSync returns it, or undefined.
void Mkdir(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  int mode = args[2]->IsNumber() ? args[2]->Int32Value(isolate->GetCurrentContext()).FromMaybe(0777) : 0777;
  if (!args[1]->IsTrue()) {
    if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0) return ThrowErrno(isolate, errno, "mkdir", path);
    return;
  }
  // Recursive: create each missing ancestor, top down.
  std::vector<std::string> missing;
  std::string p = path;
  while (!p.empty() && p != "/") {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return ThrowErrno(isolate, EEXIST, "mkdir", path);
      break;
    }
    missing.push_back(p);
    size_t slash = p.find_last_of('/');
    p = slash == std::string::npos ? "" : p.substr(0, slash);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
      return ThrowErrno(isolate, errno, "mkdir", path);
    }
  }
  if (!missing.empty()) args.GetReturnValue().Set(Str(isolate, missing.back()));
}

// fsUnlink(path), fsRmdir(path)
void Unlink(const Args& args) {
  std::string path = ToUtf8(args.GetIsolate(), args[0]);
  if (::unlink(path.c_str()) != 0) ThrowErrno(args.GetIsolate(), errno, "unlink", path);
}
void Rmdir(const Args& args) {
  std::string path = ToUtf8(args.GetIsolate(), args[0]);
  if (::rmdir(path.c_str()) != 0) ThrowErrno(args.GetIsolate(), errno, "rmdir", path);
}

// fsRm(path, recursive, force): node's rmSync.
void Rm(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  bool recursive = args[1]->IsTrue(), force = args[2]->IsTrue();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (force && errno == ENOENT) return;
    return ThrowErrno(isolate, errno, "rm", path);
  }
  if (S_ISDIR(st.st_mode) && !recursive) {
    // node: ERR_FS_EISDIR, "Path is a directory: rm returned EISDIR ..."
    return ThrowErrno(isolate, EISDIR, "rm", path);
  }
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) ThrowErrno(isolate, ec.value(), "rm", path);
}

// fsRename(from, to)
void Rename(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string from = ToUtf8(isolate, args[0]), to = ToUtf8(isolate, args[1]);
  if (::rename(from.c_str(), to.c_str()) != 0) ThrowErrno(isolate, errno, "rename", from, to);
}

// fsRealpath(path)
void Realpath(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return ThrowErrno(isolate, errno, "realpath", path);
  args.GetReturnValue().Set(Str(isolate, buf));
}

//////// descriptors (fs.ReadStream and fs.WriteStream)

// node's open flags ("r", "w", "wx", "a+", ...) as open(2)'s, or -1.
int OpenFlags(const std::string& f) {
  static const struct { const char* names[2]; int flags; } kFlags[] = {
      {{"r", nullptr}, O_RDONLY},
      {{"rs", "sr"}, O_RDONLY | O_SYNC},
      {{"r+", nullptr}, O_RDWR},
      {{"rs+", "sr+"}, O_RDWR | O_SYNC},
      {{"w", nullptr}, O_TRUNC | O_CREAT | O_WRONLY},
      {{"wx", "xw"}, O_TRUNC | O_CREAT | O_WRONLY | O_EXCL},
      {{"w+", nullptr}, O_TRUNC | O_CREAT | O_RDWR},
      {{"wx+", "xw+"}, O_TRUNC | O_CREAT | O_RDWR | O_EXCL},
      {{"a", nullptr}, O_APPEND | O_CREAT | O_WRONLY},
      {{"ax", "xa"}, O_APPEND | O_CREAT | O_WRONLY | O_EXCL},
      {{"as", "sa"}, O_APPEND | O_CREAT | O_WRONLY | O_SYNC},
      {{"a+", nullptr}, O_APPEND | O_CREAT | O_RDWR},
      {{"ax+", "xa+"}, O_APPEND | O_CREAT | O_RDWR | O_EXCL},
      {{"as+", "sa+"}, O_APPEND | O_CREAT | O_RDWR | O_SYNC},
  };
  for (const auto& e : kFlags) {
    for (const char* name : e.names) {
      if (name != nullptr && f == name) return e.flags;
    }
  }
  return -1;
}

// fsOpen(path, flags: node's string, mode) -> descriptor.
void Open(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  std::string flag = ToUtf8(isolate, args[1]);
  int flags = OpenFlags(flag);
  if (flags < 0) {
    isolate->ThrowException(v8::Exception::TypeError(
        Str(isolate, "The argument 'flags' is invalid. Received '" + flag + "'")));
    return;
  }
  int mode = args[2]->IsNumber() ? args[2]->Int32Value(isolate->GetCurrentContext()).FromMaybe(0666) : 0666;
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return ThrowErrno(isolate, errno, "open", path);
  args.GetReturnValue().Set(fd);
}

int32_t IntArg(const Args& args, int i) { return args[i]->Int32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(-1); }
double NumberArg(const Args& args, int i) {
  return args[i]->IsNumber() ? args[i].As<v8::Number>()->Value() : -1;
}

char* ViewData(v8::Local<v8::ArrayBufferView> view) {
  return static_cast<char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset();
}

// fsRead(fd, bytes: Uint8Array, position) -> bytes read into `bytes` (0 at
// the end); position < 0 reads from the descriptor's offset.
void Read(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (!args[1]->IsArrayBufferView()) {
    isolate->ThrowException(v8::Exception::TypeError(Str(isolate, "buffer must be bytes")));
    return;
  }
  auto view = args[1].As<v8::ArrayBufferView>();
  int fd = IntArg(args, 0);
  double position = NumberArg(args, 2);
  ssize_t n;
  do {
    n = position < 0 ? ::read(fd, ViewData(view), view->ByteLength())
                     : ::pread(fd, ViewData(view), view->ByteLength(), static_cast<off_t>(position));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ThrowErrno(isolate, errno, "read", "");
  args.GetReturnValue().Set(static_cast<double>(n));
}

// fsWrite(fd, bytes: Uint8Array, position): writes all of `bytes`, at
// `position` when it is >= 0.
void Write(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (!args[1]->IsArrayBufferView()) {
    isolate->ThrowException(v8::Exception::TypeError(Str(isolate, "data must be bytes")));
    return;
  }
  auto view = args[1].As<v8::ArrayBufferView>();
  int fd = IntArg(args, 0);
  double position = NumberArg(args, 2);
  const char* data = ViewData(view);
  size_t len = view->ByteLength();
  while (len > 0) {
    ssize_t n = position < 0 ? ::write(fd, data, len) : ::pwrite(fd, data, len, static_cast<off_t>(position));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ThrowErrno(isolate, errno, "write", "");
    data += n;
    len -= static_cast<size_t>(n);
    if (position >= 0) position += static_cast<double>(n);
  }
}

// fsClose(fd)
void Close(const Args& args) {
  if (::close(IntArg(args, 0)) != 0) ThrowErrno(args.GetIsolate(), errno, "close", "");
}

}  // namespace

void InstallFsBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "fsReadFile", ReadFile);
  SetFn(ctx, native, "fsWriteFile", WriteFile);
  SetFn(ctx, native, "fsStat", Stat);
  SetFn(ctx, native, "fsReaddir", Readdir);
  SetFn(ctx, native, "fsMkdir", Mkdir);
  SetFn(ctx, native, "fsUnlink", Unlink);
  SetFn(ctx, native, "fsRmdir", Rmdir);
  SetFn(ctx, native, "fsRm", Rm);
  SetFn(ctx, native, "fsRename", Rename);
  SetFn(ctx, native, "fsRealpath", Realpath);
  SetFn(ctx, native, "fsOpen", Open);
  SetFn(ctx, native, "fsRead", Read);
  SetFn(ctx, native, "fsWrite", Write);
  SetFn(ctx, native, "fsClose", Close);
}

}  // namespace settee::js
