#include "bench/harness/http_load.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

namespace settee::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadBytes = 256 * 1024;
// A response head larger than this cannot be framed (the servers measured
// send a few hundred bytes).
constexpr size_t kMaxHead = 64 * 1024;

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Header names are ASCII: libc's comparison (the harness does not link
// runtime/, whose http::EqualsIgnoreCase this would be).
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Frames responses out of a byte stream: the status, and the body skipped
// by its Content-Length. Chunked bodies are not framed (the rows measured
// answer with a length); they are an error.
class ResponseFramer {
 public:
  // Consumes `data`; calls on_response(status) per complete response.
  // False (and *error) when the stream cannot be framed.
  template <typename F>
  bool Feed(std::string_view data, F&& on_response, std::string* error) {
    while (!data.empty()) {
      if (body_left_ > 0) {
        size_t n = std::min<uint64_t>(body_left_, data.size());
        body_left_ -= n;
        data.remove_prefix(n);
        if (body_left_ == 0) on_response(status_);
        continue;
      }
      // In a head: find its end, in what is held plus `data`.
      std::string_view head;
      size_t used;
      if (held_.empty()) {
        size_t end = data.find("\r\n\r\n");
        if (end == std::string_view::npos) {
          held_.assign(data);
          break;
        }
        head = data.substr(0, end + 4);
        used = end + 4;
      } else {
        size_t before = held_.size();
        size_t from = before >= 3 ? before - 3 : 0;
        held_.append(data.substr(0, std::min(data.size(), kMaxHead)));
        size_t end = held_.find("\r\n\r\n", from);
        if (end == std::string::npos) {
          if (held_.size() >= kMaxHead) {
            *error = "a response head over 64 KiB";
            return false;
          }
          break;
        }
        used = end + 4 - before;
        held_.resize(end + 4);
        head = held_;
      }
      if (!ParseHead(head, error)) return false;
      data.remove_prefix(used);
      held_.clear();
      if (body_left_ == 0) on_response(status_);
    }
    if (held_.size() >= kMaxHead) {
      *error = "a response head over 64 KiB";
      return false;
    }
    return true;
  }

  void Reset() {
    held_.clear();
    body_left_ = 0;
  }

 private:
  bool ParseHead(std::string_view head, std::string* error) {
    // "HTTP/1.1 201 Created\r\n"
    if (head.size() < 12 || head.substr(0, 5) != "HTTP/" || head[8] != ' ') {
      *error = "not an HTTP response: " + std::string(head.substr(0, 40));
      return false;
    }
    status_ = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    bool has_length = false;
    uint64_t length = 0;
    size_t pos = head.find("\r\n") + 2;
    while (pos < head.size()) {
      size_t eol = head.find("\r\n", pos);
      std::string_view line = head.substr(pos, eol - pos);
      pos = eol + 2;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = line.substr(0, colon);
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (EqualsIgnoreCase(name, "content-length")) {
        has_length = true;
        length = std::strtoull(std::string(value).c_str(), nullptr, 10);
      } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
        *error = "a response without Content-Length (Transfer-Encoding: " + std::string(value) + ")";
        return false;
      }
    }
    const bool no_body = status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200);
    if (!has_length && !no_body) {
      *error = "a response without Content-Length";
      return false;
    }
    body_left_ = no_body ? 0 : length;
    return true;
  }

  std::string held_;  // a head split across reads
  uint64_t body_left_ = 0;
  int status_ = 0;
};

struct Conn {
  int fd = -1;
  std::string batch;       // `pipeline` copies of the request
  size_t written = 0;      // of batch, while a write is partial
  int outstanding = 0;     // requests written, responses not yet in
  Clock::time_point sent;  // when the batch's last byte was written
  ResponseFramer framer;
  bool want_out = false;   // registered for EPOLLOUT
  Clock::time_point retry_at;  // a dropped connection's next connect
};

// A dropped connection is connected again at once; after a connect() that
// failed, a pause, so a server refusing connections costs the client one
// connect() a pause, not one every wakeup of the others (which would
// inflate the client's CPU figure).
constexpr auto kReconnectPause = std::chrono::milliseconds(10);
// How much longer a run short of min_responses goes on before it looks again.
constexpr auto kExtension = std::chrono::milliseconds(50);

