// Attachments over HTTP (runtime/endpoints_attachments.cc and the document
// endpoints' attachment options), on both backends: binary round trips
// through every path, Range, ETag, gzip, multipart in and out, bad input.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "tests/storage/store_test_util.h"
#include "runtime/multipart.h"
#include "storage/attachment_store.h"
#include "storage/database_impl.h"
#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

std::string AllBytes(int repeat) {
  std::string s;
  for (int r = 0; r < repeat; ++r) {
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  }
  return s;
}

class EndpointsAttachmentsTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.backend = GetParam();
    cfg.http.limits.max_body_bytes = 8 << 20;
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
    ASSERT_EQ(Req("PUT", "/db").status, 201);
  }
  ClientResponse Req(const std::string& method, const std::string& path,
                     const std::string& body = {}, Headers headers = {}) {
    return client_->Request(method, path, body, std::move(headers));
  }
  json::Document J(const ClientResponse& r) { return ParseJson(r.body); }
  std::string PutAtt(const std::string& path, const std::string& data,
                     const std::string& type = "application/octet-stream") {
    auto r = Req("PUT", path, data, {{"Content-Type", type}});
    EXPECT_EQ(r.status, 201) << r.body;
    return Str(J(r), "rev");
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_P(EndpointsAttachmentsTest, StandaloneRoundTripOfEveryByteValue) {
  const std::string data = AllBytes(3);
  const std::string rev = PutAtt("/db/doc/bin", data, "image/png");
  auto r = Req("GET", "/db/doc/bin");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, data);
  EXPECT_EQ(r.HeaderOr("content-type"), "image/png");
  EXPECT_EQ(r.HeaderOr("content-length"), std::to_string(data.size()));
  const std::string etag = r.HeaderOr("etag");
  EXPECT_EQ(etag, "\"" + Base64Encode(Md5Raw(data)) + "\"");
  r = Req("GET", "/db/doc/bin", {}, {{"If-None-Match", etag}});
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  r = Req("HEAD", "/db/doc/bin");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("content-length"), std::to_string(data.size()));
  r = Req("GET", "/db/doc/bin?rev=" + rev);
  EXPECT_EQ(r.body, data);
  // The document shows the stub.
  json::Document doc = J(Req("GET", "/db/doc"));
  EXPECT_TRUE(doc["_attachments"]["bin"]["stub"].GetBool());
  EXPECT_EQ(doc["_attachments"]["bin"]["length"].GetUint64(), data.size());
}

TEST_P(EndpointsAttachmentsTest, NamesWithSlashesAndUnicodeAndDesignDocs) {
  const std::string rev = PutAtt("/db/doc/dir/sub/%C3%BC.txt", "hi", "text/plain");
  auto r = Req("GET", "/db/doc/dir/sub/%C3%BC.txt");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hi");
  json::Document doc = J(Req("GET", "/db/doc"));
  EXPECT_TRUE(doc["_attachments"].HasMember("dir/sub/ü.txt"));
  PutAtt("/db/_design/app/index.html", "<p>x</p>", "text/html");
  r = Req("GET", "/db/_design/app/index.html");
  EXPECT_EQ(r.body, "<p>x</p>");
  EXPECT_EQ(r.HeaderOr("content-type"), "text/html");
  r = Req("DELETE", "/db/doc/dir/sub/%C3%BC.txt?rev=" + rev);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Req("GET", "/db/doc/dir/sub/%C3%BC.txt").status, 404);
}

TEST_P(EndpointsAttachmentsTest, CopyTakesTheAttachments) {
  const std::string data = AllBytes(1);
  PutAtt("/db/src/a.bin", data);
  auto r = Req("COPY", "/db/src", {}, {{"Destination", "dst"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Req("GET", "/db/dst/a.bin").body, data);
}

TEST_P(EndpointsAttachmentsTest, RevisionConflictsAndMissing) {
  const std::string rev1 = PutAtt("/db/d/a", "one");
  auto r = Req("PUT", "/db/d/b", "x");  // no rev: the doc exists
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(Str(J(r), "error"), "conflict");
  r = Req("PUT", "/db/nodoc/b?rev=" + rev1, "x");
  EXPECT_EQ(r.status, 409);
  r = Req("PUT", "/db/d/b?rev=" + rev1, "x", {{"Content-Type", "text/plain"}});
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(Req("PUT", "/db/d/c?rev=" + rev1, "x").status, 409);  // stale
  EXPECT_EQ(Req("DELETE", "/db/d/b").status, 409);               // no rev
  r = Req("GET", "/db/d/zzz");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(J(r), "error"), "not_found");
  EXPECT_EQ(Req("GET", "/db/nodoc/zzz").status, 404);
  r = Req("PUT", "/db/d/_bad?rev=" + Str(J(Req("GET", "/db/d")), "_rev"), "x");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/e/a", "data", {{"Content-MD5", Base64Encode(Md5Raw("other"))}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "content_md5_mismatch");
  EXPECT_EQ(Req("GET", "/db/e").status, 404);
  r = Req("PUT", "/db/e/a", "data", {{"Content-MD5", Base64Encode(Md5Raw("data"))}});
  EXPECT_EQ(r.status, 201);
}

// ?rev= (and If-Match) read as couch_doc:parse_rev reads them: a revision no
// stored one can be ("1-", "0-a", a generation past 64 bits) is one the
// document does not have (GET 404, PUT and DELETE 409), "+N-x" is "N-x", a
// 32-character id that is not hex is 400.
TEST_P(EndpointsAttachmentsTest, RevsAreParsedAsCouchDBParsesThem) {
  std::string rev = PutAtt("/db/doc/a", "hello", "text/plain");
  for (const std::string bad : {"1-", "0-a", "99999999999999999999-a"}) {
    const std::string q = "?rev=" + http::PercentEncode(bad);
    auto r = Req("GET", "/db/doc/a" + q);
    EXPECT_EQ(r.status, 404) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "missing") << bad;
    EXPECT_EQ(Req("PUT", "/db/doc/b" + q, "x", {{"Content-Type", "text/plain"}}).status, 409) << bad;
    EXPECT_EQ(Req("PUT", "/db/doc/b", "x", {{"Content-Type", "text/plain"}, {"If-Match", bad}}).status, 409) << bad;
    EXPECT_EQ(Req("PUT", "/db/nodoc/b" + q, "x", {{"Content-Type", "text/plain"}}).status, 409) << bad;
    EXPECT_EQ(Req("DELETE", "/db/doc/a" + q).status, 409) << bad;
  }
  const std::string zs = "?rev=1-" + std::string(32, 'z');
  EXPECT_EQ(Req("GET", "/db/doc/a" + zs).status, 400);
  auto r = Req("PUT", "/db/doc/b" + zs, "x", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  EXPECT_EQ(Req("DELETE", "/db/doc/a" + zs).status, 400);
  r = Req("GET", "/db/doc/a?rev=%2B" + rev);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "hello");
  r = Req("PUT", "/db/doc/b?rev=%2B" + rev, "x", {{"Content-Type", "text/plain"}});
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("DELETE", "/db/doc/a?rev=%2B" + Str(J(r), "rev"));
  EXPECT_EQ(r.status, 200) << r.body;
}

