#include "replication/local_endpoint.h"

#include <charconv>

#include "replication/replication_id.h"
#include "util/json.h"

namespace settee::replication {

namespace {

// How long one wait for changes blocks before checking for Interrupt().
constexpr std::chrono::milliseconds kWaitSlice{100};

}  // namespace

Result<uint64_t> ParseLocalSeq(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  if (text == "now") return Status::BadRequest("since_seq \"now\" is not supported here");
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seq);
  if (ec != std::errc() || (end != text.data() + text.size() && *end != '-')) {
    return Status::BadRequest("Invalid sequence: " + std::string(text));
  }
  return seq;
}

LocalEndpoint::LocalEndpoint(Store* store, std::string db_name,
                             std::shared_ptr<views::ViewFunctions> functions, LocalWriteCheck write_check)
    : store_(store),
      name_(std::move(db_name)),
      functions_(std::move(functions)),
      write_check_(std::move(write_check)) {}

ErlTerm LocalEndpoint::IdTerm() const { return LocalEndpointTerm(name_); }

Result<EndpointInfo> LocalEndpoint::Open(bool create) {
  auto db = store_->OpenDatabase(name_);
  if (!db.ok() && db.status().IsNotFound() && create) {
    auto created = store_->CreateDatabase(name_);
    // Another job may have created it meanwhile.
    if (!created.ok() && created.status().code() != Status::Code::kFileExists) {
      return created.status();
    }
    db = store_->OpenDatabase(name_);
  }
  if (!db.ok()) return db.status();
  db_ = std::move(*db);
  EndpointInfo info;
  info.db_name = name_;
  info.update_seq = std::to_string(db_->UpdateSeq());
  return info;
}

Result<bool> LocalEndpoint::Passes(const ChangesFilterSpec& filter, const ChangeRow& row) {
  if (parsed_for_ != &filter) {
    // Parse once per job: the selector, or the filter function.
    selector_.reset();
    function_.reset();
    if (!filter.selector.empty()) {
      json::Document d;
      Status s = json::Parse(filter.selector, &d);
      if (!s.ok()) return s;
      auto parsed = mango::Selector::Parse(d);
      if (!parsed.ok()) return parsed.status();
      selector_ = std::move(*parsed);
    } else {
      if (!functions_) {
        std::string what = filter.function.empty() ? "filter `" + filter.filter + "`" : "a filter function";
        return Status::BadRequest(what + ": filter functions on a local source need a JS runtime "
                                  "(`settee serve`, `settee run`); replicate from the database's URL instead");
      }
      std::string ddoc = "{}";
      std::string code = filter.function;
      if (code.empty()) {
        size_t slash = filter.filter.find('/');
        std::string ddoc_id = "_design/" + filter.filter.substr(0, slash);
        auto found = db_->Get(ddoc_id);
        if (!found.ok()) return found.status();
        ddoc = std::move(*found);
        json::Document d;
        Status s = json::Parse(ddoc, &d);
        if (!s.ok()) return s;
        std::string name = filter.filter.substr(slash + 1);
        if (!d.IsObject() || !d.HasMember("filters") || !d["filters"].IsObject() ||
            !d["filters"].HasMember(name.c_str()) || !d["filters"][name.c_str()].IsString()) {
          return Status::NotFound("missing json key: " + name);
        }
        code = json::View(d["filters"][name.c_str()]);
      }
      function_.emplace(functions_.get(), code, std::move(ddoc), filter.query_params, name_,
                        db_->Security());
    }
    parsed_for_ = &filter;
  }
  if (selector_) {
    json::Document doc;
    return json::Parse(row.doc, &doc).ok() && doc.IsObject() && selector_->Matches(doc);
  }
  return function_->Passes(row.doc, row.id);
}

Status LocalEndpoint::Changes(const ChangesRequest& request, ChangesBatch* out) {
  out->rows.clear();
  auto since = ParseLocalSeq(request.since);
  if (!since.ok()) return since.status();
  ChangesOptions options;
  options.since = *since;
  options.limit = request.limit;
  options.all_docs_style = true;
  if (request.doc_ids) options.doc_ids = *request.doc_ids;
  const ChangesFilterSpec* filter = request.filter;
  if (filter != nullptr) {
    // The limit counts the changes that pass: the scan stops itself.
    options.limit = UINT64_MAX;
    options.include_docs = true;
  }
  auto deadline = std::chrono::steady_clock::now() + request.wait;
  for (;;) {
    uint64_t last = 0;
    uint64_t observed = db_->UpdateSeq();
    Status failed;
    bool limited = false;
    Status s = db_->Changes(
        options,
        [&](const ChangeRow& row) {
          if (filter != nullptr) {
            auto passes = Passes(*filter, row);
            if (!passes.ok()) {
              failed = passes.status();
              return false;
            }
            if (!*passes) return true;
          }
          Change& c = out->rows.emplace_back();
          c.seq = std::to_string(row.seq);
          c.id = row.id;
          c.revs = row.revs;
          c.deleted = row.deleted;
          limited = out->rows.size() >= request.limit;
          return !limited;
        },
        &last);
    if (!s.ok()) return s;
    if (!failed.ok()) return failed;
    // A filtered scan that ran to the end covered everything up to
    // `observed`: the next one starts there, not at the last match.
    if (filter != nullptr && !limited) last = std::max(last, observed);
    out->last_seq = std::to_string(last);
    if (!out->rows.empty() || request.wait.count() == 0) return Status::OK();
    // Nothing yet: wait in slices so Interrupt() is noticed.
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline || interrupted_.exchange(false)) return Status::OK();
    auto slice = std::min<std::chrono::milliseconds>(
        kWaitSlice, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    options.since = last;  // a filtered scan need not cover that stretch again
    uint64_t seq = db_->WaitForChange(last, slice);
    if (seq == UINT64_MAX) return Status::NotFound("Database does not exist.");
  }
}

