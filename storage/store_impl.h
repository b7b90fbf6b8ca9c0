// StoreImpl: the Store of include/settee/store.h.
//
// Database handles are shared: the first OpenDatabase/CreateDatabase of a
// name creates one DatabaseImpl, which stays cached until the database is
// deleted, so every handle to a database shares its writer lock.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "settee/store.h"
#include "storage/database_impl.h"

namespace settee {

class StoreImpl final : public Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~StoreImpl() override;

  Result<std::shared_ptr<Database>> CreateDatabase(std::string_view name) override;
  Result<std::shared_ptr<Database>> OpenDatabase(std::string_view name) override;
  Status DeleteDatabase(std::string_view name) override;
  std::vector<std::string> ListDatabases() override;
  const std::string& uuid() const override { return uuid_; }
  KVStore* kv() override { return kv_.get(); }
  const StoreOptions& options() const override { return options_; }

  KVWriteOptions write_options() const { return KVWriteOptions{options_.sync}; }

  // What runs validate_doc_update (storage/validate_functions.h).
  void set_validate_functions(std::shared_ptr<validation::ValidateFunctions> f) {
    std::lock_guard<std::mutex> lock(validate_mu_);
    validate_ = std::move(f);
  }
  std::shared_ptr<validation::ValidateFunctions> validate_functions() {
    std::lock_guard<std::mutex> lock(validate_mu_);
    return validate_;
  }

 private:
  StoreImpl(const StoreOptions& options, std::unique_ptr<KVStore> kv);
  Status Initialize();
  // Deletes every key of database `db_id`, then its purge marker.
  Status PurgeDatabaseKeys(uint64_t db_id);

  const StoreOptions options_;
  const std::unique_ptr<KVStore> kv_;
  std::string uuid_;  // constant after Initialize()

  // Serializes catalog changes (create, delete) and guards next_db_id_.
  std::mutex catalog_mu_;
  uint64_t next_db_id_ = 1;

  // Open databases by name. Readers (OpenDatabase, on every request) share.
  std::shared_mutex open_mu_;
  std::unordered_map<std::string, std::shared_ptr<DatabaseImpl>> open_;  // GUARDED_BY(open_mu_)

  std::mutex validate_mu_;
  std::shared_ptr<validation::ValidateFunctions> validate_;  // GUARDED_BY(validate_mu_)
};

}  // namespace settee
