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

TEST(NodeConfig, PersisterSeesAppliedChangesUnlessAskedNotTo) {
  NodeConfig c;
  c.DefineSection("log", {{"level", "info"}},
                  [](const std::string&, const std::string* value, std::string* shown) {
                    if (value != nullptr && *value == "bad") return Status::BadRequest("no");
                    if (value) *shown = *value == "loud" ? "debug" : *value;
                    return Status::OK();
                  });
  c.Define("chttpd", "port", "5984");
  std::vector<std::string> persisted;
  c.SetPersister([&](const std::string& section, const std::string& key, const std::string* value) {
    persisted.push_back(section + "/" + key + "=" + (value ? *value : "<deleted>"));
    return value != nullptr && *value == "unwritable" ? Status::IOError("disk") : Status::OK();
  });
  // The value as shown is persisted (an admin's hash, not its password).
  ASSERT_TRUE(c.Set("log", "level", "loud").ok());
  ASSERT_TRUE(c.Set("log", "level", "error", /*persist=*/false).ok());
  EXPECT_FALSE(c.Set("log", "level", "bad").ok());         // refused: not persisted
  EXPECT_FALSE(c.Set("chttpd", "port", "1").ok());         // read-only: not persisted
  // A persister's error is the caller's; the live change stays made.
  EXPECT_EQ(c.Set("log", "level", "unwritable").status().code(), Status::Code::kIOError);
  EXPECT_EQ(*c.Get("log", "level"), "unwritable");
  ASSERT_TRUE(c.Delete("log", "level").ok());
  EXPECT_EQ(persisted, (std::vector<std::string>{"log/level=debug", "log/level=unwritable",
                                                 "log/level=<deleted>"}));
}

// A value the persister's check refuses is not applied at all; one not to
// be persisted is not checked.
TEST(NodeConfig, PersisterCheckRefusesBeforeApplying) {
  NodeConfig c;
  std::vector<std::string> applied;
  c.DefineSection("admins", {},
                  [&](const std::string& key, const std::string* value, std::string* shown) {
                    applied.push_back(key);
                    if (value) *shown = *value;
                    return Status::OK();
                  });
  std::vector<std::string> persisted;
  c.SetPersister(
      [&](const std::string&, const std::string& key, const std::string*) {
        persisted.push_back(key);
        return Status::OK();
      },
      [](const std::string&, const std::string&, const std::string* value) {
        return value != nullptr && value->find('#') != std::string::npos ? Status::BadRequest("no #")
                                                                          : Status::OK();
      });
  EXPECT_EQ(c.Set("admins", "a", "p#w").status().code(), Status::Code::kBadRequest);
  EXPECT_FALSE(c.Get("admins", "a").has_value());
  ASSERT_TRUE(c.Set("admins", "b", "p#w", /*persist=*/false).ok());
  ASSERT_TRUE(c.Set("admins", "c", "pw").ok());
  EXPECT_EQ(applied, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(persisted, std::vector<std::string>{"c"});
}

}  // namespace
}  // namespace settee
