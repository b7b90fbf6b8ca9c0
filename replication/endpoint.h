// Endpoint: one side of a replication, as the replicator sees it. The
// replicator (replication/replicator.h) speaks only to this interface, so a
// local database (local_endpoint.h: direct engine calls) and a remote
// CouchDB-compatible server (http_endpoint.h) are interchangeable.
//
// Sequences are opaque: a seq is carried as the JSON text the source gave
// (`42` from settee, `"42-g1AAAA..."` from CouchDB 2+) and only ever handed
// back to the same source.
//
// Thread safety: an Endpoint is used by one thread at a time (the job's
// thread), except Interrupt(), which any thread may call to wake a blocking
// Changes() wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "replication/erlang_term.h"
#include "settee/database.h"
#include "settee/status.h"

namespace settee::replication {

struct EndpointInfo {
  std::string db_name;
  std::string update_seq;  // JSON text
};

// A filtered feed, as CouchDB's replication options `filter` (with
// `query_params`) and `selector` ask for it.
struct ChangesFilterSpec {
  std::string filter;              // "ddoc/name": a design document's filter function
  std::string query_params = "{}"; // JSON object text: the filter's req.query
  std::string selector;            // JSON text of a Mango selector (filter=_selector)
  // The source of a JS filter function given directly, as PouchDB's
  // replicate({filter: function (doc, req) {...}}) takes it; run as a
  // design document's filter would be (local sources only).
  std::string function;
};

struct ChangesRequest {
  std::string since = "0";  // JSON text of a seq from this endpoint
  uint64_t limit = 100;
  const std::vector<std::string>* doc_ids = nullptr;  // filter=_doc_ids
  const ChangesFilterSpec* filter = nullptr;          // filter=ddoc/name or _selector
  // > 0: when nothing is pending, wait up to this long for a change
  // (feed=longpoll); 0: answer at once (feed=normal).
  std::chrono::milliseconds wait{0};
};

struct Change {
  std::string seq;                // JSON text
  std::string id;
  std::vector<std::string> revs;  // every leaf (style=all_docs)
  bool deleted = false;
};

struct ChangesBatch {
  std::vector<Change> rows;
  std::string last_seq;  // JSON text; the `since` to ask next
};

// Documents bound for the target, each a JSON object text that carries its
// history in `_revisions`, as `_bulk_docs` with new_edits=false takes them.
// Kept apart rather than as one array text, so a local target parses each
// once instead of splitting an array first.
class DocBatch {
 public:
  void Append(std::string doc) { docs_.push_back(std::move(doc)); }
  size_t count() const { return docs_.size(); }
  const std::vector<std::string>& docs() const { return docs_; }
  // The documents as one JSON array.
  std::string text() const {
    std::string out;
    AppendText(0, docs_.size(), &out);
    return out;
  }
  // docs()[begin, end) as one JSON array, appended to *out (reserved once).
  void AppendText(size_t begin, size_t end, std::string* out) const {
    size_t size = 2 + (end - begin);
    for (size_t i = begin; i < end; ++i) size += docs_[i].size();
    out->reserve(out->size() + size);
    *out += '[';
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) *out += ',';
      *out += docs_[i];
    }
    *out += ']';
  }

 private:
  std::vector<std::string> docs_;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  // For logs, _active_tasks and the CLI: the database name, or the URL
  // without credentials.
  virtual std::string Describe() const = 0;

  // This endpoint's part of the replication id: the Erlang external term
  // format bytes of the term CouchDB 3 hashes for it (replication_id.h).
  virtual ErlTerm IdTerm() const = 0;

  // Checks the database is there (creating it first when `create`) and
  // reads its info. kNotFound "Database does not exist." when absent;
  // remote endpoints also report unreachable servers, bad credentials and
  // peers that are not CouchDB-compatible.
  virtual Result<EndpointInfo> Open(bool create) = 0;

  virtual Status Changes(const ChangesRequest& request, ChangesBatch* out) = 0;

  virtual Status RevsDiff(const std::vector<RevsDiffRequest>& request,
                          std::vector<RevsDiffResult>* out) = 0;

  // Fetches each missing revision with its history (`_revisions`), the
  // latest leaf when the revision has descendants, appending them to *out.
  // Attachment bodies come inline, except those unchanged since one of the
  // result's possible_ancestors (CouchDB's atts_since): the target has
  // those and takes a stub for them. A revision the source no longer has is
  // skipped.
  virtual Status FetchRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out) = 0;

  // Writes `docs` with new_edits=false. *failures gets only the documents
  // that were refused (validate_doc_update's forbidden/unauthorized).
  virtual Status WriteDocs(const DocBatch& docs, std::vector<DocUpdateResult>* failures) = 0;

  // The body of local document `id` ("_local/..."), kNotFound when absent.
  virtual Result<std::string> GetLocal(std::string_view id) = 0;
  // Writes local document `id` (no MVCC, as CouchDB 3 does for _local).
  virtual Status PutLocal(std::string_view id, std::string_view json) = 0;

  // Wakes a Changes() call waiting for changes; it returns an empty batch.
  virtual void Interrupt() {}

  // Another endpoint on the same database, not opened yet: the changes
  // reader's (changes_reader.h), so that reading ahead and fetching can run
  // on two threads.
  virtual std::unique_ptr<Endpoint> Clone() const = 0;
};

}  // namespace settee::replication
