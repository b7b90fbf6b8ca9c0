#include "storage/store_impl.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "storage/keys.h"
#include "storage/leveldb_store.h"
#include "storage/memory_store.h"
#include "util/coding.h"
#include "util/digest.h"

namespace settee {

namespace {

constexpr std::string_view kUuidMeta = "uuid";
constexpr std::string_view kNextDbIdMeta = "next_db_id";
// How many keys one purge batch deletes, so a huge database does not build
// one huge batch in memory.
constexpr size_t kPurgeBatchKeys = 1000;
// A database's own LevelDB: a smaller memtable than the store-wide one (a
// store may hold many databases, each with its own), and a bound on the
// table files each keeps open, so many databases stay within the process's
// file descriptors.
constexpr size_t kDatabaseWriteBufferBytes = 4u << 20;
constexpr int kDatabaseMaxOpenFiles = 100;
constexpr int kStoreMaxOpenFiles = 1000;  // LevelDB's default
// CouchDB's limit on database name length.
constexpr size_t kMaxDatabaseNameLength = 238;

std::string EncodeU64(uint64_t v) {
  std::string s;
  coding::PutFixed64BE(&s, v);
  return s;
}

}  // namespace

bool IsValidDatabaseName(std::string_view name) {
  if (name == "_users" || name == "_replicator") return true;
  if (name.empty() || name.size() > kMaxDatabaseNameLength) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
              c == '(' || c == ')' || c == '+' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  return StoreImpl::Open(options);
}

Result<std::unique_ptr<Store>> StoreImpl::Open(const StoreOptions& options) {
  std::unique_ptr<KVStore> kv;
  std::shared_ptr<leveldb::Cache> leveldb_cache;
  bool memory_stores = false;
  if (options.kv_factory) {
    kv = options.kv_factory();
    if (!kv) return Status::Internal("the custom KVStore factory returned nothing");
  } else if (options.backend == StoreOptions::Backend::kMemory) {
    // The catalog only: each database gets a MemoryStore of its own
    // (OpenDatabaseKV).
    kv = std::make_unique<MemoryStore>();
    memory_stores = true;
  } else {
    if (options.path.empty()) return Status::BadRequest("a LevelDB store needs a path");
    std::error_code ec;
    std::filesystem::create_directories(options.path, ec);
    if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());
    leveldb_cache = NewLevelDBBlockCache(options.leveldb.block_cache_bytes);
    Status s = OpenLevelDBStore(options.path, options.leveldb, leveldb_cache,
                                kStoreMaxOpenFiles, &kv);
    if (!s.ok()) return s;
  }
  std::unique_ptr<StoreImpl> store(
      new StoreImpl(options, std::move(kv), std::move(leveldb_cache), memory_stores));
  Status s = store->Initialize();
  if (!s.ok()) return s;
  return std::unique_ptr<Store>(std::move(store));
}

StoreImpl::StoreImpl(const StoreOptions& options, std::unique_ptr<KVStore> kv,
                     std::shared_ptr<leveldb::Cache> leveldb_cache, bool memory_stores)
    : options_(options),
      kv_(std::move(kv)),
      leveldb_cache_(std::move(leveldb_cache)),
      memory_stores_(memory_stores) {}

StoreImpl::~StoreImpl() = default;

