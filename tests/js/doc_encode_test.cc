// Documents encoded in JS (js/prelude/doc_encode.js) and completed by
// BuildEncodedDocs (js/doc_split.h): the same id, rev, deleted flag and
// body, byte for byte, as the engine's parser gives for JSON.stringify's
// text of the same documents; everything else declined, with nothing
// handed on.
#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-context.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-isolate.h>
#include <v8-json.h>
#include <v8-primitive.h>
#include <v8-script.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/doc_split.h"
#include "js/v8_init.h"
#include "tests/js/v8_context_test.h"
#include "storage/document.h"

namespace settee::js {
namespace {

class DocEncodeTest : public V8ContextTest {
 protected:
  void SetUp() override {
    V8ContextTest::SetUp();
    std::ifstream in(SETTEE_DOC_ENCODE_JS);
    std::stringstream text;
    text << in.rdbuf();
    encoder_js_ = text.str();
    ASSERT_FALSE(encoder_js_.empty());
    Eval(encoder_js_);
    Eval(kHelperJs);
  }
  // A new encoder (a fresh buffer and memos) behind encodeForTest: the
  // fragment again, in a block of its own.
  void FreshEncoder() { Eval("{" + encoder_js_ + "\n" + kHelperJs + "}"); }
  // The fragment declares docEncoder; the helper hands back the parts it
  // gave its write callback (or undefined when it declined), and keeps
  // every call in `writes`.
  static constexpr const char* kHelperJs =
      "var writes = [];"
      "var encodeForTest = (docs, partBytes) => { const parts = []; writes = [];"
      "  return docEncoder.encode(docs, (bytes, meta, strs, nums, n, flags) => {"
      "    writes.push([n, flags]);"
      "    parts.push([bytes.slice(), meta.slice(), strs.slice(), nums.slice(), n, flags]);"
      "    return (flags & 2) ? parts : true; }, partBytes); }";
  std::string encoder_js_;

  static std::string_view Bytes(v8::Local<v8::Value> v) {
    auto view = v.As<v8::ArrayBufferView>();
    auto* base = static_cast<const char*>(view->Buffer()->Data());
    return {base + view->ByteOffset(), view->ByteLength()};
  }

  // Encodes the documents of `array_expr` (in parts of about `part_bytes`,
  // if given) and completes every part in turn, as dbBulkDocsEncoded does:
  // kNotPlain when the JS declined.
  SplitOutcome Encode(const std::string& array_expr, std::vector<IncomingDoc>* docs,
                      std::vector<Status>* statuses, int part_bytes = 0) {
    docs->clear();
    statuses->clear();
    v8::Local<v8::Value> r = Eval("encodeForTest(" + array_expr +
                                  (part_bytes > 0 ? ", " + std::to_string(part_bytes) : std::string()) + ")");
    if (r->IsUndefined()) return SplitOutcome::kNotPlain;
    auto parts = r.As<v8::Array>();
    for (uint32_t k = 0; k < parts->Length(); ++k) {
      auto part = parts->Get(context_, k).ToLocalChecked().As<v8::Array>();
      auto at = [&](uint32_t i) { return part->Get(context_, i).ToLocalChecked(); };
      // The first part says so, and only the last one is the last.
      const uint32_t flags = at(5).As<v8::Uint32>()->Value();
      EXPECT_EQ(flags & 1, k == 0 ? 1u : 0u);
      EXPECT_EQ(flags & 2, k + 1 == parts->Length() ? 2u : 0u);
      std::string_view meta = Bytes(at(1)), nums = Bytes(at(3));
      SplitOutcome o = BuildEncodedDocs(context_, Bytes(at(0)),
                                        {reinterpret_cast<const int32_t*>(meta.data()), meta.size() / 4},
                                        at(2).As<v8::Array>(),
                                        {reinterpret_cast<const double*>(nums.data()), nums.size() / 8},
                                        at(4).As<v8::Uint32>()->Value(), docs, statuses);
      if (o != SplitOutcome::kDone) return o;
    }
    // Big new documents come held compressed (storage/document.h), with
    // the revision hash of their JSON: checked, then compared as JSON.
    held_compressed_ = 0;
    for (IncomingDoc& doc : *docs) {
      if (doc.snappy_body.empty()) continue;
      ++held_compressed_;
      const std::string hash = doc.first_rev_hash;
      EXPECT_TRUE(ExpandBody(&doc).ok());
      EXPECT_EQ(hash, ComputeRevHash("", doc.deleted, doc.body));
    }
    return SplitOutcome::kDone;
  }
  int held_compressed_ = 0;  // by the last Encode()

