// runtime/multipart: boundaries, parsing (whole and streamed) and the pieces
// responses are built of.
#include "runtime/multipart.h"

#include <gtest/gtest.h>

namespace settee {
namespace {

TEST(MultipartTest, BoundaryFromContentType) {
  std::string b;
  ASSERT_TRUE(MultipartBoundary(R"(multipart/related; boundary="abc def")", &b));
  EXPECT_EQ(b, "abc def");
  ASSERT_TRUE(MultipartBoundary("multipart/related;Boundary=xyz; charset=x", &b));
  EXPECT_EQ(b, "xyz");
  EXPECT_FALSE(MultipartBoundary("multipart/related", &b));
}

TEST(MultipartTest, ParsesWhatItBuildsWithBinaryBodies) {
  std::string bin;
  for (int i = 0; i < 256; ++i) bin.push_back(static_cast<char>(i));
  std::string body = MultipartPartHead("B", {{"Content-Type", "application/json"}}) + "{}" +
                     "\r\n" + MultipartPartHead("B", {{"Content-Disposition", "attachment; filename=\"a\""}}) +
                     bin + MultipartClose("B");
  std::vector<MultipartPart> parts;
  ASSERT_TRUE(ParseMultipart(body, "B", &parts).ok());
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(*parts[0].Header("content-type"), "application/json");
  EXPECT_EQ(parts[0].body, "{}");
  EXPECT_EQ(parts[1].body, bin);
  // With a preamble and transport padding.
  ASSERT_TRUE(ParseMultipart("preamble\r\n" + body, "B", &parts).ok());
  EXPECT_EQ(parts.size(), 2u);
}

TEST(MultipartTest, TruncatedOrMalformedBodiesAreBadRequests) {
  const std::string body = MultipartPartHead("B", {{"Content-Type", "application/json"}}) + "{}" +
                           MultipartClose("B");
  std::vector<MultipartPart> parts;
  for (size_t cut : {body.size() - 1, body.size() - 4, body.size() / 2, size_t{3}}) {
    EXPECT_EQ(ParseMultipart(body.substr(0, cut), "B", &parts).code(), Status::Code::kBadRequest)
        << cut;
  }
  EXPECT_EQ(ParseMultipart(body, "C", &parts).code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseMultipart("--B\r\nno colon\r\n\r\nx\r\n--B--", "B", &parts).code(),
            Status::Code::kBadRequest);
}

// Records what MultipartStreamParser hands over, as whole parts.
class Collect final : public MultipartPartHandler {
 public:
  Status PartBegin(const MultipartPart& head) override {
    parts.push_back(head);
    bodies.emplace_back();
    open = true;
    return Status::OK();
  }
  Status PartData(std::string_view bytes) override {
    EXPECT_TRUE(open);
    EXPECT_FALSE(bytes.empty());
    bodies.back().append(bytes);
    return Status::OK();
  }
  Status PartEnd() override {
    EXPECT_TRUE(open);
    open = false;
    ++ended;
    return Status::OK();
  }
  std::vector<MultipartPart> parts;
  std::vector<std::string> bodies;
  size_t ended = 0;
  bool open = false;
};

// Feeds `body` in pieces of `step` bytes.
Status FeedInPieces(const std::string& body, size_t step, MultipartStreamParser* parser) {
  for (size_t at = 0; at < body.size(); at += step) {
    Status s = parser->Feed(std::string_view(body).substr(at, step));
    if (!s.ok()) return s;
  }
  return parser->Finish();
}

TEST(MultipartStreamParserTest, FindsTheSamePartsWhateverThePieces) {
  std::string bin;
  for (int i = 0; i < 256; ++i) bin.push_back(static_cast<char>(i));
  // A body holding near-boundaries: CRLF, "--", "\r\n--Bound" without the end.
  const std::string tricky = "\r\n--Boun\r\n-\r\n--Bounc" + bin + "\r\n";
  const std::string body = "preamble\r\n" +
                           MultipartPartHead("Bound", {{"Content-Type", "application/json"}}) + "{}" +
                           "\r\n" + MultipartPartHead("Bound", {{"Content-Disposition", "attachment"}}) +
                           bin + tricky + bin + "\r\n" + MultipartPartHead("Bound", {}) +
                           MultipartClose("Bound") + "epilogue";
  std::vector<MultipartPart> whole;
  ASSERT_TRUE(ParseMultipart(body, "Bound", &whole).ok());
  ASSERT_EQ(whole.size(), 3u);
  for (size_t step : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, body.size()}) {
    Collect got;
    MultipartStreamParser parser("Bound", &got);
    ASSERT_TRUE(FeedInPieces(body, step, &parser).ok()) << step;
    ASSERT_EQ(got.parts.size(), whole.size()) << step;
    EXPECT_EQ(got.ended, whole.size());
    for (size_t i = 0; i < whole.size(); ++i) {
      EXPECT_EQ(got.bodies[i], whole[i].body) << step << " part " << i;
      EXPECT_EQ(got.parts[i].headers, whole[i].headers);
    }
  }
}

TEST(MultipartStreamParserTest, TruncatedOrMalformedBodiesAreBadRequests) {
  const std::string body = MultipartPartHead("B", {{"Content-Type", "application/json"}}) + "{}" +
                           "\r\n" + MultipartPartHead("B", {}) + "data" + MultipartClose("B");
  for (size_t cut = 0; cut + 2 < body.size(); ++cut) {
    Collect got;
    MultipartStreamParser parser("B", &got);
    EXPECT_EQ(FeedInPieces(body.substr(0, cut), 3, &parser).code(), Status::Code::kBadRequest) << cut;
  }
  Collect got;
  MultipartStreamParser wrong("C", &got);
  EXPECT_EQ(FeedInPieces(body, 5, &wrong).code(), Status::Code::kBadRequest);
  MultipartStreamParser no_colon("B", &got);
  EXPECT_EQ(FeedInPieces("--B\r\nno colon\r\n\r\nx\r\n--B--", 4, &no_colon).code(),
            Status::Code::kBadRequest);
  // Headers that never end are refused once past the limit, not buffered on.
  MultipartStreamParser endless("B", &got);
  Status s = endless.Feed("--B\r\nX-A: ");
  const std::string filler(4096, 'a');
  for (size_t n = 0; s.ok() && n < 2 * MultipartStreamParser::kMaxHeaderBytes; n += filler.size()) {
    s = endless.Feed(filler);
  }
  EXPECT_EQ(s.code(), Status::Code::kBadRequest);
}

TEST(MultipartStreamParserTest, AHandlerErrorStopsTheParse) {
  class Refuse final : public MultipartPartHandler {
   public:
    Status PartBegin(const MultipartPart&) override { return Status::OK(); }
    Status PartData(std::string_view) override { return Status::Conflict(); }
    Status PartEnd() override { return Status::OK(); }
  } refuse;
  MultipartStreamParser parser("B", &refuse);
  EXPECT_EQ(parser.Feed(MultipartPartHead("B", {}) + "body" + MultipartClose("B")).code(),
            Status::Code::kConflict);
}

}  // namespace
}  // namespace settee
