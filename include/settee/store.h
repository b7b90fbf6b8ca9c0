// Store: the root object of an embedded settee. It owns one KVStore backend
// and the set of named CouchDB-style databases kept in it.
//
//   settee::StoreOptions opts;
//   opts.backend = settee::StoreOptions::Backend::kLevelDB;
//   opts.path = "/var/lib/myapp/settee";
//   auto store = settee::Store::Open(opts);
//   if (!store.ok()) ...;
//   auto db = (*store)->CreateDatabase("notes");
//
// Thread safety: all methods may be called from any thread concurrently. A
// Database handle stays usable (with kNotFound errors) after its database is
// deleted, and holds the Store alive is NOT guaranteed: the Store must outlive
// every Database handle taken from it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "settee/database.h"
#include "settee/kv.h"
#include "settee/status.h"

namespace settee {

struct StoreOptions {
  enum class Backend { kLevelDB, kMemory };
  Backend backend = Backend::kLevelDB;
  // Directory for the LevelDB backend; ignored for memory.
  std::string path;
  // fsync every document write before acknowledging it. Off by default, as in
  // LevelDB and PouchDB: acknowledged writes survive a process crash (kill -9)
  // either way; sync=true also makes them survive power loss or an OS crash.
  bool sync = false;
  LevelDBOptions leveldb;
  // Largest accepted JSON body of one document, in bytes (CouchDB's
  // max_document_size), its inline attachment bodies not counted (as in
  // CouchDB). Larger ones fail with kDocumentTooLarge.
  size_t max_document_size = 8u << 20;
  // Largest attachment body, in bytes, once decoded (CouchDB's
  // max_attachment_size): inline (base64) bodies past it fail with
  // kAttachmentTooLarge, as do gzip-encoded uploads through `settee serve`
  // (whose --max-attachment-size sets it).
  uint64_t max_attachment_size = 1u << 30;
  // revs_limit for newly created databases (CouchDB and PouchDB: 1000).
  uint32_t default_revs_limit = 1000;
  // Advanced: when set, the store keeps its data in the KVStore this returns
  // (a custom backend, or a fault-injecting wrapper in tests) and `backend`
  // and `path` are ignored. Returning nullptr makes Open fail.
  std::function<std::unique_ptr<KVStore>()> kv_factory;
};

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store() = default;

  // Opens the store described by `options`, creating it if needed.
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);

  // Creates an empty database. kIllegalDatabaseName if the name breaks
  // CouchDB's rule ^[a-z][a-z0-9_$()+/-]*$ (or _users/_replicator),
  // kFileExists if it exists.
  virtual Result<std::shared_ptr<Database>> CreateDatabase(std::string_view name) = 0;

  // Returns a handle to an existing database, or kNotFound
  // ("Database does not exist."). Handles to one database are shared.
  virtual Result<std::shared_ptr<Database>> OpenDatabase(std::string_view name) = 0;

  // Deletes the database and every key it owns. kNotFound if absent. Open
  // handles fail with kNotFound from then on.
  virtual Status DeleteDatabase(std::string_view name) = 0;

  // Names of all databases, sorted.
  virtual std::vector<std::string> ListDatabases() = 0;

  // A stable 32-hex id for this store, created once and kept (GET / "uuid").
  virtual const std::string& uuid() const = 0;

  // The store's own KV store: the catalog and store-wide metadata, and data
  // a module keeps beside the databases (with key prefixes from
  // docs/storage_format.md). A database's own keys are here on the memory
  // backend; on LevelDB each database has a LevelDB of its own.
  virtual KVStore* kv() = 0;

  virtual const StoreOptions& options() const = 0;
};

// True iff `name` is a legal database name.
bool IsValidDatabaseName(std::string_view name);

}  // namespace settee