  void ExpectSameAsParser(const std::string& expr) {
    SCOPED_TRACE(expr);
    std::vector<IncomingDoc> docs;
    std::vector<Status> statuses;
    ASSERT_EQ(Encode("[" + expr + "]", &docs, &statuses), SplitOutcome::kDone);
    ASSERT_EQ(docs.size(), 1u);
    ExpectSameAsParsed(expr, docs[0], statuses[0]);
  }

  // Encodes the array in the global `name` (in parts of about `part_bytes`,
  // if given): `count` documents, each one's body and id what the parser
  // gives for its JSON.stringify text.
  void ExpectBatchMatchesParser(const std::string& name, size_t count, int part_bytes = 0) {
    SCOPED_TRACE(name);
    std::vector<IncomingDoc> docs;
    std::vector<Status> statuses;
    ASSERT_EQ(Encode(name, &docs, &statuses, part_bytes), SplitOutcome::kDone);
    ASSERT_EQ(docs.size(), count);
    for (size_t i = 0; i < docs.size(); ++i) {
      std::string text = ToUtf8(
          isolate_, v8::JSON::Stringify(context_, Eval(name + "[" + std::to_string(i) + "]")).ToLocalChecked());
      IncomingDoc parsed;
      ASSERT_TRUE(ParseIncomingDoc(text, {}, SIZE_MAX, &parsed).ok());
      const std::string& got = docs[i].body;
      const size_t differs =
          std::mismatch(got.begin(), got.end(), parsed.body.begin(), parsed.body.end()).first - got.begin();
      ASSERT_TRUE(got == parsed.body) << "document " << i << " differs from byte " << differs << " of "
                                      << parsed.body.size();
      ASSERT_EQ(docs[i].id, parsed.id);
      ASSERT_EQ(docs[i].deleted, parsed.deleted);
    }
  }

