// Flat documents as a shape and values (js/doc_shapes.h): the object a
// shape's literal builds from them is the one JSON.parse builds from the
// text (members, order, values, -0 included); everything else is declined.
#include "js/doc_shapes.h"

#include <string>
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

}  // namespace
}  // namespace settee::js
