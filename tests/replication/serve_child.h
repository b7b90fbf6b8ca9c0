// A `settee serve --port 0` child process on loopback (memory backend), for
// tests that need a real CouchDB-compatible server: its URL is read from
// the line it prints, so parallel tests never share a port. Stopped with
// SIGTERM when it goes out of scope.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace settee::testing {

class ServeChild {
 public:
  // `binary`: the settee executable; `log`: where its output goes.
  ServeChild(const std::string& binary, std::string log) : log_(std::move(log)) {
    unlink(log_.c_str());  // a line from an earlier child must not be read as this one's
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl(binary.c_str(), binary.c_str(), "serve", "--port", "0", "--bind", "127.0.0.1", "--backend",
            "memory", "--threads", "1", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~ServeChild() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  ServeChild(const ServeChild&) = delete;
  ServeChild& operator=(const ServeChild&) = delete;

  // "http://127.0.0.1:PORT", or "" when it did not come up within 10 s.
  std::string Url() const {
    const std::string marker = "listening on ";
    for (int i = 0; i < 400; ++i) {
      std::string log = Log();
      size_t at = log.find(marker + "http://");
      if (at != std::string::npos) {
        at += marker.size();
        size_t end = log.find('/', at + 7);
        if (end != std::string::npos) return log.substr(at, end - at);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return "";
  }
  std::string Log() const {
    std::ifstream f(log_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace settee::testing
