// Flat documents as a shape and values (js/doc_shapes.h): the object a
// shape's literal builds from them is the one JSON.parse builds from the
// text (members, order, values, -0 included); everything else is declined.
#include "js/doc_shapes.h"

#include <cmath>
#include <functional>
#include <memory>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <v8-container.h>
#include <v8-function.h>
#include <v8-json.h>
#include <v8-primitive.h>

#include "js/convert.h"
#include "util/json.h"
#include "tests/js/v8_context_test.h"

namespace settee::js {
namespace {

class DocShapesTest : public V8ContextTest {
 protected:
  // The object js/prelude/pouchdb.js's docShapeFunction builds from `flat`.
  v8::Local<v8::Value> Build(v8::Local<v8::Array> flat) {
    uint32_t shape = flat->Get(context_, 0).ToLocalChecked().As<v8::Uint32>()->Value();
    auto names = DocShapeNames(isolate_, shape);
    EXPECT_TRUE(names.has_value());
    v8::Local<v8::Value> argv[] = {*names, flat};
    v8::Local<v8::Function> make = Eval(
        "(names, v) => { let m = ''; for (let i = 0; i < names.length; i++) "
        "m += JSON.stringify(names[i]) + ':v[' + (i + 1) + '],'; "
        "return new Function('v', '\"use strict\"; return {' + m + '};')(v); }").As<v8::Function>();
    return make->Call(context_, context_->Global(), 2, argv).ToLocalChecked();
  }

  // That `json` is taken and builds what JSON.parse builds.
  void ExpectSameAsParse(const std::string& json) {
    SCOPED_TRACE(json);
    v8::Local<v8::Array> flat;
    ASSERT_TRUE(FlatDocValues(isolate_, json).ToLocal(&flat));
    v8::Local<v8::Value> built = Build(flat);
    v8::Local<v8::Value> parsed = JsonToV8(context_, json).ToLocalChecked();
    context_->Global()->Set(context_, ToV8String(isolate_, "built"), built).Check();
    context_->Global()->Set(context_, ToV8String(isolate_, "parsed"), parsed).Check();
    // Same own names in the same order, same values (Object.is: -0 too),
    // plain prototype, ordinary writable members.
    v8::Local<v8::Value> same = Eval(
        "(() => { const a = Object.keys(built), b = Object.keys(parsed);"
        " if (Object.getPrototypeOf(built) !== Object.prototype) return 'prototype';"
        " if (JSON.stringify(a) !== JSON.stringify(b)) return 'names ' + JSON.stringify(a);"
        " for (const k of b) { if (!Object.is(built[k], parsed[k])) return 'value of ' + k;"
        "   const d = Object.getOwnPropertyDescriptor(built, k);"
        "   if (!d.writable || !d.enumerable || !d.configurable) return 'descriptor of ' + k; }"
        " return 'same'; })()");
    EXPECT_EQ(ToUtf8(isolate_, same), "same");
  }

  // That `json`, if taken, builds what JSON.parse builds, and that JSON.parse
  // takes it; whether it was taken.
  bool ExpectSameOrDeclined(const std::string& json) {
    SCOPED_TRACE(json);
    v8::Local<v8::Array> flat;
    if (!FlatDocValues(isolate_, json).ToLocal(&flat)) return false;
    ExpectSameAsParse(json);
    return true;
  }

  void ExpectDeclined(const std::string& json) {
    SCOPED_TRACE(json);
    EXPECT_TRUE(FlatDocValues(isolate_, json).IsEmpty());
  }

