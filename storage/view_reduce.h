// CouchDB's built-in reduce functions (_sum, _count, _stats,
// _approx_count_distinct), computed in C++ over a group of view rows.
//
// A Reducer takes a group's rows one at a time and gives the group's value
// as JSON text. Built-ins never need a rereduce here: a query reduces each
// group in one pass over its rows (storage/views.h).
//
// Thread safety: a Reducer is a single-threaded object.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>

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
  // Errors: CouchDB's builtin_reduce_error reasons (kBadRequest) for a
  // value _sum or _stats cannot take.
  Status Add(std::string_view encoded_key, std::string_view value_json);
  // Adds the reduction of some of the group's rows (Finish() of another
  // reducer of the same kind): CouchDB's rereduce. Not for
  // _approx_count_distinct (its value is a count, not its set).
  Status AddReduced(std::string_view reduced_json);
  // The group's value as JSON text; the reducer starts a new group.
  std::string Finish();

 private:
  Builtin kind_;
  uint64_t count_ = 0;
  json::Document sum_;  // _sum: kNullType until the first value
  // _stats
  double s_sum_ = 0, s_min_ = 0, s_max_ = 0, s_sumsqr_ = 0;
  uint64_t s_count_ = 0;
  std::set<std::string> distinct_;
};

}  // namespace settee::views