// Attachment PUT and DELETE read ?rev= and If-Match as chttpd_db's
// extract_header_rev does, and a multipart/related document PUT as
// couch_doc_from_req does: If-Match is parsed whenever it is sent and must
// be the explicit revision (the document part's _rev, else ?rev=). Before,
// ?rev= hid If-Match, and a multipart PUT read neither.
TEST_P(EndpointsAttachmentsTest, IfMatchIsSetAgainstTheExplicitRev) {
  std::string rev = PutAtt("/db/doc/a", "hello", "text/plain");
  const Headers text = {{"Content-Type", "text/plain"}};
  auto with = [](Headers h, const std::string& if_match) {
    h.emplace_back("If-Match", if_match);
    return h;
  };
  const std::string etag_differs = "Document rev and etag have different values";
  for (const auto& [if_match, reason] :
       {std::pair<std::string, std::string>{"garbage", "Invalid rev format"},
        {"\"1-abc\"", etag_differs},
        {"0-a", etag_differs}}) {
    auto r = Req("PUT", "/db/doc/b?rev=" + rev, "x", with(text, if_match));
    EXPECT_EQ(r.status, 400) << if_match << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << if_match;
    r = Req("DELETE", "/db/doc/a?rev=" + rev, "", with({}, if_match));
    EXPECT_EQ(r.status, 400) << if_match << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << if_match;
  }
  // ?rev= empty is parse_rev(""), malformed.
  auto r = Req("PUT", "/db/doc/b?rev=", "x", text);
  EXPECT_EQ(r.status, 400) << r.body;
  // Alone, or the same revision, If-Match names it.
  r = Req("PUT", "/db/doc/b", "x", with(text, "\"" + rev + "\""));
  ASSERT_EQ(r.status, 201) << r.body;
  rev = Str(J(r), "rev");
  r = Req("DELETE", "/db/doc/b?rev=" + rev, "", with({}, "\"" + rev + "\""));
  ASSERT_EQ(r.status, 200) << r.body;
  rev = Str(J(r), "rev");

  const Headers type = {{"Content-Type", "multipart/related; boundary=\"BB\""}};
  auto multipart = [](const std::string& json) {
    return MultipartPartHead("BB", {{"Content-Type", "application/json"}}) + json + "\r\n" +
           MultipartPartHead("BB", {}) + "body" + MultipartClose("BB");
  };
  const std::string att = R"("_attachments":{"m":{"follows":true,"length":4,"content_type":"text/plain"}})";
  const std::string no_rev = multipart("{" + att + "}");
  const std::string body_rev = multipart(R"({"_rev":")" + rev + R"(",)" + att + "}");
  for (const auto& [if_match, reason] :
       {std::pair<std::string, std::string>{"garbage", "Invalid rev format"}, {"\"1-abc\"", etag_differs}}) {
    r = Req("PUT", "/db/doc?rev=" + rev, no_rev, with(type, if_match));
    EXPECT_EQ(r.status, 400) << if_match << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << if_match;
    r = Req("PUT", "/db/doc", body_rev, with(type, if_match));
    EXPECT_EQ(r.status, 400) << if_match << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << if_match;
  }
  r = Req("PUT", "/db/doc?rev=1-abc", body_rev, type);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Document rev from request body and query string have different values");
  r = Req("PUT", "/db/doc?rev=garbage", no_rev, type);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  // The document part without a _rev takes ?rev=, or If-Match.
  r = Req("PUT", "/db/doc?rev=" + rev, no_rev, type);
  ASSERT_EQ(r.status, 201) << r.body;
  rev = Str(J(r), "rev");
  r = Req("PUT", "/db/doc", no_rev, with(type, "\"" + rev + "\""));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Req("GET", "/db/doc/m").body, "body");
}