  uint32_t ShapeOf(const std::string& json) {
    v8::Local<v8::Array> flat;
    EXPECT_TRUE(FlatDocValues(isolate_, json).ToLocal(&flat));
    if (flat.IsEmpty()) return UINT32_MAX;
    return flat->Get(context_, 0).ToLocalChecked().As<v8::Uint32>()->Value();
  }
};

TEST_F(DocShapesTest, FlatDocumentsBuildWhatJsonParseBuilds) {
  ExpectSameAsParse(R"({"_id":"doc_0000000042","_rev":"1-0123456789abcdef0123456789abcdef","foo":"bar","baz":"quux"})");
  ExpectSameAsParse("{}");
  ExpectSameAsParse(R"({"":""})");
  ExpectSameAsParse(R"({"a":0,"b":-0,"c":1.5,"d":-2.25e-7,"e":1e21,"f":-1.5e300,"g":0.1,"h":9007199254740993,)"
                    R"("i":2147483648,"j":-2147483649,"k":5e-324,"l":1.7976931348623157e308,"m":1E+2})");
  ExpectSameAsParse(R"({"t":true,"f":false,"n":null})");
  // UTF-8 names and values: Latin-1, BMP, astral.
  ExpectSameAsParse("{\"k\xc3\xa9y\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"x\":\"\xe2\x80\xa8\"}");
  // Names a literal would read as something else when unquoted.
  ExpectSameAsParse(R"({"constructor":1,"toString":"x","a b":2,"1a":3,"-1":4,"1.5":5,"__proto":6})");
  // Whitespace anywhere JSON allows it.
  ExpectSameAsParse(" {\n \"a\" : 1 ,\t\"b\":\r\"c\" } ");
}

// Strings are scanned eight bytes at a time: every length and every place
// of a non-ASCII character, a quote or a backslash within and across words.
TEST_F(DocShapesTest, StringsOfEveryLengthAndPlace) {
  for (int len = 0; len <= 20; ++len) {
    std::string plain(len, 'a');
    ExpectSameAsParse("{\"s\":\"" + plain + "\",\"t\":\"\xc3\xa9\"}");
    ExpectSameAsParse("{\"" + plain + "\":\"" + plain + "\"}");
    for (int at = 0; at < len; ++at) {
      std::string wide = plain;
      wide.replace(at, 1, "\xc3\xa9");
      ExpectSameAsParse("{\"s\":\"" + wide + "\",\"u\":\"" + plain + "\"}");
      std::string escaped = plain;
      escaped.replace(at, 1, "\\\"");
      ExpectDeclined("{\"s\":\"" + escaped + "\"}");
      escaped = plain;
      escaped.replace(at, 1, "\\n");
      ExpectDeclined("{\"s\":\"" + escaped + "\"}");
    }
  }
}

TEST_F(DocShapesTest, DeclinesWhatItCannotBuildAlike) {
  ExpectDeclined(R"({"a":{"b":1}})");
  ExpectDeclined(R"({"a":[1]})");
  ExpectDeclined(R"({"a":"esc\"aped"})");
  ExpectDeclined(R"({"a":"\ud800"})");
  ExpectDeclined(R"({"n\u0061me":1})");
  ExpectDeclined(R"({"__proto__":1})");
  ExpectDeclined(R"({"1":1})");
  ExpectDeclined(R"({"0":1,"a":2})");
  ExpectDeclined(R"({"a":1,"a":2})");
  ExpectDeclined(R"({"a":1e400})");
  ExpectDeclined(R"({"a":-1e400})");
  ExpectDeclined("[1]");
  ExpectDeclined("\"text\"");
  ExpectDeclined("{\"a\":1");
  ExpectDeclined("{\"a\":1}x");
  ExpectDeclined("{\"a\":tru}");
  std::string wide = "{";
  for (int i = 0; i <= kMaxShapeMembers; ++i) wide += (i ? ",\"m" : "\"m") + std::to_string(i) + "\":1";
  ExpectDeclined(wide + "}");
}

TEST_F(DocShapesTest, TheCallersIdIsGivenBackOnlyWhenItIsTheDocumentsId) {
  const std::string json = R"({"_id":"doc_1","_rev":"1-a","x":"doc_1"})";
  auto value1 = [&](const char* id) {
    v8::Local<v8::Array> flat;
    EXPECT_TRUE(FlatDocValues(isolate_, json, ToV8String(isolate_, id), id).ToLocal(&flat));
    return ToUtf8(isolate_, flat->Get(context_, 1).ToLocalChecked());
  };
  EXPECT_EQ(value1("doc_1"), "doc_1");
  EXPECT_EQ(value1("doc_2"), "doc_1");  // not what was asked for: the document's own
  EXPECT_EQ(value1(""), "doc_1");
  // Not a first member "_id": nothing is taken from the caller.
  v8::Local<v8::Array> flat;
  ASSERT_TRUE(FlatDocValues(isolate_, R"({"x":"doc_1","_id":"doc_1"})", ToV8String(isolate_, "zzz"), "zzz")
                  .ToLocal(&flat));
  EXPECT_EQ(ToUtf8(isolate_, flat->Get(context_, 1).ToLocalChecked()), "doc_1");
}

// FlatDocValuesOf builds from the engine's parts what FlatDocValues builds
// from the document's text.
TEST_F(DocShapesTest, PartsBuildWhatTheWholeTextBuilds) {
  struct Case {
    std::string id, rev, body;
  };
  const Case cases[] = {
      {"doc_0000000001", "1-0123456789abcdef0123456789abcdef", R"({"foo":"bar","baz":"quux"})"},
      {"a", "3-ff", "{}"},
      {"caf\xc3\xa9", "1-a", R"({"n":-1.5e3,"t":true,"z":null,"s":"\u00e9x"})"},  // escape: declined
      {"b", "2-b", R"({"nested":{"x":1}})"},  // declined
      {"c", "1-c", R"({"w":"\xe2\x82\xac"})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.id + " " + c.body);
    std::string whole = "{\"_id\":" + json::Quote(c.id) + ",\"_rev\":" + json::Quote(c.rev) +
                        (c.body.size() > 2 ? "," + c.body.substr(1) : "}");
    v8::Local<v8::Array> from_parts;
    bool taken = FlatDocValuesOf(isolate_, ToV8String(isolate_, c.id), c.id, c.rev, c.body).ToLocal(&from_parts);
    EXPECT_EQ(taken, !FlatDocValues(isolate_, whole).IsEmpty());
    if (!taken) continue;
    ExpectSameAsParse(whole);
    v8::Local<v8::Value> built = Build(from_parts);
    v8::Local<v8::Value> parsed = JsonToV8(context_, whole).ToLocalChecked();
    EXPECT_EQ(ToUtf8(isolate_, v8::JSON::Stringify(context_, built).ToLocalChecked()),
              ToUtf8(isolate_, v8::JSON::Stringify(context_, parsed).ToLocalChecked()));
  }
  // An id with a lone surrogate is given back as its UTF-8 (U+FFFD), as the
  // JSON text carried it.
  v8::Local<v8::Array> flat;
  v8::Local<v8::String> lone = Eval("'a\\ud800'").As<v8::String>();
  ASSERT_TRUE(FlatDocValuesOf(isolate_, lone, ToUtf8(isolate_, lone), "1-a", "{}").ToLocal(&flat));
  EXPECT_EQ(ToUtf8(isolate_, flat->Get(context_, 1).ToLocalChecked()), "a\xef\xbf\xbd");
  EXPECT_FALSE(flat->Get(context_, 1).ToLocalChecked()->StrictEquals(lone));
}

TEST_F(DocShapesTest, ShapesAreNamedByTheirNamesInOrder) {
  uint32_t ab = ShapeOf(R"({"a":1,"b":"x"})");
  EXPECT_EQ(ShapeOf(R"({"a":"y","b":null})"), ab);
  EXPECT_NE(ShapeOf(R"({"b":1,"a":2})"), ab);
  // A name ending is part of the shape: {} and {"": 1} differ.
  EXPECT_NE(ShapeOf("{}"), ShapeOf(R"({"":1})"));
  EXPECT_NE(ShapeOf(R"({"a":1})"), ShapeOf(R"({"a":1,"":2})"));
  EXPECT_FALSE(DocShapeNames(isolate_, 1u << 30).has_value());
}

// Numbers: the double std::from_chars reads is the one V8's JSON parser
// reads, bit for bit (-0, subnormals, the largest finite, integers past
// 2^53 halfway between two doubles, more digits than a double holds).
TEST_F(DocShapesTest, NumbersAreTheDoublesJsonParseReads) {
  const char* taken[] = {
      "0", "-0", "-0.0", "0e0", "-0e-5", "0.0000", "1", "-1", "1.5", "1e21", "1E21", "1e+21", "1e-7",
      "5e-324", "-5e-324", "4.9406564584124654e-324", "2.4703282292062328e-324",  // rounds up to 5e-324
      "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
      "1.7976931348623158e308",  // rounds down to the largest finite
      "9007199254740992", "9007199254740993", "9007199254740995", "-9007199254740993",
      "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
      "0.1000000000000000055511151231257827021181583404541015625",
      "0.30000000000000004", "0.3000000000000000444089209850062616169452667236328125",
      "1.00000000000000011102230246251565404236316680908203125",  // exactly halfway: to even
      "1.00000000000000011102230246251565404236316680908203126",  // just above halfway
      "100000000000000000000000000000000000000000000000000000000000000000000000e-70",
      "0.000000000000000000000000000000000000000000000000000000000000000000000001e70",
      "1e308", "1e-307", "123e-20", "4.35", "2147483648", "-2147483649", "4294967295", "4294967296"};
  for (const char* n : taken) ExpectSameAsParse(std::string(R"({"n":)") + n + "}");
  // Out of range (overflow or underflow to 0): declined or the same.
  for (const char* n : {"1e400", "-1e400", "1e-400", "-1e-400", "2.4703282292062327e-324",
                        "1.7976931348623159e308", "1e-324"}) {
    ExpectSameOrDeclined(std::string(R"({"n":)") + n + "}");
  }
  // Random texts of every length of mantissa and exponent, compared bit
  // for bit in C++ (Object.is above is the same test, slower).
  std::mt19937_64 gen(20261202);
  auto digits = [&](int n, bool lead) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + (i == 0 && lead ? 1 + gen() % 9 : gen() % 10)));
    return d;
  };
  int taken_count = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string n = gen() % 2 ? "-" : "";
    n += gen() % 8 == 0 ? "0" : digits(1 + gen() % 25, true);
    if (gen() % 2) n += "." + digits(1 + gen() % 25, false);
    if (gen() % 2) {
      n += gen() % 2 ? "e" : "E";
      n += gen() % 3 == 0 ? "-" : gen() % 2 ? "+" : "";
      n += std::to_string(gen() % (gen() % 4 == 0 ? 400 : 30));
    }
    const std::string json = R"({"n":)" + n + "}";
    v8::Local<v8::Array> flat;
    if (!FlatDocValues(isolate_, json).ToLocal(&flat)) {
      continue;
    }
    ++taken_count;
    double built = flat->Get(context_, 1).ToLocalChecked().As<v8::Number>()->Value();
    double parsed = JsonToV8(context_, json).ToLocalChecked().As<v8::Object>()
                        ->Get(context_, ToV8String(isolate_, "n")).ToLocalChecked().As<v8::Number>()->Value();
    uint64_t a, b;
    std::memcpy(&a, &built, 8);
    std::memcpy(&b, &parsed, 8);
    ASSERT_EQ(a, b) << n;
  }
  EXPECT_GT(taken_count, 19000);  // only out-of-range ones are declined
}

