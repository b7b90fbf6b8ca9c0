// Parsing and validation of client documents; the revision hash.
#include "storage/document.h"

#include <gtest/gtest.h>

#include "util/digest.h"
#include "util/json.h"

namespace settee {
namespace {

constexpr size_t kMax = 1 << 20;

TEST(Document, SplitsSpecialMembersFromTheBody) {
  IncomingDoc doc;
  ASSERT_TRUE(ParseIncomingDoc(
                  R"({"z":1,"_id":"x","_rev":"2-abc","_deleted":true,"a":{"b":[1]},"_conflicts":[]})",
                  {}, kMax, &doc)
                  .ok());
  EXPECT_EQ("x", doc.id);
  ASSERT_TRUE(doc.rev);
  EXPECT_EQ(2u, doc.rev->gen);
  EXPECT_EQ("abc", doc.rev->hash);
  EXPECT_TRUE(doc.deleted);
  EXPECT_EQ(R"({"z":1,"a":{"b":[1]}})", doc.body) << "member order is kept";
}

TEST(Document, AcceptsUtf8AndRejectsInvalidBytes) {
  IncomingDoc doc;
  // Multi-byte UTF-8 in keys and values (and past an 8-byte boundary) is kept.
  ASSERT_TRUE(ParseIncomingDoc("{\"caf\xc3\xa9\":\"\xe2\x82\xac 12345678 \xf0\x9f\x98\x80\"}", "x",
                               kMax, &doc)
                  .ok());
  EXPECT_EQ("{\"caf\xc3\xa9\":\"\xe2\x82\xac 12345678 \xf0\x9f\x98\x80\"}", doc.body);
  // A lone continuation byte, an overlong encoding, a truncated sequence:
  // each rejected wherever it sits.
  for (std::string bad : {"\x80", "\xc0\xaf", "\xe2\x82"}) {
    for (std::string pad : {"", "padding-"}) {
      std::string json = "{\"k\":\"" + pad + bad + "\"}";
      Status s = ParseIncomingDoc(json, "x", kMax, &doc);
      EXPECT_EQ(Status::Code::kBadRequest, s.code()) << json;
    }
  }
}

// Plain documents take a simdjson fast path, the rest RapidJSON; both must
// write the same bytes (revision ids hash them), which is RapidJSON's own
// compact serialization.
TEST(Document, BodiesAreRapidJsonCompactOnEveryPath) {
  const char* bodies[] = {
      R"({"a":1.5,"b":-0.0,"c":1e300,"d":0.1,"e":1e-7,"f":-123456789012345678})",
      R"({"u":18446744073709551615,"i":-9223372036854775808,"z":0,"t":true,"n":null})",
      R"({"big":123456789012345678901234567890,"neg":-98765432109876543210})",
      R"({"s":"tab\tquote\"back\\ctl\u0001 \u00e9\ud83d\ude00/","k\n":[[],{},[{"x":[]}]]})",
      R"( { "spaced" : [ 1 , 2 ] , "_access" : [ "kept" ] } )",
      "{\"caf\xc3\xa9\":\"\xe2\x82\xac\"}",
  };
  for (const char* text : bodies) {
    json::Document d;
    ASSERT_TRUE(json::Parse(text, &d).ok()) << text;
    IncomingDoc doc;
    ASSERT_TRUE(ParseIncomingDoc(text, "x", kMax, &doc).ok()) << text;
    EXPECT_EQ(json::Serialize(d), doc.body) << text;
  }
  // The numbers the fuzzer found the two paths disagreeing on: the same body
  // whether the document is plain (simdjson) or has _revisions (RapidJSON).
  // Two differences are left, both numbers RapidJSON's reader refuses although
  // they are in range, which simdjson reads: a decimal exponent past 308 plus
  // the fraction digits ("0e1000" is 0.0), and an integer part past ~1.8e308
  // brought back by the exponent (1 and 400 zeros, then e-300). No serializer
  // writes such numbers.
  for (const char* number : {"0e90", "-0e100", "1e-325", "5e-324", "0.1", "1e308",
                             "123456789012345678901234567890", "-0", "18446744073709551615"}) {
    std::string plain = std::string(R"({"n":)") + number + "}";
    std::string replicated =
        std::string(R"({"_revisions":{"start":1,"ids":["x"]},"n":)") + number + "}";
    IncomingDoc a, b;
    ASSERT_TRUE(ParseIncomingDoc(plain, "x", kMax, &a).ok()) << number;
    ASSERT_TRUE(ParseIncomingDoc(replicated, "x", kMax, &b).ok()) << number;
    EXPECT_EQ(a.body, b.body) << number;
  }
  for (const char* number : {"1e309", "12345678901234567890e300"}) {
    IncomingDoc a, b;
    EXPECT_FALSE(ParseIncomingDoc(std::string(R"({"n":)") + number + "}", "x", kMax, &a).ok());
    EXPECT_FALSE(ParseIncomingDoc(std::string(R"({"_revisions":{"start":1,"ids":["x"]},"n":)") +
                                      number + "}",
                                  "x", kMax, &b)
                     .ok());
  }
  // Content after a NUL byte is an error on both paths, not dropped.
  IncomingDoc nul;
  EXPECT_FALSE(ParseIncomingDoc(std::string("{\"d\":0}\0garbage{]", 17), "x", kMax, &nul).ok());
  EXPECT_FALSE(ParseIncomingDoc(std::string("{\"_revisions\":{\"start\":1,\"ids\":[\"x\"]}}\0.", 40),
                                "x", kMax, &nul)
                   .ok());
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  EXPECT_FALSE(ParseIncomingDocArray(std::string("[{\"a\":1}]\0junk", 14), kMax, &docs, &statuses).ok());

