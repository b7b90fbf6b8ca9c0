// EditConfigOption (runtime/config_file.h): one option's line rewritten in
// a CLI11 TOML/INI file, everything else kept; added where missing;
// unreadable values refused without writing.
#include "runtime/config_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/digest.h"

namespace settee {
namespace {

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("settee-config-" + RandomUuidHex() + ".toml")).string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  std::string Read() {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string path_;
};

TEST_F(ConfigFileTest, ReplacesOnlyTheOptionsLine) {
  Write("# settee\n[serve]\nport = 5984\nadmin = [\"a:x\", \"b:y\"]  \nlog_level = \"info\"\n\n[replicate]\nadmin = \"z\"\n");
  std::vector<std::string> seen;
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true, [&](std::vector<std::string>* v) {
    seen = *v;
    v->erase(v->begin());
    v->push_back("c:q\"uote");
  }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a:x", "b:y"}));
  // log_level matches log-level, as CLI11 reads either.
  ASSERT_TRUE(EditConfigOption(path_, "serve", "log-level", false, [&](std::vector<std::string>* v) {
    EXPECT_EQ(*v, std::vector<std::string>{"info"});
    *v = {"debug"};
  }).ok());
  EXPECT_EQ(Read(),
            "# settee\n[serve]\nport = 5984\nadmin = [\"b:y\", \"c:q\\\"uote\"]\nlog-level = \"debug\"\n\n"
            "[replicate]\nadmin = \"z\"\n");
  // Read back as written.
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true, [&](std::vector<std::string>* v) {
    EXPECT_EQ(*v, (std::vector<std::string>{"b:y", "c:q\"uote"}));
    v->clear();  // no admin left: the line goes
  }).ok());
  EXPECT_EQ(Read().find("admin = ["), std::string::npos);
}

TEST_F(ConfigFileTest, AddsMissingKeysAndSections) {
  Write("[serve]\nport = 1\n\n[other]\nx = 1\n");
  ASSERT_TRUE(EditConfigOption(path_, "serve", "log-level", false,
                               [](std::vector<std::string>* v) { *v = {"warning"}; }).ok());
  EXPECT_EQ(Read(), "[serve]\nport = 1\nlog-level = \"warning\"\n\n[other]\nx = 1\n");
  Write("port = 1\n");
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true,
                               [](std::vector<std::string>* v) { *v = {"a:b"}; }).ok());
  EXPECT_EQ(Read(), "port = 1\n[serve]\nadmin = [\"a:b\"]\n");
}

TEST_F(ConfigFileTest, UnreadableValuesAndFilesAreErrors) {
  Write("[serve]\nadmin = [\n  \"a:b\",\n]\n");
  const std::string before = Read();
  EXPECT_EQ(EditConfigOption(path_, "serve", "admin", true, [](std::vector<std::string>*) {}).code(),
            Status::Code::kBadRequest);
  EXPECT_EQ(Read(), before);
  EXPECT_EQ(EditConfigOption(path_ + ".missing", "serve", "admin", true, [](std::vector<std::string>*) {}).code(),
            Status::Code::kIOError);
}

}  // namespace
}  // namespace settee