// Text JSON.parse refuses is never built (the store holds only valid JSON,
// but a decline is the safe answer to anything else).
TEST_F(DocShapesTest, TextJsonParseRefusesIsDeclined) {
  for (const char* n : {"01", "-01", "00", "1.", "-", "-.5", "1.e5", "1e", "1e+", "+1", "1-2", "1..2", "0x10",
                        "1e5.5", ".5", "-a", "1E--2"}) {
    ExpectDeclined(std::string(R"({"n":)") + n + "}");
  }
  // Raw control characters in a string or a name.
  for (char c = 1; c < 0x20; ++c) {
    ExpectDeclined(std::string("{\"s\":\"a") + c + "b\"}");
    ExpectDeclined(std::string("{\"a") + c + "b\":1}");
    ExpectDeclined(std::string("{\"s\":\"abcdefghijklmnop") + c + "\"}");
  }
  ExpectDeclined(std::string("{\"s\":\"a\0b\"}", 12));
  ExpectDeclined(R"({"a":1,})");
  ExpectDeclined(R"({,"a":1})");
  ExpectDeclined(R"({"a" 1})");
  ExpectDeclined(R"({"a":True})");
  ExpectDeclined(R"({'a':1})");
}

// Strings and names of any UTF-8, as JSON.parse of the text decodes it:
// astral characters, U+2028/2029, BOM, U+FFFF, and bytes that are not
// UTF-8 (replaced by U+FFFD the same way on both paths).
TEST_F(DocShapesTest, StringsAndNamesOfAnyText) {
  const std::string texts[] = {
      "\xf0\x9f\x98\x80",          // U+1F600
      "\xf4\x8f\xbf\xbf",          // U+10FFFF
      "\xe2\x80\xa8\xe2\x80\xa9",  // U+2028 U+2029
      "\xef\xbb\xbf",              // BOM
      "\xef\xbf\xbf",              // U+FFFF
      "\xed\xa0\x80",              // a surrogate's bytes (not UTF-8)
      "\xc3",                      // a truncated sequence
      "\xff\xfe",                  // never UTF-8
      "\xc0\xaf",                  // overlong '/'
      "a\x7f",                     // DEL is no control character to JSON
      "'`${x}`",                   // quotes of JS source
      "</script>",
  };
  for (const std::string& t : texts) {
    ExpectSameAsParse("{\"s\":\"" + t + "\",\"" + t + "\":\"" + t + t + "\"}");
    ExpectSameAsParse("{\"x" + t + "\":1,\"y\":\"" + t + "x\"}");
  }
}