  // A lone surrogate escape is rejected on both paths, not stored as bytes
  // that are not UTF-8.
  IncomingDoc lone;
  EXPECT_FALSE(ParseIncomingDoc(R"({"s":"\udc00"})", "x", kMax, &lone).ok());
  EXPECT_FALSE(ParseIncomingDoc(R"({"_revisions":{"start":1,"ids":["x"]},"s":"\udc00"})", "x", kMax, &lone).ok());

  // Special members are taken out the same way on both paths (_revisions
  // sends this one to RapidJSON).
  IncomingDoc fast, slow;
  ASSERT_TRUE(ParseIncomingDoc(R"({"_id":"a","_rev":"1-x","v":[1],"_deleted":true})", {}, kMax, &fast).ok());
  ASSERT_TRUE(ParseIncomingDoc(R"({"_id":"a","_rev":"1-x","v":[1],"_deleted":true,"_revisions":{"start":1,"ids":["x"]}})",
                               {}, kMax, &slow).ok());
  EXPECT_EQ(fast.body, slow.body);
  EXPECT_EQ(fast.id, slow.id);
  EXPECT_EQ(fast.rev_text, slow.rev_text);
  EXPECT_EQ(fast.deleted, slow.deleted);
  EXPECT_TRUE(slow.revisions.has_value());
}

