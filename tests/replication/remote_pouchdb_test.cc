// `new PouchDB(url)` in settee's JS runtime, end to end: a real
// `settee serve` child on a free loopback port, and `settee run` of
// tests/js/scripts/http_adapter.js against it (the remote database API and
// replication to, from and with it through settee's replicator).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `settee serve --port 0` with its output in a file; the URL it prints.
class Server {
 public:
  Server() {
    log_ = testing::TempDir() + "/remote_pouchdb_serve_" + std::to_string(getpid()) + ".log";
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl(SETTEE_BINARY, SETTEE_BINARY, "serve", "--port", "0", "--bind", "127.0.0.1", "--backend",
            "memory", "--threads", "1", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  // "http://127.0.0.1:PORT", or "" when it did not come up.
  std::string Url() {
    const std::string marker = "listening on http://";
    for (int i = 0; i < 400; ++i) {
      std::string log = Slurp(log_);
      size_t at = log.find(marker);
      if (at != std::string::npos) {
        size_t end = log.find('/', at + marker.size());
        if (end != std::string::npos) return log.substr(at + 12, end - at - 12);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return "";
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

TEST(RemotePouchDb, HttpAdapterScript) {
  Server server;
  std::string url = server.Url();
  ASSERT_FALSE(url.empty()) << "settee serve did not start";
  std::string out = testing::TempDir() + "/remote_pouchdb_out_" + std::to_string(getpid());
  std::string cmd = std::string("timeout 120 ") + SETTEE_BINARY + " run " + SETTEE_JS_SCRIPTS_DIR +
                    "/http_adapter.js " + url + " >" + out + " 2>&1";
  int status = std::system(cmd.c_str());
  std::string text = Slurp(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, testing::HasSubstr("all 7 passed")) << text;
}

}  // namespace
