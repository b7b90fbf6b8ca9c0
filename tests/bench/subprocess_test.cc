#include "bench/harness/subprocess.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace settee::bench {
namespace {

using namespace std::chrono_literals;

TEST(SubprocessTest, CollectsOutputAndExitCode) {
  auto child = Subprocess::Spawn({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto code = (*child)->Wait(10s);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 3);
  EXPECT_EQ((*child)->out(), "out\n");
  EXPECT_EQ((*child)->err(), "err\n");
  EXPECT_FALSE((*child)->running());
}

// A stopped child's peak is its own, not the high-water mark of the memory
// image it replaced at exec (this process's, which wait4's ru_maxrss would
// report): the bench forks its baselines and servers from a process of
// hundreds of MB.
TEST(SubprocessTest, StopReadsTheChildsOwnPeakRss) {
  constexpr size_t kParentBytes = 256u << 20;
  std::vector<char> ballast(kParentBytes);
  for (size_t i = 0; i < ballast.size(); i += 4096) ballast[i] = static_cast<char>(i);
  auto child = Subprocess::Spawn({"sleep", "5"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::this_thread::sleep_for(200ms);  // past its exec
  (*child)->Stop();
  EXPECT_GT((*child)->peak_rss_mb(), 0);
  EXPECT_LT((*child)->peak_rss_mb(), 64) << "the parent's " << (kParentBytes >> 20) << " MB leaked in";
  EXPECT_EQ(ballast[4096], static_cast<char>(4096));
}

TEST(SubprocessTest, LargeOutputDoesNotBlock) {
  auto child = Subprocess::Spawn({"sh", "-c", "head -c 1000000 /dev/zero"});
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE((*child)->Wait(10s).ok());
  EXPECT_EQ((*child)->out().size(), 1000000u);
}

TEST(SubprocessTest, MissingExecutableIsNotFound) {
  auto child = Subprocess::Spawn({"settee-no-such-program"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), Status::Code::kNotFound);
  EXPECT_NE(child.status().reason().find("settee-no-such-program"), std::string::npos);
  EXPECT_FALSE(Subprocess::Spawn({}).ok());
}

TEST(SubprocessTest, TimeoutLeavesItRunningThenStopEndsIt) {
  auto child = Subprocess::Spawn({"sleep", "30"});
  ASSERT_TRUE(child.ok());
  auto code = (*child)->Wait(100ms);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), Status::Code::kTimeout);
  EXPECT_TRUE((*child)->running());
  EXPECT_EQ((*child)->Stop(), 128 + SIGTERM);
  EXPECT_FALSE((*child)->running());
}

TEST(SubprocessTest, StopEscalatesToKill) {
  auto child = Subprocess::Spawn({"sh", "-c", "trap '' TERM; echo ready; sleep 30"});
  ASSERT_TRUE(child.ok());
  // Until the trap is in (it prints "ready" after): a fixed wait lost the
  // race on a loaded machine, and SIGTERM then ended it.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((*child)->out().find("ready") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    (void)(*child)->Wait(20ms);
  }
  ASSERT_NE((*child)->out().find("ready"), std::string::npos);
  EXPECT_EQ((*child)->Stop(200ms), 128 + SIGKILL);
}

TEST(SubprocessTest, DestructorKillsARunningChild) {
  pid_t pid;
  {
    auto child = Subprocess::Spawn({"sleep", "30"});
    ASSERT_TRUE(child.ok());
    pid = (*child)->pid();
  }
  EXPECT_NE(kill(pid, 0), 0);  // reaped: no such process
}

TEST(SubprocessTest, WaitAllReadsEveryChild) {
  std::vector<std::unique_ptr<Subprocess>> children;
  std::vector<Subprocess*> all;
  for (int i = 0; i < 3; ++i) {
    auto c = Subprocess::Spawn({"sh", "-c", "sleep 0.1; echo " + std::to_string(i)});
    ASSERT_TRUE(c.ok());
    all.push_back(c->get());
    children.push_back(std::move(*c));
  }
  ASSERT_TRUE(Subprocess::WaitAll(all, 10s).ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(children[i]->out(), std::to_string(i) + "\n");

  auto slow = Subprocess::Spawn({"sleep", "30"});
  ASSERT_TRUE(slow.ok());
  Status s = Subprocess::WaitAll({slow->get()}, 50ms);
  EXPECT_EQ(s.code(), Status::Code::kTimeout);
}

TEST(SubprocessTest, LogFileAndWorkingDirectory) {
  char dir[] = "/tmp/subprocess_test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string log = std::string(dir) + "/log.txt";
  auto child = Subprocess::Spawn({"sh", "-c", "pwd; echo oops >&2"}, SpawnOptions{.cwd = dir, .log_path = log});
  ASSERT_TRUE(child.ok());
  auto code = (*child)->Wait(10s);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  EXPECT_EQ((*child)->out(), "");
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::string(dir) + "\noops\n");
  std::remove(log.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace settee::bench
