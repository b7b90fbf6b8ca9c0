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

// The peak resident set size of running process `pid` (VmHWM of
// /proc/PID/status), in MiB; -1 when it cannot be read (the process is
// gone). A child's wait4 ru_maxrss is no substitute: Linux carries the
// high-water mark of the memory image a process replaces over exec, so a
// child forked by a 250 MB bench reports at least 250 MB whatever it used.
double ProcessPeakRssMb(int pid);

// The CPU time the live threads of process `pid` have run, in ms: the sum
// of the first field (ns on a CPU) of /proc/PID/task/*/schedstat, which
// Linux keeps exact for a thread that is not running (/proc/PID/stat counts
// in 10 ms ticks, too coarse for a 20 ms run). Threads that have exited are
// not counted, so read it of a process whose threads live as long as it
// does (a server's loops). -1 when the process is gone or no thread's
// figure could be read.
double ProcessThreadsCpuMs(int pid);

// VmHWM's value in MiB from the text of a /proc/PID/status; -1 without it.
double PeakRssMbFromStatus(const std::string& status_text);

}  // namespace settee::bench
