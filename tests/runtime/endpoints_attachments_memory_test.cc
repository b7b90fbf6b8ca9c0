// A 64 MiB attachment put (standalone, and in a multipart/related document)
// and read back over HTTP against a real `settee
// serve` child process, on both backends: the bytes come back as sent, and
// the server's peak RSS (VmHWM in /proc/<pid>/status) grows by less than 3x
// the body's size (issue 11's bound). On the memory backend the store itself
// must hold the body once, so the bound there is tighter: under 2x, which a
// server that buffered the upload (or copied it whole on the way to the
// store) could not meet.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/runtime/test_client.h"
#include "tests/storage/store_test_util.h"
#include "util/digest.h"

namespace settee::testing {
namespace {

constexpr size_t kBodyBytes = 64u << 20;

// A `settee serve --port 0` child; the port comes from its "listening on" line.
class ServeProcess {
 public:
  explicit ServeProcess(const std::string& backend, const std::string& data) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execl(SETTEE_BINARY, SETTEE_BINARY, "serve", "--port", "0", "--backend", backend.c_str(),
            "--data", data.c_str(), "--log-level", "error", "--threads", "1",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[512];
    while (f != nullptr && fgets(line, sizeof(line), f) != nullptr) {
      const char* at = strstr(line, "http://127.0.0.1:");
      if (at != nullptr) {
        port_ = atoi(at + strlen("http://127.0.0.1:"));
        break;
      }
    }
    // The child's later output (none at --log-level error) must not block it.
    if (f != nullptr) fclose(f);
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }

  // A field of /proc/<pid>/status in KiB (VmHWM: peak RSS; VmRSS: now).
  uint64_t StatusKiB(const std::string& field) const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
    }
    return 0;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

std::string Body() {
  // Every byte value, in an order no compressor shortens.
  std::string s(kBodyBytes, '\0');
  uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

using Headers = std::vector<std::pair<std::string, std::string>>;

// A multipart/related document whose one attachment, "blob", is `body`.
std::string MultipartDoc(const std::string& body) {
  return "--mp\r\nContent-Type: application/json\r\n\r\n"
         R"({"_attachments":{"blob":{"follows":true,"content_type":"application/octet-stream","length":)" +
         std::to_string(body.size()) + "}}}\r\n--mp\r\n\r\n" + body + "\r\n--mp--";
}
const Headers kMultipartType = {{"Content-Type", "multipart/related; boundary=\"mp\""}};
const Headers kBinaryType = {{"Content-Type", "application/octet-stream"}};

class AttachmentMemoryTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Puts `warm` then `big` (each a PUT of a body made from the bytes it is
  // given), reads /db/big/blob back and checks it, and the growth of the
  // server's peak RSS from after the warm-up on.
  template <typename PutBig>
  void RoundTrip(const char* what, const std::string& warm_path, const std::string& warm_body,
                 const Headers& type, PutBig put_big) {
    const std::string dir = FreshTempDir("att-memory");
    ServeProcess server(GetParam(), dir);
    ASSERT_GT(server.port(), 0);
    TestClient client(server.port(), 300000);
    ASSERT_TRUE(client.connected());
    ASSERT_EQ(client.Request("PUT", "/db").status, 201);
    // Warm the paths with a small body first, so that the baseline
    // includes what any first request allocates.
    auto r = client.Request("PUT", warm_path, warm_body, type);
    ASSERT_EQ(r.status, 201) << r.body;
    const uint64_t before = server.StatusKiB("VmHWM");
    ASSERT_GT(before, 0u);

    r = put_big(client);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string body = Body();
    r = client.Request("GET", "/db/big/blob");
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body.size(), body.size());
    EXPECT_TRUE(r.body == body);
    EXPECT_EQ(r.HeaderOr("etag"), "\"" + Base64Encode(Md5Raw(body)) + "\"");

    const uint64_t after = server.StatusKiB("VmHWM");
    const double grown = static_cast<double>(after - before) * 1024.0;
    std::printf("peak RSS %s: %.1f MiB before, +%.1f MiB after a %zu MiB %s round trip (%.2fx)\n",
                GetParam().c_str(), before / 1024.0, grown / (1 << 20), kBodyBytes >> 20, what,
                grown / kBodyBytes);
    EXPECT_LT(grown, 3.0 * kBodyBytes);
    if (GetParam() == "memory") {
      EXPECT_LT(grown, 2.0 * kBodyBytes);
    }
    std::filesystem::remove_all(dir);
  }
};

TEST_P(AttachmentMemoryTest, SixtyFourMiBRoundTripAddsLessThanThreeTimesItsSizeToPeakRss) {
  RoundTrip("standalone", "/db/warm/a", "warm", kBinaryType, [](TestClient& client) {
    return client.Request("PUT", "/db/big/blob", Body(), kBinaryType);
  });
}

// The same bound for a multipart/related document PUT (what CouchDB's
// replicator sends): the body goes to storage as it arrives, never whole
// (and past --max-request-size, 64 MiB, which a buffered body could not).
TEST_P(AttachmentMemoryTest, SixtyFourMiBMultipartPutAddsLessThanThreeTimesItsSizeToPeakRss) {
  RoundTrip("multipart", "/db/warm", MultipartDoc("warm"), kMultipartType, [](TestClient& client) {
    return client.Request("PUT", "/db/big", MultipartDoc(Body()), kMultipartType);
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, AttachmentMemoryTest, ::testing::Values("memory", "leveldb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace settee::testing
