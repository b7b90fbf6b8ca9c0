// `new PouchDB(url)` in settee's JS runtime, end to end: a real
// `settee serve` child on a free loopback port, and `settee run` of
// tests/js/scripts/http_adapter.js against it (the remote database API and
// replication to, from and with it through settee's replicator).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/replication/serve_child.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(RemotePouchDb, HttpAdapterScript) {
  settee::testing::ServeChild server(
      SETTEE_BINARY, testing::TempDir() + "/remote_pouchdb_serve_" + std::to_string(getpid()) + ".log");
  std::string url = server.Url();
  ASSERT_FALSE(url.empty()) << "settee serve did not start";
  std::string out = testing::TempDir() + "/remote_pouchdb_out_" + std::to_string(getpid());
  std::string cmd = std::string("timeout 120 ") + SETTEE_BINARY + " run " + SETTEE_JS_SCRIPTS_DIR +
                    "/http_adapter.js " + url + " >" + out + " 2>&1";
  int status = std::system(cmd.c_str());
  std::string text = Slurp(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, testing::HasSubstr("all 12 passed")) << text;
}

}  // namespace