// GET ?atts_since= is read as parse_doc_query reads it (couch_doc:parse_revs):
// not an array is 400 "Invalid list of revisions", an entry parse_rev
// refuses 400 "Invalid rev format", "+N-x" is "N-x", and a revision no
// stored one can be is no ancestor (every body sent). Before, the entries
// were matched as sent, and malformed ones ignored.
TEST_P(EndpointsAttachmentsTest, AttsSinceIsParsedAsParseRevs) {
  const std::string rev1 = PutAtt("/db/s/a", "first", "text/plain");
  const std::string rev2 = PutAtt("/db/s/b?rev=" + rev1, "second", "text/plain");
  auto get = [&](const std::string& since) {
    return Req("GET", "/db/s?atts_since=" + http::PercentEncode(since));
  };
  auto r = get(R"(["+)" + rev1 + R"("])");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  EXPECT_TRUE(d["_attachments"]["a"].HasMember("stub")) << r.body;
  EXPECT_TRUE(d["_attachments"]["b"].HasMember("data")) << r.body;
  r = get(R"(["1-","0-a","99999999999999999999-a"])");
  ASSERT_EQ(r.status, 200) << r.body;
  d = J(r);
  EXPECT_TRUE(d["_attachments"]["a"].HasMember("data")) << r.body;
  EXPECT_TRUE(d["_attachments"]["b"].HasMember("data")) << r.body;
  for (const auto& [since, reason] :
       {std::pair<std::string, std::string>{R"("x")", "Invalid list of revisions"},
        {R"({"a":1})", "Invalid list of revisions"},
        {R"(["x"])", "Invalid rev format"},
        {R"([")" + rev1 + R"(",5])", "Invalid rev format"},
        {"[\"1-" + std::string(32, 'z') + "\"]", "Invalid rev format"},
        {"[", "invalid UTF-8 JSON"}}) {
    r = get(since);
    EXPECT_EQ(r.status, 400) << since << " " << r.body;
    EXPECT_EQ(Str(J(r), "error"), "bad_request") << since;
    EXPECT_EQ(Str(J(r), "reason"), reason) << since;
  }
}

