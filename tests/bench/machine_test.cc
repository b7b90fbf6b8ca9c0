// bench/harness/machine.h: the machine description, and telling qemu-user
// emulation apart from native hardware by /proc/cpuinfo.
#include "bench/harness/machine.h"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <thread>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace settee::bench {
namespace {

using testing::HasSubstr;

// Abridged from real /proc/cpuinfo files.
const char* kX86Cpuinfo =
    "processor\t: 0\n"
    "vendor_id\t: GenuineIntel\n"
    "cpu family\t: 6\n"
    "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
    "flags\t\t: fpu vme de pse tsc msr\n\n";
const char* kArmCpuinfo =
    "processor\t: 0\n"
    "BogoMIPS\t: 38.40\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x0\n"
    "CPU part\t: 0xd03\n\n"
    "Hardware\t: BCM2835\n"
    "Model\t\t: Raspberry Pi 3 Model B Rev 1.2\n";

TEST(DetectEmulation, AnArm64BuildSeeingAnX86CpuinfoIsEmulated) {
  std::string e = DetectEmulation(kX86Cpuinfo, "aarch64");
  EXPECT_THAT(e, HasSubstr("qemu-user"));
  EXPECT_THAT(e, HasSubstr("aarch64 on an x86_64 host (Intel(R) Xeon(R) CPU @ 2.20GHz)"));
  EXPECT_THAT(e, HasSubstr("not aarch64 hardware"));
}

TEST(DetectEmulation, MatchingArchitecturesAreNative) {
  EXPECT_EQ(DetectEmulation(kX86Cpuinfo, "x86_64"), "");
  EXPECT_EQ(DetectEmulation(kArmCpuinfo, "aarch64"), "");
}

TEST(DetectEmulation, AnX86BuildOnArmIsEmulatedToo) {
  EXPECT_THAT(DetectEmulation(kArmCpuinfo, "x86_64"), HasSubstr("x86_64 on an aarch64 host (BCM2835)"));
}

TEST(DetectEmulation, AnUnreadableOrUnknownCpuinfoClaimsNothing) {
  EXPECT_EQ(DetectEmulation("", "aarch64"), "");
  EXPECT_EQ(DetectEmulation("processor : 0\nisa : rv64imafdc\n", "aarch64"), "");
  EXPECT_EQ(DetectEmulation(kX86Cpuinfo, ""), "");
}

TEST(DescribeMachine, SaysSoWhenRunUnderQemuUser) {
  MachineInfo m = DescribeMachine();
  EXPECT_GT(m.cores, 0);
  std::ifstream f("/proc/cpuinfo");
  std::stringstream cpuinfo;
  cpuinfo << f.rdbuf();
  const bool x86_host = cpuinfo.str().find("vendor_id") != std::string::npos;
#if defined(__aarch64__)
  // qemu-user's uname says aarch64; the cpuinfo it shows is the host's (the
  // cross-build's ctest runs here, scripts/arm64_cross.sh).
  EXPECT_THAT(m.os, HasSubstr("aarch64"));
  if (x86_host) {
    EXPECT_THAT(m.emulation, HasSubstr("of aarch64 on an x86_64 host"));
  } else {
    EXPECT_EQ(m.emulation, "");
  }
#elif defined(__x86_64__)
  EXPECT_THAT(m.os, HasSubstr("x86_64"));
  EXPECT_EQ(m.emulation, x86_host ? "" : DetectEmulation(cpuinfo.str(), "x86_64"));
#endif
}

TEST(PeakRss, VmHwmOfAStatusText) {
  EXPECT_DOUBLE_EQ(PeakRssMbFromStatus("Name:\tnode\nVmPeak:\t  999 kB\nVmHWM:\t   20480 kB\nVmRSS:\t 1 kB\n"), 20.0);
  EXPECT_EQ(PeakRssMbFromStatus("Name:\tzombie\nState:\tZ\n"), -1);
  EXPECT_EQ(PeakRssMbFromStatus("VmHWM:\t kB\n"), -1);
}

TEST(PeakRss, OfARunningProcessAndOfNone) {
  EXPECT_GT(ProcessPeakRssMb(getpid()), 0);
  EXPECT_EQ(ProcessPeakRssMb(-5), -1);
}

// This thread spinning 50 ms of its own CPU clock adds about that much to
// the process's threads' sum, read from another thread (so that this one is
// not running while it is read).
TEST(ProcessThreadsCpuMs, GrowsByALiveThreadsWorkAndIsMinusOneForNoProcess) {
  auto read = [] {
    double v = 0;
    std::thread([&] { v = ProcessThreadsCpuMs(getpid()); }).join();
    return v;
  };
  // The reading thread counts itself, then exits: a first read can take
  // milliseconds (first use of the file system code), which the second
  // would then lack.
  read();
  const double before = read();
  ASSERT_GE(before, 0);
  timespec t0{}, t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < 50);
  const double after = read();
  EXPECT_GE(after - before, 49);
  EXPECT_LT(after - before, 500);
  EXPECT_EQ(ProcessThreadsCpuMs(-5), -1);
}

}  // namespace
}  // namespace settee::bench