  void ExpectDeclined(const std::string& array_expr) {
    SCOPED_TRACE(array_expr);
    std::vector<IncomingDoc> docs;
    std::vector<Status> statuses;
    EXPECT_EQ(Encode(array_expr, &docs, &statuses), SplitOutcome::kNotPlain);
    EXPECT_TRUE(docs.empty());
  }

};

TEST_F(DocEncodeTest, BodiesMatchTheParserByteForByte) {
  ExpectSameAsParser("{}");
  ExpectSameAsParser("{yo: 'dawg'}");
  ExpectSameAsParser("{_id: 'doc_0000000042', foo: 'bar', baz: 'quux'}");
  ExpectSameAsParser("{_id: 'a', _rev: '1-0123456789abcdef0123456789abcdef', _deleted: true, x: 1}");
  ExpectSameAsParser("{_id: 'a', _deleted: false, x: [1, 2, {y: null}], t: true, f: false, e: [], o: {}}");
  ExpectSameAsParser("{x: 1, _id: 'late'}");
  // Numbers: integers, -0, fractions, exponents, the largest exact integers.
  ExpectSameAsParser("{a: 0, b: -0, c: 1.5, d: -2.25e-7, e: 1e21, f: -1.5e300, g: 0.1, h: 9007199254740991,"
                     " i: -9007199254740991, l: 2147483648, m: -2147483649, n: 5e-324, o: 1.7976931348623157e308,"
                     " p: [0.5, 7, -0.25], q: -7, r: 10, s: -10, t: 123456789}");
  // Strings: escapes, control characters, Latin-1, BMP and astral characters.
  ExpectSameAsParser("{s: 'quote \" backslash \\\\ nl \\n tab \\t cr \\r bs \\b ff \\f \\u0001 \\u001f \\u007f',"
                     " l: 'caf\\u00e9 \\u00ff \\u07ff \\u0800', u: '\\u20ac \\u2028 \\ud83d\\ude00 \\uffff',"
                     " 'k\\u00e9y': 'v', '\\u0001': '', x: '\\ud83d\\ude00'}");
  // Keys in V8's order: integer-like keys first.
  ExpectSameAsParser("{b: 1, 2: 'two', a: 2, 1: 'one'}");
  // Dictionary-mode objects, nesting, a long string (the buffer grows).
  ExpectSameAsParser("(() => { const d = {}; for (let i = 0; i < 100; i++) d['hello' + i] = 'hey' + i; return d; })()");
  ExpectSameAsParser("(() => { let o = {leaf: true}; for (let i = 0; i < 200; i++) o = {o, a: [i]}; return {deep: o}; })()");
  ExpectSameAsParser("{big: 'x'.repeat(300000) + '\\u00e9', n: 0.5}");
  EXPECT_EQ(0, held_compressed_);  // it has a number the engine prints
  ExpectSameAsParser("{big: 'x'.repeat(300000) + '\\u00e9'}");
  EXPECT_EQ(1, held_compressed_);
  // The same object twice (not a cycle) is written twice, as JSON.stringify does.
  ExpectSameAsParser("(() => { const s = {a: 1}; return {x: s, y: [s, s]}; })()");
  // Proxies are read through their traps, as JSON.stringify reads them.
  ExpectSameAsParser("new Proxy({_id: 'p', a: 1}, {})");
  ExpectSameAsParser("{a: new Proxy({b: [1]}, {get: (t, k) => k === 'b' ? 'trapped' : t[k]})}");
  // An id the engine refuses gets the parser's status.
  ExpectSameAsParser("{_id: '_bad', x: 1}");
  ExpectSameAsParser("{_id: 'a', _rev: 'not-a-rev'}");
}

// Member names go through two memos of their encodings (by the name's
// position in its object, then by a hash of it): names that share a slot
// (same length and end characters), escaped and non-ASCII names
// (longer than the memo keeps), names of 9 and 10 characters and integer-like
// ones, each met many times in objects of one shape and of mixed shapes
// (the same names in other orders, shapes extending others, more members
// than positions are kept), are written as the parser writes them.
TEST_F(DocEncodeTest, RepeatedMemberNamesMatchTheParser) {
  ExpectSameAsParser("{abc: 1, axc: 2, o: [{abc: 'a', axc: 'b'}, {axc: 'c', abc: 'd'}, {abc: {axc: {abc: 0}}}]}");
  ExpectSameAsParser("{'a\\nb': 1, 'a\"b': 2, 'a\\u00e9b': 3, '\\u20ac': 4, x: [{'a\\nb': 5, 'a\\u00e9b': 6, '\\u20ac': 7}]}");
  ExpectSameAsParser("{ninechars: 1, tenchars10: 2, o: {ninechars: 3, tenchars10: 4, ninechars_: 5}}");
  ExpectSameAsParser("{7: 'a', 12: 'b', o: {7: 'c', 12: 'd'}}");
  // Positions after the first keep the comma with the name: an empty name
  // there (the slots' initial name), and names of 8 and 9 characters (the
  // longest that fit with and without the comma), first and later.
  ExpectSameAsParser("{x: 1, '': 2, o: [{'': 3}, {y: 4, '': 5}, {'': 6, z: ''}, {y: 7, '': 8}]}");
  ExpectSameAsParser("{abcdefgh: 1, abcdefghi: 2, o: [{p: 0, abcdefgh: 3, abcdefghi: 4}, {abcdefghi: 5, abcdefgh: 6},"
                     " {p: 0, abcdefgh: 7, abcdefghi: 8}]}");
  ExpectSameAsParser("(() => { const names = ['a', 'ab', 'ba', 'aXb', 'aYb', 'aZb', 'k\\u00e9', 'sovery0', 'sovery1'];"
                     "  const mk = (d) => { const o = {}; for (let i = 0; i < names.length; i++)"
                     "    o[names[(i * 7 + d) % names.length]] = d > 3 ? names[i] : mk(d + 1); return o; };"
                     "  return {t: mk(0), u: mk(2)}; })()");
  ExpectSameAsParser("{a: [{x: 1, y: 2}, {y: 3, x: 4}, {x: 5, y: 6, z: 7}, {x: 8}, {'\\u00e9': 9, x: 10},"
                     " {'a\\nb': 11, x: 12}, {'a\\nb': 13, 'x\"': 14}, {x: 15, y: 16}]}");
  ExpectSameAsParser("(() => { const o = {}; for (let i = 0; i < 300; i++) o['m' + (i % 150) + (i < 150 ? '' : 'b')] = i;"
                     "  return {a: o, b: [o, {m0: 0, m1: 1}, o]}; })()");
}

// Documents' own member names go through the same memos, wide ones too
// (more members than the positions the memo keeps): batches of documents
// of one shape, of shapes that share a prefix or list the same names in
// other orders, with special members between the others (which take no
// position), escaped, non-ASCII and long names at high positions.
TEST_F(DocEncodeTest, WideDocumentsMatchTheParser) {
  Eval("var wideDocs = Array.from({length: 60}, (_, i) => {"
       "  const d = {};"
       "  const n = [100, 150, 200, 7][i % 4];"
       "  for (let k = 0; k < n; k++) {"
       "    const j = i % 3 === 1 ? n - 1 - k : k;"
       "    if (k === 40 && i % 5 === 0) d._id = 'w' + i;"
       "    if (k === 90 && i % 6 === 0) d._deleted = i % 12 === 0;"
       "    d[j % 50 === 49 ? 'h\\u00e9llo\\n' + j : j % 70 === 3 ? 'a_rather_long_member_name_' + j : 'hello' + j] ="
       "      j % 10 === 0 ? {['hello' + j]: j, x: [j, 'y']} : 'hey' + j;"
       "  }"
       "  return d;"
       "})");
  ExpectBatchMatchesParser("wideDocs", 60);
  // The same objects again (the memo now holds their names), and in parts.
  ExpectBatchMatchesParser("wideDocs", 60);
  ExpectBatchMatchesParser("wideDocs", 60, 8192);
}

TEST_F(DocEncodeTest, EncodesEveryDocumentOfTheArray) {
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  ASSERT_EQ(Encode("[{_id: 'a', v: 1.5}, {v: 2}, {_id: 'c', _deleted: true}, {w: [0.25, 'x']}]", &docs, &statuses),
            SplitOutcome::kDone);
  ASSERT_EQ(docs.size(), 4u);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_EQ(docs[0].id, "a");
  EXPECT_EQ(docs[0].body, "{\"v\":1.5}");
  EXPECT_EQ(docs[1].id, "");
  EXPECT_EQ(docs[1].body, "{\"v\":2}");
  EXPECT_TRUE(docs[2].deleted);
  EXPECT_EQ(docs[2].body, "{}");
  EXPECT_EQ(docs[3].body, "{\"w\":[0.25,\"x\"]}");
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  // Again: nothing is left over from the first call.
  ASSERT_EQ(Encode("[{w: 'x'}]", &docs, &statuses), SplitOutcome::kDone);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].body, "{\"w\":\"x\"}");
}