// Names an object literal reads differently from JSON.parse (or might):
// __proto__ is declined, so are integer names (elements, ordered first);
// the rest are ordinary names in both.
TEST_F(DocShapesTest, NamesThatLookLikeSomethingElse) {
  for (const char* name : {"__proto__"}) ExpectDeclined(std::string("{\"a\":1,\"") + name + "\":2}");
  for (const char* name : {"1", "0", "01", "4294967295", "4294967294", "4294967296", "9007199254740993"}) {
    ExpectDeclined(std::string("{\"a\":1,\"") + name + "\":2}");
  }
  for (const char* name : {"constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__proto",
                           "__proto__ ", " __proto__", "__defineGetter__", "-1", "-0", "1.5", "1e3", "+1",
                           "0x1", "1 ", " 1", "NaN", "Infinity", "undefined", "null", "true", "", "get", "set",
                           "async", "static", "v", "arguments", "eval", "this", "super", "return", "a-b",
                           "a b", "'", "`", "${v}", "\xe2\x80\xa8", "\xf0\x9f\x98\x80"}) {
    ExpectSameAsParse(std::string("{\"") + name + "\":\"first\",\"z\":2,\"a\":3}");
  }
  // Quotes, backslashes and newlines in names reach the text escaped.
  ExpectDeclined(R"({"a\"b":1})");
  ExpectDeclined(R"({"a\\b":1})");
  ExpectDeclined(R"({"a\nb":1})");
}