// Inputs past the per-thread parser scratch (256 KiB) take other routes (the
// RapidJSON path, or a scratch of their own); the results are the same.
TEST(Document, LargeInputsParseTheSame) {
  const std::string big(300 << 10, 'x');
  IncomingDoc doc;
  ASSERT_TRUE(ParseIncomingDoc(R"({"_id":"big","s":")" + big + R"(","n":1.5})", {}, 1 << 30, &doc).ok());
  EXPECT_EQ("big", doc.id);
  EXPECT_EQ(R"({"s":")" + big + R"(","n":1.5})", doc.body);

  std::string array = "[";
  for (int i = 0; i < 4000; ++i) {
    array += (i ? "," : "") + std::string(R"({"_id":"d)") + std::to_string(i) +
             R"(","pad":"................................................................"})";
  }
  array += "]";
  ASSERT_GT(array.size(), size_t{256 << 10});
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  ASSERT_TRUE(ParseIncomingDocArray(array, kMax, &docs, &statuses).ok());
  ASSERT_EQ(4000u, docs.size());
  EXPECT_TRUE(statuses[3999].ok());
  EXPECT_EQ("d3999", docs[3999].id);
  // The thread's own scratch still works afterwards.
  ASSERT_TRUE(ParseIncomingDocArray(R"([{"_id":"a"}])", kMax, &docs, &statuses).ok());
  EXPECT_EQ("a", docs[0].id);
  // The same documents as a _bulk_docs body, with one that is not plain.
  BulkDocsBodyInfo info;
  const std::string body = R"({"docs":)" + array.substr(0, array.size() - 1) +
                           R"(,{"_id":"r","_revisions":{"start":1,"ids":["a"]}}]})";
  ASSERT_TRUE(ParseBulkDocsBody(body, kMax, &info, &docs, &statuses).ok());
  ASSERT_EQ(4001u, docs.size());
  EXPECT_EQ("d3999", docs[3999].id);
  EXPECT_TRUE(statuses[4000].ok());
  EXPECT_TRUE(docs[4000].revisions);
}

// A _bulk_docs body parses once, through simdjson or (for what simdjson
// declines) RapidJSON, with the same documents and CouchDB's reasons.
TEST(Document, BulkDocsBodyParsesOnceWithCouchDBReasons) {
  BulkDocsBodyInfo info;
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  // A big integer sends the second body down the RapidJSON path.
  for (const char* extra : {"1", "18446744073709551616"}) {
    const std::string body = R"({"new_edits":false,"x":)" + std::string(extra) +
                             R"(,"docs":[{"_id":"a","v":1},{"_id":"_design/d"},{"_id":"_bad"}],"docs":[]})";
    ASSERT_TRUE(ParseBulkDocsBody(body, kMax, &info, &docs, &statuses).ok()) << extra;
    ASSERT_EQ(3u, docs.size()) << "the first \"docs\" counts";
    EXPECT_EQ(std::optional<bool>(false), info.new_edits);
    EXPECT_TRUE(info.has_design_docs);
    EXPECT_EQ("a", docs[0].id);
    EXPECT_EQ(R"({"v":1})", docs[0].body);
    EXPECT_TRUE(statuses[1].ok());
    EXPECT_EQ(Status::Code::kIllegalDocId, statuses[2].code());
  }
  ASSERT_TRUE(ParseBulkDocsBody(R"({"docs":[{"_id":"_design"},{"_id":1}]})", kMax, &info, &docs, &statuses).ok());
  EXPECT_FALSE(info.new_edits);
  EXPECT_FALSE(info.has_design_docs);

  const std::pair<const char*, const char*> bad[] = {
      {"{", "invalid UTF-8 JSON"},
      {"[]", "Request body must be a JSON object"},
      {R"({"nodocs":[]})", "POST body must include `docs` parameter."},
      {R"({"docs":{}})", "`docs` parameter must be an array."},
      {R"({"docs":[],"new_edits":"no"})", "`new_edits` parameter must be a boolean."},
      {R"({"docs":[{},3]})", "Document must be a JSON object"},
      {R"({"docs":[3],"n":18446744073709551616})", "Document must be a JSON object"},
  };
  for (const auto& [body, reason] : bad) {
    Status st = ParseBulkDocsBody(body, kMax, &info, &docs, &statuses);
    EXPECT_EQ(Status::Code::kBadRequest, st.code()) << body;
    EXPECT_EQ(reason, st.reason()) << body;
  }
}

TEST(Document, OnlyLiteralTrueDeletes) {
  IncomingDoc doc;
  ASSERT_TRUE(ParseIncomingDoc(R"({"_deleted":"yes"})", "x", kMax, &doc).ok());
  EXPECT_FALSE(doc.deleted);
}

