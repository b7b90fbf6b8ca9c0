// GET|POST /db/_changes: feed=normal, longpoll, continuous and eventsource,
// with heartbeat, timeout, since=now, limit, descending, include_docs,
// style=all_docs, conflicts, filter=_doc_ids (doc_ids in a GET's query or a POST's
// body), filter=_design, and filters other modules register with
// CouchServer::SetChangesFilter (_selector, _view, ddoc/name).
//
// A waiting feed registers a Database change listener that wakes its fiber
// through a Waker (the listener runs on the writer's thread). Timeouts follow
// CouchDB's get_changes_timeout: without heartbeat the feed ends after
// min(timeout, 60 s) with no change; with heartbeat it sends a heartbeat each
// interval and never times out (PouchDB's live changes rely on that).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdint>

#include "runtime/couch_error.h"
#include "runtime/endpoint_helpers.h"
#include "util/couch_json.h"
#include "util/erlang_text.h"
#include "util/json.h"

namespace settee {

namespace {

using Clock = std::chrono::steady_clock;

// CouchDB's chttpd changes_timeout default.
constexpr std::chrono::milliseconds kDefaultTimeout{60000};
// Rows per call of a batch filter (ChangesFilter::accept_batch): one hop to
// a worker and one Map() over the isolate threads per chunk.
constexpr size_t kFilterChunk = 512;

enum class Feed { kNormal, kLongpoll, kContinuous, kEventSource };

struct FeedParams {
  Feed feed = Feed::kNormal;
  ChangesOptions opts;
  bool since_now = false;
  std::optional<std::chrono::milliseconds> heartbeat;
  std::chrono::milliseconds timeout = kDefaultTimeout;
  bool design_only = false;                  // filter=_design
  const ChangesFilterFactory* custom = nullptr;  // a filter another module registered
  std::string filter_name;
};

Status ParseSeq(std::string_view text, uint64_t* out) {
  std::string_view v = text;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  // Accept "N" and CouchDB-style "N-opaque" (the number is what we issued).
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19 || (digits < v.size() && v[digits] != '-')) {
    return Status::BadRequest("Malformed sequence supplied in 'since' parameter.");
  }
  *out = std::stoull(std::string(v.substr(0, digits)));
  return Status::OK();
}

Status ParseFeedParams(RequestContext& ctx, const json::Value* body, FeedParams* p) {
  // chttpd_db:parse_changes_query folds over the query string in order,
  // with each name lowered: a repeated option ends as its last value says;
  // a flag is set by exactly "true", and another value, or a later "false",
  // changes nothing; a bad limit, heartbeat, timeout or seq_interval is
  // refused where it stands.
  std::string feed = "normal";
  const std::string* since = nullptr;
  const std::string* style = nullptr;
  const std::string* filter = nullptr;
  for (const auto& [key, value] : ctx.req.params) {
    std::string name = key;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    bool* flag = name == "descending"          ? &p->opts.descending
                 : name == "include_docs"      ? &p->opts.include_docs
                 : name == "conflicts"         ? &p->opts.conflicts
                 : name == "attachments"       ? &p->opts.attachments
                 : name == "att_encoding_info" ? &p->opts.att_encoding_info
                                               : nullptr;
    Status s;
    bool negative = false;
    uint64_t n = 0;
    if (flag != nullptr) {
      if (value == "true") *flag = true;
    } else if (name == "feed") {
      feed = value == "live" ? "continuous" : value;  // "live" is sugar for continuous
    } else if (name == "since" || name == "last-event-id") {
      since = &value;
    } else if (name == "limit") {
      s = RequestContext::UIntValue(name, value, &p->opts.limit);
    } else if (name == "style") {
      style = &value;
    } else if (name == "heartbeat") {
      if (value == "true") {
        p->heartbeat = kDefaultTimeout;
      } else if (!erlang::ListToInteger(value, &negative, &n)) {
        return Status::BadRequest("Invalid heartbeat value. Expecting a positive integer value (in milliseconds).");
      } else if (negative || n == 0) {
        return Status::BadRequest("The heartbeat value should be a positive integer (in milliseconds).");
      } else {
        p->heartbeat = std::chrono::milliseconds(std::min<uint64_t>(n, kDefaultTimeout.count()));
      }
    } else if (name == "timeout") {
      s = RequestContext::UIntValue(name, value, &n);
      p->timeout = std::chrono::milliseconds(std::min<uint64_t>(n, kDefaultTimeout.count()));
    } else if (name == "filter") {
      filter = &value;
    } else if (name == "seq_interval") {
      // Read only to refuse a bad one: a single node's sequences need none.
      if (!erlang::ListToInteger(value, &negative, &n) || negative || n == 0) {
        return Status::BadRequest("invalid_seq_interval");
      }
    }
    if (!s.ok()) return s;
  }
  if (style != nullptr) {
    if (*style == "all_docs") p->opts.all_docs_style = true;
    else if (*style != "main_only") return Status::BadRequest("Invalid style parameter");
  }
  if (filter != nullptr) {
    if (*filter == "_doc_ids") {
      std::vector<std::string> ids;
      json::Document q;
      const json::Value* list = nullptr;
      if (ctx.req.method == "POST") {
        // A POST's ids are its body's only (couch_changes:get_doc_ids);
        // every other option comes from the query string alone.
        if (body != nullptr && body->IsObject()) {
          auto m = body->FindMember("doc_ids");
          if (m != body->MemberEnd()) list = &m->value;
        }
      } else {
        // couch_changes:get_doc_ids reads the first (qs_value).
        bool present = false;
        Status s = ctx.JsonParam("doc_ids", &q, &present);
        if (!s.ok()) return s;
        if (present) list = &q;
      }
      if (list == nullptr || !list->IsArray()) {
        return Status::BadRequest("`doc_ids` filter parameter is not a list of doc ids.");
      }
      for (const auto& id : list->GetArray()) {
        if (!id.IsString()) return Status::BadRequest("`doc_ids` filter parameter is not a list of doc ids.");
        ids.emplace_back(json::View(id));
      }
      p->opts.doc_ids = std::move(ids);
    } else if (*filter == "_design") {
      p->design_only = true;
    } else if ((p->custom = ctx.server.FindChangesFilter(*filter)) != nullptr) {
      p->filter_name = *filter;
    } else if (!filter->empty() && (*filter)[0] == '_') {
      // couch_changes:configure_filter's answers, for clients that match them.
      return Status::BadRequest("unknown builtin filter name");
    } else if (filter->find('/') == std::string::npos) {
      return Status::BadRequest("`filter` must be of the form `designname/filtername`");
    } else {
      return Status::BadRequest("filter `" + *filter + "` is not supported by this server");
    }
  }
  if (feed == "normal") p->feed = Feed::kNormal;
  else if (feed == "longpoll") p->feed = Feed::kLongpoll;
  else if (feed == "continuous") p->feed = Feed::kContinuous;
  else if (feed == "eventsource") p->feed = Feed::kEventSource;
  else return Status::BadRequest("Supported `feed` types: normal, continuous, live, longpoll, eventsource");
  // A browser reconnecting an EventSource names where it stopped in the
  // header, which overrides the query string.
  if (const std::string* id = ctx.req.Header("last-event-id"); id != nullptr && p->feed == Feed::kEventSource) {
    since = id;
  }
  if (since != nullptr && *since == "now") {
    p->since_now = true;
  } else if (since != nullptr) {
    Status s = ParseSeq(*since, &p->opts.since);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

std::string RowJson(const ChangeRow& row) {
  std::string out;
  couch_json::AppendChangeRow(&out, row);
  return out;
}

// Writes one feed in the shape its type needs. Normal feeds (and longpoll
// without heartbeat) are buffered and sent with a Content-Length; the others
// stream chunked from the first byte.
class FeedWriter {
 public:
  FeedWriter(RequestContext& ctx, Feed feed, bool stream) : ctx_(ctx), feed_(feed), stream_(stream) {}

  bool Begin() {
    if (feed_ == Feed::kNormal || feed_ == Feed::kLongpoll) buf_ = "{\"results\":[\n";
    if (!stream_) return true;
    ctx_.res.AddHeader("Cache-Control", feed_ == Feed::kEventSource ? "no-cache" : "must-revalidate");
    std::string_view type = feed_ == Feed::kEventSource ? "text/event-stream" : "application/json";
    if (!ctx_.res.StartChunked(200, type)) return false;
    return Flush();
  }

  void Row(const ChangeRow& row) {
    switch (feed_) {
      case Feed::kNormal:
      case Feed::kLongpoll:
        if (rows_ > 0) buf_ += ",\n";
        buf_ += RowJson(row);
        break;
      case Feed::kContinuous:
        buf_ += RowJson(row) + "\n";
        break;
      case Feed::kEventSource:
        buf_ += "data: " + RowJson(row) + "\nid: " + std::to_string(row.seq) + "\n\n";
        break;
    }
    ++rows_;
  }

  bool Heartbeat() {
    if (!stream_) return true;
    buf_ += feed_ == Feed::kEventSource ? "event: heartbeat\ndata: \n\n" : "\n";
    return Flush();
  }

  // Sends what is buffered (streaming feeds only).
  bool Flush() {
    if (!stream_ || buf_.empty()) return true;
    bool ok = ctx_.res.WriteChunk(buf_);
    buf_.clear();
    return ok;
  }

  void End(uint64_t last_seq, std::optional<uint64_t> pending) {
    std::string tail;
    std::string pending_json = pending ? R"(,"pending":)" + std::to_string(*pending) : "";
    switch (feed_) {
      case Feed::kNormal:
      case Feed::kLongpoll:
        buf_ += (rows_ > 0 ? "\n" : "");
        buf_ += "],\n\"last_seq\":" + std::to_string(last_seq) + pending_json + "}\n";
        break;
      case Feed::kContinuous:
        buf_ += R"({"last_seq":)" + std::to_string(last_seq) + pending_json + "}\n";
        break;
      case Feed::kEventSource:
        break;  // the stream just ends
    }
    if (stream_) {
      Flush();
      ctx_.res.EndChunked();
    } else {
      (void)ctx_.SendJson(200, buf_);  // always OK: it only writes
    }
  }

  uint64_t rows() const { return rows_; }

 private:
  RequestContext& ctx_;
  const Feed feed_;
  const bool stream_;
  std::string buf_;
  uint64_t rows_ = 0;
};

Status Changes(RequestContext& ctx) {
  auto opened = ctx.OpenDb();
  if (!opened.ok()) return opened.status();
  std::shared_ptr<Database> db = *opened;

  json::Document body;
  const json::Value* body_ptr = nullptr;
  if (ctx.req.method == "POST" && !ctx.req.body.empty()) {
    Status s = ctx.ParseBody(&body);
    if (!s.ok()) return s;
    body_ptr = &body;
  }
  FeedParams p;
  Status s = ParseFeedParams(ctx, body_ptr, &p);
  if (!s.ok()) return s;
  if (p.opts.descending && p.feed != Feed::kNormal) p.feed = Feed::kNormal;
  ChangesFilter custom;
  const bool client_wants_docs = p.opts.include_docs;
  if (p.custom != nullptr) {
    auto built = (*p.custom)(ctx, *db, p.filter_name, body_ptr);
    if (!built.ok()) return built.status();
    custom = std::move(*built);
    if (custom.needs_docs) p.opts.include_docs = true;
  }

  // Registered before the first read, so a change committed between the read
  // and the wait still wakes us.
  http::Waker waker = ctx.res.GetWaker();
  auto deleted = std::make_shared<std::atomic<bool>>(false);
  uint64_t listener = 0;
  bool live = p.feed != Feed::kNormal;
  if (live) {
    listener = db->AddChangeListener([waker, deleted](uint64_t seq) {
      if (seq == UINT64_MAX) deleted->store(true);
      waker.Wake();
    });
  }
  struct Unregister {
    Database* db;
    uint64_t id;
    bool active;
    ~Unregister() {
      if (active) db->RemoveChangeListener(id);
    }
  } unregister{db.get(), listener, live};

  if (p.since_now) p.opts.since = db->UpdateSeq();
  bool stream = p.feed == Feed::kContinuous || p.feed == Feed::kEventSource ||
                (p.feed == Feed::kLongpoll && p.heartbeat.has_value());
  FeedWriter writer(ctx, p.feed, stream);
  if (!writer.Begin()) return Status::OK();

  const uint64_t limit = p.opts.limit;
  uint64_t since = p.opts.since;
  uint64_t emitted = 0;
  bool limited = false;
  auto timeout_at = Clock::now() + p.timeout;
  auto next_heartbeat = p.heartbeat ? Clock::now() + *p.heartbeat : Clock::time_point::max();

  for (;;) {
    ChangesOptions opts = p.opts;
    opts.since = since;
    // The engine's limit counts the rows it hands over; when this endpoint
    // filters some out, the callback counts and stops the scan instead.
    const bool filtering = p.design_only || custom.accept || custom.accept_batch;
    opts.limit = filtering && limit > 0 ? UINT64_MAX : limit - emitted;
    uint64_t observed = db->UpdateSeq();
    uint64_t last_seq = since;
    uint64_t batch = 0;
    auto write_row = [&](const ChangeRow& row) {
      if (custom.needs_docs && !client_wants_docs) {
        ChangeRow bare = row;
        bare.doc.clear();
        writer.Row(bare);
      } else {
        writer.Row(row);
      }
      ++batch;
      return emitted + batch < limit;
    };
    // Rows read but not yet run through a batch filter; a full chunk means
    // more may follow at once.
    bool chunk_full = false;
    if (custom.accept_batch) {
      // A descending feed is read whole (it is one pass, never resumed).
      opts.limit = p.opts.descending ? UINT64_MAX : kFilterChunk;
      std::vector<ChangeRow> chunk;
      s = db->Changes(
          opts,
          [&](const ChangeRow& row) {
            chunk.push_back(row);
            return true;
          },
          &last_seq);
      chunk_full = chunk.size() == kFilterChunk;
      std::vector<bool> pass;
      if (s.ok() && !chunk.empty()) {
        s = ctx.server.workers().Run([&] { return custom.accept_batch(chunk, &pass); });
      }
      if (s.ok()) {
        for (size_t i = 0; i < chunk.size(); ++i) {
          if (pass[i] && !write_row(chunk[i])) {
            last_seq = chunk[i].seq;  // the feed resumes after this row
            chunk_full = false;
            break;
          }
        }
      }
    } else {
      s = db->Changes(
          opts,
          [&](const ChangeRow& row) {
            if (p.design_only && row.id.compare(0, 8, "_design/") != 0) return true;
            if (custom.accept && !custom.accept(row)) return true;
            return write_row(row);
          },
          &last_seq);
    }
    if (!s.ok()) {
      if (!stream && writer.rows() == 0) return s;
      break;
    }
    emitted += batch;
    limited = emitted >= limit;
    // Without a limit cut the scan covered everything up to `observed`; a
    // filtered feed must not re-scan those non-matching changes forever.
    since = (limited || p.opts.descending || chunk_full) ? last_seq : std::max(last_seq, observed);
    if (!writer.Flush()) return Status::OK();
    if (chunk_full && !limited) continue;  // the rest of the scan, at once
    if (limited || p.feed == Feed::kNormal) break;
    if (p.feed == Feed::kLongpoll && writer.rows() > 0) break;
    if (deleted->load()) break;

    // Wait for a change, a heartbeat or the timeout.
    bool more = false;
    bool timed_out = false;
    while (!more && !timed_out) {
      auto wake_at = p.heartbeat ? next_heartbeat : timeout_at;
      if (!ctx.res.WaitUntil(wake_at)) {
        timed_out = true;  // peer gone or server stopping: wrap up
        break;
      }
      if (db->UpdateSeq() > since || deleted->load()) {
        more = true;
        break;
      }
      auto now = Clock::now();
      if (p.heartbeat && now >= next_heartbeat) {
        if (!writer.Heartbeat()) return Status::OK();
        next_heartbeat = now + *p.heartbeat;
      }
      if (!p.heartbeat && now >= timeout_at) timed_out = true;
    }
    if (timed_out) break;
  }
  // "pending": the changes the feed did not reach, which PouchDB's
  // replicator reports as progress. A feed cut by its limit counts them (on
  // the side of `since` it scans towards; unfiltered, as CouchDB counts);
  // one that ran out has none left.
  std::optional<uint64_t> pending = 0;
  if (limited) {
    Result<uint64_t> left = p.opts.descending
                                ? db->CountChanges(p.opts.since, since > 0 ? since - 1 : 0)
                                : db->CountChanges(since, UINT64_MAX);
    pending = left.ok() ? std::optional<uint64_t>(*left) : std::nullopt;
  }
  writer.End(since, pending);
  return Status::OK();
}

}  // namespace

void RegisterChangesEndpoints(CouchServer& server) {
  server.router().Add("GET,HEAD,POST", "/{db}/_changes", Changes);
}

}  // namespace settee
