// ParseWrkOutput over reports wrk 4.1 (Debian) printed here, kept in
// tests/bench/wrk/: a clean run, bad statuses, socket errors, a server that
// never answered, a refused connection.
#include "bench/harness/wrk_output.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace settee::bench {
namespace {

std::string Captured(const std::string& name) {
  std::ifstream in(std::string(SETTEE_TEST_DATA_DIR) + "/wrk/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

TEST(WrkOutputTest, CleanRun) {
  auto r = ParseWrkOutput(Captured("get_ok.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 33641);
  EXPECT_DOUBLE_EQ(r->duration_ms, 1010);
  EXPECT_DOUBLE_EQ(r->requests_per_sec, 33296.74);
  EXPECT_DOUBLE_EQ(r->latency_avg_ms, 0.6008);
  EXPECT_DOUBLE_EQ(r->latency_stdev_ms, 1.09);
  EXPECT_DOUBLE_EQ(r->latency_max_ms, 8.59);
  ASSERT_EQ(r->percentiles_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(r->percentiles_ms[50], 0.163);
  EXPECT_DOUBLE_EQ(r->percentiles_ms[75], 0.235);
  EXPECT_DOUBLE_EQ(r->percentiles_ms[90], 2.08);
  EXPECT_DOUBLE_EQ(r->percentiles_ms[99], 4.94);
  EXPECT_EQ(r->non_2xx_3xx, 0u);
  EXPECT_EQ(r->SocketErrors(), 0u);
  EXPECT_EQ(r->ErrorPercent(), 0);
}

TEST(WrkOutputTest, PostWithScript) {
  auto r = ParseWrkOutput(Captured("post_ok.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 9343);
  EXPECT_DOUBLE_EQ(r->latency_avg_ms, 1.95);
  EXPECT_DOUBLE_EQ(r->latency_max_ms, 18.13);
  EXPECT_DOUBLE_EQ(r->percentiles_ms[90], 5.14);
}

TEST(WrkOutputTest, BadStatusesAreErrors) {
  auto r = ParseWrkOutput(Captured("non2xx.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 19022);
  EXPECT_EQ(r->non_2xx_3xx, 19022u);
  EXPECT_DOUBLE_EQ(r->ErrorPercent(), 100);
}

TEST(WrkOutputTest, SocketErrorsCountAsFailedAttempts) {
  auto r = ParseWrkOutput(Captured("socket_errors.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 19582);
  EXPECT_EQ(r->read_errors, 39164u);
  EXPECT_EQ(r->connect_errors, 0u);
  EXPECT_EQ(r->SocketErrors(), 39164u);
  EXPECT_NEAR(r->ErrorPercent(), 100.0 * 39164 / (19582 + 39164), 1e-9);
  EXPECT_DOUBLE_EQ(r->duration_ms, 2100);
}

TEST(WrkOutputTest, NoResponsesParsesAsZero) {
  // "-nan%" columns and 0.00us latencies: a report, with nothing in it.
  auto r = ParseWrkOutput(Captured("no_responses.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0);
  EXPECT_EQ(r->requests_per_sec, 0);
  EXPECT_EQ(r->ErrorPercent(), 0);
}

TEST(WrkOutputTest, RefusedConnectionIsNotAReport) {
  auto r = ParseWrkOutput(Captured("refused.txt"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().reason().find("unable to connect"), std::string::npos) << r.status().reason();
}

TEST(WrkOutputTest, WithoutLatencyFlagThereIsNoP90) {
  std::string text = Captured("get_ok.txt");
  size_t from = text.find("  Latency Distribution");
  size_t to = text.find("  33641 requests");
  ASSERT_NE(from, std::string::npos);
  text.erase(from, to - from);
  auto r = ParseWrkOutput(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().reason().find("--latency"), std::string::npos);
}

TEST(WrkOutputTest, ScriptOutputAndBlankLinesAreIgnored) {
  std::string text = "hello from lua\n\n" + Captured("get_ok.txt") + "\ndone 42 99%\n";
  auto r = ParseWrkOutput(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 33641);
  EXPECT_EQ(r->percentiles_ms.size(), 4u);
}

TEST(WrkOutputTest, TruncatedReportIsAnError) {
  std::string text = Captured("get_ok.txt");
  text.resize(text.find("  33641 requests"));
  EXPECT_FALSE(ParseWrkOutput(text).ok());
  EXPECT_FALSE(ParseWrkOutput("").ok());
}

TEST(WrkOutputTest, GarbledNumbersAreErrors) {
  std::string text = Captured("get_ok.txt");
  std::string bad = text;
  bad.replace(bad.find("600.80us"), 8, "600.80xx");
  EXPECT_FALSE(ParseWrkOutput(bad).ok());
  bad = text;
  bad.replace(bad.find("33296.74"), 8, "lots/sec");
  EXPECT_FALSE(ParseWrkOutput(bad).ok());
}

TEST(WrkOutputTest, DurationUnits) {
  EXPECT_DOUBLE_EQ(*ParseWrkDurationMs("163.00us"), 0.163);
  EXPECT_DOUBLE_EQ(*ParseWrkDurationMs("2.08ms"), 2.08);
  EXPECT_DOUBLE_EQ(*ParseWrkDurationMs("1.20s"), 1200);
  EXPECT_DOUBLE_EQ(*ParseWrkDurationMs("1.00m"), 60000);
  EXPECT_DOUBLE_EQ(*ParseWrkDurationMs("2.00h"), 7200000);
  EXPECT_FALSE(ParseWrkDurationMs("12.5").has_value());
  EXPECT_FALSE(ParseWrkDurationMs("12.5MB").has_value());
  EXPECT_FALSE(ParseWrkDurationMs("us").has_value());
  EXPECT_FALSE(ParseWrkDurationMs("").has_value());
}

}  // namespace
}  // namespace settee::bench
