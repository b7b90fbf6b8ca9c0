#include "runtime/log.h"

#include <sys/time.h>

#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace settee {

namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

}  // namespace

const char* LogLevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    case LogLevel::kNone: return "none";
  }
  return "?";
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

bool ParseLogLevel(std::string_view name, LogLevel* level) {
  if (name == "debug") *level = LogLevel::kDebug;
  else if (name == "info") *level = LogLevel::kInfo;
  else if (name == "warning" || name == "warn") *level = LogLevel::kWarning;
  else if (name == "error") *level = LogLevel::kError;
  else if (name == "none") *level = LogLevel::kNone;
  else return false;
  return true;
}

bool ParseCouchLogLevel(std::string_view name, LogLevel* level) {
  if (name == "notice") name = "info";
  if (name == "critical" || name == "alert" || name == "emergency") name = "error";
  return ParseLogLevel(name, level);
}

void Log(LogLevel level, const char* format, ...) {
  if (!LogEnabled(level) || level == LogLevel::kNone) return;
  char line[2048];
  timeval tv;
  gettimeofday(&tv, nullptr);
  std::tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  int n = snprintf(line, sizeof(line), "[%04d-%02d-%02dT%02d:%02d:%02d.%03dZ] [%s] ",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   static_cast<int>(tv.tv_usec / 1000), LogLevelName(level));
  va_list ap;
  va_start(ap, format);
  int m = vsnprintf(line + n, sizeof(line) - static_cast<size_t>(n) - 1, format, ap);
  va_end(ap);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : static_cast<size_t>(m));
  if (len > sizeof(line) - 2) len = sizeof(line) - 2;
  line[len++] = '\n';
  // One fwrite per line keeps concurrent lines from interleaving.
  fwrite(line, 1, len, stderr);
}

}  // namespace settee