TEST(Document, IdOverrideWins) {
  IncomingDoc doc;
  ASSERT_TRUE(ParseIncomingDoc(R"({"_id":"body"})", "url", kMax, &doc).ok());
  EXPECT_EQ("url", doc.id);
}

TEST(Document, ParsesRevisions) {
  IncomingDoc doc;
  ASSERT_TRUE(
      ParseIncomingDoc(R"({"_revisions":{"start":3,"ids":["c","b","a"]}})", "x", kMax, &doc).ok());
  ASSERT_TRUE(doc.revisions);
  EXPECT_EQ(3u, doc.revisions->start);
  EXPECT_EQ((std::vector<std::string>{"c", "b", "a"}), doc.revisions->ids);
  for (const char* bad : {R"({"_revisions":[]})", R"({"_revisions":{"start":0,"ids":["a"]}})",
                          R"({"_revisions":{"start":1,"ids":[]}})",
                          R"({"_revisions":{"start":1,"ids":["a","b"]}})",
                          R"({"_revisions":{"start":2,"ids":[""]}})",
                          R"({"_revisions":{"start":2,"ids":[5]}})"}) {
    EXPECT_EQ(Status::Code::kBadRequest, ParseIncomingDoc(bad, "x", kMax, &doc).code()) << bad;
  }
}

TEST(Document, LocalDocsKeepTheirRevText) {
  IncomingDoc doc;
  ASSERT_TRUE(ParseIncomingDoc(R"({"_rev":"0-7"})", "_local/cp", kMax, &doc).ok());
  EXPECT_EQ("0-7", doc.rev_text);
  EXPECT_FALSE(doc.rev);
}

TEST(Document, ValidatesDocIds) {
  EXPECT_TRUE(ValidateDocId("plain").ok());
  EXPECT_TRUE(ValidateDocId("_design/x").ok());
  EXPECT_TRUE(ValidateDocId("_local/x").ok());
  EXPECT_TRUE(ValidateDocId("with/slash and space é").ok());
  for (const char* bad : {"", "_x", "_design/", "_local/", "_design", "_users"}) {
    EXPECT_EQ(Status::Code::kIllegalDocId, ValidateDocId(bad).code()) << bad;
  }
}

TEST(Document, RejectsOversizedDocumentsBeforeParsing) {
  IncomingDoc doc;
  std::string big = "{\"a\":\"" + std::string(100, 'x') + "\"}";
  EXPECT_EQ(Status::Code::kDocumentTooLarge, ParseIncomingDoc(big, "x", 50, &doc).code());
}

// As CouchDB's max_document_size, the limit is on the document's body:
// inline attachment bodies do not count (they have max_attachment_size),
// else a document holding an attachment that was uploaded on its own could
// not be replicated, whose writes carry the bodies inline.
TEST(Document, InlineAttachmentsDoNotCountTowardsTheSizeLimit) {
  const std::string data(200, 'A');  // base64 of 150 bytes
  const std::string with_att =
      R"({"a":1,"_attachments":{"f":{"content_type":"text/plain","data":")" + data + R"("}}})";
  IncomingDoc doc;
  Status s = ParseIncomingDoc(with_att, "x", 50, &doc);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(doc.attachments);
  EXPECT_EQ(1u, doc.attachments->size());
  EXPECT_EQ(R"({"a":1})", doc.body);
  // The body itself still counts.
  const std::string big_body = R"({"a":")" + std::string(60, 'x') +
                               R"(","_attachments":{"f":{"content_type":"text/plain","data":"AAAA"}}})";
  EXPECT_EQ(Status::Code::kDocumentTooLarge, ParseIncomingDoc(big_body, "x", 50, &doc).code());
  // Documents in an array are measured the same way.
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  ASSERT_TRUE(ParseIncomingDocArray("[" + with_att + "," + big_body + "]", 50, &docs, &statuses).ok());
  ASSERT_EQ(2u, statuses.size());
  EXPECT_TRUE(statuses[0].ok()) << statuses[0].ToString();
  EXPECT_EQ(Status::Code::kDocumentTooLarge, statuses[1].code());
}

