// Process-wide logging for the server: one line per message on stderr, with a
// UTC timestamp and level. The level is set once at startup (--log-level) and
// read with a relaxed atomic, so a disabled message costs one load.
//
// Thread safety: all functions may be called from any thread.
#pragma once

#include <atomic>
#include <string_view>

namespace settee {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kNone = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "debug", "info", "warning"/"warn", "error", "none". False if unknown.
bool ParseLogLevel(std::string_view name, LogLevel* level);
// Also takes CouchDB's syslog names ([log] level over HTTP), folded onto
// settee's: "notice" is info, "critical"/"alert"/"emergency" are error.
bool ParseCouchLogLevel(std::string_view name, LogLevel* level);
// The name ParseLogLevel reads back: what --log-level and the config file hold.
const char* LogLevelName(LogLevel level);
inline bool LogEnabled(LogLevel level) { return level >= GetLogLevel(); }

void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

#define LogDebug(...) ::settee::Log(::settee::LogLevel::kDebug, __VA_ARGS__)
#define LogInfo(...) ::settee::Log(::settee::LogLevel::kInfo, __VA_ARGS__)
#define LogWarning(...) ::settee::Log(::settee::LogLevel::kWarning, __VA_ARGS__)
#define LogError(...) ::settee::Log(::settee::LogLevel::kError, __VA_ARGS__)

}  // namespace settee