// _id and _rev from the engine's parts with any characters: the same as
// JSON.parse of the text Database::Get writes for them (escapes included).
TEST_F(DocShapesTest, IdsOfAnyCharacters) {
  const std::string ids[] = {"a\"b", "a\\b", "a\nb", std::string("a\0b", 3), "\x01\x1f", "caf\xc3\xa9",
                             "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "_design/x", "__proto__", "1", ""};
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    const std::string body = R"({"v":"x\u0000","w":1})";  // an escape: the text path
    for (const std::string& b : {std::string(R"({"v":"x","w":1})"), std::string("{}"), body}) {
      std::string whole = "{\"_id\":" + json::Quote(id) + ",\"_rev\":\"1-ab\"" +
                          (b.size() > 2 ? "," + b.substr(1) : "}");
      v8::Local<v8::Array> flat;
      if (!FlatDocValuesOf(isolate_, ToV8String(isolate_, id), id, "1-ab", b).ToLocal(&flat)) {
        EXPECT_EQ(b, body);
        continue;
      }
      context_->Global()->Set(context_, ToV8String(isolate_, "built"), Build(flat)).Check();
      context_->Global()->Set(context_, ToV8String(isolate_, "parsed"), JsonToV8(context_, whole).ToLocalChecked()).Check();
      EXPECT_EQ(ToUtf8(isolate_, Eval("(() => { const a = Object.keys(built), b = Object.keys(parsed);"
                                      " if (JSON.stringify(a) !== JSON.stringify(b)) return 'names';"
                                      " for (const k of b) if (!Object.is(built[k], parsed[k])) return k;"
                                      " return 'same'; })()")),
                "same");
    }
  }
}

