// The `native` functions behind the prelude's node-like globals (js/prelude/): output,
// clocks, process facts, files for require(), compilation, UTF-8, timers and
// the thread/task/message plumbing.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstring>
#include <ctime>
#include <mutex>

#include <node_version.h>
#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-exception.h>
#include <v8-external.h>
#include <v8-function.h>
#include <v8-initialization.h>
#include <v8-primitive.h>
#include <v8-promise.h>
#include <v8-script.h>
#include <v8-statistics.h>
#include <v8-template.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "js/vendor_sources.h"

extern char** environ;

namespace settee::js {

namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

const uint64_t kProcessStartNs = uv_hrtime();
std::mutex g_output_mu;

IsolateThread* Self(const Args& args) { return IsolateThread::From(args.GetIsolate()); }

v8::Local<v8::String> Str(v8::Isolate* isolate, std::string_view s) { return ToV8String(isolate, s); }

void ThrowTypeError(v8::Isolate* isolate, std::string_view msg) {
  isolate->ThrowException(v8::Exception::TypeError(Str(isolate, msg)));
}

void SetValue(v8::Local<v8::Context> ctx, v8::Local<v8::Object> obj, const char* name,
              v8::Local<v8::Value> v) {
  obj->Set(ctx, Str(ctx->GetIsolate(), name), v).Check();
}

// Writes all of `s` to `fd`, or returns the errno that stopped it (0 when
// written). A descriptor another process made non-blocking (a shared pipe
// or terminal) says EAGAIN when full: wait until it takes more, as node's
// synchronous stdio does, rather than drop the rest.
int WriteAll(int fd, std::string_view s) {
  std::lock_guard<std::mutex> lock(g_output_mu);
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd waiting{fd, POLLOUT, 0};
        if (::poll(&waiting, 1, -1) >= 0 || errno == EINTR) continue;
      }
      return errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

// True iff `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
bool ValidUtf8(const unsigned char* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) { ++i; continue; }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

//////// output, clocks, process

// print(fd, text or bytes) -> undefined, or node's error for the failed
// write as [code, errno, message]: a file's (fs.writeSync's "EPIPE: broken
// pipe, write") or a pipe's, socket's or terminal's (net's "write EPIPE").
void Print(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  int fd = args[0]->Int32Value(isolate->GetCurrentContext()).FromMaybe(1) == 2 ? 2 : 1;
  int err;
  // Bytes go out as they are (a Buffer piped to process.stdout), not
  // decoded as UTF-8 text.
  if (args[1]->IsArrayBufferView()) {
    auto view = args[1].As<v8::ArrayBufferView>();
    const char* data = static_cast<const char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset();
    err = WriteAll(fd, std::string_view(data, view->ByteLength()));
  } else {
    err = WriteAll(fd, ToUtf8(isolate, args[1]));
  }
  if (err == 0) return;
  const std::string code = uv_err_name(-err);
  const std::string message = uv_guess_handle(fd) == UV_FILE
                                  ? code + ": " + uv_strerror(-err) + ", write"
                                  : "write " + code;
  v8::Local<v8::Value> parts[] = {Str(isolate, code), v8::Integer::New(isolate, -err), Str(isolate, message)};
  args.GetReturnValue().Set(v8::Array::New(isolate, parts, 3));
}

void Now(const Args& args) {
  args.GetReturnValue().Set(static_cast<double>(uv_hrtime() - kProcessStartNs) / 1e6);
}

void Hrtime(const Args& args) {
  args.GetReturnValue().Set(v8::BigInt::NewFromUnsigned(args.GetIsolate(), uv_hrtime()));
}

// The resident set size in bytes. libuv reads /proc/self/stat, which
// qemu-user fabricates with zeros (an arm64 build run under emulation): then
// /proc/self/statm, which qemu passes through (the emulator's own resident
// set, which holds the guest's), then the peak from getrusage.
size_t ResidentSetSize() {
  size_t rss = 0;
  if (uv_resident_set_memory(&rss) == 0 && rss > 0) return rss;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long size = 0;
    unsigned long resident = 0;
    const bool read = std::fscanf(f, "%lu %lu", &size, &resident) == 2;
    std::fclose(f);
    const long page = sysconf(_SC_PAGESIZE);
    if (read && resident > 0 && page > 0) return static_cast<size_t>(resident) * static_cast<size_t>(page);
  }
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0) return static_cast<size_t>(ru.ru_maxrss) * 1024;
  return 0;
}

