// EditConfigOption (runtime/config_file.h): one option's line rewritten in
// a CLI11 TOML/INI file, everything else kept; added where missing;
// unreadable values refused without writing.
#include "runtime/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

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
    v->push_back("c:q'uote, x");
  }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a:x", "b:y"}));
  // log_level matches log-level, as CLI11 reads either.
  ASSERT_TRUE(EditConfigOption(path_, "serve", "log-level", false, [&](std::vector<std::string>* v) {
    EXPECT_EQ(*v, std::vector<std::string>{"info"});
    *v = {"debug"};
  }).ok());
  EXPECT_EQ(Read(),
            "# settee\n[serve]\nport = 5984\nadmin = [\"b:y\", \"c:q'uote, x\"]\nlog-level = \"debug\"\n\n"
            "[replicate]\nadmin = \"z\"\n");
  // Read back as written.
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true, [&](std::vector<std::string>* v) {
    EXPECT_EQ(*v, (std::vector<std::string>{"b:y", "c:q'uote, x"}));
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

// An edit that changes no value leaves the file as it is, its spelling
// (a bare word, spacing) and its inode included: `settee serve` runs one at
// every start to hash the admins' passwords, mostly finding none in clear.
TEST_F(ConfigFileTest, AnEditThatChangesNothingWritesNothing) {
  const std::string text = "[serve]\nlog-level = info\nadmin = [ \"a:x\" ]\n";
  Write(text);
  struct stat before {};
  ASSERT_EQ(stat(path_.c_str(), &before), 0);
  ASSERT_TRUE(EditConfigOption(path_, "serve", "log-level", false, [](std::vector<std::string>*) {}).ok());
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true, [](std::vector<std::string>* v) {
    (*v)[0] = "a:x";
  }).ok());
  ASSERT_TRUE(EditConfigOption(path_, "other", "admin", true, [](std::vector<std::string>*) {}).ok());
  EXPECT_EQ(Read(), text);
  struct stat after {};
  ASSERT_EQ(stat(path_.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
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

// What CLI11 2.1 would read differently is neither written nor rewritten,
// and the refusal does not name the file.
TEST_F(ConfigFileTest, RefusesWhatWouldNotReadBackTheSame) {
  const std::string original = "[serve]\nadmin = [\"a:x\"]\nlog-level = \"info\" # default\n";
  Write(original);
  for (const std::string& bad : std::vector<std::string>{"b:p#w", "b:p\\w", "b:p\"w", "b:p\nw", std::string("b:p\0w", 5)}) {
    Status s = EditConfigOption(path_, "serve", "admin", true,
                                [&](std::vector<std::string>* v) { v->push_back(bad); });
    EXPECT_EQ(s.code(), Status::Code::kBadRequest) << bad;
    EXPECT_EQ(s.reason().find(path_), std::string::npos) << s.reason();
    EXPECT_EQ(Read(), original);
  }
  // A trailing comment stays; the value before it is read as CLI11 reads it.
  ASSERT_TRUE(EditConfigOption(path_, "serve", "log-level", false, [](std::vector<std::string>* v) {
    EXPECT_EQ(*v, std::vector<std::string>{"info"});
    *v = {"error"};
  }).ok());
  EXPECT_EQ(Read(), "[serve]\nadmin = [\"a:x\"]\nlog-level = \"error\" # default\n");
  // Lines whose values CLI11 reads otherwise than their text says.
  for (const std::string& line : std::vector<std::string>{"admin = [\"a#b\"]", "admin = \"a\\\\b\"", "admin = \"a\\\"b\"",
                                 "admin = a:b,c:d", "admin = a:b c:d", "admin = \"a:b\" \"c:d\""}) {
    Write("[serve]\n" + line + "\n");
    Status s = EditConfigOption(path_, "serve", "admin", true,
                                [](std::vector<std::string>* v) { v->push_back("z:z"); });
    EXPECT_EQ(s.code(), Status::Code::kBadRequest) << line;
    EXPECT_EQ(s.reason().find(path_), std::string::npos) << s.reason();
    EXPECT_EQ(Read(), "[serve]\n" + line + "\n");
  }
}

// The rewritten file keeps the original's mode (admin passwords stay
// private), and a symlink stays a symlink to the rewritten file.
TEST_F(ConfigFileTest, KeepsModeAndSymlink) {
  Write("[serve]\nadmin = [\"a:x\"]\n");
  ASSERT_EQ(::chmod(path_.c_str(), 0600), 0);
  const mode_t old_umask = ::umask(022);
  ASSERT_TRUE(EditConfigOption(path_, "serve", "admin", true,
                               [](std::vector<std::string>* v) { v->push_back("b:y"); }).ok());
  ::umask(old_umask);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string link = path_ + ".link";
  std::filesystem::create_symlink(path_, link);
  ASSERT_TRUE(EditConfigOption(link, "serve", "admin", true,
                               [](std::vector<std::string>* v) { v->push_back("c:z"); }).ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(Read(), "[serve]\nadmin = [\"a:x\", \"b:y\", \"c:z\"]\n");
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  std::filesystem::remove(link);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".settee-tmp"));
}

}  // namespace
}  // namespace settee