Status StoreImpl::Initialize() {
  KVReadOptions ro;
  Status s = kv_->Get(ro, keys::Meta(kUuidMeta), &uuid_);
  if (s.IsNotFound()) {
    uuid_ = RandomUuidHex();
    s = kv_->Put(KVWriteOptions{true}, keys::Meta(kUuidMeta), uuid_);
  }
  if (!s.ok()) return s;

  std::string next;
  s = kv_->Get(ro, keys::Meta(kNextDbIdMeta), &next);
  if (s.ok()) {
    if (next.size() != 8) return Status::Corruption("bad next_db_id");
    next_db_id_ = coding::DecodeFixed64BE(next);
  } else if (!s.IsNotFound()) {
    return s;
  }

  // Finish purges that a crash interrupted.
  std::vector<uint64_t> pending;
  {
    KVIteratorOptions io;
    io.lower_bound = std::string(1, keys::kPurgePrefix);
    io.upper_bound = keys::PrefixEnd(io.lower_bound);
    auto it = kv_->NewIterator(io);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (it->key().size() == 9) pending.push_back(coding::DecodeFixed64BE(it->key().substr(1)));
    }
    if (!it->status().ok()) return it->status();
  }
  for (uint64_t id : pending) {
    s = PurgeDatabaseKeys(id);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Result<std::shared_ptr<Database>> StoreImpl::CreateDatabase(std::string_view name) {
  if (!IsValidDatabaseName(name)) {
    return Status(Status::Code::kIllegalDatabaseName,
                  "Name: '" + std::string(name) +
                      "'. Only lowercase characters (a-z), digits (0-9), and any of the "
                      "characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.");
  }
  std::lock_guard<std::mutex> lock(catalog_mu_);
  std::string unused;
  Status s = kv_->Get(KVReadOptions(), keys::Catalog(name), &unused);
  if (s.ok()) {
    return Status(Status::Code::kFileExists,
                  "The database could not be created, the file already exists.");
  }
  if (!s.IsNotFound()) return s;

  uint64_t id = next_db_id_;
  auto own_kv = OpenDatabaseKV(id, /*create=*/true);
  if (!own_kv.ok()) return own_kv.status();
  KVWriteBatch batch;
  batch.Put(keys::Catalog(name), EncodeU64(id));
  batch.Put(keys::Meta(kNextDbIdMeta), EncodeU64(id + 1));
  if (*own_kv) {
    // The database's keys first: until the catalog names it, a crash leaves
    // only a directory the next create of this id clears.
    KVWriteBatch init;
    DatabaseImpl::InitializeNew(id, options_.default_revs_limit, &init);
    s = (*own_kv)->Write(KVWriteOptions{options_.sync}, init);
    if (!s.ok()) return s;
  } else {
    DatabaseImpl::InitializeNew(id, options_.default_revs_limit, &batch);
  }
  s = kv_->Write(KVWriteOptions{options_.sync}, batch);
  if (!s.ok()) return s;
  next_db_id_ = id + 1;

  auto db = DatabaseImpl::Load(this, std::string(name), id, std::move(*own_kv));
  if (!db.ok()) return db.status();
  std::unique_lock<std::shared_mutex> open_lock(open_mu_);
  open_[std::string(name)] = *db;
  return std::shared_ptr<Database>(*db);
}

Result<std::shared_ptr<Database>> StoreImpl::OpenDatabase(std::string_view name) {
  {
    std::shared_lock<std::shared_mutex> lock(open_mu_);
    auto it = open_.find(std::string(name));
    if (it != open_.end()) return std::shared_ptr<Database>(it->second);
  }
  std::lock_guard<std::mutex> lock(catalog_mu_);
  {
    // Another thread may have opened it while we waited for catalog_mu_.
    std::shared_lock<std::shared_mutex> open_lock(open_mu_);
    auto it = open_.find(std::string(name));
    if (it != open_.end()) return std::shared_ptr<Database>(it->second);
  }
  if (!IsValidDatabaseName(name)) return Status::NotFound("Database does not exist.");
  std::string id_bytes;
  Status s = kv_->Get(KVReadOptions(), keys::Catalog(name), &id_bytes);
  if (s.IsNotFound()) return Status::NotFound("Database does not exist.");
  if (!s.ok()) return s;
  if (id_bytes.size() != 8) return Status::Corruption("bad catalog entry for " + std::string(name));
  const uint64_t id = coding::DecodeFixed64BE(id_bytes);
  auto own_kv = OpenDatabaseKV(id, /*create=*/false);
  if (!own_kv.ok()) return own_kv.status();
  auto db = DatabaseImpl::Load(this, std::string(name), id, std::move(*own_kv));
  if (!db.ok()) return db.status();
  std::unique_lock<std::shared_mutex> open_lock(open_mu_);
  open_[std::string(name)] = *db;
  return std::shared_ptr<Database>(*db);
}

Status StoreImpl::DeleteDatabase(std::string_view name) {
  auto db = OpenDatabase(name);
  if (!db.ok()) return db.status();
  auto impl = std::static_pointer_cast<DatabaseImpl>(*db);

  std::lock_guard<std::mutex> lock(catalog_mu_);
  impl->MarkDeleted();
  KVWriteBatch batch;
  batch.Delete(keys::Catalog(name));
  batch.Put(keys::Purge(impl->db_id()), "");
  Status s = kv_->Write(KVWriteOptions{options_.sync}, batch);
  if (!s.ok()) return s;
  {
    std::unique_lock<std::shared_mutex> open_lock(open_mu_);
    open_.erase(std::string(name));
  }
  return PurgeDatabaseKeys(impl->db_id());
}

std::string StoreImpl::DatabaseDir(uint64_t db_id) const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(db_id));
  return (std::filesystem::path(options_.path) / "dbs" / hex).string();
}