void MemoryUsage(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::HeapStatistics hs;
  isolate->GetHeapStatistics(&hs);
  const size_t rss = ResidentSetSize();
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  SetValue(ctx, o, "rss", v8::Number::New(isolate, static_cast<double>(rss)));
  SetValue(ctx, o, "heapTotal", v8::Number::New(isolate, static_cast<double>(hs.total_heap_size())));
  SetValue(ctx, o, "heapUsed", v8::Number::New(isolate, static_cast<double>(hs.used_heap_size())));
  SetValue(ctx, o, "external", v8::Number::New(isolate, static_cast<double>(hs.external_memory())));
  SetValue(ctx, o, "arrayBuffers", v8::Number::New(isolate, 0));
  args.GetReturnValue().Set(o);
}

// The facts behind the prelude's `os` module, from libuv as node takes
// them: {hostname, homedir, tmpdir, sysname, release, version, machine,
// totalmem, freemem, uptime, loadavg: [3], cpus: [{model, speed, times}]}.
void OsInfo(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  auto str = [&](v8::Local<v8::Object> obj, const char* k, const std::string& v) {
    SetValue(ctx, obj, k, ToV8String(isolate, v));
  };
  auto num = [&](v8::Local<v8::Object> obj, const char* k, double v) {
    SetValue(ctx, obj, k, v8::Number::New(isolate, v));
  };
  char buf[PATH_MAX];
  size_t len = sizeof buf;
  str(o, "hostname", uv_os_gethostname(buf, &len) == 0 ? std::string(buf, len) : "localhost");
  len = sizeof buf;
  str(o, "homedir", uv_os_homedir(buf, &len) == 0 ? std::string(buf, len) : "/");
  len = sizeof buf;
  str(o, "tmpdir", uv_os_tmpdir(buf, &len) == 0 ? std::string(buf, len) : "/tmp");
  uv_utsname_t uts;
  if (uv_os_uname(&uts) == 0) {
    str(o, "sysname", uts.sysname);
    str(o, "release", uts.release);
    str(o, "version", uts.version);
    str(o, "machine", uts.machine);
  }
  num(o, "totalmem", static_cast<double>(uv_get_total_memory()));
  num(o, "freemem", static_cast<double>(uv_get_free_memory()));
  double uptime = 0;
  uv_uptime(&uptime);
  num(o, "uptime", uptime);
  double load[3] = {0, 0, 0};
  uv_loadavg(load);
  v8::Local<v8::Array> loadavg = v8::Array::New(isolate, 3);
  for (uint32_t i = 0; i < 3; ++i) loadavg->Set(ctx, i, v8::Number::New(isolate, load[i])).Check();
  SetValue(ctx, o, "loadavg", loadavg);
  uv_cpu_info_t* cpus = nullptr;
  int count = 0;
  v8::Local<v8::Array> list = v8::Array::New(isolate);
  if (uv_cpu_info(&cpus, &count) == 0) {
    for (int i = 0; i < count; ++i) {
      v8::Local<v8::Object> c = v8::Object::New(isolate);
      str(c, "model", cpus[i].model ? cpus[i].model : "");
      num(c, "speed", cpus[i].speed);
      v8::Local<v8::Object> times = v8::Object::New(isolate);
      num(times, "user", static_cast<double>(cpus[i].cpu_times.user));
      num(times, "nice", static_cast<double>(cpus[i].cpu_times.nice));
      num(times, "sys", static_cast<double>(cpus[i].cpu_times.sys));
      num(times, "idle", static_cast<double>(cpus[i].cpu_times.idle));
      num(times, "irq", static_cast<double>(cpus[i].cpu_times.irq));
      SetValue(ctx, c, "times", times);
      list->Set(ctx, static_cast<uint32_t>(i), c).Check();
    }
    uv_free_cpu_info(cpus, count);
  }
  SetValue(ctx, o, "cpus", list);
  args.GetReturnValue().Set(o);
}

