// CouchDB's built-in reduce functions (_sum, _count, _stats,
// _approx_count_distinct), computed in C++ over a group of view rows.
//
// A Reducer takes a group's rows one at a time, and the reductions of runs
// of them (a view's cached blocks, storage/view_reduce_cache.h), and gives
// the group's value as JSON text.
//
// Thread safety: a Reducer is a single-threaded object.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"
#include "util/json.h"

namespace settee::views {

enum class Builtin { kNone, kSum, kCount, kStats, kApproxCountDistinct };

// The built-in named by a view's reduce source ("_sum", ...; CouchDB allows
// surrounding whitespace), kNone for anything else (JavaScript).
Builtin ParseBuiltin(std::string_view source);

class BuiltinReducer {
 public:
  explicit BuiltinReducer(Builtin kind) : kind_(kind) {}

  // Adds one row: its collation-encoded key and its value as JSON text.
  // A value _sum cannot take makes the group's value CouchDB's
  // {"error":"builtin_reduce_error",...} object (not an error Status);
  // _stats answers kBadRequest with its builtin_reduce_error reason.
  Status Add(std::string_view encoded_key, std::string_view value_json);
  // Adds the reduction of some of the group's rows (Finish() of another
  // reducer of the same kind): CouchDB's rereduce. Not for
  // _approx_count_distinct (its value is a count, not its set): see
  // AddDistinctRun.
  Status AddReduced(std::string_view reduced_json);
  // _approx_count_distinct: adds a run of consecutive index rows with
  // `distinct` distinct keys (Finish() of a reducer given only those rows),
  // the first and last of them encoded as `first` and `last`. Index rows
  // are in key order, so of a run's keys only those two can equal a key
  // added before or after it; the run's count stands for the others.
  Status AddDistinctRun(std::string_view distinct, std::string_view first, std::string_view last);
  // The group's value as JSON text; the reducer starts a new group.
  std::string Finish();

 private:
  // _stats of one value or reduction (a number, a stats object, or an
  // array of those), as couch_query_servers:stat_values folds it.
  Status AddStats(const json::Value& v);

  Builtin kind_;
  uint64_t count_ = 0;
  json::Document sum_;  // _sum: kNullType until the first value
  std::string sum_error_;  // _sum: the group's builtin_reduce_error value, once it has one
  // _stats: one accumulator for number values, one per element for arrays
  // of numbers (CouchDB's builtin_stats zips arrays element-wise); the first
  // value of a group decides which.
  struct Stats {
    double sum = 0, min = 0, max = 0, sumsqr = 0;
    uint64_t count = 0;
    bool seen = false;  // min and max are set
    void Merge(const Stats& o);
  };
  std::vector<Stats> stats_;
  bool stats_array_ = false;
  bool stats_started_ = false;
  std::set<std::string> distinct_;
  uint64_t distinct_inner_ = 0;  // distinct keys of runs, besides their ends
};

}  // namespace settee::views
