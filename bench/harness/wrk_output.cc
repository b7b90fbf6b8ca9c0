#include "bench/harness/wrk_output.h"

#include <charconv>
#include <string>
#include <vector>

namespace settee::bench {

namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == ',' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != ',' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// The leading number of `token`; `rest` gets what follows it.
std::optional<double> LeadingNumber(std::string_view token, std::string_view* rest) {
  double v = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc()) return std::nullopt;
  *rest = token.substr(static_cast<size_t>(end - token.data()));
  return v;
}

std::optional<uint64_t> Count(std::string_view token) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return v;
}

}  // namespace

double WrkReport::ErrorPercent() const {
  double attempts = requests + static_cast<double>(SocketErrors());
  if (attempts <= 0) return 0;
  return 100.0 * (static_cast<double>(non_2xx_3xx) + static_cast<double>(SocketErrors())) / attempts;
}

std::optional<double> ParseWrkDurationMs(std::string_view token) {
  std::string_view unit;
  std::optional<double> v = LeadingNumber(token, &unit);
  if (!v) return std::nullopt;
  if (unit == "us") return *v / 1000.0;
  if (unit == "ms") return *v;
  if (unit == "s") return *v * 1000.0;
  if (unit == "m") return *v * 60000.0;
  if (unit == "h") return *v * 3600000.0;
  return std::nullopt;
}

Result<WrkReport> ParseWrkOutput(std::string_view text) {
  WrkReport r;
  bool have_latency = false, have_requests = false, have_rate = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::vector<std::string_view> w = Words(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (w.empty()) continue;

    if (w[0] == "Latency" && w.size() >= 4) {
      // "Latency   600.80us    1.09ms   8.59ms   87.73%"
      auto avg = ParseWrkDurationMs(w[1]), stdev = ParseWrkDurationMs(w[2]), max = ParseWrkDurationMs(w[3]);
      if (!avg || !stdev || !max) return Status::BadRequest("unreadable wrk latency line");
      r.latency_avg_ms = *avg;
      r.latency_stdev_ms = *stdev;
      r.latency_max_ms = *max;
      have_latency = true;
    } else if (w.size() == 2 && w[0].size() >= 2 && w[0].back() == '%' && w[0] != "-nan%") {
      // "90%    2.08ms" under "Latency Distribution"
      std::string_view rest;
      auto pct = LeadingNumber(w[0], &rest);
      auto ms = ParseWrkDurationMs(w[1]);
      if (pct && rest == "%" && ms) r.percentiles_ms[static_cast<int>(*pct)] = *ms;
    } else if (w.size() >= 4 && w[1] == "requests" && w[2] == "in") {
      // "33641 requests in 1.01s, 9.30MB read"
      auto n = Count(w[0]);
      auto d = ParseWrkDurationMs(w[3]);
      if (!n || !d) return Status::BadRequest("unreadable wrk requests line");
      r.requests = static_cast<double>(*n);
      r.duration_ms = *d;
      have_requests = true;
    } else if (w[0] == "Requests/sec:" && w.size() >= 2) {
      std::string_view rest;
      auto v = LeadingNumber(w[1], &rest);
      if (!v || !rest.empty()) return Status::BadRequest("unreadable wrk Requests/sec line");
      r.requests_per_sec = *v;
      have_rate = true;
    } else if (w[0] == "Non-2xx" && w.size() >= 5) {
      // "Non-2xx or 3xx responses: 19022"
      auto n = Count(w.back());
      if (!n) return Status::BadRequest("unreadable wrk Non-2xx line");
      r.non_2xx_3xx = *n;
    } else if (w[0] == "Socket" && w.size() >= 10 && w[1] == "errors:") {
      // "Socket errors: connect 0, read 39164, write 0, timeout 0"
      for (size_t i = 2; i + 1 < w.size(); i += 2) {
        auto n = Count(w[i + 1]);
        if (!n) return Status::BadRequest("unreadable wrk Socket errors line");
        if (w[i] == "connect") r.connect_errors = *n;
        else if (w[i] == "read") r.read_errors = *n;
        else if (w[i] == "write") r.write_errors = *n;
        else if (w[i] == "timeout") r.timeouts = *n;
      }
    }
  }
  if (!have_requests || !have_rate || !have_latency) {
    std::string first(text.substr(0, text.find('\n')));
    return Status::BadRequest("not a wrk report" + (first.empty() ? std::string() : ": " + first));
  }
  if (!r.percentiles_ms.count(90)) return Status::BadRequest("wrk report without percentiles (run with --latency)");
  return r;
}

}  // namespace settee::bench
