// What `wrk --latency` printed, as numbers. The http suite runs wrk and
// turns its text report into a CaseResult's figures.
//
//   Result<WrkReport> r = ParseWrkOutput(stdout_text);
//   r->requests_per_sec, r->percentiles_ms[90], r->ErrorPercent() ...
//
// wrk prints times with a unit (us, ms, s, m, h), sizes in B..TB and the
// per-thread rates with SI suffixes (k, M, G); the "Non-2xx or 3xx
// responses" and "Socket errors" lines appear only when there were some.
// Parsing is line by line and keyed on each line's label, so extra lines
// (a Lua script's own output) are ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "settee/status.h"

namespace settee::bench {

struct WrkReport {
  double requests = 0;          // responses completed ("N requests in T")
  double duration_ms = 0;       // the run's measured duration
  double requests_per_sec = 0;  // "Requests/sec:"
  double latency_avg_ms = 0;
  double latency_stdev_ms = 0;
  double latency_max_ms = 0;
  std::map<int, double> percentiles_ms;  // 50, 75, 90, 99 (from --latency)
  uint64_t non_2xx_3xx = 0;  // responses with another status (counted in requests)
  uint64_t connect_errors = 0;
  uint64_t read_errors = 0;
  uint64_t write_errors = 0;
  uint64_t timeouts = 0;

  uint64_t SocketErrors() const { return connect_errors + read_errors + write_errors + timeouts; }
  // Failed attempts over all attempts: bad statuses and socket errors over
  // completed responses plus socket errors (which never completed), in %.
  double ErrorPercent() const;
};

// kBadRequest naming what is missing if `text` is not a wrk report with
// latency percentiles (wrk failed to connect, was not given --latency, ...).
Result<WrkReport> ParseWrkOutput(std::string_view text);

// "163.00us" -> 0.163; "2.08ms" -> 2.08; "1.20s" -> 1200; "1.00m" -> 60000.
// nullopt if `token` is not a number followed by one of wrk's time units.
std::optional<double> ParseWrkDurationMs(std::string_view token);

}  // namespace settee::bench