TEST_F(DocShapesTest, BigDocumentsAndTheMemberLimit) {
  std::string big(200 << 10, 'x');
  ExpectSameAsParse("{\"_id\":\"big\",\"s\":\"" + big + "\",\"t\":\"\xe2\x82\xac" + big + "\"}");
  std::string doc = "{";
  for (int i = 0; i < kMaxShapeMembers; ++i) doc += (i ? ",\"m" : "\"m") + std::to_string(i) + "\":" + std::to_string(i);
  ExpectSameAsParse(doc + "}");
  ExpectDeclined(doc + ",\"one_more\":1}");
}

// Runs `body` on a new thread (a new, empty shape table) with its own
// isolate and context, as settee's isolate threads do.
void OnNewThread(const std::function<void(v8::Isolate*, v8::Local<v8::Context>)>& body, int isolates = 1) {
  std::thread t([&] {
    std::unique_ptr<v8::ArrayBuffer::Allocator> allocator(v8::ArrayBuffer::Allocator::NewDefaultAllocator());
    for (int k = 0; k < isolates; ++k) {
      v8::Isolate::CreateParams params;
      params.array_buffer_allocator = allocator.get();
      v8::Isolate* isolate = v8::Isolate::New(params);
      {
        v8::Isolate::Scope isolate_scope(isolate);
        v8::HandleScope scope(isolate);
        v8::Local<v8::Context> context = v8::Context::New(isolate);
        v8::Context::Scope context_scope(context);
        body(isolate, context);
      }
      isolate->Dispose();
    }
  });
  t.join();
}

std::string NamesOf(v8::Isolate* isolate, uint32_t shape) {
  auto names = DocShapeNames(isolate, shape);
  if (!names) return "none";
  return ToUtf8(isolate, v8::JSON::Stringify(isolate->GetCurrentContext(), *names).ToLocalChecked());
}

uint32_t ShapeIn(v8::Isolate* isolate, const std::string& json) {
  v8::Local<v8::Array> flat;
  if (!FlatDocValues(isolate, json).ToLocal(&flat)) return UINT32_MAX;
  return flat->Get(isolate->GetCurrentContext(), 0).ToLocalChecked().As<v8::Uint32>()->Value();
}

