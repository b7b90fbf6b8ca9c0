#include "storage/view_reduce.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace settee::views {

namespace {

// couch_query_servers' ?SUMERROR.
constexpr const char* kSumReason =
    "The _sum function requires that map values be numbers, arrays of numbers, or objects. "
    "Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, "
    "provided that the values for all fields are themselves numbers, arrays of numbers, or "
    "objects.";

Status SumError() { return Status::BadRequest(std::string("builtin_reduce_error: ") + kSumReason); }

Status StatsError() {
  return Status::BadRequest(
      "builtin_reduce_error: The _stats function requires that map values be numbers or arrays of "
      "numbers, not '...'");
}

// acc += v, CouchDB's couch_query_servers:sum_values: numbers add, arrays
// add element-wise (the shorter padded with zeros; a number counts as a
// one-element array), objects add member-wise.
Status SumInto(json::Value& acc, const json::Value& v, json::Allocator& a) {
  if (acc.IsNull()) {
    if (!v.IsNumber() && !v.IsArray() && !v.IsObject()) return SumError();
    acc.CopyFrom(v, a);
    if (acc.IsArray()) {
      for (auto& e : acc.GetArray()) {
        if (!e.IsNumber()) return SumError();
      }
    }
    if (acc.IsObject()) {
      json::Value fresh(rapidjson::kObjectType);
      acc.Swap(fresh);
      return SumInto(acc, fresh, a);
    }
    return Status::OK();
  }
  if (acc.IsNumber() && v.IsNumber()) {
    acc.SetDouble(acc.GetDouble() + v.GetDouble());
    return Status::OK();
  }
  if (acc.IsObject() != v.IsObject()) return SumError();
  if (acc.IsObject()) {
    for (auto& m : v.GetObject()) {
      auto it = acc.FindMember(m.name);
      if (it == acc.MemberEnd()) {
        json::Value fresh;
        Status s = SumInto(fresh, m.value, a);
        if (!s.ok()) return s;
        acc.AddMember(json::Value(m.name, a), fresh, a);
      } else {
        Status s = SumInto(it->value, m.value, a);
        if (!s.ok()) return s;
      }
    }
    return Status::OK();
  }
  if (acc.IsNumber()) {
    double d = acc.GetDouble();
    acc.SetArray();
    acc.PushBack(json::Value(d), a);
  }
  if (v.IsNumber()) {
    if (acc.Empty()) acc.PushBack(json::Value(0.0), a);
    acc[0].SetDouble(acc[0].GetDouble() + v.GetDouble());
    return Status::OK();
  }
  if (!v.IsArray()) return SumError();
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsNumber()) return SumError();
    if (i < acc.Size()) {
      acc[i].SetDouble(acc[i].GetDouble() + v[i].GetDouble());
    } else {
      acc.PushBack(json::Value(v[i].GetDouble()), a);
    }
  }
  return Status::OK();
}

// One _stats input as couch_query_servers:stat_values takes it: a number,
// or a stats object (a reduction, or a value the map precomputed).
bool StatsOf(const json::Value& v, double* sum, uint64_t* count, double* min, double* max,
             double* sumsqr) {
  if (v.IsNumber()) {
    const double d = v.GetDouble();
    *sum = *min = *max = d;
    *count = 1;
    *sumsqr = d * d;
    return true;
  }
  if (!v.IsObject()) return false;
  auto num = [&](const char* name, double* out) {
    auto it = v.FindMember(name);
    if (it == v.MemberEnd() || !it->value.IsNumber()) return false;
    *out = it->value.GetDouble();
    return true;
  };
  double c = 0;
  if (!num("sum", sum) || !num("count", &c) || !num("min", min) || !num("max", max) ||
      !num("sumsqr", sumsqr)) {
    return false;
  }
  *count = static_cast<uint64_t>(c);
  return true;
}

}  // namespace

void BuiltinReducer::Stats::Merge(const Stats& o) {
  if (!seen) {
    *this = o;
    seen = true;
    return;
  }
  sum += o.sum;
  count += o.count;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
  sumsqr += o.sumsqr;
}

Status BuiltinReducer::AddStats(const json::Value& v) {
  // The group's first value sets the shape: an array keeps one accumulator
  // per element, and later values must be arrays of as many (CouchDB zips
  // them; a number against an array is its stats error).
  if (!stats_started_) {
    stats_started_ = true;
    stats_array_ = v.IsArray();
    stats_.assign(stats_array_ ? v.Size() : 1, Stats{});
  }
  if (v.IsArray() != stats_array_ || (stats_array_ && v.Size() != stats_.size())) return StatsError();
  auto add_one = [&](const json::Value& e, Stats* acc) {
    Stats one;
    if (!StatsOf(e, &one.sum, &one.count, &one.min, &one.max, &one.sumsqr)) return false;
    acc->Merge(one);
    return true;
  };
  if (!stats_array_) return add_one(v, &stats_[0]) ? Status::OK() : StatsError();
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!add_one(v[i], &stats_[i])) return StatsError();
  }
  return Status::OK();
}

Builtin ParseBuiltin(std::string_view source) {
  while (!source.empty() && std::isspace(static_cast<unsigned char>(source.front()))) source.remove_prefix(1);
  while (!source.empty() && std::isspace(static_cast<unsigned char>(source.back()))) source.remove_suffix(1);
  if (source == "_sum") return Builtin::kSum;
  if (source == "_count") return Builtin::kCount;
  if (source == "_stats") return Builtin::kStats;
  if (source == "_approx_count_distinct") return Builtin::kApproxCountDistinct;
  return Builtin::kNone;
}

