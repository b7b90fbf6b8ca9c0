#include "bench/harness/machine.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace settee::bench {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string CpuModel(const std::string& cpuinfo) {
  std::istringstream f(cpuinfo);
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

std::string ReadFile(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The architecture family /proc/cpuinfo describes, by keys only its kernel
// port prints ("" when neither).
std::string CpuinfoArch(const std::string& cpuinfo) {
  std::istringstream f(cpuinfo);
  std::string line;
  while (std::getline(f, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(line.substr(0, colon));
    if (key == "vendor_id" || key == "cpu family") return "x86_64";
    if (key == "CPU implementer" || key == "CPU architecture") return "aarch64";
  }
  return "";
}

const char* CompiledArch() {
#if defined(__aarch64__)
  return "aarch64";
#elif defined(__x86_64__)
  return "x86_64";
#else
  return "";
#endif
}

}  // namespace

std::string DetectEmulation(const std::string& cpuinfo, const std::string& compiled_arch) {
  std::string host = CpuinfoArch(cpuinfo);
  if (host.empty() || compiled_arch.empty() || host == compiled_arch) return "";
  return "user-mode emulation (qemu-user) of " + compiled_arch + " on an " + host + " host (" + CpuModel(cpuinfo) +
         "): timings are the emulator's, not " + compiled_arch + " hardware";
}

MachineInfo DescribeMachine() {
  MachineInfo m;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  struct utsname u;
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::string cpuinfo = ReadFile("/proc/cpuinfo");
  m.cpu_model = CpuModel(cpuinfo);
  m.emulation = DetectEmulation(cpuinfo, CompiledArch());
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? static_cast<int>(online) : static_cast<int>(std::thread::hardware_concurrency());
  return m;
}

double PeakRssMbFromStatus(const std::string& status_text) {
  size_t at = status_text.find("VmHWM:");
  if (at == std::string::npos) return -1;
  const char* p = status_text.c_str() + at + 6;
  char* end = nullptr;
  double kib = std::strtod(p, &end);
  if (end == p) return -1;
  return kib / 1024.0;
}

double ProcessPeakRssMb(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  if (!f) return -1;
  std::stringstream text;
  text << f.rdbuf();
  return PeakRssMbFromStatus(text.str());
}

double ProcessThreadsCpuMs(int pid) {
  std::error_code ec;
  std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec) return -1;
  double ns = 0;
  bool read_any = false;
  for (const auto& task : tasks) {
    std::ifstream f(task.path() / "schedstat");
    double on_cpu = 0;
    if (f >> on_cpu) {
      ns += on_cpu;
      read_any = true;
    }
  }
  // No thread's figure read (the process gone, or schedstat not there) is
  // no measurement, not a measured zero.
  return read_any ? ns / 1e6 : -1;
}

double SelfPeakRssMb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace settee::bench
