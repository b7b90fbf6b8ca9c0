#include "storage/view_reduce.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace settee::views {

namespace {

Status SumError() {
  return Status::BadRequest(
      "builtin_reduce_error: The _sum function requires that map values be numbers, arrays of "
      "numbers, or objects. Objects cannot be mixed with other data structures. Objects can be "
      "arbitrarily nested, provided that the values for all fields are themselves numbers, arrays "
      "of numbers, or objects.");
}

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

}  // namespace

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
      json::Document v;
      Status s = json::Parse(value_json, &v);
      if (!s.ok()) return s;
      ++count_;
      return SumInto(sum_, v, sum_.GetAllocator());
    }
    case Builtin::kStats: {
      json::Document v;
      Status s = json::Parse(value_json, &v);
      if (!s.ok()) return s;
      auto take = [&](double sum, double min, double max, uint64_t count, double sumsqr) {
        if (s_count_ == 0) {
          s_min_ = min;
          s_max_ = max;
        } else {
          s_min_ = std::min(s_min_, min);
          s_max_ = std::max(s_max_, max);
        }
        s_sum_ += sum;
        s_count_ += count;
        s_sumsqr_ += sumsqr;
      };
      if (v.IsNumber()) {
        double d = v.GetDouble();
        take(d, d, d, 1, d * d);
      } else if (v.IsArray()) {
        // CouchDB stats arrays element-wise; settee takes each number of
        // the array as a value of the group.
        for (auto& e : v.GetArray()) {
          if (!e.IsNumber()) return StatsError();
          double d = e.GetDouble();
          take(d, d, d, 1, d * d);
        }
      } else if (v.IsObject() && v.HasMember("sum") && v.HasMember("count") && v.HasMember("min") &&
                 v.HasMember("max") && v.HasMember("sumsqr") && v["sum"].IsNumber() &&
                 v["count"].IsNumber() && v["min"].IsNumber() && v["max"].IsNumber() &&
                 v["sumsqr"].IsNumber()) {
        // A precomputed stats object, as CouchDB accepts.
        take(v["sum"].GetDouble(), v["min"].GetDouble(), v["max"].GetDouble(),
             static_cast<uint64_t>(v["count"].GetDouble()), v["sumsqr"].GetDouble());
      } else {
        return StatsError();
      }
      return Status::OK();
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
      if (sum_.IsNull()) {
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
    case Builtin::kStats:
      w.StartObject();
      w.Key("sum");
      number(s_sum_);
      w.Key("count");
      w.Uint64(s_count_);
      w.Key("min");
      number(s_min_);
      w.Key("max");
      number(s_max_);
      w.Key("sumsqr");
      number(s_sumsqr_);
      w.EndObject();
      break;
    case Builtin::kNone:
      w.Null();
      break;
  }
  count_ = 0;
  sum_.SetNull();
  s_sum_ = s_min_ = s_max_ = s_sumsqr_ = 0;
  s_count_ = 0;
  distinct_.clear();
  distinct_inner_ = 0;
  return out;
}

}  // namespace settee::views
