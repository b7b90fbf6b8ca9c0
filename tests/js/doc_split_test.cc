// V8 documents split without JSON text (js/doc_split.h): the same id, rev,
// deleted flag and body, byte for byte, as the engine's parser gives for
// JSON.stringify's text of the same documents; everything else declined.
#include "js/doc_split.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-context.h>
#include <v8-exception.h>
#include <v8-isolate.h>
#include <v8-json.h>
#include <v8-primitive.h>
#include <v8-script.h>

#include "js/convert.h"
#include "js/v8_init.h"
#include "tests/js/v8_context_test.h"
#include "storage/document.h"

namespace settee::js {
namespace {

class DocSplitTest : public V8ContextTest {
 protected:
  SplitOutcome Split(const std::string& array_expr, std::vector<IncomingDoc>* docs,
                     std::vector<Status>* statuses) {
    v8::Local<v8::Value> array = Eval(array_expr);
    EXPECT_TRUE(array->IsArray());
    return SplitPlainDocs(context_, array.As<v8::Array>(), docs, statuses);
  }

  // Splits the one document `expr` both ways and compares.
  void ExpectSameAsParser(const std::string& expr) {
    SCOPED_TRACE(expr);
    std::vector<IncomingDoc> docs;
    std::vector<Status> statuses;
    ASSERT_EQ(Split("[" + expr + "]", &docs, &statuses), SplitOutcome::kDone);
    ASSERT_EQ(docs.size(), 1u);
    ExpectSameAsParsed(expr, docs[0], statuses[0]);
  }

  void ExpectNotPlain(const std::string& array_expr) {
    SCOPED_TRACE(array_expr);
    std::vector<IncomingDoc> docs(1);
    std::vector<Status> statuses(1);
    EXPECT_EQ(Split(array_expr, &docs, &statuses), SplitOutcome::kNotPlain);
    EXPECT_TRUE(docs.empty());
    EXPECT_TRUE(statuses.empty());
  }

};

TEST_F(DocSplitTest, BodiesMatchTheParserByteForByte) {
  ExpectSameAsParser("{}");
  ExpectSameAsParser("{yo: 'dawg'}");
  ExpectSameAsParser("{_id: 'doc_0000000042', foo: 'bar', baz: 'quux'}");
  ExpectSameAsParser("{_id: 'a', _rev: '1-0123456789abcdef0123456789abcdef', _deleted: true, x: 1}");
  ExpectSameAsParser("{_id: 'a', _deleted: false, x: [1, 2, {y: null}]}");
  // Special members anywhere, dropped and kept ones.
  ExpectSameAsParser("{x: 1, _id: 'late', _conflicts: ['1-a'], _access: ['u'], _replication_id: 'r'}");
  // Numbers: integers, -0, fractions, exponents, the largest exact integers.
  ExpectSameAsParser("{a: 0, b: -0, c: 1.5, d: -2.25e-7, e: 1e21, f: -1.5e300, g: 0.1, h: 9007199254740991,"
                     " i: -9007199254740991, l: 2147483648, m: -2147483649, n: 5e-324, o: 1.7976931348623157e308}");
  // Strings: escapes, control characters, Latin-1, BMP and astral characters.
  ExpectSameAsParser("{s: 'quote \" backslash \\\\ nl \\n tab \\t \\u0001 \\u001f \\u007f',"
                     " l: 'caf\\u00e9 \\u00ff', u: '\\u20ac \\u2028 \\ud83d\\ude00', 'k\\u00e9y': 'v'}");
  // Keys in V8's order: integer-like keys first.
  ExpectSameAsParser("{b: 1, 2: 'two', a: 2, 1: 'one'}");
  // Dictionary-mode objects (many members added one by one), nesting.
  ExpectSameAsParser("(() => { const d = {}; for (let i = 0; i < 100; i++) d['hello' + i] = 'hey' + i; return d; })()");
  ExpectSameAsParser("(() => { let o = {leaf: true}; for (let i = 0; i < 200; i++) o = {o, a: [i]}; return {deep: o}; })()");
  // An id the engine refuses gets the parser's status.
  ExpectSameAsParser("{_id: '_bad', x: 1}");
  ExpectSameAsParser("{_id: 'a', _rev: 'not-a-rev'}");
}

TEST_F(DocSplitTest, SplitsEveryDocumentOfTheArray) {
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  ASSERT_EQ(Split("[{_id: 'a', v: 1}, {v: 2}, {_id: 'c', _deleted: true}]", &docs, &statuses), SplitOutcome::kDone);
  ASSERT_EQ(docs.size(), 3u);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(docs[0].id, "a");
  EXPECT_EQ(docs[0].body, "{\"v\":1}");
  EXPECT_EQ(docs[1].id, "");
  EXPECT_EQ(docs[1].body, "{\"v\":2}");
  EXPECT_TRUE(docs[2].deleted);
  EXPECT_EQ(docs[2].body, "{}");
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  // The same objects again: nothing is left over from the first call.
  ASSERT_EQ(Split("[{w: 'x'}]", &docs, &statuses), SplitOutcome::kDone);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].body, "{\"w\":\"x\"}");
}

