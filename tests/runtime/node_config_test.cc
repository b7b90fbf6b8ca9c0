// NodeConfig (runtime/node_config.h): read-only keys, handled sections,
// previous values, CouchDB's not_found and blacklist.
#include "runtime/node_config.h"

#include <gtest/gtest.h>

namespace settee {
namespace {

TEST(NodeConfig, ReadOnlyAndHandledKeys) {
  NodeConfig c;
  c.Define("couchdb", "max_document_size", "100");
  std::vector<std::string> applied;
  c.DefineSection("purge", {{"max", "5"}},
                  [&](const std::string& key, const std::string* value, std::string* shown) {
                    if (value != nullptr && *value == "bad") return Status::BadRequest("no");
                    applied.push_back(key + "=" + (value ? *value : "<deleted>"));
                    if (value) *shown = "[" + *value + "]";
                    return Status::OK();
                  });
  EXPECT_EQ(c.GetUInt("couchdb", "max_document_size", 1), 100u);
  EXPECT_EQ(c.GetUInt("couchdb", "nosuch", 7), 7u);
  EXPECT_EQ(c.Set("couchdb", "max_document_size", "5").status().code(), Status::Code::kBadRequest);
  EXPECT_EQ(*c.Get("couchdb", "max_document_size"), "100");
  // A handled key: the previous value comes back, the shown one is kept.
  auto old = c.Set("purge", "max", "6");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, "5");
  EXPECT_EQ(*c.Get("purge", "max"), "[6]");
  EXPECT_EQ(c.GetUInt("purge", "max", 1), 1u);  // "[6]" is no integer
  // A refused value changes nothing.
  EXPECT_FALSE(c.Set("purge", "max", "bad").ok());
  EXPECT_EQ(*c.Get("purge", "max"), "[6]");
  old = c.Delete("purge", "max");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, "[6]");
  EXPECT_FALSE(c.Get("purge", "max").has_value());
  EXPECT_EQ(c.Delete("purge", "max").status().reason(), "unknown_config_value");
  EXPECT_EQ(applied, (std::vector<std::string>{"max=6", "max=<deleted>"}));
  // Unknown sections are empty, and never appear by being asked for.
  EXPECT_TRUE(c.GetSection("nosuch").empty());
  EXPECT_EQ(c.Delete("nosuch", "k").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(c.All().count("nosuch"), 0u);
  EXPECT_EQ(c.Set("os_daemons", "x", "y").status().code(), Status::Code::kForbidden);
}

}  // namespace
}  // namespace settee
