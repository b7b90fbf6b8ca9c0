// LocalEndpoint: a database of this process as a replication endpoint,
// through the public Database API (no HTTP; documents cross as the JSON
// text the engine reads and writes anyway).
//
// Thread safety: as Endpoint. The Store must outlive the endpoint.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "replication/endpoint.h"
#include "replication/filter_function.h"
#include "settee/store.h"
#include "storage/mango_selector.h"
#include "storage/view_functions.h"

namespace settee::replication {

// What a target database asks of each replicated document before it is
// written, beyond the engine's own checks: the rules of a system database
// that live above the engine (runtime/users_db.h for _users: CouchDB's
// before_doc_update and validate function, which run on replicated writes
// too). Given the open database, the document's id and its JSON text,
// which it may rewrite. kForbidden or kUnauthorized refuses the document
// alone (a write failure of the batch, as CouchDB counts a
// validate_doc_update refusal); any other error fails the batch.
using LocalWriteCheck = std::function<Status(Database& db, std::string_view docid, std::string* json)>;

class LocalEndpoint : public Endpoint {
 public:
  // `functions` runs design-document filter functions (filter=ddoc/name);
  // without it such a feed is kBadRequest. Selectors need none.
  // `write_check`, when set, is asked about every document WriteDocs writes.
  LocalEndpoint(Store* store, std::string db_name,
                std::shared_ptr<views::ViewFunctions> functions = nullptr,
                LocalWriteCheck write_check = nullptr);

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
    return std::make_unique<LocalEndpoint>(store_, name_, functions_, write_check_);
  }

 private:
  // Whether a filtered feed (request.filter) passes `row` (row.doc set).
  Result<bool> Passes(const ChangesFilterSpec& filter, const ChangeRow& row);

  Store* store_;
  std::string name_;
  std::shared_ptr<views::ViewFunctions> functions_;
  LocalWriteCheck write_check_;
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
