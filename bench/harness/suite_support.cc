#include "bench/harness/suite_support.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <fstream>
#include <sstream>

#include "bench/harness/subprocess.h"

#ifndef SETTEE_SOURCE_DIR
#define SETTEE_SOURCE_DIR "."
#endif

namespace settee::bench {

Result<CaseFilter> CaseFilter::FromGrep(const std::string& grep) {
  CaseFilter f;
  if (grep.empty()) return f;
  try {
    f.re_.emplace(grep, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::BadRequest("invalid --grep '" + grep + "': " + e.what());
  }
  return f;
}

bool CaseFilter::Selected(const std::string& suite, const std::string& name) const {
  return !re_ || std::regex_search(suite + "/" + name, *re_);
}

std::string SourceDir(const BenchOptions& options) {
  return options.source_dir.empty() ? std::string(SETTEE_SOURCE_DIR) : options.source_dir;
}

CaseResult RowWithOutcome(const std::string& suite, const std::string& name, const std::string& runtime,
                          int threads, Outcome outcome, std::string error) {
  CaseResult r;
  r.suite = suite;
  r.name = name;
  r.runtime = runtime;
  r.threads = threads;
  r.outcome = outcome;
  r.error = std::move(error);
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TailLines(const std::string& text, int max_lines) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  size_t pos = end + 1;
  for (int i = 0; i < max_lines && pos > 0; ++i) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text.substr(0, end + 1);
    pos = nl;
  }
  return text.substr(pos + 1, end - pos);
}

Status InstallBaselines(const BenchOptions& options, const std::string& which) {
  std::string script = SourceDir(options) + "/scripts/setup_bench_baselines.sh";
  std::string log = (options.scratch_dir.empty() ? std::string("/tmp") : options.scratch_dir) +
                    "/setup_bench_baselines-" + which + ".log";
  // Said at once: npm ci of pouchdb-server takes a minute here, which a
  // silent run would seem to spend on the benchmark.
  std::fprintf(stderr, "settee bench: installing the %s baseline once (%s %s, log %s) ...\n", which.c_str(),
               script.c_str(), which.c_str(), log.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  auto child = Subprocess::Spawn({"/bin/bash", script, which}, SpawnOptions{.cwd = {}, .log_path = log});
  if (!child.ok()) return child.status();
  // npm ci of pouchdb-server builds native modules: minutes on a slow machine.
  Result<int> code = (*child)->Wait(std::chrono::minutes(10));
  if (options.facts) options.facts->AddSeconds("installing baselines", SecondsSince(t0));
  if (code.ok() && *code == 0) return Status::OK();
  return Status::IOError(script + " " + which + " failed (" +
                         (code.ok() ? "exit " + std::to_string(*code) : code.status().reason()) +
                         "; log " + log + "): " + TailLines(ReadFile(log), 3));
}

// One request with libcurl, loopback only (no proxy). Returns the status.
Result<long> HttpCall(const std::string& method, const std::string& url, const std::string& body) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("curl_easy_init failed");
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_guard(headers, curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);  // threads beside us: no SIGALRM timeouts
  curl_easy_setopt(curl.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  if (!body.empty()) {
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  std::string sink;
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION,
                   +[](char* p, size_t size, size_t n, void* out) {
                     static_cast<std::string*>(out)->append(p, size * n);
                     return size * n;
                   });
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) return Status::IOError(method + " " + url + ": " + curl_easy_strerror(rc));
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  return status;
}

// Polls GET / until the server answers 200.
Status WaitUntilUp(int port, Subprocess* server, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  for (;;) {
    auto status = HttpCall("GET", url, "");
    if (status.ok() && *status == 200) return Status::OK();
    if (server->Wait(std::chrono::milliseconds(0)).ok())
      return Status::Internal("the server exited with status " + std::to_string(server->Wait(std::chrono::milliseconds(0)).value()));
    if (std::chrono::steady_clock::now() > deadline)
      return Status(Status::Code::kTimeout, "no answer on port " + std::to_string(port) + " after " +
                                                std::to_string(timeout.count()) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// A port nobody listens on right now (for pouchdb-server, which cannot be
// asked which port it took).
Result<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  if (port <= 0) return Status::IOError("no free port");
  return port;
}

}  // namespace settee::bench
