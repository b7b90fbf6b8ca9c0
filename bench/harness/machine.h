// The machine a `settee bench` report was measured on, for the report's
// header and for --compare across machines. Reads /proc and uname.
#pragma once

#include <string>

namespace settee::bench {

struct MachineInfo {
  std::string hostname;
  std::string os;         // uname: sysname release machine
  std::string cpu_model;  // /proc/cpuinfo "model name" (or "Hardware"/"Model" on ARM)
  int cores = 0;          // online logical CPUs
  // Non-empty when the program runs under a user-mode emulator (qemu-user
  // running an arm64 build on x86-64): the timings are then the emulator's,
  // not the named architecture's hardware, and cpu_model is the host's.
  std::string emulation;
};

MachineInfo DescribeMachine();

// What DescribeMachine puts in `emulation`, from /proc/cpuinfo's text and the
// architecture this program was compiled for ("aarch64", "x86_64"): qemu-user
// shows the guest the host's /proc/cpuinfo, so a cpuinfo of another
// architecture family gives the emulation away. Empty when they agree or the
// cpuinfo says nothing either way.
std::string DetectEmulation(const std::string& cpuinfo, const std::string& compiled_arch);

// This process's peak resident set size so far (getrusage), in MiB.
double SelfPeakRssMb();

}  // namespace settee::bench