// process.cpuUsage(): user and system CPU time of the process in microseconds.
void CpuUsage(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  uv_rusage_t ru;
  double user = 0, sys = 0;
  if (uv_getrusage(&ru) == 0) {
    user = static_cast<double>(ru.ru_utime.tv_sec) * 1e6 + static_cast<double>(ru.ru_utime.tv_usec);
    sys = static_cast<double>(ru.ru_stime.tv_sec) * 1e6 + static_cast<double>(ru.ru_stime.tv_usec);
  }
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  SetValue(ctx, o, "user", v8::Number::New(isolate, user));
  SetValue(ctx, o, "system", v8::Number::New(isolate, sys));
  args.GetReturnValue().Set(o);
}

// process.threadCpuUsage() (node 23.9+): the calling thread's user and system
// CPU time in microseconds. The total is the thread's CPU clock, which Linux
// keeps to the nanosecond; getrusage(RUSAGE_THREAD) alone counts a running
// thread's time only up to its last scheduler tick (4 ms here), so it only
// splits the total between user and system.
void ThreadCpuUsage(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  timespec ts{};
  double total = 0, user = 0, sys = 0;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
    total = static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
  }
  rusage ru{};
  double ticked_user = 0, ticked_sys = 0;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    ticked_user = static_cast<double>(ru.ru_utime.tv_sec) * 1e6 + static_cast<double>(ru.ru_utime.tv_usec);
    ticked_sys = static_cast<double>(ru.ru_stime.tv_sec) * 1e6 + static_cast<double>(ru.ru_stime.tv_usec);
  }
  const double ticked = ticked_user + ticked_sys;
  user = ticked > 0 ? total * ticked_user / ticked : total;
  sys = total - user;
  v8::Local<v8::Object> o = v8::Object::New(isolate);
  SetValue(ctx, o, "user", v8::Number::New(isolate, user));
  SetValue(ctx, o, "system", v8::Number::New(isolate, sys));
  args.GetReturnValue().Set(o);
}

void Exit(const Args& args) {
  int code = args[0]->Int32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  Self(args)->Exit(code);
}

void NoteExitCode(const Args& args) {
  Self(args)->NoteExitCode(args[0]->Int32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(0));
}

// reportUncaught(error): reports `error` as an uncaught exception, located
// where it was thrown (an ES module's failed evaluation surfaces as a
// promise's rejection, but is the script's uncaught error).
void ReportUncaught(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  Self(args)->ReportUncaught(args[0], v8::Exception::CreateMessage(isolate, args[0]), "Uncaught");
}

void Cwd(const Args& args) {
  char buf[PATH_MAX];
  const char* d = getcwd(buf, sizeof buf);
  args.GetReturnValue().Set(Str(args.GetIsolate(), d ? d : "/"));
}

// isatty(fd): whether the descriptor is a terminal (node's tty.isatty).
void Isatty(const Args& args) {
  v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
  int fd = args[0]->Int32Value(ctx).FromMaybe(-1);
  args.GetReturnValue().Set(fd >= 0 && isatty(fd) == 1);
}

// windowSize(fd) -> [columns, rows] of a terminal, or undefined (node's
// tty.WriteStream columns and rows, 0 where the terminal sets none).
void WindowSize(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  int fd = args[0]->Int32Value(isolate->GetCurrentContext()).FromMaybe(-1);
  winsize ws{};
  if (fd < 0 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0) return;
  v8::Local<v8::Value> parts[] = {v8::Integer::New(isolate, ws.ws_col), v8::Integer::New(isolate, ws.ws_row)};
  args.GetReturnValue().Set(v8::Array::New(isolate, parts, 2));
}

// promiseState(p) -> [state, result] for util.inspect: 0 pending (no
// result), 1 fulfilled, 2 rejected; undefined if p is not a promise.
void PromiseState(const Args& args) {
  if (!args[0]->IsPromise()) return;
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Promise> p = args[0].As<v8::Promise>();
  int state = p->State() == v8::Promise::kPending ? 0 : (p->State() == v8::Promise::kFulfilled ? 1 : 2);
  v8::Local<v8::Array> out = v8::Array::New(isolate, 2);
  out->Set(ctx, 0, v8::Integer::New(isolate, state)).Check();
  if (state != 0) out->Set(ctx, 1, p->Result()).Check();
  args.GetReturnValue().Set(out);
}

//////// files, compilation