Status BuiltinReducer::Add(std::string_view encoded_key, std::string_view value_json) {
  switch (kind_) {
    case Builtin::kCount:
      ++count_;
      return Status::OK();
    case Builtin::kApproxCountDistinct:
      // Exact: a group's distinct keys, which HyperLogLog only estimates.
      distinct_.emplace(encoded_key);
      return Status::OK();
    case Builtin::kSum: {
      // CouchDB's builtin_sum_rows: a value _sum cannot take makes the
      // group's value {"error":"builtin_reduce_error","reason",
      // "caused_by"}, and such a value (a reduction of some of the rows)
      // stays the group's value; the query still answers 200.
      if (!sum_error_.empty()) return Status::OK();
      json::Document v;
      Status s = json::Parse(value_json, &v);
      if (!s.ok()) return s;
      ++count_;
      if (v.IsObject()) {
        auto e = v.FindMember("error");
        if (e != v.MemberEnd() && e->value.IsString() && json::View(e->value) == "builtin_reduce_error") {
          sum_error_ = std::string(value_json);
          return Status::OK();
        }
      }
      if (!SumInto(sum_, v, sum_.GetAllocator()).ok()) {
        sum_error_ = R"({"error":"builtin_reduce_error","reason":)";
        json::AppendQuoted(&sum_error_, kSumReason);
        sum_error_ += R"(,"caused_by":)";
        sum_error_ += json::Serialize(v);
        sum_error_ += '}';
      }
      return Status::OK();
    }
    case Builtin::kStats: {
      json::Document v;
      Status s = json::Parse(value_json, &v);
      if (!s.ok()) return s;
      return AddStats(v);
    }
    case Builtin::kNone:
      break;
  }
  return Status::Internal("not a built-in reduce");
}

Status BuiltinReducer::AddReduced(std::string_view reduced_json) {
  switch (kind_) {
    case Builtin::kCount: {
      json::Document v;
      Status s = json::Parse(reduced_json, &v);
      if (!s.ok()) return s;
      if (!v.IsUint64()) return Status::Internal("bad _count reduction");
      count_ += v.GetUint64();
      return Status::OK();
    }
    case Builtin::kSum:
    case Builtin::kStats:
      // A sum adds as a value does; a stats object is taken as one.
      return Add({}, reduced_json);
    default:
      return Status::Internal("no rereduce for this built-in");
  }
}

Status BuiltinReducer::AddDistinctRun(std::string_view distinct, std::string_view first,
                                      std::string_view last) {
  if (kind_ != Builtin::kApproxCountDistinct) return Status::Internal("not _approx_count_distinct");
  json::Document v;
  Status s = json::Parse(distinct, &v);
  if (!s.ok()) return s;
  if (!v.IsUint64()) return Status::Internal("bad _approx_count_distinct reduction");
  const uint64_t ends = first == last ? 1 : 2;
  if (v.GetUint64() < ends) return Status::Internal("bad _approx_count_distinct reduction");
  distinct_inner_ += v.GetUint64() - ends;
  distinct_.emplace(first);
  distinct_.emplace(last);
  return Status::OK();
}

std::string BuiltinReducer::Finish() {
  std::string out;
  json::StringOutput sink(&out);
  json::Writer w(sink);
  auto number = [&](double d) {
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d > -9e15 && d < 9e15) {
      w.Int64(static_cast<int64_t>(d));
    } else {
      w.Double(d);
    }
  };
  switch (kind_) {
    case Builtin::kCount:
      w.Uint64(count_);
      break;
    case Builtin::kApproxCountDistinct:
      w.Uint64(distinct_.size() + distinct_inner_);
      break;
    case Builtin::kSum:
      if (!sum_error_.empty()) {
        w.RawValue(sum_error_.data(), sum_error_.size(), rapidjson::kObjectType);
      } else if (sum_.IsNull()) {
        w.Int(0);
      } else if (sum_.IsNumber()) {
        number(sum_.GetDouble());
      } else {
        // Whole doubles print as integers, as CouchDB's JSON does.
        std::function<void(const json::Value&)> put = [&](const json::Value& v) {
          if (v.IsNumber()) {
            number(v.GetDouble());
          } else if (v.IsArray()) {
            w.StartArray();
            for (auto& e : v.GetArray()) put(e);
            w.EndArray();
          } else if (v.IsObject()) {
            w.StartObject();
            for (auto& m : v.GetObject()) {
              w.Key(m.name.GetString(), m.name.GetStringLength());
              put(m.value);
            }
            w.EndObject();
          } else {
            w.Null();
          }
        };
        put(sum_);
      }
      break;
    case Builtin::kStats: {
      // CouchDB's pack_stats: an object, or an array of them for arrays.
      auto put = [&](const Stats& st) {
        w.StartObject();
        w.Key("sum");
        number(st.sum);
        w.Key("count");
        w.Uint64(st.count);
        w.Key("min");
        number(st.min);
        w.Key("max");
        number(st.max);
        w.Key("sumsqr");
        number(st.sumsqr);
        w.EndObject();
      };
      if (stats_array_) {
        w.StartArray();
        for (const Stats& st : stats_) put(st);
        w.EndArray();
      } else {
        put(stats_.empty() ? Stats{} : stats_[0]);
      }
      break;
    }
    case Builtin::kNone:
      w.Null();
      break;
  }
  count_ = 0;
  sum_.SetNull();
  sum_error_.clear();
  stats_.clear();
  stats_array_ = false;
  stats_started_ = false;
  distinct_.clear();
  distinct_inner_ = 0;
  return out;
}

}  // namespace settee::views