// The separators between members are written without a bound check of
// their own: each writer leaves room after its end. A literal reserves
// exactly what it writes, so the separator after a null that ends where the
// buffer's bound lets it is the byte that room is for. The encoder starts
// with 64 KiB: a first body of 8 + L bytes puts the second one's nulls at
// 14 + L + 5k, one of which ends at 65536 for L = 65518 mod 5. Then many
// documents of mixed shapes, across the buffer's later growth steps.
TEST_F(DocEncodeTest, EveryBodyMatchesAcrossBufferGrowth) {
  Eval("var growthDocs = [{s: 'x'.repeat(65518 % 5)}, {l: new Array(14000).fill(null)}]");
  ExpectBatchMatchesParser("growthDocs", 2);
  Eval("growthDocs = Array.from({length: 3000}, (_, i) => {"
       "  const d = {_id: 'd' + i, s: 'x'.repeat(i % 37), n: i, f: i / 7, e: 'caf\\u00e9\"' + i};"
       "  let a = [];"
       "  for (let k = 0; k < i % 9; k++) a = [a, {k, b: k % 2 === 0, z: null}, []];"
       "  d.a = a;"
       "  d.l = Array.from({length: i % 41}, (_, k) => k % 3 === 0 ? false : null);"
       "  if (i % 5 === 0) d.o = {p: {q: {r: [{}, {}, ['' + i]]}}};"
       "  return d;"
       "})");
  ExpectBatchMatchesParser("growthDocs", 3000);
  // Handed over in parts of about 4 KiB, each written from the buffer's
  // start: the same documents.
  ExpectBatchMatchesParser("growthDocs", 3000, 4096);
  EXPECT_GT(Eval("writes.length").As<v8::Int32>()->Value(), 100);
}