void StatKind(const Args& args) {
  std::string path = ToUtf8(args.GetIsolate(), args[0]);
  struct stat st;
  int kind = 0;
  if (::stat(path.c_str(), &st) == 0) kind = S_ISREG(st.st_mode) ? 1 : (S_ISDIR(st.st_mode) ? 2 : 0);
  args.GetReturnValue().Set(kind);
}

void ReadFile(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string path = ToUtf8(isolate, args[0]);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string msg = std::string(errno == ENOENT ? "ENOENT" : "EIO") + ": " + std::strerror(errno) +
                      ", open '" + path + "'";
    ThrowTypeError(isolate, msg);
    return;
  }
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  args.GetReturnValue().Set(Str(isolate, data));
}

void CompileModule(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (!args[0]->IsString()) return ThrowTypeError(isolate, "module source must be a string");
  v8::ScriptOrigin origin(isolate, args[1]);
  v8::ScriptCompiler::Source source(args[0].As<v8::String>(), origin);
  v8::Local<v8::String> params[] = {Str(isolate, "exports"), Str(isolate, "require"),
                                    Str(isolate, "module"), Str(isolate, "__filename"),
                                    Str(isolate, "__dirname")};
  v8::Local<v8::Function> fn;
  if (v8::ScriptCompiler::CompileFunction(ctx, &source, 5, params).ToLocal(&fn)) {
    args.GetReturnValue().Set(fn);
  }
}

// vendorSource(name) -> the embedded library file `name` (vendor_sources.h),
// or undefined.
void VendorSource(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (const char* source = FindVendorSource(ToUtf8(isolate, args[0]))) {
    args.GetReturnValue().Set(Str(isolate, source));
  }
}

void RunScript(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (!args[0]->IsString()) return ThrowTypeError(isolate, "script source must be a string");
  v8::ScriptOrigin origin(isolate, args[1]);
  v8::Local<v8::Script> script;
  v8::Local<v8::Value> result;
  if (v8::Script::Compile(ctx, args[0].As<v8::String>(), &origin).ToLocal(&script) &&
      script->Run(ctx).ToLocal(&result)) {
    args.GetReturnValue().Set(result);
  }
}

//////// encoding

void Utf8Encode(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::String> s;
  if (!args[0]->ToString(isolate->GetCurrentContext()).ToLocal(&s)) return;
  size_t len = static_cast<size_t>(s->Utf8Length(isolate));
  auto ab = v8::ArrayBuffer::New(isolate, len);
  s->WriteUtf8(isolate, static_cast<char*>(ab->GetBackingStore()->Data()), static_cast<int>(len), nullptr,
               v8::String::NO_NULL_TERMINATION | v8::String::REPLACE_INVALID_UTF8);
  // A Buffer when the prelude defined it, so Buffer.from(str) shares this.
  args.GetReturnValue().Set(v8::Uint8Array::New(ab, 0, len));
}

void Utf8Decode(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (!args[0]->IsArrayBufferView()) return ThrowTypeError(isolate, "expected a Uint8Array");
  auto view = args[0].As<v8::ArrayBufferView>();
  size_t len = view->ByteLength();
  const char* data = static_cast<const char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset();
  if (args[1]->IsTrue() && !ValidUtf8(reinterpret_cast<const unsigned char*>(data), len)) {
    args.GetReturnValue().SetNull();
    return;
  }
  v8::Local<v8::String> s;
  if (!v8::String::NewFromUtf8(isolate, data, v8::NewStringType::kNormal, static_cast<int>(len)).ToLocal(&s)) {
    isolate->ThrowException(v8::Exception::RangeError(Str(isolate, "string too long")));
    return;
  }
  args.GetReturnValue().Set(s);
}

void ToJson(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  std::string out;
  Status s;
  {
    v8::TryCatch tc(isolate);
    s = V8ToJson(isolate->GetCurrentContext(), args[0], &out);
    if (!s.ok() && tc.HasCaught()) {
      tc.ReThrow();
      return;
    }
  }
  if (!s.ok()) {
    ThrowTypeError(isolate, s.reason());  // outside the TryCatch, which would swallow it
    return;
  }
  args.GetReturnValue().Set(Str(isolate, out));
}