TEST_F(DocSplitTest, DeclinesWhatIsNotPlainJson) {
  ExpectNotPlain("[{a: undefined}]");
  ExpectNotPlain("[{a: () => 1}]");
  ExpectNotPlain("[{a: NaN}]");
  ExpectNotPlain("[{a: Infinity}]");
  ExpectNotPlain("[{a: Symbol('s')}]");
  ExpectNotPlain("[{a: 1n}]");
  // Integers JS prints rounded to their shortest digits (2^53, 2^63, 2^64).
  ExpectNotPlain("[{a: 9007199254740992}]");
  ExpectNotPlain("[{a: -9223372036854775808}]");
  ExpectNotPlain("[{a: 18446744073709551616}]");
  ExpectNotPlain("[{a: new Date(0)}]");
  ExpectNotPlain("[{a: [1, , 3]}]");
  ExpectNotPlain("[{a: 'lone \\ud800 surrogate'}]");
  ExpectNotPlain("[(() => { const d = {x: {}}; d.x.self = d; return d; })()]");
  ExpectNotPlain("[new (class Doc { constructor() { this.a = 1; } })()]");
  ExpectNotPlain("[Object.create(null)]");
  ExpectNotPlain("[new Proxy({}, {})]");
  ExpectNotPlain("[{a: {toJSON: () => 1}}]");
  ExpectNotPlain("[{_attachments: {}}]");
  ExpectNotPlain("[{_revisions: {start: 1, ids: ['a']}}]");
  ExpectNotPlain("[{_unknown: 1}]");
  ExpectNotPlain("[{_id: 42}]");
  ExpectNotPlain("[{_deleted: 'yes'}]");
  ExpectNotPlain("[{ok: 1}, 'not an object']");
  ExpectNotPlain("[[1, 2]]");
  // A document nested deeper than plainJson() accepts.
  ExpectNotPlain("[(() => { let o = {}; for (let i = 0; i < 600; i++) o = {o}; return o; })()]");
  // JSON.stringify would call a toJSON on the prototypes.
  Eval("Object.prototype.toJSON = function () { return 1; }");
  ExpectNotPlain("[{a: 1}]");
  Eval("delete Object.prototype.toJSON");
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  EXPECT_EQ(Split("[{a: 1}]", &docs, &statuses), SplitOutcome::kDone);
}

TEST_F(DocSplitTest, AGetterThatThrowsLeavesItsException) {
  v8::TryCatch tc(isolate_);
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  EXPECT_EQ(Split("[{get a() { throw new Error('boom'); }}]", &docs, &statuses), SplitOutcome::kThrew);
  ASSERT_TRUE(tc.HasCaught());
  EXPECT_EQ(ToUtf8(isolate_, tc.Exception()), "Error: boom");
  EXPECT_TRUE(docs.empty());
}

}  // namespace
}  // namespace settee::js
