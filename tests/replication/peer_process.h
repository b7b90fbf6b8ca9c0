// A `settee serve` child process for replication tests (the fault test and
// the `settee replicate` CLI test), killed with SIGKILL on demand.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "replication/http_client.h"

namespace settee::replication {

// A `settee serve` child process on a fixed port (the port is part of the
// replication id, so a restarted peer must keep it).
class PeerProcess {
 public:
  // `data` empty: the memory backend.
  PeerProcess(std::string binary, int port, std::string data)
      : binary_(std::move(binary)), port_(port), data_(std::move(data)) {}
  ~PeerProcess() { Kill(); }

  void Start() {
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      const char* backend = data_.empty() ? "memory" : "leveldb";
      const char* data = data_.empty() ? "." : data_.c_str();
      execl(binary_.c_str(), binary_.c_str(), "serve", "--port", port.c_str(), "--backend",
            backend, "--data", data, "--log-level", "error", "--threads", "1",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    HttpClient client({});
    for (int i = 0; i < 200; ++i) {
      auto r = client.Request("GET", Root());
      if (r.ok() && r->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    FAIL() << "settee serve did not come up on port " << port_;
  }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Root() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  std::string binary_;
  int port_;
  std::string data_;
  pid_t pid_ = -1;
};

}  // namespace settee::replication
