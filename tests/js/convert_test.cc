// JSON text <-> V8 value conversion (js/convert.h).
#include "js/convert.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <libplatform/libplatform.h>
#include <v8-array-buffer.h>
#include <v8-context.h>
#include <v8-exception.h>
#include <v8-isolate.h>
#include <v8-json.h>
#include <v8-primitive.h>
#include <v8-script.h>

#include "js/v8_init.h"
#include "tests/js/v8_context_test.h"

namespace settee::js {
namespace {

class ConvertTest : public V8ContextTest {
 protected:
  // JSON text -> V8 -> JSON text.
  std::string RoundTrip(const std::string& json) {
    v8::TryCatch tc(isolate_);
    v8::Local<v8::Value> v;
    if (!JsonToV8(context_, json).ToLocal(&v)) return "<parse error>";
    std::string out;
    Status s = V8ToJson(context_, v, &out);
    return s.ok() ? out : "<" + s.ToString() + ">";
  }

  std::string ToJson(const std::string& js_expr) {
    v8::TryCatch tc(isolate_);
    std::string out;
    Status s = V8ToJson(context_, Eval("(" + js_expr + ")"), &out);
    return s.ok() ? out : "<" + s.ToString() + ">";
  }

  // What V8's JSON.stringify makes of the same expression.
  std::string Stringify(const std::string& js_expr) {
    v8::Local<v8::String> s = v8::JSON::Stringify(context_, Eval("(" + js_expr + ")")).ToLocalChecked();
    return ToUtf8(isolate_, s);
  }

};

TEST_F(ConvertTest, ScalarsRoundTrip) {
  EXPECT_EQ(RoundTrip("null"), "null");
  EXPECT_EQ(RoundTrip("true"), "true");
  EXPECT_EQ(RoundTrip("false"), "false");
  EXPECT_EQ(RoundTrip("0"), "0");
  EXPECT_EQ(RoundTrip("-17"), "-17");
  EXPECT_EQ(RoundTrip("\"\""), "\"\"");
  EXPECT_EQ(RoundTrip("[]"), "[]");
  EXPECT_EQ(RoundTrip("{}"), "{}");
}

TEST_F(ConvertTest, NumbersAtTheEdges) {
  // 2^53 and its neighbours stay exact.
  EXPECT_EQ(RoundTrip("9007199254740992"), "9007199254740992");
  EXPECT_EQ(RoundTrip("-9007199254740991"), "-9007199254740991");
  EXPECT_EQ(RoundTrip("9007199254740993"), "9007199254740992");  // not a double: rounds
  EXPECT_EQ(RoundTrip("1e308"), "1e+308");
  EXPECT_EQ(RoundTrip("1.7976931348623157e308"), "1.7976931348623157e+308");
  EXPECT_EQ(RoundTrip("5e-324"), "5e-324");
  EXPECT_EQ(RoundTrip("0.1"), "0.1");
  EXPECT_EQ(RoundTrip("-0.000001"), "-1e-06");
  EXPECT_EQ(RoundTrip("2147483648"), "2147483648");
  EXPECT_EQ(RoundTrip("-2147483649"), "-2147483649");
  // -0 is written as 0, as JSON.stringify does.
  EXPECT_EQ(RoundTrip("-0"), "0");
  EXPECT_EQ(ToJson("-0"), Stringify("-0"));
  // Every one of them parses back to the same double.
  for (const char* n : {"1e308", "5e-324", "0.1", "123.456", "1e21", "1.2345678901234568e+20", "-1e-7"}) {
    std::string out = RoundTrip(n);
    EXPECT_EQ(std::strtod(out.c_str(), nullptr), std::strtod(n, nullptr)) << n << " -> " << out;
  }
}

TEST_F(ConvertTest, NonFiniteNumbersAreErrors) {
  EXPECT_NE(ToJson("NaN").find("NaN cannot be stored as JSON"), std::string::npos);
  EXPECT_NE(ToJson("{a: [Infinity]}").find("value.a[0]: Infinity"), std::string::npos);
  EXPECT_NE(ToJson("-Infinity").find("Infinity"), std::string::npos);
}

TEST_F(ConvertTest, UnicodeRoundTrips) {
  EXPECT_EQ(RoundTrip("\"h\xC3\xA9llo \xE2\x82\xAC\""), "\"h\xC3\xA9llo \xE2\x82\xAC\"");
  // Astral plane (a surrogate pair in JS) as raw UTF-8 and as escapes.
  EXPECT_EQ(RoundTrip("\"\xF0\x9F\x98\x80\""), "\"\xF0\x9F\x98\x80\"");
  EXPECT_EQ(RoundTrip("\"\\ud83d\\ude00\""), "\"\xF0\x9F\x98\x80\"");
  // \u0000 and other control characters survive, escaped.
  EXPECT_EQ(RoundTrip("\"a\\u0000b\""), "\"a\\u0000b\"");
  EXPECT_EQ(RoundTrip("\"\\u001f\\n\\t\\\"\\\\\""), "\"\\u001f\\n\\t\\\"\\\\\"");
  // '/' and U+2028 need no escaping in JSON.
  EXPECT_EQ(RoundTrip("\"\\/\""), "\"/\"");
  EXPECT_EQ(RoundTrip("\"\\u2028\""), "\"\xE2\x80\xA8\"");
  // Keys are strings too.
  EXPECT_EQ(RoundTrip("{\"\xC3\xA9\\u0000\":1}"), "{\"\xC3\xA9\\u0000\":1}");
}

TEST_F(ConvertTest, JsStringsMatchJsonStringify) {
  for (const char* expr : {"'plain ascii'", "'caf\\u00e9'", "'\\ud83d\\ude00 smile'", "'\\u0000\\u0001'",
                           "'quote \" backslash \\\\'", "'\\u00ff\\u0100'",
                           "{b: 1, a: [true, null, 'x'], '0': 'first'}"}) {
    EXPECT_EQ(ToJson(expr), Stringify(expr)) << expr;
  }
}

TEST_F(ConvertTest, LoneSurrogatesBecomeReplacementCharacters) {
  EXPECT_EQ(ToJson("'a\\ud800b'"), "\"a\xEF\xBF\xBD" "b\"");
  EXPECT_EQ(ToJson("'\\udc00'"), "\"\xEF\xBF\xBD\"");
  EXPECT_EQ(ToJson("'x\\ud83d'"), "\"x\xEF\xBF\xBD\"");
}

TEST_F(ConvertTest, NestedDepth) {
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "[";
  deep += "1";
  for (int i = 0; i < 500; ++i) deep += "]";
  EXPECT_EQ(RoundTrip(deep), deep);

  std::string obj = "1";
  for (int i = 0; i < 300; ++i) obj = "{\"k\":" + obj + "}";
  EXPECT_EQ(RoundTrip(obj), obj);

  // Deeper than the storage layer accepts: a clear error, not a crash.
  EXPECT_NE(ToJson("(() => { let a = 1; for (let i = 0; i < 600; i++) a = [a]; return a; })()")
                .find("nesting deeper than 512 levels"),
            std::string::npos);
  // Far deeper still: no stack overflow.
  EXPECT_NE(ToJson("(() => { let a = {}; for (let i = 0; i < 100000; i++) a = {a}; return a; })()")
                .find("bad_request"),
            std::string::npos);
}

TEST_F(ConvertTest, UnrepresentableValuesAreErrorsWithPaths) {
  EXPECT_EQ(ToJson("undefined"), "<bad_request: value: undefined cannot be stored as JSON>");
  EXPECT_EQ(ToJson("{a: {b: function f() {}}}"),
            "<bad_request: value.a.b: a function cannot be stored as JSON>");
  EXPECT_EQ(ToJson("{list: [1, Symbol('s')]}"),
            "<bad_request: value.list[1]: a symbol cannot be stored as JSON>");
  EXPECT_EQ(ToJson("{n: 10n}"), "<bad_request: value.n: a BigInt cannot be stored as JSON>");
  EXPECT_EQ(ToJson("{x: undefined}"), "<bad_request: value.x: undefined cannot be stored as JSON>");
  EXPECT_EQ(ToJson("(() => { const o = {a: {}}; o.a.self = o; return o; })()"),
            "<bad_request: value.a.self: a cyclic structure cannot be stored as JSON>");
  EXPECT_EQ(ToJson("(() => { const a = []; a.push(a); return a; })()"),
            "<bad_request: value[0]: a cyclic structure cannot be stored as JSON>");
}

TEST_F(ConvertTest, SharedButAcyclicObjectsAreFine) {
  EXPECT_EQ(ToJson("(() => { const s = {v: 1}; return {a: s, b: [s, s]}; })()"),
            "{\"a\":{\"v\":1},\"b\":[{\"v\":1},{\"v\":1}]}");
}

TEST_F(ConvertTest, ToJsonAndBoxedPrimitivesLikeStringify) {
  for (const char* expr : {"new Date(0)", "{d: new Date(86400000)}", "new String('s')", "new Number(3)",
                           "new Boolean(false)", "{toJSON() { return {x: 1}; }}",
                           "{toJSON(k) { return 'key:' + k; }}", "[{toJSON(k) { return k; }}]"}) {
    EXPECT_EQ(ToJson(expr), Stringify(expr)) << expr;
  }
  // A throwing toJSON is reported, and its exception is left for the caller.
  v8::TryCatch tc(isolate_);
  std::string out;
  Status s = V8ToJson(context_, Eval("({toJSON() { throw new Error('nope'); }})"), &out);
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_TRUE(tc.HasCaught());
}

TEST_F(ConvertTest, InvalidJsonTextThrowsSyntaxError) {
  v8::TryCatch tc(isolate_);
  EXPECT_TRUE(JsonToV8(context_, "{\"a\":").IsEmpty());
  ASSERT_TRUE(tc.HasCaught());
  EXPECT_NE(ToUtf8(isolate_, tc.Exception()).find("SyntaxError"), std::string::npos);
}

TEST_F(ConvertTest, LargeDocumentRoundTrips) {
  std::string doc = "{\"_id\":\"big\",\"items\":[";
  for (int i = 0; i < 10000; ++i) {
    if (i) doc += ",";
    doc += "{\"i\":" + std::to_string(i) + ",\"s\":\"value \\u00e9 " + std::to_string(i * 7) + "\",\"f\":" +
           std::to_string(i) + ".5}";
  }
  doc += "]}";
  std::string out = RoundTrip(doc);
  // \u00e9 is written back as raw UTF-8; otherwise identical.
  std::string expected = doc;
  for (size_t p; (p = expected.find("\\u00e9")) != std::string::npos;) expected.replace(p, 6, "\xC3\xA9");
  EXPECT_EQ(out, expected);
}

// Big ASCII text given up by the caller is read by V8 in place (an external
// string), and JSON.parse reads it like any other; small or non-ASCII text
// is copied as ToV8String does.
TEST_F(ConvertTest, OwnedStringsAreExternalWhenBigAndAscii) {
  std::string big = "[";
  for (int i = 0; i < 5000; ++i) big += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  big += "]";
  const std::string copy = big;
  v8::Local<v8::String> s = ToV8StringOwned(isolate_, std::move(big));
  EXPECT_TRUE(s->IsExternalOneByte());
  EXPECT_EQ(ToUtf8(isolate_, s), copy);
  v8::Local<v8::Value> parsed = v8::JSON::Parse(context_, s).ToLocalChecked();
  std::string out;
  ASSERT_TRUE(V8ToJson(context_, parsed, &out).ok());
  EXPECT_EQ(out, copy);

  std::string wide = copy;
  wide.insert(1, "\"\xC3\xA9\",");
  const std::string wide_copy = wide;
  v8::Local<v8::String> w = ToV8StringOwned(isolate_, std::move(wide));
  EXPECT_FALSE(w->IsExternalOneByte());
  EXPECT_EQ(ToUtf8(isolate_, w), wide_copy);

  v8::Local<v8::String> small = ToV8StringOwned(isolate_, std::string("[1,2]"));
  EXPECT_FALSE(small->IsExternalOneByte());
  EXPECT_EQ(ToUtf8(isolate_, small), "[1,2]");
}

// Dead external strings do not pile up: V8 keeps them in its old
// generation, which a small heap never fully collects on its own, so each
// index build's documents (handed to the map as such strings) stayed
// allocated for good until their bytes were registered as external memory.
// 256 dead strings of 1 MiB, V8's foreground tasks run after each as an
// isolate thread runs them after each job: without the registration all
// 256 MiB stay, and with V8's own external-memory limit alone about 64.
TEST_F(ConvertTest, DeadOwnedStringsAreFreedBeforeTheyPileUp) {
  const size_t before = OwnedStringBytes();
  constexpr size_t kMiB = 1 << 20;
  for (int i = 0; i < 256; ++i) {
    v8::HandleScope scope(isolate_);
    v8::Local<v8::String> s = ToV8StringOwned(isolate_, std::string(kMiB, 'a' + i % 26));
    ASSERT_TRUE(s->IsExternalOneByte());
    EXPECT_EQ(s->Length(), static_cast<int>(kMiB));
    while (v8::platform::PumpMessageLoop(V8Platform(), isolate_)) {
    }
  }
  EXPECT_LT(OwnedStringBytes() - before, 48 * kMiB);
}

// StringToUtf8 takes ASCII one-byte strings by a plain copy; Latin-1 past
// ASCII, two-byte strings and lone surrogates go through V8's UTF-8 writer,
// and each result replaces what the buffer held.
TEST_F(ConvertTest, StringToUtf8WritesEveryKindOfString) {
  std::string out = "left over from an earlier, longer call";
  for (const char* expr : {"'doc_0000000042'", "''", "'caf\\u00e9'", "'\\u00ff'", "'\\u20ac uro'",
                           "'\\ud83d\\ude00'", "'doc_' + String(7).padStart(10, '0')",
                           "'x'.repeat(100) + '\\u00e9' + 'y'.repeat(100)"}) {
    v8::Local<v8::String> s = Eval("(" + std::string(expr) + ")").As<v8::String>();
    StringToUtf8(isolate_, s, &out);
    EXPECT_EQ(out, ToUtf8(isolate_, s)) << expr;
  }
  StringToUtf8(isolate_, Eval("'caf\\u00e9'").As<v8::String>(), &out);
  EXPECT_EQ(out, "caf\xC3\xA9");
  // A lone surrogate becomes U+FFFD, as the stored JSON writes it.
  StringToUtf8(isolate_, Eval("'a\\ud800b'").As<v8::String>(), &out);
  EXPECT_EQ(out, "a\xEF\xBF\xBD" "b");
}

}  // namespace
}  // namespace settee::js