TEST_P(EndpointsAttachmentsTest, RangesPartialAndUnsatisfiable) {
  const std::string data = AllBytes(4);
  PutAtt("/db/r/a", data);
  auto r = Req("GET", "/db/r/a", {}, {{"Range", "bytes=10-19"}});
  ASSERT_EQ(r.status, 206);
  EXPECT_EQ(r.body, data.substr(10, 10));
  EXPECT_EQ(r.HeaderOr("content-range"), "bytes 10-19/1024");
  r = Req("GET", "/db/r/a", {}, {{"Range", "bytes=-5"}});
  EXPECT_EQ(r.body, data.substr(1019));
  r = Req("GET", "/db/r/a", {}, {{"Range", "bytes=1000-"}});
  EXPECT_EQ(r.body, data.substr(1000));
  r = Req("GET", "/db/r/a", {}, {{"Range", "bytes=1024-2000"}});
  EXPECT_EQ(r.status, 416);
  EXPECT_EQ(Str(J(r), "error"), "requested_range_not_satisfiable");
  EXPECT_EQ(r.HeaderOr("content-range"), "bytes */1024");
  r = Req("GET", "/db/r/a", {}, {{"Range", "bytes=0-1,100-102"}});
  ASSERT_EQ(r.status, 206);
  std::string boundary;
  ASSERT_TRUE(MultipartBoundary(r.HeaderOr("content-type"), &boundary));
  std::vector<MultipartPart> parts;
  ASSERT_TRUE(ParseMultipart(r.body, boundary, &parts).ok()) << r.body;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].body, data.substr(0, 2));
  EXPECT_EQ(parts[1].body, data.substr(100, 3));
  EXPECT_EQ(*parts[1].Header("content-range"), "bytes 100-102/1024");
  // Not a byte range: the whole body.
  r = Req("GET", "/db/r/a", {}, {{"Range", "items=1-2"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, data);
}

TEST_P(EndpointsAttachmentsTest, CompressibleTypesServedDecodedOrGzip) {
  std::string text;
  while (text.size() < 10000) text += "some text that compresses well ";
  PutAtt("/db/t/a.txt", text, "text/plain");
  auto r = Req("GET", "/db/t/a.txt");
  EXPECT_EQ(r.body, text);
  EXPECT_EQ(r.Header("content-encoding"), nullptr);
  r = Req("GET", "/db/t/a.txt", {}, {{"Accept-Encoding", "gzip, deflate"}});
  EXPECT_EQ(r.HeaderOr("content-encoding"), "gzip");
  EXPECT_LT(r.body.size(), text.size());
  json::Document doc = J(Req("GET", "/db/t?att_encoding_info=true"));
  EXPECT_EQ(Str(doc["_attachments"]["a.txt"], "encoding"), "gzip");
  EXPECT_EQ(doc["_attachments"]["a.txt"]["encoded_length"].GetUint64(), r.body.size());
}

// An upload sent with Content-Encoding: gzip is the gzip of the body, as
// CouchDB reads it: stored decoded (it was stored as the body itself, so
// clients got the gzip bytes back and a length that was the gzip's), any
// other encoding 415, and bytes that are not gzip 400 with nothing stored.
TEST_P(EndpointsAttachmentsTest, GzipContentEncodedUploadsAreDecoded) {
  std::string text;
  while (text.size() < 300000) text += "uploaded gzipped by the client; ";
  const std::string binary = Noise(100000, 7);
  for (const auto& [name, body, type] :
       {std::tuple<std::string, std::string, std::string>{"t.txt", text, "text/plain"},
        {"b.bin", binary, "application/octet-stream"}}) {
    std::string gz;
    ASSERT_TRUE(GzipCompress(body, &gz));
    auto r = Req("PUT", "/db/gz/" + name + (name == "t.txt" ? "" : "?rev=" + Str(J(Req("GET", "/db/gz")), "_rev")),
                 gz, {{"Content-Type", type}, {"Content-Encoding", "gzip"}});
    ASSERT_EQ(r.status, 201) << r.body;
    r = Req("GET", "/db/gz/" + name);
    EXPECT_TRUE(r.body == body) << name << ": " << r.body.size() << " bytes back";
    json::Document doc = J(Req("GET", "/db/gz"));
    EXPECT_EQ(doc["_attachments"][name.c_str()]["length"].GetUint64(), body.size()) << name;
  }
  // Buffered (a small body) as well as streamed.
  std::string small_gz;
  ASSERT_TRUE(GzipCompress("tiny", &small_gz));
  auto r = Req("PUT", "/db/small/s.txt", small_gz, {{"Content-Type", "text/plain"}, {"Content-Encoding", "GZIP"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Req("GET", "/db/small/s.txt").body, "tiny");
  r = Req("PUT", "/db/x/a.txt", "x", {{"Content-Type", "text/plain"}, {"Content-Encoding", "br"}});
  EXPECT_EQ(r.status, 415) << r.body;
  r = Req("PUT", "/db/x/a.txt", "not gzip at all", {{"Content-Type", "text/plain"}, {"Content-Encoding", "gzip"}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Request body is not properly gzipped.");
  EXPECT_EQ(Req("GET", "/db/x").status, 404);
  r = Req("PUT", "/db/x/a.txt", "plain", {{"Content-Type", "text/plain"}, {"Content-Encoding", "identity"}});
  EXPECT_EQ(r.status, 201) << r.body;
}

// The CouchServer of `server`, behind a second listener that buffers every
// request body (an attachment upload too), as an embedding server may.
class BufferingListener : public http::HttpHandler {
 public:
  explicit BufferingListener(TestServer* server) : couch_(server->couch()) {
    http::HttpServerOptions opts;
    opts.port = 0;
    opts.threads = 2;
    opts.limits.max_body_bytes = 8 << 20;
    http_ = std::make_unique<http::HttpServer>(opts, this);
    Status s = http_->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ~BufferingListener() override { http_.reset(); }
  int port() const { return http_->port(); }
  void Handle(http::HttpRequest& req, http::HttpResponse& res) override { couch_->Handle(req, res); }
  void HandleParseError(int status, const std::string& reason, http::HttpResponse& res) override {
    couch_->HandleParseError(status, reason, res);
  }

 private:
  CouchServer* couch_;
  std::unique_ptr<http::HttpServer> http_;
};

// One decode path for gzip uploads, whether the body is streamed (as the
// HTTP server reads attachment uploads) or was buffered: Content-MD5 is of
// the bytes sent (a buffered one was checked against the decoded bytes: 400),
// the same 400 and 415 reasons (CouchDB's), a body that decodes past
// max_attachment_size is 413 with nothing stored (a streamed one was stored
// whole: the limit was on the bytes sent), and every member of a
// multi-member gzip is kept (only the first was).
TEST_P(EndpointsAttachmentsTest, GzipUploadsGetTheSameAnswerStreamedOrBuffered) {
  TestServerConfig cfg;
  cfg.backend = GetParam();
  cfg.max_attachment_size = 1 << 20;
  TestServer server(cfg);
  BufferingListener buffering(&server);
  // A connection per request: one refused mid-body may be closed.
  auto get = [&](const std::string& path) { return TestClient(server.port()).Request("GET", path, "", {}); };
  ASSERT_EQ(TestClient(server.port()).Request("PUT", "/lim", "", {}).status, 201);
  const std::string text(300000, 't');
  const std::string zeros(4 << 20, '\0');
  std::string gz, gz_zeros, gz_tail;
  ASSERT_TRUE(GzipCompress(text, &gz));
  ASSERT_TRUE(GzipCompress(zeros, &gz_zeros));
  ASSERT_TRUE(GzipCompress("and a second member", &gz_tail));
  ASSERT_LT(gz_zeros.size(), 64u << 10);
  for (int port : {server.port(), buffering.port()}) {
    const std::string doc = port == server.port() ? "/lim/s" : "/lim/b";
    auto req = [&](const std::string& path, const std::string& body, Headers h) {
      return TestClient(port).Request("PUT", path, body, std::move(h));
    };
    auto r = req(doc + "/t.txt", gz,
                 {{"Content-Type", "text/plain"}, {"Content-Encoding", "gzip"},
                  {"Content-MD5", Base64Encode(Md5Raw(gz))}});
    ASSERT_EQ(r.status, 201) << doc << ": " << r.body;
    EXPECT_TRUE(get(doc + "/t.txt").body == text) << doc;
    std::string rev = Str(J(r), "rev");
    r = req(doc + "/m.txt?rev=" + rev, gz + gz_tail,
            {{"Content-Type", "text/plain"}, {"Content-Encoding", "gzip"}});
    ASSERT_EQ(r.status, 201) << doc << ": " << r.body;
    EXPECT_EQ(get(doc + "/m.txt").body.size(),
              text.size() + std::string("and a second member").size()) << doc;
    rev = Str(J(r), "rev");
    r = req(doc + "/n.txt?rev=" + rev, "not gzip at all",
            {{"Content-Type", "text/plain"}, {"Content-Encoding", "gzip"}});
    EXPECT_EQ(r.status, 400) << doc;
    EXPECT_EQ(Str(J(r), "reason"), "Request body is not properly gzipped.") << doc;
    r = req(doc + "/n.txt?rev=" + rev, "x", {{"Content-Type", "text/plain"}, {"Content-Encoding", "br"}});
    EXPECT_EQ(r.status, 415) << doc;
    EXPECT_EQ(Str(J(r), "reason"), "Only gzip and identity content-encodings are supported") << doc;
    r = req(doc + "/zeros.bin?rev=" + rev, gz_zeros,
            {{"Content-Type", "application/octet-stream"}, {"Content-Encoding", "gzip"}});
    EXPECT_EQ(r.status, 413) << doc << ": " << r.body;
    EXPECT_EQ(Str(J(r), "error"), "attachment_too_large") << doc;
    EXPECT_EQ(get(doc + "/zeros.bin").status, 404) << doc;
    EXPECT_EQ(get(doc + "/n.txt").status, 404) << doc;
  }
}

// CouchDB's validate_attachment_sizes: an inline attachment body past
// max_attachment_size is 413 attachment_too_large, whatever the document's
// own size limit says (inline bodies do not count towards that one), by PUT
// and by _bulk_docs; nothing is written.
TEST_P(EndpointsAttachmentsTest, InlineAttachmentsPastTheLimitAre413) {
  TestServerConfig cfg;
  cfg.backend = GetParam();
  cfg.http.limits.max_body_bytes = 8 << 20;
  cfg.max_attachment_size = 1000;
  TestServer server(cfg);
  ASSERT_EQ(TestClient(server.port()).Request("PUT", "/lim", "", {}).status, 201);
  auto doc = [](size_t bytes) {
    return R"({"_attachments":{"big.bin":{"content_type":"application/octet-stream","data":")" +
           Base64Encode(std::string(bytes, 'z')) + "\"}}}";
  };
  auto r = TestClient(server.port()).Request("PUT", "/lim/ok", doc(1000), {});
  EXPECT_EQ(r.status, 201) << r.body;
  r = TestClient(server.port()).Request("PUT", "/lim/big", doc(1001), {});
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(Str(J(r), "error"), "attachment_too_large");
  EXPECT_EQ(Str(J(r), "reason"), "big.bin");
  r = TestClient(server.port()).Request("POST", "/lim/_bulk_docs", R"({"docs":[{"_id":"small"},)" +
                doc(5000).insert(1, R"("_id":"big2",)") + "]}", {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(TestClient(server.port()).Request("GET", "/lim/big", "", {}).status, 404);
  EXPECT_EQ(TestClient(server.port()).Request("GET", "/lim/big2", "", {}).status, 404);
  EXPECT_EQ(TestClient(server.port()).Request("GET", "/lim/small", "", {}).status, 404);
}

TEST_P(EndpointsAttachmentsTest, InlineBulkDocsAndBulkGetRoundTrip) {
  const std::string data = AllBytes(2);
  const std::string b64 = Base64Encode(data);
  auto r = Req("PUT", "/db/inline",
               R"({"_attachments":{"x":{"content_type":"application/octet-stream","data":")" + b64 + "\"}}}");
  ASSERT_EQ(r.status, 201) << r.body;
  json::Document doc = J(Req("GET", "/db/inline?attachments=true"));
  EXPECT_EQ(Str(doc["_attachments"]["x"], "data"), b64);
  // Bad base64 in one document refuses the request: nothing is written.
  r = Req("POST", "/db/_bulk_docs",
          R"({"docs":[{"_id":"b1","_attachments":{"y":{"data":")" + b64 +
              R"("}}},{"_id":"b2","_attachments":{"y":{"data":"!!"}}}]})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "error"), "bad_request");
  EXPECT_EQ(Str(J(r), "reason"), "Invalid attachment data for y");
  EXPECT_EQ(Req("GET", "/db/b1").status, 404);
  r = Req("POST", "/db/_bulk_docs",
          R"({"docs":[{"_id":"b1","_attachments":{"y":{"data":")" + b64 + R"("}}}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(J(r)[0]["ok"].GetBool());
  r = Req("POST", "/db/_bulk_get?attachments=true&revs=true", R"({"docs":[{"id":"b1"}]})");
  ASSERT_EQ(r.status, 200);
  json::Document got = J(r);
  const json::Value& d = got["results"][0]["docs"][0]["ok"];
  EXPECT_EQ(Str(d["_attachments"]["y"], "data"), b64);
  // Replicated writes through _bulk_docs keep the peer's digest and revpos.
  r = Req("POST", "/db/_bulk_docs",
          R"({"new_edits":false,"docs":[{"_id":"rep","_rev":"3-abc","_revisions":{"start":3,"ids":["abc","def"]},"_attachments":{"z":{"content_type":"text/plain","revpos":2,"digest":"md5-peer","data":")" +
              b64 + R"("}}}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(J(r).Size(), 0u);
  doc = J(Req("GET", "/db/rep"));
  EXPECT_EQ(Str(doc["_attachments"]["z"], "digest"), "md5-peer");
  EXPECT_EQ(doc["_attachments"]["z"]["revpos"].GetUint64(), 2u);
  EXPECT_EQ(Req("GET", "/db/rep/z").body, data);
  // A stub missing from the parent.
  r = Req("PUT", "/db/inline?rev=" + Str(doc, "_rev"), R"({"_attachments":{"q":{"stub":true}}})");
  EXPECT_EQ(r.status, 409);  // not inline's rev
  json::Document inl = J(Req("GET", "/db/inline"));
  r = Req("PUT", "/db/inline", R"({"_rev":")" + Str(inl, "_rev") + R"(","_attachments":{"q":{"stub":true}}})");
  EXPECT_EQ(r.status, 412);
  EXPECT_EQ(Str(J(r), "error"), "missing_stub");
}

