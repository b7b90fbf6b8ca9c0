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
};

MachineInfo DescribeMachine();

// This process's peak resident set size so far (getrusage), in MiB.
double SelfPeakRssMb();

}  // namespace settee::bench