class Load {
 public:
  explicit Load(const HttpLoadOptions& o) : o_(o) {}
  ~Load() {
    for (Conn& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
    if (ep_ >= 0) ::close(ep_);
  }

  Result<HttpLoadReport> Run() {
    if (o_.connections < 1 || o_.pipeline < 1 || !o_.request)
      return Status::BadRequest("a load needs connections, a pipeline depth and a request");
    if (inet_pton(AF_INET, o_.host.c_str(), &addr_.sin_addr) != 1)
      return Status::BadRequest("not an IPv4 address: " + o_.host);
    addr_.sin_family = AF_INET;
    addr_.sin_port = htons(static_cast<uint16_t>(o_.port));
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return Status::IOError(std::string("epoll_create1: ") + strerror(errno));
    conns_.resize(o_.connections);
    latencies_us_.reserve(1 << 20);
    int open = 0;
    for (int i = 0; i < o_.connections; ++i) {
      std::string one = o_.request(i);
      for (int k = 0; k < o_.pipeline; ++k) conns_[i].batch += one;
      if (Connect(i)) ++open;
    }
    if (open == 0)
      return Status::IOError("cannot connect to " + o_.host + ":" + std::to_string(o_.port) + ": " +
                             report_.first_error);

    const double cpu0 = ThreadCpuMs();
    const Clock::time_point start = Clock::now();
    Clock::time_point end = start + o_.duration;
    const Clock::time_point last_end = start + std::max(o_.duration, o_.max_duration);
    for (size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].fd >= 0) Send(static_cast<int>(i), start);
    std::unique_ptr<char[]> buf(new char[kReadBytes]);
    epoll_event events[64];
    for (;;) {
      Clock::time_point now = Clock::now();
      if (now >= end) {
        if (report_.responses >= o_.min_responses || now >= last_end) break;
        // Too few responses yet: a little longer, counting as before (the
        // connections keep their requests going).
        end = std::min(last_end, now + kExtension);
        for (size_t i = 0; i < conns_.size(); ++i)
          if (conns_[i].fd >= 0 && conns_[i].outstanding == 0) Send(static_cast<int>(i), now);
      }
      Clock::time_point wake = end;
      for (const Conn& c : conns_)
        if (c.fd < 0) wake = std::min(wake, std::max(now, c.retry_at));
      int wait_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wake - now).count());
      int n = epoll_wait(ep_, events, 64, wait_ms);
      if (n < 0 && errno != EINTR) {
        Fail(-1, std::string("epoll_wait: ") + strerror(errno));
        break;
      }
      for (int e = 0; e < n; ++e) {
        int i = static_cast<int>(events[e].data.u32);
        Conn& c = conns_[i];
        if (c.fd < 0) continue;
        if (events[e].events & EPOLLOUT) Send(i, Clock::now());
        if (c.fd >= 0 && (events[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) Receive(i, buf.get(), end);
      }
      // Connections that failed come back (a server that closes them on
      // purpose, or a reset), while the duration lasts, a pause apart.
      now = Clock::now();
      for (size_t i = 0; i < conns_.size(); ++i) {
        Conn& c = conns_[i];
        if (c.fd >= 0 || now >= end || now < c.retry_at) continue;
        if (Connect(static_cast<int>(i))) Send(static_cast<int>(i), now);
        else c.retry_at = now + kReconnectPause;
      }
    }
    // Measured, not the duration asked for: the last epoll wait may end
    // past it.
    report_.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    report_.client_cpu_ms = ThreadCpuMs() - cpu0;
    Summarize();
    return report_;
  }