TEST_P(EndpointsAttachmentsTest, MultipartRelatedPutAndGet) {
  const std::string a = AllBytes(2), b = "plain text body";
  const std::string json =
      R"({"_id":"mp","_rev":"1-abc","_revisions":{"start":1,"ids":["abc"]},"_attachments":{"a.bin":{"content_type":"application/octet-stream","revpos":1,"digest":"md5-)" +
      Base64Encode(Md5Raw(a)) + R"(","length":512,"follows":true},"b.txt":{"content_type":"text/plain","revpos":1,"length":15,"follows":true}}})";
  const std::string body = MultipartPartHead("XYZ", {{"Content-Type", "application/json"}}) + json +
                           "\r\n" + MultipartPartHead("XYZ", {{"Content-Disposition", "attachment; filename=\"a.bin\""}}) + a +
                           "\r\n" + MultipartPartHead("XYZ", {}) + b + MultipartClose("XYZ");
  auto r = Req("PUT", "/db/mp?new_edits=false", body,
               {{"Content-Type", "multipart/related; boundary=\"XYZ\""}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Req("GET", "/db/mp/a.bin").body, a);
  EXPECT_EQ(Req("GET", "/db/mp/b.txt").body, b);
  // Truncated: nothing written.
  r = Req("PUT", "/db/mp2", body.substr(0, body.size() - 10),
          {{"Content-Type", "multipart/related; boundary=\"XYZ\""}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Req("GET", "/db/mp2").status, 404);

  // GET with Accept: multipart/related.
  r = Req("GET", "/db/mp?attachments=true", {}, {{"Accept", "multipart/related"}});
  ASSERT_EQ(r.status, 200);
  std::string boundary;
  ASSERT_TRUE(MultipartBoundary(r.HeaderOr("content-type"), &boundary)) << r.HeaderOr("content-type");
  std::vector<MultipartPart> parts;
  ASSERT_TRUE(ParseMultipart(r.body, boundary, &parts).ok());
  ASSERT_EQ(parts.size(), 3u);
  json::Document doc = ParseJson(std::string(parts[0].body));
  EXPECT_TRUE(doc["_attachments"]["a.bin"]["follows"].GetBool());
  EXPECT_EQ(parts[1].body, a);
  EXPECT_EQ(parts[2].body, b);

  // open_revs as multipart/mixed, each revision a nested multipart/related.
  r = Req("GET", "/db/mp?open_revs=all&attachments=true&revs=true", {},
          {{"Accept", "multipart/mixed"}});
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(MultipartBoundary(r.HeaderOr("content-type"), &boundary));
  ASSERT_TRUE(ParseMultipart(r.body, boundary, &parts).ok()) << r.body;
  ASSERT_EQ(parts.size(), 1u);
  std::string inner;
  ASSERT_TRUE(MultipartBoundary(*parts[0].Header("content-type"), &inner));
  std::vector<MultipartPart> inner_parts;
  ASSERT_TRUE(ParseMultipart(parts[0].body, inner, &inner_parts).ok());
  ASSERT_EQ(inner_parts.size(), 3u);
  EXPECT_EQ(inner_parts[1].body, a);
  // atts_since the current revision: no bodies, plain JSON part.
  r = Req("GET", "/db/mp?open_revs=all&revs=true&atts_since=[%221-abc%22]", {},
          {{"Accept", "multipart/mixed"}});
  ASSERT_TRUE(MultipartBoundary(r.HeaderOr("content-type"), &boundary));
  ASSERT_TRUE(ParseMultipart(r.body, boundary, &parts).ok());
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(*parts[0].Header("content-type"), "application/json");
}

TEST_P(EndpointsAttachmentsTest, AllDocsAndChangesIncludeAttachmentBodies) {
  const std::string data = AllBytes(2);
  PutAtt("/db/a/bin", data);
  std::string text;
  while (text.size() < 5000) text += "some text ";
  PutAtt("/db/b/t.txt", text, "text/plain");
  auto bodies = [&](const json::Value& doc, const char* name) {
    std::string decoded;
    EXPECT_TRUE(Base64Decode(json::View(doc["_attachments"][name]["data"]), &decoded));
    return decoded;
  };
  json::Document all = J(Req("GET", "/db/_all_docs?include_docs=true&attachments=true"));
  ASSERT_EQ(all["rows"].Size(), 2u);
  EXPECT_EQ(bodies(all["rows"][0]["doc"], "bin"), data);
  EXPECT_EQ(bodies(all["rows"][1]["doc"], "t.txt"), text);
  EXPECT_FALSE(all["rows"][1]["doc"]["_attachments"]["t.txt"].HasMember("encoding"));
  // With keys, and encoding info on stubs.
  all = J(Req("POST", "/db/_all_docs?include_docs=true&att_encoding_info=true", R"({"keys":["b","a"]})",
              {{"Content-Type", "application/json"}}));
  const json::Value& stub = all["rows"][0]["doc"]["_attachments"]["t.txt"];
  EXPECT_TRUE(stub["stub"].GetBool());
  EXPECT_EQ(json::View(stub["encoding"]), "gzip");
  EXPECT_LT(stub["encoded_length"].GetUint64(), text.size());
  // Without attachments=true the docs keep their stubs.
  all = J(Req("GET", "/db/_all_docs?include_docs=true"));
  EXPECT_TRUE(all["rows"][0]["doc"]["_attachments"]["bin"]["stub"].GetBool());

  json::Document changes = J(Req("GET", "/db/_changes?include_docs=true&attachments=true"));
  ASSERT_EQ(changes["results"].Size(), 2u);
  EXPECT_EQ(bodies(changes["results"][0]["doc"], "bin"), data);
  EXPECT_EQ(bodies(changes["results"][1]["doc"], "t.txt"), text);
  changes = J(Req("GET", "/db/_changes?include_docs=true"));
  EXPECT_TRUE(changes["results"][0]["doc"]["_attachments"]["bin"]["stub"].GetBool());
}

TEST_P(EndpointsAttachmentsTest, LocalDocumentsRefuseAttachmentsAsCouchDb) {
  ASSERT_EQ(Req("PUT", "/db/_local/x", R"({"a":1})").status, 201);
  for (const char* method : {"PUT", "GET", "DELETE"}) {
    auto r = Req(method, "/db/_local/x/att", "data");
    EXPECT_EQ(r.status, 400) << method;
    EXPECT_EQ(Str(J(r), "reason"), "_local documents do not accept attachments.");
  }
  // The document itself is untouched.
  EXPECT_EQ(J(Req("GET", "/db/_local/x"))["a"].GetInt(), 1);
}


TEST_P(EndpointsAttachmentsTest, UploadsAreStreamedWithContentLengthOrChunked) {
  // Past the server's buffered-body limit (8 MiB here): streamed, not 413.
  const std::string big = Noise(10 << 20, 1);
  const std::string rev = PutAtt("/db/s/big.bin", big);
  auto r = Req("GET", "/db/s/big.bin");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == big);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + Base64Encode(Md5Raw(big)) + "\"");
  r = Req("GET", "/db/s/big.bin", {}, {{"Range", "bytes=5000000-5000009"}});
  EXPECT_EQ(r.body, big.substr(5000000, 10));
  // Chunked, a compressible type: stored gzip, served decoded or as stored.
  std::string text;
  while (text.size() < (1 << 20)) text += "streamed text, compressed on the way in; ";
  std::string chunked = "PUT /db/s/t.txt?rev=" + rev +
                        " HTTP/1.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t off = 0; off < text.size(); off += 50000) {
    const std::string piece = text.substr(off, 50000);
    char size[16];
    snprintf(size, sizeof(size), "%zx\r\n", piece.size());
    chunked += size + piece + "\r\n";
  }
  chunked += "0\r\n\r\n";
  ASSERT_TRUE(client_->SendRaw(chunked));
  auto put = client_->ReadResponse();
  ASSERT_TRUE(put.has_value());
  ASSERT_EQ(put->status, 201) << put->body;
  EXPECT_EQ(Req("GET", "/db/s/t.txt").body, text);
  r = Req("GET", "/db/s/t.txt", {}, {{"Accept-Encoding", "gzip"}});
  EXPECT_EQ(r.HeaderOr("content-encoding"), "gzip");
  EXPECT_LT(r.body.size(), text.size() / 10);
  json::Document doc = J(Req("GET", "/db/s"));
  EXPECT_EQ(doc["_attachments"]["big.bin"]["length"].GetUint64(), big.size());
  EXPECT_EQ(Str(doc["_attachments"]["t.txt"], "digest"), "md5-" + Base64Encode(Md5Raw(text)));
  // The same bytes as another document's: stored once.
  auto* db = static_cast<DatabaseImpl*>(server_->store()->OpenDatabase("db")->get());
  const uint64_t keys = db->attachment_store().CountKeys();
  PutAtt("/db/s2/copy", big);
  EXPECT_EQ(db->attachment_store().CountKeys(), keys);
}

