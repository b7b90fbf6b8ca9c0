// HttpEndpoint: a database on a CouchDB-compatible server (CouchDB,
// settee, pouchdb-server) as a replication endpoint, through its REST API:
// GET /, GET|PUT /db, _changes (feed=normal, or longpoll while a
// continuous job waits), _revs_diff, _bulk_get (or, when the server has
// none, GET doc?open_revs=[..]&revs=true&latest=true), _bulk_docs with
// new_edits=false (a document too big for one request: PUT
// multipart/related, as CouchDB's replicator), and _local/ checkpoint
// documents.
//
// Thread safety: as Endpoint.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "replication/endpoint.h"
#include "replication/filter_function.h"
#include "replication/http_client.h"
#include "replication/url.h"
#include "storage/view_functions.h"

namespace settee::replication {

struct HttpEndpointOptions {
  HttpClientOptions http;  // user/password are taken from the URL when set there
  // Whether to use _bulk_get: nullopt = try it once and fall back to
  // open_revs when the server answers 404/405/400 (as PouchDB does).
  std::optional<bool> bulk_get;
  // Largest _bulk_docs request body written to the target: a batch over
  // it goes in several requests, and a document over it on its own as a
  // multipart/related PUT when it has inline attachment bodies (streamed
  // by the target), otherwise in a _bulk_docs of its own. A request the
  // target answers 413 is split the same way; a document without bodies
  // that still gets 413 is a failure of that document, as in CouchDB.
  size_t max_request_bytes = 8u << 20;
};

class HttpEndpoint : public Endpoint {
 public:
  // `functions` runs a PouchDB-style filter function (ChangesFilterSpec::
  // function) on the documents of the server's feed, as PouchDB does in the
  // client; without it such a feed is kBadRequest.
  HttpEndpoint(Url url, HttpEndpointOptions options = {},
               std::shared_ptr<views::ViewFunctions> functions = nullptr);

  std::string Describe() const override { return url_.WithoutCredentials(); }
  ErlTerm IdTerm() const override;
  Result<EndpointInfo> Open(bool create) override;
  Status Changes(const ChangesRequest& request, ChangesBatch* out) override;
  Status RevsDiff(const std::vector<RevsDiffRequest>& request,
                  std::vector<RevsDiffResult>* out) override;
  Status FetchRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out) override;
  Status WriteDocs(const DocBatch& docs, std::vector<DocUpdateResult>* failures) override;
  Result<std::string> GetLocal(std::string_view id) override;
  Status PutLocal(std::string_view id, std::string_view json) override;
  void Interrupt() override { client_.Interrupt(); }
  std::unique_ptr<Endpoint> Clone() const override {
    return std::make_unique<HttpEndpoint>(url_, options_, functions_);
  }

  // Whether the last FetchRevs used _bulk_get (for tests).
  bool used_bulk_get() const { return bulk_get_.value_or(false); }

 private:
  // Sends and expects 2xx JSON; the response body on success.
  Result<std::string> Call(std::string_view method, const std::string& rel,
                           std::string_view body = {},
                           std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  Status FetchWithBulkGet(const std::vector<RevsDiffResult>& missing, DocBatch* out,
                          bool* unsupported);
  Status FetchWithOpenRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out);
  // docs()[begin, end) in one _bulk_docs, halved while the target answers
  // 413; one document over max_request_bytes with inline attachment bodies
  // goes by PutMultipart instead.
  Status WriteDocRange(const DocBatch& batch, size_t begin, size_t end,
                       std::vector<DocUpdateResult>* failures);
  // false (nothing sent) when the document has no inline attachment body;
  // otherwise true once the target took it or refused it (a failure).
  Result<bool> PutMultipart(const std::string& doc_json, std::vector<DocUpdateResult>* failures);
  // One page of the feed from `since` (a long poll when `may_wait` and the
  // request waits), appended to out->rows; *page_rows is the number of
  // rows the server sent (before a filter function dropped any).
  Status ChangesPage(const ChangesRequest& request, const std::string& since, bool may_wait,
                     ChangesBatch* out, size_t* page_rows);

  Url url_;
  HttpEndpointOptions options_;
  HttpClient client_;
  std::optional<bool> bulk_get_;
  std::shared_ptr<views::ViewFunctions> functions_;
  // The filter function of the last request (the spec's address is stable
  // for a job's life).
  const ChangesFilterSpec* function_for_ = nullptr;
  std::optional<FilterFunction> function_;
};

}  // namespace settee::replication
