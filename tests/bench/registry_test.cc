// bench/harness/registry.h and the workload groups' registration.
#include "bench/harness/registry.h"

#include <gtest/gtest.h>

#include "bench/harness/bench_command.h"
#include "bench/harness/workload_suite.h"

namespace settee::bench {
namespace {

TEST(Registry, TheWorkloadGroupsAreBuiltIn) {
  RegisterBuiltinSuites();
  for (const char* s : {"basics", "views", "find", "attachments"}) EXPECT_NE(FindSuite(s), nullptr) << s;
  EXPECT_EQ(FindSuite("nosuch"), nullptr);
  auto known = KnownSuites();
  EXPECT_EQ(known, (std::vector<std::string>{"basics", "views", "find", "attachments", "eval", "http"}));
}

TEST(Registry, ASuiteIsOneCallAndRunsAsRegistered) {
  RegisterBuiltinSuites();
  RegisterSuite("zz-test", [](const BenchOptions& o, const ProgressFn& p) {
    CaseResult r;
    r.suite = "zz-test";
    r.name = "one";
    r.runtime = "settee";
    r.threads = o.threads;
    if (p) p(Progress{"zz-test", "one", 0, 1, 1, 1, "settee"});
    return std::vector<CaseResult>{r};
  });
  const SuiteRunner* run = FindSuite("zz-test");
  ASSERT_NE(run, nullptr);
  BenchOptions o;
  o.threads = 3;
  int reports = 0;
  auto results = (*run)(o, [&](const Progress& p) { reports += p.iteration; });
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].threads, 3);
  EXPECT_EQ(reports, 1);
  auto names = RegisteredSuites();
  EXPECT_EQ(names.back(), "zz-test");  // after the known ones
  EXPECT_EQ(names.front(), "basics");
}

TEST(GrepSelects, SearchesSuiteSlashCase) {
  EXPECT_TRUE(GrepSelects("", "basics", "basic-gets"));
  EXPECT_TRUE(GrepSelects("gets", "basics", "basic-gets"));
  EXPECT_TRUE(GrepSelects("^basics/", "basics", "basic-gets"));
  EXPECT_TRUE(GrepSelects("basics/bulk-inserts$", "basics", "bulk-inserts"));
  EXPECT_FALSE(GrepSelects("basics/bulk-inserts$", "basics", "bulk-inserts-large-docs"));
  EXPECT_FALSE(GrepSelects("views", "basics", "basic-gets"));
  EXPECT_FALSE(GrepSelects("(", "basics", "basic-gets"));  // not a regex: selects nothing
}

}  // namespace
}  // namespace settee::bench
