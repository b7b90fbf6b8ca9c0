// A CouchServer on an ephemeral loopback port over a fresh store, for the
// runtime integration tests, plus JSON helpers for responses.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/couch_server.h"
#include "runtime/http_server.h"
#include "runtime/log.h"
#include "settee/store.h"
#include "tests/runtime/test_client.h"
#include "tests/storage/store_test_util.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct TestServerConfig {
  StoreOptions::Backend backend = StoreOptions::Backend::kMemory;
  bool sync = false;  // fsync'd writes: endpoints hand them to the worker pool
  uint64_t max_attachment_size = StoreOptions().max_attachment_size;
  CouchServerOptions couch;
  http::HttpServerOptions http;
  // Runs after the CouchServer is built and before it serves (extra routes,
  // changes filters).
  std::function<void(CouchServer&)> setup;
};

// Owns store, CouchServer and HttpServer; tears them down in order.
class TestServer {
 public:
  explicit TestServer(TestServerConfig cfg) {
    SetLogLevel(LogLevel::kWarning);
    StoreOptions so;
    so.backend = cfg.backend;
    so.sync = cfg.sync;
    so.max_attachment_size = cfg.max_attachment_size;
    if (cfg.backend == StoreOptions::Backend::kLevelDB) {
      dir_ = std::filesystem::temp_directory_path() / ("settee-http-test-" + RandomUuidHex());
      so.path = dir_.string();
    }
    auto store = Store::Open(so);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    couch_ = std::make_unique<CouchServer>(store_.get(), cfg.couch);
    if (cfg.setup) cfg.setup(*couch_);
    couch_->Start();
    cfg.http.port = 0;
    if (cfg.http.threads < 2) cfg.http.threads = 2;
    http_ = std::make_unique<http::HttpServer>(cfg.http, couch_.get());
    Status s = http_->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ~TestServer() {
    http_.reset();
    couch_.reset();
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  int port() const { return http_->port(); }
  Store* store() const { return store_.get(); }
  http::HttpServer* http() const { return http_.get(); }
  CouchServer* couch() const { return couch_.get(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CouchServer> couch_;
  std::unique_ptr<http::HttpServer> http_;
};

// A test run on each backend (TEST_P over BackendNames' values): a fresh
// server of the parameter's backend per test, and JSON requests to it.
class BackendServerTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override { Start({}); }
  // A new server of `cfg` (its backend the test's parameter).
  void Start(TestServerConfig cfg) {
    client_.reset();
    cfg.backend = GetParam();
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  ClientResponse Req(const std::string& method, const std::string& path, const std::string& body = {},
                     Headers headers = {}) {
    return client_->JsonRequest(method, path, body, std::move(headers));
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

// INSTANTIATE_TEST_SUITE_P's values for BackendServerTest suites (their
// names: store_test_util.h's BackendName).
inline auto BackendValues() {
  return ::testing::Values(StoreOptions::Backend::kMemory, StoreOptions::Backend::kLevelDB);
}

inline json::Document ParseJson(const std::string& text) {
  json::Document d;
  Status s = json::Parse(text, &d);
  EXPECT_TRUE(s.ok()) << "not JSON: " << text;
  return d;
}

inline std::string Str(const json::Value& v, const char* key) {
  if (!v.IsObject()) return "<not an object>";
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return "<missing " + std::string(key) + ">";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

inline std::string BasicAuth(const std::string& user, const std::string& pass) {
  return "Basic " + Base64Encode(user + ":" + pass);
}

}  // namespace settee::testing