TEST_P(EndpointsAttachmentsTest, RefusedOrCutShortUploadsLeaveNothingBehind) {
  auto* db = static_cast<DatabaseImpl*>(server_->store()->OpenDatabase("db")->get());
  const std::string rev = PutAtt("/db/u/small", "x");
  const uint64_t keys = db->attachment_store().CountKeys();
  const std::string body = Noise(3 << 20, 2);
  // Refused before the body is read: a stale rev, a missing database; the
  // connection is still usable after each.
  auto r = Req("PUT", "/db/u/big?rev=1-0000", body);
  EXPECT_EQ(r.status, 409);
  r = Req("PUT", "/nodb/u/big", body);
  EXPECT_EQ(r.status, 404);
  // A Content-MD5 that does not match: read, then refused.
  r = Req("PUT", "/db/u/big?rev=" + rev, body, {{"Content-MD5", Base64Encode(Md5Raw("x"))}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "content_md5_mismatch");
  EXPECT_EQ(db->attachment_store().CountKeys(), keys);
  // A client that goes away mid-body, after some of it was stored.
  {
    TestClient gone(server_->port());
    ASSERT_TRUE(gone.SendRaw("PUT /db/u/big?rev=" + rev +
                             " HTTP/1.1\r\nContent-Length: " + std::to_string(12 << 20) +
                             "\r\n\r\n"));
    const std::string part = Noise(6 << 20, 3);
    ASSERT_TRUE(gone.SendRaw(part));
    for (int i = 0; i < 500 && db->attachment_store().CountKeys() == keys; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT(db->attachment_store().CountKeys(), keys);  // chunks were being written
  }
  for (int i = 0; i < 500 && db->attachment_store().CountKeys() != keys; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(db->attachment_store().CountKeys(), keys);
  json::Document doc = J(Req("GET", "/db/u"));
  EXPECT_EQ(Str(doc, "_rev"), rev);
  EXPECT_FALSE(doc["_attachments"].HasMember("big"));
  EXPECT_EQ(Req("GET", "/db/u/big").status, 404);
}

TEST_P(EndpointsAttachmentsTest, MultipartRelatedPutsAreStreamedAndCutShortOnesLeaveNothing) {
  auto* db = static_cast<DatabaseImpl*>(server_->store()->OpenDatabase("db")->get());
  const uint64_t keys = db->attachment_store().CountKeys();
  // Past the server's buffered-body limit (8 MiB here): streamed, not 413.
  const std::string a = Noise(10 << 20, 4), b = "second body";
  const std::string head =
      MultipartPartHead("BB", {{"Content-Type", "application/json"}}) +
      R"({"_attachments":{"a":{"follows":true,"length":10485760,"content_type":"application/octet-stream"},)"
      R"("b":{"follows":true,"length":11,"content_type":"text/plain"},"e":{"follows":true,"length":0}}})" +
      "\r\n" + MultipartPartHead("BB", {{"Content-Disposition", "attachment; filename=\"a\""}});
  const std::string body = head + a + "\r\n" + MultipartPartHead("BB", {}) + b + "\r\n" +
                           MultipartPartHead("BB", {}) + MultipartClose("BB");
  const Headers type = {{"Content-Type", "multipart/related; boundary=\"BB\""}};
  auto r = Req("PUT", "/db/big", body, type);
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("GET", "/db/big/a");
  EXPECT_TRUE(r.body == a);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + Base64Encode(Md5Raw(a)) + "\"");
  EXPECT_EQ(Req("GET", "/db/big/b").body, b);
  r = Req("GET", "/db/big/e");  // a zero-length body
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("content-length"), "0");
  EXPECT_TRUE(r.body.empty());
  // And a zero-length standalone upload.
  ASSERT_EQ(Req("PUT", "/db/z/empty", "", {{"Content-Type", "application/octet-stream"}}).status, 201);
  r = Req("GET", "/db/z/empty");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  const uint64_t stored = db->attachment_store().CountKeys();
  ASSERT_GT(stored, keys);
  // Malformed (no closing boundary), or a body its entry's length does not
  // match: 400 after the bodies were streamed in, and nothing stored.
  r = Req("PUT", "/db/bad", body.substr(0, body.size() - 4), type);
  EXPECT_EQ(r.status, 400) << r.body;
  std::string longer = body;
  longer.insert(head.size(), "x");
  r = Req("PUT", "/db/bad", longer, type);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Req("GET", "/db/bad").status, 404);
  EXPECT_EQ(db->attachment_store().CountKeys(), stored);
  // A client that goes away mid-body, after some of it was stored.
  {
    TestClient gone(server_->port());
    ASSERT_TRUE(gone.SendRaw("PUT /db/gone HTTP/1.1\r\nContent-Type: multipart/related; boundary=\"BB\"\r\n"
                             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n"));
    ASSERT_TRUE(gone.SendRaw(body.substr(0, head.size() + (6 << 20))));
    for (int i = 0; i < 500 && db->attachment_store().CountKeys() == stored; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT(db->attachment_store().CountKeys(), stored);  // chunks were being written
  }
  for (int i = 0; i < 500 && db->attachment_store().CountKeys() != stored; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(db->attachment_store().CountKeys(), stored);
  EXPECT_EQ(Req("GET", "/db/gone").status, 404);
}

INSTANTIATE_TEST_SUITE_P(Backends, EndpointsAttachmentsTest,
                         ::testing::Values(StoreOptions::Backend::kMemory,
                                           StoreOptions::Backend::kLevelDB),
                         [](const auto& info) {
                           return info.param == StoreOptions::Backend::kMemory ? "memory" : "leveldb";
                         });

}  // namespace
}  // namespace settee::testing