// kMaxShapes shapes on a thread: then new ones are declined (the text path
// answers), the known ones still taken with their names.
TEST_F(DocShapesTest, AFullShapeTableDeclinesNewShapesOnly) {
  OnNewThread([](v8::Isolate* isolate, v8::Local<v8::Context>) {
    std::vector<uint32_t> shapes;
    for (int i = 0; i < kMaxShapes; ++i) {
      shapes.push_back(ShapeIn(isolate, "{\"a\":1,\"s" + std::to_string(i) + "\":2}"));
      ASSERT_EQ(shapes.back(), static_cast<uint32_t>(i));
    }
    EXPECT_EQ(ShapeIn(isolate, R"({"new":1})"), UINT32_MAX);
    EXPECT_EQ(ShapeIn(isolate, R"({"a":"x","s7":null})"), shapes[7]);
    EXPECT_EQ(NamesOf(isolate, shapes[7]), R"(["a","s7"])");
    EXPECT_EQ(NamesOf(isolate, kMaxShapes), "none");
  });
}

// Declined shapes are remembered only up to a bound, and do not use up the
// room of shapes that can be built: a thread reading many documents with
// integer names (declined) keeps its memory and still builds flat ones.
TEST_F(DocShapesTest, DeclinedShapesAreBounded) {
  OnNewThread([](v8::Isolate* isolate, v8::Local<v8::Context>) {
    for (int i = 0; i < 20 * kMaxShapes; ++i) {
      ASSERT_EQ(ShapeIn(isolate, "{\"" + std::to_string(i) + "\":1}"), UINT32_MAX);
    }
    EXPECT_LE(DocShapeTableEntries(), static_cast<size_t>(2 * kMaxShapes));
    EXPECT_EQ(ShapeIn(isolate, R"({"a":1})"), 0u);
    EXPECT_EQ(ShapeIn(isolate, R"({"1":1})"), UINT32_MAX);  // still declined
  });
}

// Isolates run on one thread one after another share its table: a shape's
// index names the same names in the next isolate, new shapes come after.
TEST_F(DocShapesTest, IsolatesOnOneThreadShareItsTable) {
  std::vector<std::string> seen;
  int round = 0;
  OnNewThread(
      [&](v8::Isolate* isolate, v8::Local<v8::Context>) {
        if (round++ == 0) {
          EXPECT_EQ(ShapeIn(isolate, R"({"a":1})"), 0u);
          EXPECT_EQ(ShapeIn(isolate, R"({"b":1,"c":2})"), 1u);
        } else {
          EXPECT_EQ(ShapeIn(isolate, R"({"b":"x","c":null})"), 1u);
          EXPECT_EQ(ShapeIn(isolate, R"({"d":true})"), 2u);
          EXPECT_EQ(ShapeIn(isolate, R"({"a":false})"), 0u);
          EXPECT_EQ(NamesOf(isolate, 0), R"(["a"])");
          EXPECT_EQ(NamesOf(isolate, 1), R"(["b","c"])");
          EXPECT_EQ(NamesOf(isolate, 2), R"(["d"])");
        }
      },
      2);
  EXPECT_EQ(round, 2);
}

// Threads at once: each its own table, in its own order.
TEST_F(DocShapesTest, ThreadsHaveTheirOwnTables) {
  std::vector<std::thread> threads;
  std::vector<std::string> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      OnNewThread([&](v8::Isolate* isolate, v8::Local<v8::Context>) {
        std::string out;
        for (int i = 0; i < 200; ++i) {
          const int k = (i * 7 + t * 13) % 50;
          const uint32_t shape = ShapeIn(isolate, "{\"k" + std::to_string(k) + "\":" + std::to_string(i) + "}");
          if (NamesOf(isolate, shape) != "[\"k" + std::to_string(k) + "\"]") out += "bad " + std::to_string(i) + ";";
        }
        results[t] = out.empty() ? "ok" : out;
      });
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& r : results) EXPECT_EQ(r, "ok");
}

}  // namespace
}  // namespace settee::js
