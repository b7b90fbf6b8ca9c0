// The `native.child*` functions behind js/prelude/child_process.js (node's
// child_process without streams): a program started with posix_spawn, its
// input written and its output collected whole, waited for with a timeout
// and a kill signal. Synchronous calls do it on the isolate's thread;
// asynchronous ones start the child there (so JS has its pid at once) and
// feed and wait for it as a PoolJob (js/pool_job.h).
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "js/pool_job.h"

extern char** environ;

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

struct ChildSpec {
  std::string file;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V"; empty: the process's environment
  bool has_env = false;
  std::string cwd;
  std::string input;
  int timeout_ms = 0;
  int kill_signal = SIGTERM;
  size_t max_buffer = 1024 * 1024;
};

struct ChildOutcome {
  pid_t pid = -1;
  int status = -1;     // exit code, or -1 if killed by a signal
  int signal = 0;      // the signal that ended it
  std::string out, err;
  int spawn_errno = 0; // the child could not be started
  bool timed_out = false;
  bool overflowed = false;  // maxBuffer exceeded (the child was killed)
  int fds[3] = {-1, -1, -1};  // the parent's ends: child's stdin, stdout, stderr
};

// Starts the child with its three standard streams on pipes.
void Spawn(const ChildSpec& spec, ChildOutcome* o) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    o->spawn_errno = errno;
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // `settee run` ignores SIGPIPE, as node does, and an ignored signal
  // stays ignored across exec: the child gets the default back (and no
  // blocked signals), as libuv's children do, so that `yes | head` ends.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawnp(&o->pid, spec.file.c_str(), &actions, &attr, argv.data(),
                              spec.has_env ? envp.data() : environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    o->spawn_errno = rc;
    o->pid = -1;
    close(in[1]);
    close(out[0]);
    close(err[0]);
    return;
  }
  o->fds[0] = in[1];
  o->fds[1] = out[0];
  o->fds[2] = err[0];
}

// write() to a pipe whose reader may be gone: EPIPE instead of SIGPIPE,
// without changing the process's signal disposition (an embedder's), by
// blocking SIGPIPE on this thread and consuming one the write raised.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  const ssize_t w = write(fd, data, size);
  const int saved = errno;
  if (w < 0 && errno == EPIPE) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

// Writes the input, reads both outputs until they close, then reaps the
// child; kills it on timeout or when an output passes maxBuffer.
void Finish(const ChildSpec& spec, ChildOutcome* o) {
  if (o->pid < 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec.timeout_ms);
  size_t written = 0;
  if (spec.input.empty()) {
    close(o->fds[0]);
    o->fds[0] = -1;
  } else {
    fcntl(o->fds[0], F_SETFL, O_NONBLOCK);
  }
  bool killed = false;
  while (o->fds[0] >= 0 || o->fds[1] >= 0 || o->fds[2] >= 0) {
    pollfd p[3];
    int n = 0;
    int which[3];
    if (o->fds[0] >= 0) { p[n] = {o->fds[0], POLLOUT, 0}; which[n++] = 0; }
    if (o->fds[1] >= 0) { p[n] = {o->fds[1], POLLIN, 0}; which[n++] = 1; }
    if (o->fds[2] >= 0) { p[n] = {o->fds[2], POLLIN, 0}; which[n++] = 2; }
    int wait_ms = -1;
    if (spec.timeout_ms > 0 && !killed) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    const int ready = poll(p, n, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && !killed) {
      kill(o->pid, spec.kill_signal);
      killed = true;
      o->timed_out = true;
      continue;
    }
    for (int i = 0; i < n; ++i) {
      if (p[i].revents == 0) continue;
      int& fd = o->fds[which[i]];
      if (which[i] == 0) {
        const ssize_t w = WriteNoSigpipe(fd, spec.input.data() + written, spec.input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) written = spec.input.size();  // the child closed its stdin
        if (written == spec.input.size()) { close(fd); fd = -1; }
        continue;
      }
      char buf[65536];
      const ssize_t r = read(fd, buf, sizeof buf);
      if (r > 0) {
        std::string& sink = which[i] == 1 ? o->out : o->err;
        sink.append(buf, static_cast<size_t>(r));
        if (sink.size() > spec.max_buffer && !killed) {
          kill(o->pid, spec.kill_signal);
          killed = true;
          o->overflowed = true;
        }
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        fd = -1;
      }
    }
  }
  int wstatus = 0;
  while (waitpid(o->pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) o->status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) o->signal = WTERMSIG(wstatus);
}

