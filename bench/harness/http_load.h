// HttpLoad: a small HTTP/1.1 load generator that costs its machine little,
// for measuring how a server's loop threads scale on a machine whose cores
// the client shares.
//
// Why not only wrk: on two cores, wrk (one Lua call and one http-parser run
// per response, latency kept per request) takes 5-17 us of CPU per request,
// which is most of what the server itself spends on a small POST; whatever
// the client spends is taken from the server's second loop, so the 2-loop
// over 1-loop ratio the machine can show is 2s/(s+c) for server CPU s and
// client CPU c per request (1.6x needs c <= s/4).
//
// So this one is a single thread on epoll: every connection's requests are
// built once, `pipeline` of them go out in one write, and responses are read
// 256 KiB at a time and only framed (status line, Content-Length, the end of
// the head), with one clock read per read call. It measures its own CPU time
// (CLOCK_THREAD_CPUTIME_ID), so a report says what the client cost.
//
// A connection writes its next batch once every response of the last one is
// in (wrk's pipeline.lua does the same); a latency is the time from its
// batch's write to the read that completed it. A connection that fails
// (reset, EOF, a response it cannot frame) counts one socket error and is
// reconnected; its outstanding requests are dropped.
//
// Thread safety: RunHttpLoad blocks its calling thread and shares nothing;
// run as many at once as you like.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "settee/status.h"

namespace settee::bench {

struct HttpLoadOptions {
  std::string host = "127.0.0.1";  // an IPv4 address
  int port = 0;
  int connections = 10;
  // Requests outstanding per connection, written together (1: one at a time).
  int pipeline = 1;
  std::chrono::milliseconds duration{std::chrono::seconds(3)};
  // The run goes on past `duration` until this many responses have come
  // in, for at most `max_duration` in all: a check of what the responses
  // were needs some, and on a loaded machine the server may get no CPU
  // within a short duration. 0: the run lasts exactly `duration`.
  uint64_t min_responses = 0;
  std::chrono::milliseconds max_duration{std::chrono::seconds(30)};
  // The bytes of one complete request for connection `index` (0-based); the
  // same request is sent again and again on that connection. Build it with
  // HttpRequestBytes.
  std::function<std::string(int index)> request;
};

struct HttpLoadReport {
  uint64_t responses = 0;     // complete responses within the duration
  uint64_t not_2xx_3xx = 0;   // of those, with another status
  uint64_t socket_errors = 0; // failed connects, resets, EOFs, unframeable responses
  double wall_ms = 0;         // from the first write to the loop's end (the duration or a little past it)
  double client_cpu_ms = 0;   // the load thread's own CPU time (user + system)
  // Latency in ms over every response.
  double avg_ms = 0, stdev_ms = 0, max_ms = 0;
  double p50_ms = 0, p75_ms = 0, p90_ms = 0, p99_ms = 0;
  std::string first_error;    // the first socket error's description, if any

  double ops_per_sec() const { return wall_ms > 0 ? responses * 1000.0 / wall_ms : 0; }
  double client_cpu_us_per_req() const { return responses ? client_cpu_ms * 1000.0 / responses : 0; }
};

// One HTTP/1.1 request: `method` `path`, Host `host`:`port`, and when `body`
// is not empty a JSON body with its Content-Length.
std::string HttpRequestBytes(std::string_view method, std::string_view path, std::string_view host, int port,
                             std::string_view body = {});

// Runs the load for options.duration (longer for min_responses). An error only when no connection could
// be opened at all (or the options are unusable); otherwise the report,
// errors counted in it.
Result<HttpLoadReport> RunHttpLoad(const HttpLoadOptions& options);

}  // namespace settee::bench
