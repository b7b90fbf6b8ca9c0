// `settee serve`'s design-document options end to end, on the real
// executable: --view-timeout-ms stops a map function that loops forever
// (CouchDB's error shape, the server still serving, the isolate replaced),
// --view-threads sets how many isolate threads run design-document code, and
// what design functions report goes through the server's log and its
// --log-level; admins and the log level changed through
// /_node/_local/_config are written back into the --config file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "replication/http_client.h"
#include "util/json.h"

namespace settee {
namespace {

// A `settee serve --port 0` child on the memory backend; the port is read
// from its "listening on" line. Its stderr goes to `stderr_path` if given.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> extra, std::string log_level = "none",
                        std::string stderr_path = {}) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      if (!stderr_path.empty()) {
        FILE* err = std::fopen(stderr_path.c_str(), "w");
        if (err != nullptr) dup2(fileno(err), STDERR_FILENO);
      }
      std::vector<std::string> args = {SETTEE_BINARY, "serve", "--port", "0", "--bind", "127.0.0.1",
                                       "--backend", "memory", "--log-level", log_level, "--threads", "1"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    // Kept open while the child lives, so that its later writes to stdout
    // do not fail.
    out_ = fdopen(fds[0], "r");
    char line[512];
    while (out_ != nullptr && std::fgets(line, sizeof line, out_) != nullptr) {
      std::string l(line);
      auto at = l.find("listening on http://");
      if (at == std::string::npos) continue;
      auto colon = l.find(':', at + 20);
      port_ = std::atoi(l.c_str() + colon + 1);
      break;
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ != nullptr) std::fclose(out_);
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // The process's thread count (/proc).
  int Threads() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int port_ = 0;
};

replication::HttpResponse Req(const ServeProcess& server, const std::string& method,
                              const std::string& path, const std::string& body = {}) {
  replication::HttpClient client({});
  auto r = client.Request(method, server.Url(path), body);
  EXPECT_TRUE(r.ok()) << method << " " << path << ": " << r.status().ToString();
  return r.ok() ? *r : replication::HttpResponse{};
}

// A database of a few hundred docs (enough for every isolate thread to get
// a share) with a view that works and one that loops forever.
void Fill(const ServeProcess& server) {
  ASSERT_EQ(Req(server, "PUT", "/db").status, 201);
  std::string docs = R"({"docs":[)";
  for (int i = 0; i < 600; ++i) docs += std::string(i ? "," : "") + R"({"n":)" + std::to_string(i) + "}";
  ASSERT_EQ(Req(server, "POST", "/db/_bulk_docs", docs + "]}").status, 201);
  ASSERT_EQ(Req(server, "PUT", "/db/_design/d",
                R"({"views":{"count":{"map":"function (doc) { emit(doc.n % 3, 1); }","reduce":"_count"},)"
                R"("loop":{"map":"function (doc) { while (true) {} }"}}})")
                .status,
            201);
}

TEST(ServeCommandTest, ViewTimeoutStopsALoopingMapAndTheServerServesOn) {
  ServeProcess server({"--view-threads", "2", "--view-timeout-ms", "200"});
  ASSERT_GT(server.port(), 0) << "settee serve did not say where it listens";
  Fill(server);
  const auto start = std::chrono::steady_clock::now();
  auto r = Req(server, "GET", "/db/_design/d/_view/loop");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 500) << r.body;
  json::Document d;
  ASSERT_TRUE(json::Parse(r.body, &d).ok()) << r.body;
  ASSERT_TRUE(d.IsObject() && d.HasMember("error") && d.HasMember("reason")) << r.body;
  EXPECT_STREQ(d["error"].GetString(), "timeout") << r.body;
  EXPECT_NE(std::string(d["reason"].GetString()).find("after 200ms"), std::string::npos) << r.body;
  // The option's budget, not the default 5 s, stopped it (a wide margin for
  // a loaded machine).
  EXPECT_LT(took, std::chrono::milliseconds(4000));
  // The server and its isolates serve on: the other view of the same index
  // answers (the failed update left the index as it was and is redone).
  EXPECT_EQ(Req(server, "GET", "/").status, 200);
  r = Req(server, "GET", "/db/_design/d/_view/count?stale=ok");
  EXPECT_EQ(r.status, 200) << r.body;
  // Design doc d's views share one index, so its update keeps failing while
  // "loop" is in it; a design doc of its own builds.
  ASSERT_EQ(Req(server, "PUT", "/db/_design/ok",
                R"({"views":{"count":{"map":"function (doc) { emit(doc.n % 3, 1); }","reduce":"_count"}}})")
                .status,
            201);
  r = Req(server, "GET", "/db/_design/ok/_view/count?group=true");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"rows":[{"key":0,"value":200},{"key":1,"value":200},{"key":2,"value":200}]})" "\n");
}

