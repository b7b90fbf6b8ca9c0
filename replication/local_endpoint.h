// LocalEndpoint: a database of this process as a replication endpoint,
// through the public Database API (no HTTP; documents cross as the JSON
// text the engine reads and writes anyway).
//
// Thread safety: as Endpoint. The Store must outlive the endpoint.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "replication/endpoint.h"
#include "settee/store.h"

namespace settee::replication {

class LocalEndpoint : public Endpoint {
 public:
  LocalEndpoint(Store* store, std::string db_name);

  std::string Describe() const override { return name_; }
  ErlTerm IdTerm() const override;
  Result<EndpointInfo> Open(bool create) override;
  Status Changes(const ChangesRequest& request, ChangesBatch* out) override;
  Status RevsDiff(const std::vector<RevsDiffRequest>& request,
                  std::vector<RevsDiffResult>* out) override;
  Status FetchRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out) override;
  Status WriteDocs(const DocBatch& docs, std::vector<DocUpdateResult>* failures) override;
  Result<std::string> GetLocal(std::string_view id) override;
  Status PutLocal(std::string_view id, std::string_view json) override;
  void Interrupt() override;

 private:
  Store* store_;
  std::string name_;
  std::shared_ptr<Database> db_;
  std::atomic<bool> interrupted_{false};
};

// A seq of a settee database from its JSON text: 42, "42" or "42-..."
// (the number before the first dash). kBadRequest otherwise.
Result<uint64_t> ParseLocalSeq(std::string_view json_text);

}  // namespace settee::replication
