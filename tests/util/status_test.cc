#include "settee/status.h"

#include <gtest/gtest.h>

namespace settee {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ("ok", s.ErrorName());
}

TEST(Status, CarriesCouchDBErrorNameAndReason) {
  Status s = Status::Conflict();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsConflict());
  EXPECT_EQ("conflict", s.ErrorName());
  EXPECT_EQ("Document update conflict.", s.reason());
  EXPECT_EQ("conflict: Document update conflict.", s.ToString());
  EXPECT_EQ("illegal_docid", Status(Status::Code::kIllegalDocId, "x").ErrorName());
  EXPECT_EQ("unknown_error", Status::Internal("boom").ErrorName());
}

TEST(Result, HoldsValueOrError) {
  Result<int> good(42);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(42, *good);
  Result<int> bad(Status::NotFound());
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotFound());
  EXPECT_EQ("missing", bad.status().reason());
}

}  // namespace settee