// A name that is not its position's is encoded and its slot refilled from
// the 12 bytes at its start, which an empty name does not reserve by itself
// (it writes 3): the encoder makes room for all 12 first (a RangeError out
// of the walk before). Objects of two shapes take turns, so the position
// of '' misses every other time, once every 39 bytes, after a null (whose
// writer reserves only its 4 bytes); a fresh encoder's 64 KiB buffer
// overflows within the array, and pads of 0..38 bytes put such a name at
// each offset from its end.
TEST_F(DocEncodeTest, AnEmptyNameAtTheBufferEndMatchesTheParser) {
  Eval("var edgeItems = Array.from({length: 3500}, (_, i) => i % 2 ? {a: null, '': null} : {a: null, b: null})");
  for (int pad = 0; pad < 39; ++pad) {
    FreshEncoder();
    Eval("var edgeDocs = [{p: 'x'.repeat(" + std::to_string(pad) + "), a: edgeItems}]");
    ExpectBatchMatchesParser("edgeDocs", 1);
  }
}

// A document declined after parts were handed over: the engine is told to
// drop them (an empty first part), and the encoder takes the next batch.
TEST_F(DocEncodeTest, ADeclineAfterPartsDropsThem) {
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  EXPECT_EQ(Encode("[{a: 'x'.repeat(100)}, {b: 'y'.repeat(100)}, {c: undefined}]", &docs, &statuses, 64),
            SplitOutcome::kNotPlain);
  EXPECT_EQ(ToUtf8(isolate_, Eval("JSON.stringify(writes)")), "[[1,1],[1,0],[0,1]]");
  ASSERT_EQ(Encode("[{a: 1}, {b: 2}]", &docs, &statuses, 64), SplitOutcome::kDone);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].body, "{\"a\":1}");
  EXPECT_EQ(docs[1].body, "{\"b\":2}");
  // A getter that writes re-enters the encoder: that inner call is declined
  // (the other paths take it), the outer one goes on.
  ASSERT_EQ(Encode("[{get a() { return encodeForTest([{z: 1}]) === undefined ? 'inner declined' : 'no'; }}]",
                   &docs, &statuses),
            SplitOutcome::kDone);
  EXPECT_EQ(docs[0].body, "{\"a\":\"inner declined\"}");
}