Result<std::unique_ptr<KVStore>> StoreImpl::OpenDatabaseKV(uint64_t db_id, bool create) {
  std::unique_ptr<KVStore> kv;
  if (!OwnDatabaseStores()) return kv;
  if (memory_stores_) {
    // A memory database lives only in its DatabaseImpl, which the store
    // keeps open until the database is deleted: every open is a create.
    if (create) {
      // The database's view indexes in a partition of their own: an index
      // update writes a batch per share from several isolate threads at
      // once, and those writes then never hold up the update's (or anyone's)
      // document reads, nor document writes them.
      MemoryStore::Options mo;
      mo.partitions = 2;
      mo.lead = keys::DatabaseKeys(db_id).KindPrefix(keys::kViewKind);
      kv = std::make_unique<MemoryStore>(mo);
    }
    return kv;
  }
  const std::string dir = DatabaseDir(db_id);
  std::error_code ec;
  if (create) {
    std::filesystem::remove_all(dir, ec);
    if (!ec) std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  } else if (!std::filesystem::exists(dir, ec)) {
    return kv;  // created before databases had stores of their own
  }
  LevelDBOptions lo = options_.leveldb;
  lo.create_if_missing = create;
  lo.write_buffer_bytes = std::min(lo.write_buffer_bytes, kDatabaseWriteBufferBytes);
  Status s = OpenLevelDBStore(dir, lo, leveldb_cache_, kDatabaseMaxOpenFiles, &kv);
  if (!s.ok()) return s;
  return kv;
}

Status StoreImpl::PurgeDatabaseKeys(uint64_t db_id) {
  // A memory database's store goes with its last handle.
  if (leveldb_cache_ != nullptr) {
    // Open handles may still hold the LevelDB open, and its background
    // compaction may still create files by path: removing the directory in
    // place can then fail with "directory not empty". Renaming it first is
    // atomic, and no new file can appear under the new name.
    std::error_code ec;
    const std::string dir = DatabaseDir(db_id);
    const std::string doomed = dir + ".deleted";
    std::filesystem::remove_all(doomed, ec);
    ec.clear();
    std::filesystem::rename(dir, doomed, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return Status::IOError("cannot remove " + dir + ": " + ec.message());
    }
    std::filesystem::remove_all(doomed, ec);
    if (ec) return Status::IOError("cannot remove " + doomed + ": " + ec.message());
  }
  // Keys in kv_: the database's own (an older layout) or none.
  const std::string prefix = keys::DatabasePrefix(db_id);
  const std::string end = keys::PrefixEnd(prefix);
  for (;;) {
    KVWriteBatch batch;
    {
      KVIteratorOptions io;
      io.lower_bound = prefix;
      io.upper_bound = end;
      auto it = kv_->NewIterator(io);
      for (it->SeekToFirst(); it->Valid() && batch.count() < kPurgeBatchKeys; it->Next()) {
        batch.Delete(it->key());
      }
      if (!it->status().ok()) return it->status();
    }
    if (batch.empty()) break;
    Status s = kv_->Write(KVWriteOptions(), batch);
    if (!s.ok()) return s;
  }
  Status s = kv_->Delete(KVWriteOptions{options_.sync}, keys::Purge(db_id));
  if (!s.ok()) return s;
  kv_->CompactRange(prefix, end);
  return Status::OK();
}

std::vector<std::string> StoreImpl::ListDatabases() {
  std::vector<std::string> names;
  KVIteratorOptions io;
  io.lower_bound = std::string(1, keys::kCatalogPrefix);
  io.upper_bound = keys::PrefixEnd(io.lower_bound);
  auto it = kv_->NewIterator(io);
  for (it->SeekToFirst(); it->Valid(); it->Next()) names.emplace_back(it->key().substr(1));
  return names;  // already sorted: keys are ordered bytewise
}

}  // namespace settee
