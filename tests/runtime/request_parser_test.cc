// RequestParser over byte strings: events, pipelining, limits, errors.
#include "runtime/request_parser.h"

#include <gtest/gtest.h>

#include <functional>

namespace settee::http {
namespace {

using Event = RequestParser::Event;

// Feeds `data` until a complete request or an error; returns the last event.
Event ParseAll(RequestParser& p, std::string_view data, size_t* used_total) {
  *used_total = 0;
  for (;;) {
    size_t used = 0;
    Event e = p.Execute(data.substr(*used_total), &used);
    *used_total += used;
    if (e == Event::kHeadersComplete) continue;
    return e;
  }
}

TEST(RequestParserTest, ParsesMethodUrlHeadersAndBody) {
  RequestParser p(ParserLimits{});
  size_t used;
  std::string req = "PUT /db/doc?rev=1-a&x=%22y%22 HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
                    "Content-Length: 7\r\nX-Multi: a\r\nX-Multi: b\r\n\r\n{\"a\":1}";
  ASSERT_EQ(ParseAll(p, req, &used), Event::kMessageComplete);
  EXPECT_EQ(used, req.size());
  HttpRequest r = p.TakeRequest();
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.path, "/db/doc");
  ASSERT_NE(r.Param("rev"), nullptr);
  EXPECT_EQ(*r.Param("rev"), "1-a");
  EXPECT_EQ(*r.Param("x"), "\"y\"");
  EXPECT_EQ(*r.Header("host"), "h");
  EXPECT_EQ(r.ContentType(), "application/json");
  EXPECT_EQ(r.body, "{\"a\":1}");
  int multi = 0;
  for (auto& h : r.headers) multi += h.first == "x-multi";
  EXPECT_EQ(multi, 2);
}

TEST(RequestParserTest, StopsAfterHeadersThenAfterEachPipelinedRequest) {
  RequestParser p(ParserLimits{});
  std::string two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
  size_t used = 0, pos = 0;
  EXPECT_EQ(p.Execute(two, &used), Event::kHeadersComplete);
  pos += used;
  EXPECT_EQ(p.Execute(std::string_view(two).substr(pos), &used), Event::kMessageComplete);
  pos += used;
  EXPECT_EQ(p.TakeRequest().path, "/a");
  EXPECT_EQ(ParseAll(p, std::string_view(two).substr(pos), &used), Event::kMessageComplete);
  EXPECT_EQ(p.TakeRequest().path, "/b");
  EXPECT_EQ(pos + used, two.size());
}

TEST(RequestParserTest, StreamedBodiesGoToTheSinkNotTheRequest) {
  ParserLimits limits;
  limits.max_body_bytes = 4;
  limits.max_streamed_body_bytes = 20;
  RequestParser p(limits);
  p.SetStreamClassifier([](const HttpRequest& head) { return head.path == "/s"; });
  std::string got;
  const std::function<void(std::string_view)> sink = [&](std::string_view b) { got.append(b); };
  p.SetBodySink(&sink);
  const std::string two =
      "PUT /s HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"
      "PUT /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  size_t used = 0, pos = 0;
  ASSERT_EQ(p.Execute(two, &used), Event::kHeadersComplete);
  pos += used;
  EXPECT_TRUE(p.streaming());
  HttpRequest head = p.TakeHead();
  EXPECT_EQ(head.path, "/s");
  EXPECT_EQ(*p.content_length(), 10u);
  // Fed in pieces: each reaches the sink as it is parsed.
  ASSERT_EQ(p.Execute(std::string_view(two).substr(pos, 4), &used), Event::kNeedMore);
  pos += used;
  EXPECT_FALSE(got.empty());
  EXPECT_EQ(std::string("0123456789").rfind(got, 0), 0u) << got;
  ASSERT_EQ(p.Execute(std::string_view(two).substr(pos), &used), Event::kMessageComplete);
  pos += used;
  EXPECT_EQ(got, "0123456789");
  EXPECT_TRUE(p.TakeRequest().body.empty());
  EXPECT_FALSE(p.streaming());
  got.clear();
  ASSERT_EQ(ParseAll(p, std::string_view(two).substr(pos), &used), Event::kMessageComplete);
  EXPECT_EQ(got, "abcde");
  EXPECT_EQ(pos + used, two.size());
  p.TakeRequest();
  // The streamed limit applies to streamed bodies, the buffered one to others.
  EXPECT_EQ(ParseAll(p, "PUT /s HTTP/1.1\r\nContent-Length: 21\r\n\r\n", &used), Event::kError);
  EXPECT_EQ(p.error_status(), 413);
  RequestParser q(limits);
  q.SetStreamClassifier([](const HttpRequest& head) { return head.path == "/s"; });
  EXPECT_EQ(ParseAll(q, "PUT /b HTTP/1.1\r\nContent-Length: 5\r\n\r\n12345", &used),
            Event::kError);
  EXPECT_EQ(q.error_status(), 413);
  RequestParser r(limits);
  r.SetStreamClassifier([](const HttpRequest& head) { return head.path == "/s"; });
  EXPECT_EQ(ParseAll(r, "PUT /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "15\r\n" + std::string(21, 'x') + "\r\n0\r\n\r\n", &used),
            Event::kError);
  EXPECT_EQ(r.error_status(), 413);
}

TEST(RequestParserTest, IncompleteInputAsksForMore) {
  RequestParser p(ParserLimits{});
  size_t used;
  EXPECT_EQ(p.Execute("GET / HTTP/1.1\r\nHo", &used), Event::kNeedMore);
  EXPECT_TRUE(p.in_message());
}

TEST(RequestParserTest, ChunkedBodyAndKeepAlive) {
  RequestParser p(ParserLimits{});
  size_t used;
  ASSERT_EQ(ParseAll(p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n", &used),
            Event::kMessageComplete);
  EXPECT_TRUE(p.ShouldKeepAlive());
  EXPECT_FALSE(p.content_length().has_value());
  EXPECT_EQ(p.TakeRequest().body, "abc");
  ASSERT_EQ(ParseAll(p, "GET / HTTP/1.0\r\n\r\n", &used), Event::kMessageComplete);
  EXPECT_FALSE(p.ShouldKeepAlive());
}

TEST(RequestParserTest, LimitsMapToStatusCodes) {
  ParserLimits limits;
  limits.max_body_bytes = 10;
  limits.max_header_count = 3;
  limits.max_header_bytes = 200;
  limits.max_url_bytes = 50;
  size_t used;
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "PUT / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 413);
  }
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n01234567890\r\n0\r\n\r\n", &used),
              Event::kError);
    EXPECT_EQ(p.error_status(), 413);
  }
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 431);
  }
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "GET / HTTP/1.1\r\na: " + std::string(300, 'x') + "\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 431);
  }
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "GET /" + std::string(100, 'u') + " HTTP/1.1\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 414);
  }
  {
    RequestParser p(limits);
    EXPECT_EQ(ParseAll(p, "GET / HTTP/1.1\r\nExpect: something-else\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 417);
  }
}

TEST(RequestParserTest, ExpectContinueIsReportedAfterHeaders) {
  RequestParser p(ParserLimits{});
  size_t used;
  EXPECT_EQ(p.Execute("PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n", &used),
            Event::kHeadersComplete);
  EXPECT_TRUE(p.expects_continue());
  EXPECT_EQ(*p.content_length(), 3u);
}

TEST(RequestParserTest, GarbageIs400AndStaysFailed) {
  {
    RequestParser p(ParserLimits{});
    size_t used;
    EXPECT_EQ(ParseAll(p, "GET / HTTP/2.0\r\n\r\n", &used), Event::kError);
    EXPECT_EQ(p.error_status(), 505);
  }
  for (std::string bad : {"\x16\x03\x01\x02\x00 tls hello",
                          "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                          "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    RequestParser p(ParserLimits{});
    size_t used;
    EXPECT_EQ(ParseAll(p, bad, &used), Event::kError) << bad;
    EXPECT_EQ(p.error_status(), 400) << bad;
    EXPECT_EQ(p.Execute("GET / HTTP/1.1\r\n\r\n", &used), Event::kError);
  }
}

}  // namespace
}  // namespace settee::http
