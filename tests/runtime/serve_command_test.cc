// `settee serve`'s design-document options end to end, on the real
// executable: --view-timeout-ms stops a map function that loops forever
// (CouchDB's error shape, the server still serving, the isolate replaced),
// --view-threads sets how many isolate threads run design-document code, and
// what design functions report goes through the server's log and its
// --log-level; admins and the log level changed through
// /_node/_local/_config are written back into the --config file, as hashes
// of the admins' passwords; --admin takes such a hash.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
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

// The file's admin list as "name:hash" entries, each checked to be the
// PBKDF2-SHA256 form settee writes; the names in order.
std::vector<std::string> HashedAdminNames(const std::string& text) {
  std::vector<std::string> names;
  const size_t open = text.find("admin = [");
  if (open == std::string::npos) return names;
  const std::string list = text.substr(open + 9, text.find(']', open) - open - 9);
  const std::regex entry("\"([^\":]+):-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},10000\"(, )?");
  for (std::sregex_iterator it(list.begin(), list.end(), entry), end; it != end; ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

// The status of GET /_all_dbs as `credentials` ("name:password", URL-encoded).
int AllDbsStatusAs(const ServeProcess& server, const std::string& credentials) {
  replication::HttpClient client({});
  auto r = client.Request("GET", "http://" + credentials + "@127.0.0.1:" + std::to_string(server.port()) +
                                     "/_all_dbs");
  return r.ok() ? r->status : -1;
}

TEST(ServeCommandTest, ConfigChangesAreWrittenBackToTheConfigFile) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("settee-serve-config-" + std::to_string(getpid()) + ".toml")).string();
  {
    std::ofstream f(path);
    f << "# kept\n[serve]\nadmin = [\"root:pw\"]\n";
  }
  auto read = [&] {
    std::ifstream f(path);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  {
    ServeProcess server({"--config", path});
    ASSERT_GT(server.port(), 0);
    // The password in clear is replaced by its hash when the server starts,
    // as CouchDB hashes local.ini's admins.
    std::string text = read();
    EXPECT_EQ(HashedAdminNames(text), std::vector<std::string>{"root"}) << text;
    EXPECT_EQ(text.find("root:pw"), std::string::npos) << text;
    const std::string root = "http://root:pw@127.0.0.1:" + std::to_string(server.port());
    replication::HttpClient client({});
    auto r = client.Request("GET", root + "/_node/_local/_config/admins/root");
    ASSERT_TRUE(r.ok());
    json::Document shown;
    ASSERT_TRUE(json::Parse(r->body, &shown).ok() && shown.IsString()) << r->body;
    EXPECT_NE(text.find(std::string(json::View(shown))), std::string::npos) << r->body;  // the file's hash
    r = client.Request("PUT", root + "/_node/_local/_config/admins/second", R"("secret")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
    // The file keeps the hash, so a password it could not hold is fine ...
    r = client.Request("PUT", root + "/_node/_local/_config/admins/third", R"("p#w")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
    // ... but a name it cannot hold is refused before it is applied, with a
    // reason that does not name the file.
    r = client.Request("PUT", root + "/_node/_local/_config/admins/fo%23rth", R"("pw")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(r->body.find(path), std::string::npos) << r->body;
    r = client.Request("GET", "http://fo%23rth:pw@127.0.0.1:" + std::to_string(server.port()) + "/_all_dbs");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401) << r->body;
    // CouchDB's name; the file gets settee's, which --log-level reads.
    r = client.Request("PUT", root + "/_node/_local/_config/log/level", R"("notice")");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200) << r->body;
  }
  const std::string text = read();
  EXPECT_EQ(HashedAdminNames(text), (std::vector<std::string>{"root", "second", "third"})) << text;
  EXPECT_EQ(text.rfind("# kept\n[serve]\nadmin = [", 0), 0u) << text;
  EXPECT_NE(text.find("]\nlog-level = \"info\"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("secret"), std::string::npos) << text;
  {
    // A restart reads them (the server starts: the level is one it knows),
    // every admin logs in with its password, and the file, all hashes now,
    // is left as it was.
    ServeProcess server({"--config", path});
    ASSERT_GT(server.port(), 0);
    for (const char* user : {"root:pw", "second:secret", "third:p%23w"}) {
      EXPECT_EQ(AllDbsStatusAs(server, user), 200) << user;
    }
    EXPECT_EQ(read(), text);
  }
  std::filesystem::remove(path);
}

// --admin takes a hash of the password, as CouchDB's config does (so the
// password need not appear in a command line); one settee cannot check is a
// clear error before the server starts.
TEST(ServeCommandTest, AdminMayBeGivenByHash) {
  {
    ServeProcess server({"--admin", "root:-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1"});
    ASSERT_GT(server.port(), 0);
    EXPECT_EQ(AllDbsStatusAs(server, "root:password"), 200);
    EXPECT_EQ(AllDbsStatusAs(server, "root:pw"), 401);
  }
  {
    // SETTEE_ADMINS separates admins by commas, and a hash holds two.
    setenv("SETTEE_ADMINS", "a:pw,b:-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1,c:pw3", 1);
    ServeProcess server({});
    unsetenv("SETTEE_ADMINS");
    ASSERT_GT(server.port(), 0);
    for (const char* user : {"a:pw", "b:password", "c:pw3"}) EXPECT_EQ(AllDbsStatusAs(server, user), 200) << user;
  }
  const std::string err = (std::filesystem::temp_directory_path() /
                           ("settee-serve-hash-" + std::to_string(getpid()) + ".err")).string();
  const std::string cmd = std::string(SETTEE_BINARY) +
                          " serve --port 0 --backend memory --admin 'root:-pbkdf2:md5-ab,salt,1' 2>" + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream f(err);
  const std::string message((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(message.find("admin root"), std::string::npos) << message;
  EXPECT_NE(message.find("md5"), std::string::npos) << message;
  std::filesystem::remove(err);
}

}  // namespace
}  // namespace settee
