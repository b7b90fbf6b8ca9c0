// Attachment entries inside stored bodies: the member as written and read back.
#include "storage/attachments.h"

#include <gtest/gtest.h>

#include "util/json.h"

namespace settee {
namespace {

AttachmentEntry Entry(std::string name, std::string type, std::string digest, uint64_t revpos,
                      uint64_t length) {
  AttachmentEntry e;
  e.name = std::move(name);
  e.content_type = std::move(type);
  e.digest = std::move(digest);
  e.revpos = revpos;
  e.length = length;
  return e;
}

void ExpectSame(const std::vector<AttachmentEntry>& got, const std::vector<AttachmentEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].content_type, want[i].content_type);
    EXPECT_EQ(got[i].digest, want[i].digest);
    EXPECT_EQ(got[i].revpos, want[i].revpos);
    EXPECT_EQ(got[i].length, want[i].length);
  }
}

// Entries appended to `body` and parsed back, with the body as it was.
void RoundTrip(const std::string& body, const std::vector<AttachmentEntry>& entries) {
  std::string stored = body;
  AppendAttachmentsMember(&stored, entries);
  std::vector<AttachmentEntry> got;
  std::string rest;
  ASSERT_TRUE(ParseStoredAttachments(stored, &got, &rest).ok()) << stored;
  ExpectSame(got, entries);
  json::Document want, have;
  ASSERT_TRUE(json::Parse(body, &want).ok());
  ASSERT_TRUE(json::Parse(rest, &have).ok()) << rest;
  EXPECT_EQ(json::Serialize(have), json::Serialize(want)) << stored;
}

TEST(AttachmentsTest, StoredMemberRoundTrips) {
  const std::vector<AttachmentEntry> two{
      Entry("a.txt", "text/plain", "md5-AAAA", 1, 12),
      Entry("dir/b \xc3\xa9", "application/octet-stream", "md5-BBBB", 3, 0)};
  RoundTrip("{}", two);
  RoundTrip(R"({"x":1,"y":{"z":[1,2]}})", two);
  RoundTrip(R"({"s":"a\"_attachments\":{"})", two);
  // A member of that name nested in the body, and one entry named like it:
  // still the top-level member's entries.
  RoundTrip(R"({"n":{"_attachments":{"q":{"content_type":"t","revpos":1,"digest":"d","length":1,"stub":true}}}})",
            two);
  RoundTrip("{}", {Entry("_attachments", "t", "md5-C", 2, 5), Entry("x", "t", "md5-D", 2, 6)});
  // Escapes in names and types.
  RoundTrip(R"({"k":"v"})", {Entry("quote\"back\\slash\n", "text/plain; charset=\"utf-8\"",
                                   "md5-E", 18446744073709551615u, 7)});
}

TEST(AttachmentsTest, BodiesWithoutTheMember) {
  std::vector<AttachmentEntry> got{Entry("stale", "t", "d", 1, 1)};
  std::string rest;
  ASSERT_TRUE(ParseStoredAttachments(R"({"a":1})", &got, &rest).ok());
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(rest, R"({"a":1})");
  // Only a nested member: not the document's attachments.
  const std::string nested =
      R"({"n":{"_attachments":{"q":{"content_type":"t","revpos":1,"digest":"d","length":1,"stub":true}}}})";
  ASSERT_TRUE(ParseStoredAttachments(nested, &got, &rest).ok());
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(rest, nested);
}

TEST(AttachmentsTest, MembersInAnotherShapeStillParse) {
  // Another member order and extra members, as the JSON parser reads them.
  std::vector<AttachmentEntry> got;
  std::string rest;
  ASSERT_TRUE(ParseStoredAttachments(
                  R"({"a":1,"_attachments":{"x":{"digest":"md5-X","length":3,"revpos":2,"content_type":"t/p","stub":true,"extra":0}}})",
                  &got, &rest)
                  .ok());
  ExpectSame(got, {Entry("x", "t/p", "md5-X", 2, 3)});
  EXPECT_EQ(rest, R"({"a":1})");
  EXPECT_FALSE(ParseStoredAttachments(R"({"_attachments":{"x":)", &got, &rest).ok());
}

}  // namespace
}  // namespace settee
