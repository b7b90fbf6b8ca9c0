// LocalEndpoint: a database of this process as a replication endpoint,
// through the public Database API (no HTTP; documents cross as the JSON
// text the engine reads and writes anyway).
//
// Thread safety: as Endpoint. The Store must outlive the endpoint.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "replication/endpoint.h"
#include "replication/filter_function.h"
#include "settee/store.h"
#include "storage/mango_selector.h"
#include "storage/view_functions.h"

namespace settee::replication {

class LocalEndpoint : public Endpoint {
 public:
  // `functions` runs design-document filter functions (filter=ddoc/name);
  // without it such a feed is kBadRequest. Selectors need none.
  LocalEndpoint(Store* store, std::string db_name,
                std::shared_ptr<views::ViewFunctions> functions = nullptr);

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
  std::unique_ptr<Endpoint> Clone() const override {
    return std::make_unique<LocalEndpoint>(store_, name_, functions_);
  }

 private:
  // Whether a filtered feed (request.filter) passes `row` (row.doc set).
  Result<bool> Passes(const ChangesFilterSpec& filter, const ChangeRow& row);

  Store* store_;
  std::string name_;
  std::shared_ptr<views::ViewFunctions> functions_;
  std::shared_ptr<Database> db_;
  // The parsed filter of the last filtered request (the spec's address is
  // stable for a job's life).
  const ChangesFilterSpec* parsed_for_ = nullptr;
  std::optional<mango::Selector> selector_;
  std::optional<FilterFunction> function_;
  std::atomic<bool> interrupted_{false};
};

// A seq of a settee database from its JSON text: 42, "42" or "42-..."
// (the number before the first dash). kBadRequest otherwise.
Result<uint64_t> ParseLocalSeq(std::string_view json_text);

}  // namespace settee::replication
