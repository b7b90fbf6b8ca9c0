// StoreImpl: the Store of include/settee/store.h.
//
// Database handles are shared: the first OpenDatabase/CreateDatabase of a
// name creates one DatabaseImpl, which stays cached until the database is
// deleted, so every handle to a database shares its writer lock.
//
// Where keys live: the catalog, metadata and purge markers always in kv_.
// On the LevelDB backend (opened by path) each database has a LevelDB of its
// own, in <path>/dbs/<16 hex digits of its id>, as CouchDB keeps a file per
// database: writers of different databases then share no log, no LevelDB
// writer and no memtable. All of them share one block cache. A database
// created before that layout has no directory and keeps its keys in kv_.
// On the memory backend each database has a MemoryStore of its own, which
// lives as long as its DatabaseImpl (cached until the database is deleted):
// writers of different databases then share not even the store's sequence
// counter or snapshot set, which every write of one shared store touches.
// A custom kv_factory keeps every key in kv_.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "settee/store.h"
#include "storage/database_impl.h"

namespace leveldb {
class Cache;
}  // namespace leveldb

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
  StoreImpl(const StoreOptions& options, std::unique_ptr<KVStore> kv,
            std::shared_ptr<leveldb::Cache> leveldb_cache, bool memory_stores);
  Status Initialize();
  // Deletes every key of database `db_id` (its directory too), then its
  // purge marker.
  Status PurgeDatabaseKeys(uint64_t db_id);
  // Databases have KV stores of their own (see above).
  bool OwnDatabaseStores() const { return leveldb_cache_ != nullptr || memory_stores_; }
  std::string DatabaseDir(uint64_t db_id) const;
  // The KV store of database `db_id` for DatabaseImpl::Load: null when its
  // keys are in kv_. `create`: a new database (a directory left by a create
  // that failed before its catalog entry is cleared first).
  Result<std::unique_ptr<KVStore>> OpenDatabaseKV(uint64_t db_id, bool create);

  const StoreOptions options_;
  const std::unique_ptr<KVStore> kv_;
  // The block cache every LevelDB of this store shares; null unless
  // OwnDatabaseStores().
  const std::shared_ptr<leveldb::Cache> leveldb_cache_;
  // Each database gets a MemoryStore of its own (the memory backend).
  const bool memory_stores_;
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