bool ReadSpec(const Args& args, int at, ChildSpec* spec) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (!args[at]->IsString() || !args[at + 1]->IsArray()) return false;
  spec->file = ToUtf8(isolate, args[at]);
  auto list = args[at + 1].As<v8::Array>();
  for (uint32_t i = 0; i < list->Length(); ++i) {
    v8::Local<v8::Value> v;
    if (!list->Get(ctx, i).ToLocal(&v)) return false;
    spec->argv.push_back(ToUtf8(isolate, v));
  }
  if (args[at + 2]->IsArray()) {
    spec->has_env = true;
    auto env = args[at + 2].As<v8::Array>();
    for (uint32_t i = 0; i < env->Length(); ++i) {
      v8::Local<v8::Value> v;
      if (!env->Get(ctx, i).ToLocal(&v)) return false;
      spec->env.push_back(ToUtf8(isolate, v));
    }
  }
  if (args[at + 3]->IsString()) spec->cwd = ToUtf8(isolate, args[at + 3]);
  if (args[at + 4]->IsArrayBufferView()) {
    auto view = args[at + 4].As<v8::ArrayBufferView>();
    spec->input.resize(view->ByteLength());
    view->CopyContents(spec->input.data(), spec->input.size());
  }
  spec->timeout_ms = args[at + 5]->Int32Value(ctx).FromMaybe(0);
  spec->kill_signal = args[at + 6]->Int32Value(ctx).FromMaybe(SIGTERM);
  const double max_buffer = args[at + 7]->NumberValue(ctx).FromMaybe(1024 * 1024);
  spec->max_buffer = max_buffer > 0 && max_buffer < 9e15 ? static_cast<size_t>(max_buffer) : SIZE_MAX;
  return true;
}

v8::Local<v8::Value> Result(v8::Isolate* isolate, const ChildOutcome& o) {
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Object> r = v8::Object::New(isolate);
  auto bytes = [&](const std::string& s) {
    auto store = v8::ArrayBuffer::NewBackingStore(isolate, s.size());
    if (!s.empty()) std::memcpy(store->Data(), s.data(), s.size());
    return v8::Uint8Array::New(v8::ArrayBuffer::New(isolate, std::move(store)), 0, s.size());
  };
  auto set = [&](const char* k, v8::Local<v8::Value> v) { r->Set(ctx, ToV8String(isolate, k), v).FromMaybe(false); };
  set("pid", v8::Integer::New(isolate, o.pid));
  set("status", o.status >= 0 ? v8::Local<v8::Value>(v8::Integer::New(isolate, o.status))
                               : v8::Local<v8::Value>(v8::Null(isolate)));
  set("signal", v8::Integer::New(isolate, o.signal));
  set("stdout", bytes(o.out));
  set("stderr", bytes(o.err));
  set("spawnErrno", v8::Integer::New(isolate, o.spawn_errno));
  if (o.spawn_errno != 0) set("spawnError", ToV8String(isolate, std::strerror(o.spawn_errno)));
  set("timedOut", v8::Boolean::New(isolate, o.timed_out));
  set("overflowed", v8::Boolean::New(isolate, o.overflowed));
  return r;
}

// native.childSync(file, argv, env|null, cwd|null, input|null, timeoutMs,
// killSignal, maxBuffer) -> {pid, status, signal, stdout, stderr, ...}.
void ChildSync(const Args& args) {
  ChildSpec spec;
  if (!ReadSpec(args, 0, &spec)) return;
  ChildOutcome o;
  Spawn(spec, &o);
  Finish(spec, &o);
  args.GetReturnValue().Set(Result(args.GetIsolate(), o));
}

struct ChildJob final : PoolJob {
  ChildSpec spec;
  ChildOutcome outcome;
  void Run() override { Finish(spec, &outcome); }
};

// native.childStart(feedId, ...childSync's arguments) -> pid, or -errno if it
// could not start (the answer then comes through the feed as well).
void ChildStart(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto job = std::make_shared<ChildJob>();
  if (!ReadSpec(args, 1, &job->spec)) return;
  Spawn(job->spec, &job->outcome);
  const int answer = job->outcome.pid > 0 ? job->outcome.pid : -job->outcome.spawn_errno;
  StartPoolJob(t, feed_id, std::move(job));
  args.GetReturnValue().Set(answer);
}

// native.childResult(feedId) -> undefined until the child has exited; then
// childSync's answer, and the feed is closed.
void ChildResult(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto job = std::static_pointer_cast<ChildJob>(TakeFinishedPoolJob(t, feed_id));
  if (job) args.GetReturnValue().Set(Result(args.GetIsolate(), job->outcome));
}

// native.childKill(pid, signal) -> whether the signal was sent.
void ChildKill(const Args& args) {
  v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
  const int pid = args[0]->Int32Value(ctx).FromMaybe(0);
  const int sig = args[1]->Int32Value(ctx).FromMaybe(SIGTERM);
  args.GetReturnValue().Set(pid > 0 && kill(pid, sig) == 0);
}

}  // namespace

void InstallChildProcessBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "childSync", ChildSync);
  SetFn(ctx, native, "childStart", ChildStart);
  SetFn(ctx, native, "childResult", ChildResult);
  SetFn(ctx, native, "childKill", ChildKill);
}

}  // namespace settee::js