TEST(ServeCommandTest, ViewThreadsSetsTheIsolateThreads) {
  // The same server with 1 and with 4 isolate threads, after a view query
  // started the pool: the difference in threads is the 3 isolate threads.
  int threads[2] = {0, 0};
  const char* counts[2] = {"1", "4"};
  for (int i = 0; i < 2; ++i) {
    ServeProcess server({"--view-threads", counts[i]});
    ASSERT_GT(server.port(), 0);
    Fill(server);
    ASSERT_EQ(Req(server, "POST", "/db/_temp_view", R"({"map":"function (doc) { emit(doc.n, null); }"})").status,
              200);
    threads[i] = server.Threads();
  }
  EXPECT_EQ(threads[1] - threads[0], 3) << "1 view thread: " << threads[0] << " threads, 4: " << threads[1];
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ServeCommandTest, DesignFunctionReportsFollowTheLogLevel) {
  // A map function's timeout is reported on stderr as a warning of the
  // server's log, and not at all under --log-level none.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(getpid());
  const std::string levels[2] = {"warning", "none"};
  std::string logged[2];
  for (int i = 0; i < 2; ++i) {
    const auto path = dir / ("serve_command_test_" + pid + "_" + levels[i] + ".err");
    {
      ServeProcess server({"--view-timeout-ms", "200"}, levels[i], path.string());
      ASSERT_GT(server.port(), 0);
      Fill(server);
      EXPECT_EQ(Req(server, "GET", "/db/_design/d/_view/loop").status, 500);
    }
    logged[i] = ReadFile(path);
    std::filesystem::remove(path);
  }
  EXPECT_NE(logged[0].find("design function on view thread"), std::string::npos) << logged[0];
  EXPECT_NE(logged[0].find("200"), std::string::npos) << logged[0];
  EXPECT_EQ(logged[1], "");
}

TEST(ServeCommandTest, ConfigChangesAreWrittenBackToTheConfigFile) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("settee-serve-config-" + std::to_string(getpid()) + ".toml")).string();
  {
    std::ofstream f(path);
    f << "# kept\n[serve]\nadmin = [\"root:pw\"]\n";
  }
  {
    ServeProcess server({"--config", path});
    ASSERT_GT(server.port(), 0);
    const std::string root = "http://root:pw@127.0.0.1:" + std::to_string(server.port());
    replication::HttpClient client({});
    auto r = client.Request("PUT", root + "/_node/_local/_config/admins/second", R"("secret")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
    // A password the file cannot hold is refused before it is applied, with
    // a reason that does not name the file.
    r = client.Request("PUT", root + "/_node/_local/_config/admins/third", R"("p#w")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(r->body.find(path), std::string::npos) << r->body;
    r = client.Request("GET", "http://third:p%23w@127.0.0.1:" + std::to_string(server.port()) + "/_all_dbs");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401) << r->body;
    // CouchDB's name; the file gets settee's, which --log-level reads.
    r = client.Request("PUT", root + "/_node/_local/_config/log/level", R"("notice")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
  }
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "# kept\n[serve]\nadmin = [\"root:pw\", \"second:secret\"]\nlog-level = \"info\"\n");
  {
    // A restart reads them (the server starts: the level is one it knows),
    // and the new admin logs in.
    ServeProcess server({"--config", path});
    ASSERT_GT(server.port(), 0);
    replication::HttpClient client({});
    auto r = client.Request("GET", "http://second:secret@127.0.0.1:" + std::to_string(server.port()) + "/_all_dbs");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace settee
