// A Mango selector (CouchDB's _find "selector"), normalized as CouchDB's
// mango_selector does and matched against documents.
//
// Normalization: {"a": 1} is {"a": {"$eq": 1}}; {"a": {"b": 1}} is the
// dotted field "a.b"; several conditions on one field are an $and; a $not
// under a field wraps the field's condition (so a document without the
// field matches {"a": {"$not": {"$eq": 1}}}). A field that is missing
// matches only {"$exists": false}.
//
// Operators: $eq $ne $gt $gte $lt $lte (CouchDB view collation; _id by code
// point), $in $nin $all $size $mod $regex (PCRE-like syntax, ICU) $beginsWith
// $exists $type, and the combinators $and $or $nor $not, $elemMatch
// $allMatch $keyMapMatch.
//
// Thread safety: a parsed Selector is immutable; Matches() may run on many
// threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "settee/status.h"
#include "util/json.h"

namespace settee::mango {

class Selector {
 public:
  struct Node;

  // kInvalidOperator ("Invalid operator: $foo") for an unknown operator,
  // kBadRequest with CouchDB's reason for a bad argument ($in without an
  // array, $mod without [divisor, remainder], a bad regex, ...).
  static Result<Selector> Parse(const json::Value& selector);

  bool Matches(const json::Value& doc) const;

  // Conditions an index can turn into a key range: those of the top-level
  // conjunction on one field.
  struct FieldCondition {
    std::string field;  // dotted
    std::string op;     // "$eq", "$gt", ...
    const json::Value* arg = nullptr;
  };
  std::vector<FieldCondition> TopLevelConditions() const;
  // Fields every match must have (top-level conjunction, any operator but
  // {"$exists": false}): an index on them holds every match.
  std::vector<std::string> RequiredFields() const;
  // The normalized selector as JSON (for _explain).
  std::string ToJson() const;

 private:
  std::shared_ptr<const Node> root_;
  std::shared_ptr<json::Document> args_;  // owns the operator arguments
};

// A field path: "a.b" -> {"a","b"}; "a\.b" is one name.
std::vector<std::string> SplitField(std::string_view dotted);
// The value at `path` in `doc`, or nullptr. A name of digits indexes an
// array ("a.1" is a[1]), as in CouchDB.
const json::Value* GetField(const json::Value& doc, const std::vector<std::string>& path);

}  // namespace settee::mango
