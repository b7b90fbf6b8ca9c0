#include "bench/harness/subprocess.h"

#include "bench/harness/child_process.h"  // FindInPath
#include "bench/harness/machine.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace settee::bench {

namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000 * 1000));
}

int ExitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

// Appends what `fd` holds without blocking; closes it (and sets it to -1) at
// end of file or on error.
void Drain(int* fd, std::string* into) {
  char buf[16384];
  while (*fd >= 0) {
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      close(*fd);
      *fd = -1;
    }
  }
}

}  // namespace

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(const std::vector<std::string>& argv,
                                                      const SpawnOptions& options) {
  if (argv.empty()) return Status::BadRequest("no command to run");
  std::string exe = FindInPath(argv[0]);
  if (exe.empty()) return Status::NotFound("no executable '" + argv[0] + "' on PATH");

  // Everything the child touches is prepared before fork(): between fork and
  // exec it may only make async-signal-safe calls.
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int log_fd = -1;
  auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], log_fd})
      if (fd >= 0) close(fd);
  };
  if (!options.log_path.empty()) {
    log_fd = open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return Status::IOError("cannot open " + options.log_path + ": " + std::strerror(errno));
  } else if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close_all();
    return Status::IOError(std::string("pipe: ") + std::strerror(e));
  }
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close_all();
    if (null_fd >= 0) close(null_fd);
    return Status::IOError(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    // A bench killed mid-run must not leave its servers running.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (null_fd >= 0) dup2(null_fd, 0);
    dup2(log_fd >= 0 ? log_fd : out_pipe[1], 1);
    dup2(log_fd >= 0 ? log_fd : err_pipe[1], 2);
    if (cwd && chdir(cwd) != 0) _exit(127);
    execv(exe.c_str(), cargv.data());
    _exit(127);
  }

  if (null_fd >= 0) close(null_fd);
  if (log_fd >= 0) close(log_fd);
  auto child = std::unique_ptr<Subprocess>(new Subprocess());
  child->pid_ = pid;
  if (out_pipe[1] >= 0) {
    close(out_pipe[1]);
    close(err_pipe[1]);
    child->out_fd_ = out_pipe[0];
    child->err_fd_ = err_pipe[0];
    fcntl(child->out_fd_, F_SETFL, O_NONBLOCK);
    fcntl(child->err_fd_, F_SETFL, O_NONBLOCK);
  }
  // A pidfd makes the exit itself pollable, beside the pipes (which a
  // grandchild may hold open after the child is gone).
  child->pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return child;
}

Subprocess::~Subprocess() {
  if (running() && pid_ > 0) {
    kill(pid_, SIGKILL);
    Reap(/*block=*/true);
  }
  for (int fd : {out_fd_, err_fd_, pid_fd_})
    if (fd >= 0) close(fd);
}

void Subprocess::Reap(bool block) {
  if (!running()) return;
  int wstatus = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &wstatus, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_code_ = ExitCodeOf(wstatus);
  } else if (r < 0) {
    exit_code_ = -1;  // not our child any more (reaped elsewhere)
  }
  if (!running()) {
    // Whatever it wrote before exiting is in the pipes now.
    Drain(&out_fd_, &out_);
    Drain(&err_fd_, &err_);
    for (int* fd : {&out_fd_, &err_fd_, &pid_fd_})
      if (*fd >= 0) {
        close(*fd);
        *fd = -1;
      }
  }
}

void Subprocess::PumpMany(const std::vector<Subprocess*>& children, int wait_ms) {
  std::vector<pollfd> fds;
  bool need_tick = false;  // a running child without a pidfd is polled for exit
  for (Subprocess* c : children) {
    if (!c->running()) continue;
    for (int fd : {c->out_fd_, c->err_fd_, c->pid_fd_})
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    if (c->pid_fd_ < 0) need_tick = true;
  }
  if (need_tick) wait_ms = std::min(wait_ms, 10);
  if (!fds.empty() || wait_ms > 0) poll(fds.data(), fds.size(), wait_ms);
  for (Subprocess* c : children) {
    if (!c->running()) continue;
    Drain(&c->out_fd_, &c->out_);
    Drain(&c->err_fd_, &c->err_);
    c->Reap(/*block=*/false);
  }
}

Result<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  Status s = WaitAll({this}, timeout);
  if (!s.ok()) return s;
  return *exit_code_;
}

Status Subprocess::WaitAll(const std::vector<Subprocess*>& children, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    bool any_running = false;
    for (Subprocess* c : children) any_running |= c->running();
    if (!any_running) return Status::OK();
    int left = RemainingMs(deadline);
    if (left == 0) {
      // One last look: a child may have exited just now.
      PumpMany(children, 0);
      for (Subprocess* c : children)
        if (c->running())
          return Status(Status::Code::kTimeout,
                        "process " + std::to_string(c->pid_) + " still running after " +
                            std::to_string(timeout.count()) + " ms");
      return Status::OK();
    }
    PumpMany(children, left);
  }
}

void Subprocess::NotePeakRss() {
  if (!running() || pid_ <= 0) return;
  double mb = ProcessPeakRssMb(pid_);
  if (mb >= 0) peak_rss_mb_ = mb;
}

int Subprocess::Stop(std::chrono::milliseconds grace) {
  if (running()) {
    NotePeakRss();
    kill(pid_, SIGTERM);
    if (!Wait(grace).ok()) {
      kill(pid_, SIGKILL);
      Reap(/*block=*/true);
    }
  }
  return exit_code_.value_or(-1);
}

}  // namespace settee::bench
