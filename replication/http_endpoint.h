// HttpEndpoint: a database on a CouchDB-compatible server (CouchDB,
// settee, pouchdb-server) as a replication endpoint, through its REST API:
// GET /, GET|PUT /db, _changes (feed=normal, or longpoll while a
// continuous job waits), _revs_diff, _bulk_get (or, when the server has
// none, GET doc?open_revs=[..]&revs=true&latest=true), _bulk_docs with
// new_edits=false, and _local/ checkpoint documents.
//
// Thread safety: as Endpoint.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "replication/endpoint.h"
#include "replication/http_client.h"
#include "replication/url.h"

namespace settee::replication {

struct HttpEndpointOptions {
  HttpClientOptions http;  // user/password are taken from the URL when set there
  // Whether to use _bulk_get: nullopt = try it once and fall back to
  // open_revs when the server answers 404/405/400 (as PouchDB does).
  std::optional<bool> bulk_get;
};

class HttpEndpoint : public Endpoint {
 public:
  HttpEndpoint(Url url, HttpEndpointOptions options = {});

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
    return std::make_unique<HttpEndpoint>(url_, options_);
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

  Url url_;
  HttpEndpointOptions options_;
  HttpClient client_;
  std::optional<bool> bulk_get_;
};

}  // namespace settee::replication