TEST_F(DocEncodeTest, DeclinesWhatIsNotPlainJson) {
  ExpectDeclined("[{a: undefined}]");
  ExpectDeclined("[{a: () => 1}]");
  ExpectDeclined("[{a: NaN}]");
  ExpectDeclined("[{a: -Infinity}]");
  ExpectDeclined("[{a: Symbol('s')}]");
  ExpectDeclined("[{a: 1n}]");
  ExpectDeclined("[{a: 9007199254740992}]");
  ExpectDeclined("[{a: -9223372036854775808}]");
  ExpectDeclined("[{a: new Date(0)}]");
  ExpectDeclined("[{a: [1, , 3]}]");
  ExpectDeclined("[{a: 'lone \\ud800 surrogate'}]");
  ExpectDeclined("[{a: 'lone \\udc00 low'}]");
  ExpectDeclined("[{'\\ud800': 1}]");
  ExpectDeclined("[(() => { const d = {x: {}}; d.x.self = d; return d; })()]");
  ExpectDeclined("[(() => { const a = [1]; a.push(a); return {a}; })()]");
  ExpectDeclined("[new (class Doc { constructor() { this.a = 1; } })()]");
  ExpectDeclined("[{a: new (class Money { toJSON() { return 1; } })()}]");
  ExpectDeclined("[{a: new (class Tags extends Array {})()}]");
  ExpectDeclined("[Object.create(null)]");
  ExpectDeclined("[{a: {toJSON: () => 1}}]");
  ExpectDeclined("[{a: new Uint8Array(2)}]");
  // Special members other than _id, _rev and _deleted are js/doc_split.h's.
  ExpectDeclined("[{_attachments: {}}]");
  ExpectDeclined("[{_conflicts: ['1-a']}]");
  ExpectDeclined("[{_access: ['u']}]");
  ExpectDeclined("[{_unknown: 1}]");
  ExpectDeclined("[{_id: 42}]");
  ExpectDeclined("[{_rev: null}]");
  ExpectDeclined("[{_deleted: 'yes'}]");
  ExpectDeclined("[{ok: 1}, 'not an object']");
  ExpectDeclined("[[1, 2]]");
  ExpectDeclined("[null]");
  ExpectDeclined("[(() => { let o = {}; for (let i = 0; i < 600; i++) o = {o}; return o; })()]");
  // JSON.stringify would call a toJSON on the prototypes; for-in would see
  // an enumerable member of Object.prototype.
  Eval("Object.prototype.toJSON = function () { return 1; }");
  ExpectDeclined("[{a: 1}]");
  Eval("delete Object.prototype.toJSON");
  Eval("Array.prototype.toJSON = function () { return 1; }");
  ExpectDeclined("[{a: 1}]");
  Eval("delete Array.prototype.toJSON");
  Eval("Object.prototype.inherited = 1");
  ExpectDeclined("[{a: 1}]");
  Eval("delete Object.prototype.inherited");
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  EXPECT_EQ(Encode("[{a: 1}]", &docs, &statuses), SplitOutcome::kDone);
}

TEST_F(DocEncodeTest, AGetterThatThrowsPropagates) {
  v8::TryCatch tc(isolate_);
  v8::Local<v8::Script> script =
      v8::Script::Compile(context_, ToV8String(isolate_, "encodeForTest([{get a() { throw new Error('boom'); }}])"))
          .ToLocalChecked();
  EXPECT_TRUE(script->Run(context_).IsEmpty());
  ASSERT_TRUE(tc.HasCaught());
  EXPECT_EQ(ToUtf8(isolate_, tc.Exception()), "Error: boom");
  // The encoder is usable after the throw.
  tc.Reset();
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  ASSERT_EQ(Encode("[{b: 2}]", &docs, &statuses), SplitOutcome::kDone);
  EXPECT_EQ(docs[0].body, "{\"b\":2}");
}

TEST_F(DocEncodeTest, BuildRefusesAnEncodingThatDoesNotAddUp) {
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  const int32_t meta[] = {0, 40, 0};  // past the end of the bytes
  v8::Local<v8::Array> strs = v8::Array::New(isolate_, 2);
  EXPECT_EQ(BuildEncodedDocs(context_, "{}", meta, strs, {}, 1, &docs, &statuses), SplitOutcome::kNotPlain);
  EXPECT_TRUE(docs.empty());
  // A 0x01 byte without its number.
  const std::string_view with_mark("{\"a\":\x01}", 7);
  const int32_t whole[] = {0, 7, 0};
  EXPECT_EQ(BuildEncodedDocs(context_, with_mark, whole, strs, {}, 1, &docs, &statuses), SplitOutcome::kNotPlain);
  EXPECT_TRUE(docs.empty());
  // With it.
  const double nums[] = {0.5};
  ASSERT_EQ(BuildEncodedDocs(context_, with_mark, whole, strs, nums, 1, &docs, &statuses), SplitOutcome::kDone);
  EXPECT_EQ(docs[0].body, "{\"a\":0.5}");
}

}  // namespace
}  // namespace settee::js
