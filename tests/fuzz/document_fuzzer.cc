// libFuzzer target: arbitrary bytes as a client document, written through the
// whole write path (parse, revision, record encoding) of an in-memory
// database and read back, then as a whole _bulk_docs request body. Nothing
// may crash, and whatever was accepted must read back as a JSON object.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "settee/store.h"
#include "util/json.h"

namespace {

settee::Database* Db() {
  static std::unique_ptr<settee::Store> store = [] {
    settee::StoreOptions options;
    options.backend = settee::StoreOptions::Backend::kMemory;
    options.max_document_size = 1 << 16;
    return std::move(settee::Store::Open(options)).value();
  }();
  static std::shared_ptr<settee::Database> db = *store->CreateDatabase("fuzz");
  return db.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  settee::Database* db = Db();
  for (bool new_edits : {true, false}) {
    std::vector<settee::DocUpdateResult> results;
    settee::UpdateOptions options;
    options.new_edits = new_edits;
    if (!db->BulkDocs({text}, options, &results).ok()) __builtin_trap();
    const settee::DocUpdateResult& r = results[0];
    if (!r.status.ok() || r.id.empty()) continue;
    settee::GetOptions get;
    get.rev = r.rev;
    get.revs = get.revs_info = get.conflicts = get.deleted_conflicts = true;
    auto doc = db->Get(r.id, get);
    if (!doc.ok()) {
      if (!doc.status().IsNotFound()) __builtin_trap();
      continue;
    }
    settee::json::Document parsed;
    if (!settee::json::Parse(*doc, &parsed).ok() || !parsed.IsObject()) __builtin_trap();
  }
  // The same bytes as a whole _bulk_docs request body: accepted bodies write,
  // with one result per document; refused ones are bad_request.
  auto body = db->ParseBulkDocsBody(text);
  if (!body.ok()) {
    if (body.status().code() != settee::Status::Code::kBadRequest) __builtin_trap();
    return 0;
  }
  std::vector<settee::DocUpdateResult> results;
  settee::UpdateOptions options;
  if (body->new_edits()) options.new_edits = *body->new_edits();
  if (!db->BulkDocs(std::move(*body), options, &results).ok()) __builtin_trap();
  return 0;
}
