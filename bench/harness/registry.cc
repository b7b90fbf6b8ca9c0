#include "bench/harness/registry.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace settee::bench {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, SuiteRunner> suites;
};

Registry& TheRegistry() {
  static Registry* r = new Registry();  // never destroyed: no exit-order issues
  return *r;
}

}  // namespace

void RegisterSuite(const std::string& name, SuiteRunner runner) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.suites[name] = std::move(runner);
}

const SuiteRunner* FindSuite(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.suites.find(name);
  return it == r.suites.end() ? nullptr : &it->second;  // std::map nodes are stable
}

const std::vector<std::string>& KnownSuites() {
  static const std::vector<std::string> known = {"basics", "views", "find", "attachments", "eval", "http"};
  return known;
}

std::vector<std::string> RegisteredSuites() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& k : KnownSuites()) {
    if (r.suites.count(k)) out.push_back(k);
  }
  for (const auto& [name, runner] : r.suites) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace settee::bench
