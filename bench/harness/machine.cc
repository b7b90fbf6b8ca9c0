#include "bench/harness/machine.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace settee::bench {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, fallback;
  while (std::getline(f, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(line.substr(0, colon));
    std::string value = Trim(line.substr(colon + 1));
    if (key == "model name") return value;
    if ((key == "Hardware" || key == "Model") && fallback.empty()) fallback = value;
  }
  return fallback.empty() ? "unknown" : fallback;
}

}  // namespace

MachineInfo DescribeMachine() {
  MachineInfo m;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  struct utsname u;
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m.cpu_model = CpuModel();
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? static_cast<int>(online) : static_cast<int>(std::thread::hardware_concurrency());
  return m;
}

double SelfPeakRssMb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace settee::bench
