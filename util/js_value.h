// JavaScript's view of a JSON value, as a validate_doc_update function sees
// the documents it is given: what String() makes of it, and what === and ==
// decide. Code that stands in for such a function (the _auth design doc of
// _users, runtime/users_db.h) answers as the function would with these.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "util/json.h"

namespace settee::json {

// String(v), as string concatenation ('x' + v) converts it: a string is
// itself; null "null"; true/false; a number as Number.prototype.toString
// writes it (the shortest digits that read back, plain from 1e-7 up to
// 1e21, else with an exponent: 1e+21, 1.5e-7); an array its elements'
// strings joined by ',' (a null element as ""): ["a"] is "a", [] is "";
// an object "[object Object]".
std::string JsString(const Value& v);

// a === b: the same type and value for strings, numbers, booleans and
// null; never for an array or object (two parsed values are two objects).
bool JsStrictEquals(const Value& a, const Value& b);

// s == v for a string s (the abstract equality's rules): equal to a string
// with the same text, a number or boolean when Number(s) is that number (1
// for true, 0 for false; Number(s) read as a decimal literal, spaces
// around it ignored, "" as 0), an array or object when s is its String();
// never to null.
bool JsLooselyEqualsString(std::string_view s, const Value& v);

}  // namespace settee::json
