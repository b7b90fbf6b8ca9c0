#include "bench/harness/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace settee::bench {

std::string FindInPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string full = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

Result<std::unique_ptr<Child>> Child::Spawn(const std::vector<std::string>& argv, const std::string& cwd,
                                             const std::string& stderr_path) {
  if (argv.empty()) return Status::BadRequest("no program to run");
  std::string program = FindInPath(argv[0]);
  if (program.empty()) return Status::NotFound(argv[0] + " was not found in PATH");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.empty() ? "/dev/null" : stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Status::Internal("cannot start " + program + ": " + std::strerror(rc));
  }
  std::unique_ptr<Child> child(new Child());
  child->pid_ = pid;
  child->out_ = fdopen(fds[0], "r");
  child->stderr_path_ = stderr_path;
  return child;
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    Wait();
  }
  if (out_) fclose(out_);
}

bool Child::ReadLine(std::string* line) {
  line->clear();
  if (!out_) return false;
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n = getline(&buf, &cap, out_);
  if (n < 0) {
    free(buf);
    return false;
  }
  if (n > 0 && buf[n - 1] == '\n') --n;
  line->assign(buf, static_cast<size_t>(n));
  free(buf);
  return true;
}

void Child::Signal(int sig) {
  if (!reaped_ && pid_ > 0) kill(pid_, sig);
}

ChildExit Child::Wait() {
  ChildExit e;
  if (reaped_ || pid_ <= 0) return e;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  if (r == pid_) {
    if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  }
  if (!stderr_path_.empty()) {
    std::ifstream f(stderr_path_, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    constexpr size_t kTail = 4096;
    e.stderr_tail = text.size() > kTail ? text.substr(text.size() - kTail) : text;
  }
  return e;
}

}  // namespace settee::bench
