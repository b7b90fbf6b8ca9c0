// runtime/multipart: boundaries, parsing and the pieces responses are built of.
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

}  // namespace
}  // namespace settee