// CouchDB's validate_attachment_sizes: inline bodies are measured decoded,
// a part that follows by its decoded length when gzip, stubs not at all.
TEST(Document, AttachmentSizesAreCheckedAgainstTheLimit) {
  IncomingDoc doc;
  const std::string data(200, 'A');  // base64 of 150 bytes
  ASSERT_TRUE(ParseIncomingDoc(R"({"_attachments":{"s":{"stub":true},"f":{"content_type":"text/plain","data":")" +
                                   data + R"("}}})",
                               "x", 1 << 20, &doc).ok());
  EXPECT_TRUE(CheckAttachmentSizes(doc, 150).ok());
  Status s = CheckAttachmentSizes(doc, 149);
  EXPECT_EQ(Status::Code::kAttachmentTooLarge, s.code());
  EXPECT_EQ("f", s.reason());
  EXPECT_TRUE(CheckAttachmentSizes(IncomingDoc(), 0).ok());
}

TEST(Document, RevHashFollowsTheDocumentedFormula) {
  EXPECT_EQ(Xxh128Hex("1-abc\n0\n{\"a\":1}"), ComputeRevHash("1-abc", false, R"({"a":1})"));
  EXPECT_EQ("6c1f75cafa9e34b4b4dd8b780eefc202", ComputeRevHash("1-abc", false, R"({"a":1})"));
  EXPECT_EQ("67033aa9a393b66533727cb540695041", ComputeRevHash("", true, "{}"));
  EXPECT_NE(ComputeRevHash("", false, "{}"), ComputeRevHash("", true, "{}"));
  // Interleaved use on one thread must not leak state between hashes.
  std::string a = ComputeRevHash("", false, R"({"v":1})");
  ComputeRevHash("1-x", true, R"({"w":2})");
  EXPECT_EQ(a, ComputeRevHash("", false, R"({"v":1})"));
  // Small revisions hash in one shot, large ones stream: both follow the
  // formula on either side of the switch.
  for (size_t size : {1000, 1016, 1017, 5000}) {
    const std::string body = "{\"s\":\"" + std::string(size - 8, 'x') + "\"}";
    EXPECT_EQ(Xxh128Hex("2-abc\n1\n" + body), ComputeRevHash("2-abc", true, body)) << size;
  }
}

}  // namespace
}  // namespace settee

namespace settee {
namespace {

TEST(Document, BoundsNestingDepth) {
  IncomingDoc doc;
  auto nested = [](int depth) {
    std::string s = "{\"a\":";
    for (int i = 1; i < depth; ++i) s += "[";
    s += "1";
    for (int i = 1; i < depth; ++i) s += "]";
    return s + "}";
  };
  EXPECT_TRUE(ParseIncomingDoc(nested(json::kMaxNestingDepth), "x", kMax, &doc).ok());
  Status s = ParseIncomingDoc(nested(json::kMaxNestingDepth + 1), "x", kMax, &doc);
  EXPECT_EQ(Status::Code::kBadRequest, s.code());
  EXPECT_NE(std::string::npos, s.reason().find("nesting")) << s.reason();
  // Brackets inside strings are just text.
  EXPECT_TRUE(ParseIncomingDoc("{\"a\":\"" + std::string(5000, '[') + "\"}", "x", kMax, &doc).ok());
}

TEST(Document, ParserStateDoesNotLeakBetweenDocuments) {
  IncomingDoc doc;
  EXPECT_FALSE(ParseIncomingDoc(R"({"a":[1,{"b":)", "x", kMax, &doc).ok());
  ASSERT_TRUE(ParseIncomingDoc(R"({"c":2})", "x", kMax, &doc).ok());
  EXPECT_EQ(R"({"c":2})", doc.body);
}

}  // namespace
}  // namespace settee