void QueueMicrotask(const Args& args) {
  if (args[0]->IsFunction()) args.GetIsolate()->EnqueueMicrotask(args[0].As<v8::Function>());
}

//////// timers

void TimerStart(const Args& args) {
  v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
  uint32_t id = args[0]->Uint32Value(ctx).FromMaybe(0);
  double ms = args[1]->NumberValue(ctx).FromMaybe(1);
  Self(args)->TimerStart(id, static_cast<uint64_t>(ms < 1 ? 1 : ms), args[2]->IsTrue());
}

void TimerStop(const Args& args) {
  Self(args)->TimerStop(args[0]->Uint32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(0));
}

void TimerRef(const Args& args) {
  Self(args)->TimerRef(args[0]->Uint32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(0),
                       args[1]->IsTrue());
}

void ImmediateStart(const Args& args) { Self(args)->ImmediateStart(); }
void ImmediateStop(const Args& args) { Self(args)->ImmediateStop(); }
void RunMicrotasks(const Args& args) { args.GetReturnValue().Set(Self(args)->RunMicrotasks()); }
void ProcessRejections(const Args& args) { args.GetReturnValue().Set(Self(args)->ProcessRejections()); }

//////// threads, tasks, messages

void PostMessage(const Args& args) {
  IsolateThread* t = Self(args);
  int target = args[0]->Int32Value(args.GetIsolate()->GetCurrentContext()).FromMaybe(-1);
  if (target >= t->pool()->size() || target < IsolatePool::kAllThreads) {
    return ThrowTypeError(args.GetIsolate(), "no isolate thread " + std::to_string(target));
  }
  t->pool()->PostMessage(t->id(), target, ToUtf8(args.GetIsolate(), args[1]));
}

void PostTask(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  IsolateThread* t = Self(args);
  int target = args[0]->Int32Value(ctx).FromMaybe(-1);
  if (target >= t->pool()->size() || target < IsolatePool::kAnyThread) {
    return ThrowTypeError(isolate, "no isolate thread " + std::to_string(target));
  }
  uint64_t reply_id = static_cast<uint64_t>(args[3]->NumberValue(ctx).FromMaybe(0));
  IsolatePool::Impl* pool = t->pool();
  int self_id = t->id();
  uint64_t epoch = t->epoch();
  t->AwaitReply();
  pool->PostTask(target, ToUtf8(isolate, args[1]), ToUtf8(isolate, args[2]),
                 [pool, self_id, epoch, reply_id](Result<std::string> r) {
                   Job reply;
                   reply.kind = Job::Kind::kReply;
                   reply.reply_id = reply_id;
                   reply.epoch = epoch;
                   reply.ok = r.ok();
                   reply.text = r.ok() ? std::move(r.value()) : r.status().reason();
                   pool->thread(self_id)->Post(std::move(reply));
                 });
}

void TaskDone(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  IsolateThread* t = Self(args);
  uint64_t id = static_cast<uint64_t>(args[0]->NumberValue(ctx).FromMaybe(0));
  bool ok = args[1]->IsTrue();
  bool raw = args[3]->IsTrue();
  if (!ok) {
    t->FinishTask(id, Status::Internal(ToUtf8(isolate, args[2])));
    return;
  }
  if (raw) {
    // A map share's results (TaskJsonText) are a few hundred KB: ToUtf8
    // writes a string once (StringToUtf8), not measured and copied twice.
    t->FinishTask(id, ToUtf8(isolate, args[2]));
    return;
  }
  std::string json;
  v8::TryCatch tc(isolate);
  Status s = V8ToJson(ctx, args[2], &json);
  if (!s.ok()) {
    std::string reason = s.reason();
    if (tc.HasCaught() && !tc.HasTerminated()) reason += ": " + ToUtf8(isolate, tc.Exception());
    t->FinishTask(id, Status(s.code(), "task result: " + reason));
    return;
  }
  t->FinishTask(id, std::move(json));
}

}  // namespace

void InstallNodeBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Isolate* isolate = t->isolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  const PoolOptions& opts = t->pool()->options();

  SetFn(ctx, native, "print", Print);
  SetFn(ctx, native, "now", Now);
  SetFn(ctx, native, "hrtime", Hrtime);
  SetFn(ctx, native, "memoryUsage", MemoryUsage);
  SetFn(ctx, native, "cpuUsage", CpuUsage);
  SetFn(ctx, native, "threadCpuUsage", ThreadCpuUsage);
  SetFn(ctx, native, "osInfo", OsInfo);
  SetFn(ctx, native, "exit", Exit);
  SetFn(ctx, native, "noteExitCode", NoteExitCode);
  SetFn(ctx, native, "reportUncaught", ReportUncaught);
  SetFn(ctx, native, "cwd", Cwd);
  SetFn(ctx, native, "isatty", Isatty);
  SetFn(ctx, native, "windowSize", WindowSize);
  SetFn(ctx, native, "promiseState", PromiseState);
  SetFn(ctx, native, "statKind", StatKind);
  SetFn(ctx, native, "readFile", ReadFile);
  SetFn(ctx, native, "compileModule", CompileModule);
  SetFn(ctx, native, "vendorSource", VendorSource);
  SetFn(ctx, native, "runScript", RunScript);
  SetFn(ctx, native, "utf8Encode", Utf8Encode);
  SetFn(ctx, native, "utf8Decode", Utf8Decode);
  SetFn(ctx, native, "toJson", ToJson);
  SetFn(ctx, native, "queueMicrotask", QueueMicrotask);
  SetFn(ctx, native, "timerStart", TimerStart);
  SetFn(ctx, native, "timerStop", TimerStop);
  SetFn(ctx, native, "timerRef", TimerRef);
  SetFn(ctx, native, "immediateStart", ImmediateStart);
  SetFn(ctx, native, "immediateStop", ImmediateStop);
  SetFn(ctx, native, "runMicrotasks", RunMicrotasks);
  SetFn(ctx, native, "processRejections", ProcessRejections);
  SetFn(ctx, native, "postMessage", PostMessage);
  SetFn(ctx, native, "postTask", PostTask);
  SetFn(ctx, native, "taskDone", TaskDone);

  v8::Local<v8::Array> argv = v8::Array::New(isolate, static_cast<int>(opts.argv.size()));
  for (size_t i = 0; i < opts.argv.size(); ++i) {
    argv->Set(ctx, static_cast<uint32_t>(i), Str(isolate, opts.argv[i])).Check();
  }
  SetValue(ctx, native, "argv", argv);
  v8::Local<v8::Object> env = v8::Object::New(isolate);
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env->Set(ctx, Str(isolate, kv.substr(0, eq)), Str(isolate, kv.substr(eq + 1))).Check();
  }
  SetValue(ctx, native, "env", env);
  SetValue(ctx, native, "pid", v8::Integer::New(isolate, static_cast<int>(getpid())));
  SetValue(ctx, native, "ppid", v8::Integer::New(isolate, static_cast<int>(getppid())));
  SetValue(ctx, native, "platform", Str(isolate, "linux"));
#if defined(__x86_64__)
  SetValue(ctx, native, "arch", Str(isolate, "x64"));
#elif defined(__aarch64__)
  SetValue(ctx, native, "arch", Str(isolate, "arm64"));
#else
  SetValue(ctx, native, "arch", Str(isolate, "unknown"));
#endif
  SetValue(ctx, native, "nodeVersion", Str(isolate, NODE_VERSION_STRING));
  SetValue(ctx, native, "v8Version", Str(isolate, v8::V8::GetVersion()));
  SetValue(ctx, native, "version", Str(isolate, "0.1.0"));
  SetValue(ctx, native, "threadId", v8::Integer::New(isolate, t->id()));
  SetValue(ctx, native, "threadCount", v8::Integer::New(isolate, t->pool()->size()));
  SetValue(ctx, native, "restartCount", v8::Integer::New(isolate, t->restart_count()));
}

void SetFn(v8::Local<v8::Context> ctx, v8::Local<v8::Object> obj, const char* name,
           v8::FunctionCallback fn) {
  v8::Isolate* isolate = ctx->GetIsolate();
  v8::Local<v8::Function> f =
      v8::FunctionTemplate::New(isolate, fn, v8::Local<v8::Value>(), v8::Local<v8::Signature>(), 0,
                                v8::ConstructorBehavior::kThrow)
          ->GetFunction(ctx)
          .ToLocalChecked();
  obj->Set(ctx, ToV8String(isolate, name), f).Check();
}

}  // namespace settee::js