Status LocalEndpoint::RevsDiff(const std::vector<RevsDiffRequest>& request,
                               std::vector<RevsDiffResult>* out) {
  return db_->RevsDiff(request, out);
}

Status LocalEndpoint::FetchRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out) {
  // A first-generation revision goes without `_revisions`: its `_rev` is its
  // whole history, and with new_edits=false the target reads it as such.
  // Its body then takes the target's plain-document parse instead of the
  // one for documents with a history (about a third of a local
  // replication's time, for first-generation documents).
  std::vector<BulkGetRequest> with_history, first_generation;
  for (const RevsDiffResult& m : missing) {
    // The target's possible ancestors as atts_since: bodies it already has
    // travel as stubs, which it resolves from those ancestors.
    for (const std::string& rev : m.missing) {
      (rev.starts_with("1-") ? first_generation : with_history)
          .push_back(BulkGetRequest{m.id, rev, m.possible_ancestors});
    }
  }
  BulkGetOptions options;
  options.latest = true;
  // Attachment bodies travel inline, except those atts_since leaves as
  // stubs: the target has no body for a stub of a revision it never saw
  // (CouchDB would answer missing_stub).
  options.attachments = true;
  std::vector<BulkGetResult> results;
  if (!first_generation.empty()) {
    Status s = db_->BulkGet(first_generation, options, &results);
    if (!s.ok()) return s;
    for (size_t i = 0; i < results.size(); ++i) {
      // `latest` reached a descendant (the revision was edited since):
      // that one needs its history after all.
      bool descendant = false;
      for (const BulkGetItem& item : results[i].docs) {
        descendant |= item.status.ok() && item.rev != first_generation[i].rev;
      }
      if (descendant) {
        with_history.push_back(std::move(first_generation[i]));
        continue;
      }
      for (BulkGetItem& item : results[i].docs) {
        if (item.status.ok()) out->Append(std::move(item.doc));
      }
    }
  }
  if (with_history.empty()) return Status::OK();
  options.revs = true;
  Status s = db_->BulkGet(with_history, options, &results);
  if (!s.ok()) return s;
  for (BulkGetResult& r : results) {
    for (BulkGetItem& item : r.docs) {
      // A revision compacted away or stemmed meanwhile: nothing to send.
      if (item.status.ok()) out->Append(std::move(item.doc));
    }
  }
  return Status::OK();
}

Status LocalEndpoint::WriteDocs(const DocBatch& docs, std::vector<DocUpdateResult>* failures) {
  failures->clear();
  if (docs.count() == 0) return Status::OK();
  UpdateOptions options;
  options.new_edits = false;
  std::vector<std::string_view> texts;
  std::vector<std::string> checked;  // with a write check: the texts it passed
  if (!write_check_) {
    texts.assign(docs.docs().begin(), docs.docs().end());
  } else {
    checked.reserve(docs.count());
    for (const std::string& doc : docs.docs()) {
      json::Document parsed;
      std::string id;
      if (json::Parse(doc, &parsed).ok() && parsed.IsObject() && parsed.HasMember("_id") &&
          parsed["_id"].IsString()) {
        id = json::View(parsed["_id"]);
      }
      std::string text = doc;
      Status s = write_check_(*db_, id, &text);
      if (s.ok()) {
        checked.push_back(std::move(text));
        continue;
      }
      if (s.code() != Status::Code::kForbidden && s.code() != Status::Code::kUnauthorized) return s;
      DocUpdateResult refused;
      refused.id = std::move(id);
      if (parsed.IsObject() && parsed.HasMember("_rev") && parsed["_rev"].IsString()) {
        refused.rev = json::View(parsed["_rev"]);
      }
      refused.status = std::move(s);
      failures->push_back(std::move(refused));
    }
    texts.assign(checked.begin(), checked.end());
    if (texts.empty()) return Status::OK();
  }
  std::vector<DocUpdateResult> results;
  Status s = db_->BulkDocs(texts, options, &results);
  if (!s.ok()) return s;
  for (DocUpdateResult& r : results) {
    if (!r.status.ok()) failures->push_back(std::move(r));
  }
  return Status::OK();
}

Result<std::string> LocalEndpoint::GetLocal(std::string_view id) { return db_->Get(id); }

Status LocalEndpoint::PutLocal(std::string_view id, std::string_view json) {
  auto r = db_->Put(id, json);
  return r.ok() ? Status::OK() : r.status();
}

void LocalEndpoint::Interrupt() { interrupted_ = true; }

}  // namespace settee::replication