 private:
  bool Connect(int i) {
    Conn& c = conns_[i];
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      Fail(-1, std::string("socket: ") + strerror(errno));
      return false;
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_) != 0) {
      Fail(-1, std::string("connect: ") + strerror(errno));
      ::close(fd);
      return false;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      Fail(-1, std::string("epoll_ctl: ") + strerror(errno));
      ::close(fd);
      return false;
    }
    c.fd = fd;
    c.written = 0;
    c.outstanding = 0;
    c.want_out = false;
    c.framer.Reset();
    return true;
  }

  // Counts a socket error (the first one's text kept) and, for i >= 0,
  // drops connection i.
  void Fail(int i, const std::string& why) {
    ++report_.socket_errors;
    if (report_.first_error.empty()) report_.first_error = why;
    if (i < 0) return;
    Conn& c = conns_[i];
    epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    c.fd = -1;
  }

  void WatchOut(int i, bool on) {
    Conn& c = conns_[i];
    if (c.want_out == on) return;
    epoll_event ev{};
    ev.events = on ? EPOLLIN | EPOLLOUT : EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_out = on;
  }

  // Writes the (rest of the) batch; a new batch when none is outstanding.
  void Send(int i, Clock::time_point now) {
    Conn& c = conns_[i];
    if (c.written == 0 && c.outstanding > 0) return;  // a batch is out
    if (c.written == 0) c.outstanding = o_.pipeline;
    while (c.written < c.batch.size()) {
      ssize_t n = ::send(c.fd, c.batch.data() + c.written, c.batch.size() - c.written, MSG_NOSIGNAL);
      if (n > 0) {
        c.written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        WatchOut(i, true);
        return;
      }
      Fail(i, std::string("send: ") + (n < 0 ? strerror(errno) : "nothing written"));
      return;
    }
    c.written = 0;
    c.sent = now;
    WatchOut(i, false);
  }

  void Receive(int i, char* buf, Clock::time_point end) {
    Conn& c = conns_[i];
    ssize_t n = ::recv(c.fd, buf, kReadBytes, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      Fail(i, n == 0 ? "the server closed a connection" : std::string("recv: ") + strerror(errno));
      return;
    }
    const Clock::time_point now = Clock::now();
    const bool counting = now < end;
    const uint32_t latency_us = static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(now - c.sent).count());
    std::string error;
    bool ok = c.framer.Feed(
        std::string_view(buf, static_cast<size_t>(n)),
        [&](int status) {
          --c.outstanding;
          if (!counting) return;
          ++report_.responses;
          if (status < 200 || status >= 400) ++report_.not_2xx_3xx;
          latencies_us_.push_back(latency_us);
        },
        &error);
    if (!ok || c.outstanding < 0) {
      Fail(i, ok ? "more responses than requests" : error);
      return;
    }
    if (c.outstanding == 0 && counting) Send(i, now);
  }

  void Summarize() {
    std::vector<uint32_t>& v = latencies_us_;
    if (v.empty()) return;
    double sum = 0, sq = 0;
    for (uint32_t x : v) {
      sum += x;
      sq += static_cast<double>(x) * x;
    }
    const double n = static_cast<double>(v.size());
    const double mean = sum / n;
    report_.avg_ms = mean / 1e3;
    report_.stdev_ms = std::sqrt(std::max(0.0, sq / n - mean * mean)) / 1e3;
    std::sort(v.begin(), v.end());
    auto pct = [&](double p) {
      size_t k = static_cast<size_t>(std::ceil(p / 100 * n));
      return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)] / 1e3;
    };
    report_.p50_ms = pct(50);
    report_.p75_ms = pct(75);
    report_.p90_ms = pct(90);
    report_.p99_ms = pct(99);
    report_.max_ms = v.back() / 1e3;
  }

  const HttpLoadOptions& o_;
  sockaddr_in addr_{};
  int ep_ = -1;
  std::vector<Conn> conns_;
  std::vector<uint32_t> latencies_us_;
  HttpLoadReport report_;
};

}  // namespace

std::string HttpRequestBytes(std::string_view method, std::string_view path, std::string_view host, int port,
                             std::string_view body) {
  std::string r;
  r.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ");
  r.append(host).append(":").append(std::to_string(port)).append("\r\n");
  if (!body.empty()) {
    r.append("Content-Type: application/json\r\nContent-Length: ");
    r.append(std::to_string(body.size())).append("\r\n");
  }
  r.append("\r\n").append(body);
  return r;
}

Result<HttpLoadReport> RunHttpLoad(const HttpLoadOptions& options) { return Load(options).Run(); }

}  // namespace settee::bench
