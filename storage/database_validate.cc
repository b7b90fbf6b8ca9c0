// DatabaseImpl's validate_doc_update (storage/validate_functions.h): which
// design documents have a function, and the arguments CouchDB passes it.
#include <algorithm>

#include "storage/database_impl.h"
#include "storage/design_doc_check.h"
#include "storage/store_impl.h"
#include "storage/validate_functions.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

bool IsDesignDocId(std::string_view id) { return id.substr(0, kDesignPrefix.size()) == kDesignPrefix; }

// CouchDB's to_json_obj(Doc, [revs]) of a document as a client sent it:
// _id, _rev, the body, _deleted, attachment stubs, _revisions.
std::string NewDocJson(const IncomingDoc& doc) {
  std::string out = "{\"_id\":";
  json::AppendQuoted(&out, doc.id);
  if (!doc.rev_text.empty()) {
    out += ",\"_rev\":";
    json::AppendQuoted(&out, doc.rev_text);
  }
  // body is "{...}" with no special members.
  if (doc.body.size() > 2) {
    out += ',';
    out.append(doc.body, 1, doc.body.size() - 2);
  }
  if (doc.deleted) out += ",\"_deleted\":true";
  if (doc.attachments) {
    out += ",\"_attachments\":{";
    bool first = true;
    for (const IncomingAttachment& a : *doc.attachments) {
      if (!first) out += ',';
      first = false;
      json::AppendQuoted(&out, a.name);
      out += ":{\"content_type\":";
      json::AppendQuoted(&out, a.content_type.empty() ? "application/octet-stream" : a.content_type);
      if (!a.digest.empty()) {
        out += ",\"digest\":";
        json::AppendQuoted(&out, a.digest);
      }
      if (a.revpos) out += ",\"revpos\":" + std::to_string(a.revpos);
      if (!a.stub) {
        uint64_t length = a.follows ? a.length : a.data.size();
        out += ",\"length\":" + std::to_string(length);
      }
      out += ",\"stub\":true}";
    }
    out += '}';
  }
  if (doc.revisions) {
    out += ",\"_revisions\":{\"start\":" + std::to_string(doc.revisions->start) + ",\"ids\":";
    json::AppendStringArray(&out, doc.revisions->ids);
    out += '}';
  } else if (doc.rev) {
    out += ",\"_revisions\":{\"start\":" + std::to_string(doc.rev->gen) + ",\"ids\":[";
    json::AppendQuoted(&out, doc.rev->hash);
    out += "]}";
  }
  out += '}';
  return out;
}

// The revisions a document's history names, newest first, as "N-hash".
std::vector<std::string> HistoryRevs(const IncomingDoc& doc) {
  std::vector<std::string> revs;
  if (doc.revisions) {
    uint64_t gen = doc.revisions->start;
    for (const std::string& id : doc.revisions->ids) {
      if (gen == 0) break;
      revs.push_back(std::to_string(gen--) + "-" + id);
    }
  } else if (!doc.rev_text.empty()) {
    revs.push_back(doc.rev_text);
  }
  return revs;
}

std::string UserCtxJson(std::string_view db, const UserContext* user) {
  std::string out = "{\"db\":";
  json::AppendQuoted(&out, db);
  out += ",\"name\":";
  if (user == nullptr) {
    out += "null,\"roles\":[\"_admin\"]}";
    return out;
  }
  if (user->name.empty()) out += "null";
  else json::AppendQuoted(&out, user->name);
  out += ",\"roles\":";
  json::AppendStringArray(&out, user->roles);
  out += '}';
  return out;
}

// A refused write's result: its id, and for a replicated one the refused
// revision, as a replicator's _bulk_docs result names it.
void Refuse(const IncomingDoc& doc, const UpdateOptions& options, Status why, DocUpdateResult* result) {
  result->id = doc.id;
  if (!options.new_edits) {
    const std::vector<std::string> history = HistoryRevs(doc);
    result->rev = history.empty() ? doc.rev_text : history.front();
  }
  result->status = std::move(why);
}

// CouchDB's checks of the design documents among `docs` before they are
// stored (storage/design_doc_check.h); a refused one gets its result here.
// `functions` compiles their JavaScript (nullptr: no runtime installed, so
// nothing can compile them and nothing will run them).
Status CheckDesignDocs(std::vector<IncomingDoc>& docs, std::vector<bool>& valid,
                       std::vector<DocUpdateResult>& results, const UpdateOptions& options,
                       validation::ValidateFunctions* functions) {
  for (size_t i = 0; i < docs.size(); ++i) {
    IncomingDoc& doc = docs[i];
    if (!valid[i] || doc.deleted || !IsDesignDocId(doc.id)) continue;
    Status s = ExpandBody(&doc);
    if (!s.ok()) return s;
    json::Document body;
    s = json::Parse(doc.body, &body);
    if (!s.ok()) return s;
    s = design::CheckFields(body);
    if (s.ok() && functions != nullptr) {
      const std::vector<design::FunctionToCompile> fns = design::FunctionsToCompile(body);
      std::vector<std::string> sources;
      for (const design::FunctionToCompile& f : fns) sources.push_back(f.source);
      size_t failed = sources.size();
      if (!sources.empty()) s = functions->Compile(sources, &failed);
      if (s.code() == Status::Code::kCompilationError && failed < fns.size()) {
        s = design::CompilationError(fns[failed], s.reason());
      } else if (!s.ok()) {
        return s;  // the runtime failed, not the document
      }
    }
    if (!s.ok()) {
      valid[i] = false;
      Refuse(doc, options, std::move(s), &results[i]);
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const validation::ValidatorSet>> DatabaseImpl::Validators() {
  std::lock_guard<std::mutex> lock(validators_mu_);
  const uint64_t gen = design_gen_.load(std::memory_order_acquire);
  if (validators_gen_.load(std::memory_order_relaxed) == gen && validators_) return validators_;
  // A design document written while this reads bumps design_gen_ past
  // `gen`, so the next write loads again.
  AllDocsOptions ao;
  ao.start_key = std::string(kDesignPrefix);
  ao.end_key = "_design0";  // '0' follows '/'
  ao.include_docs = true;
  AllDocsResult docs;
  Status s = AllDocs(ao, &docs);
  if (!s.ok()) return s;
  auto set = std::make_shared<validation::ValidatorSet>();
  Xxh128 sig;
  for (const AllDocsRow& row : docs.rows) {
    if (row.doc.empty()) continue;
    json::Document d;
    if (!json::Parse(row.doc, &d).ok() || !d.IsObject()) continue;
    auto fn = d.FindMember("validate_doc_update");
    if (fn == d.MemberEnd() || !fn->value.IsString()) continue;
    validation::Validator& v = set->validators.emplace_back();
    v.ddoc_id = row.id;
    v.source.assign(json::View(fn->value));
    v.ddoc = row.doc;
    sig.Update(v.ddoc_id);
    sig.Update(std::string_view("\0", 1));
    sig.Update(v.ddoc);
    sig.Update(std::string_view("\0", 1));
  }
  set->signature = sig.FinishHex();
  validators_ = std::move(set);
  has_validators_.store(!validators_->validators.empty(), std::memory_order_relaxed);
  validators_gen_.store(gen, std::memory_order_release);
  return validators_;
}

Status DatabaseImpl::ValidateWrite(std::vector<IncomingDoc>& docs, std::vector<bool>& valid,
                                   std::vector<DocUpdateResult>& results,
                                   const UpdateOptions& options) {
  // The cost for a write without design documents: this scan of its ids.
  if (std::any_of(docs.begin(), docs.end(), [](const IncomingDoc& d) { return IsDesignDocId(d.id); })) {
    Status s = CheckDesignDocs(docs, valid, results, options, owner_->validate_functions().get());
    if (!s.ok()) return s;
  }
  // The cost for a database without validators: these two loads.
  if (validators_gen_.load(std::memory_order_acquire) == design_gen_.load(std::memory_order_acquire) &&
      !has_validators_.load(std::memory_order_relaxed)) {
    return Status::OK();
  }
  auto set = Validators();
  if (!set.ok()) return set.status();
  if ((*set)->validators.empty()) return Status::OK();

  std::vector<size_t> which;
  std::vector<validation::ValidateCall> calls;
  for (size_t i = 0; i < docs.size(); ++i) {
    IncomingDoc& doc = docs[i];
    if (!valid[i] || IsLocalDocId(doc.id) || IsDesignDocId(doc.id)) continue;
    Status expanded = ExpandBody(&doc);  // the function sees the JSON
    if (!expanded.ok()) return expanded;
    // The function sees the id a POST gets; generate it now.
    if (doc.id.empty()) doc.id = SequentialUuidHex();
    validation::ValidateCall call;
    call.old_doc = "null";
    const std::vector<std::string> history = HistoryRevs(doc);
    if (!history.empty()) {
      // One read of the record for the leaf test and the bodies.
      DocRecord record;
      Status s = ReadRecord(KVReadOptions{}, doc.id, &record);
      if (!s.ok() && !s.IsNotFound()) return s;
      if (options.new_edits) {
        // An edit of a revision that is not stored, or not a leaf, is a
        // conflict, not the function's business (CouchDB checks the rev
        // first: 409, not the function's 403).
        RevId parent;
        if (s.IsNotFound() || !RevId::Parse(history[0], &parent) ||
            !record.tree.IsLeaf(record.tree.Find(parent))) {
          continue;
        }
      }
      std::vector<OpenRevResult> found;
      if (s.ok()) {
        GetOptions go;
        go.revs = true;
        s = OpenRevsOf(KVReadOptions{}, doc.id, record, history, go, &found);
        if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
      }
      if (options.new_edits) {
        if (found.empty() || !found[0].found) continue;
        call.old_doc = std::move(found[0].doc);
      } else {
        // A replicated revision already stored is no write at all; else
        // the old document is its nearest stored ancestor (CouchDB's
        // make_first_doc_on_disk).
        if (!found.empty() && found[0].found) continue;
        for (size_t k = 1; k < found.size(); ++k) {
          if (found[k].found) {
            call.old_doc = std::move(found[k].doc);
            break;
          }
        }
      }
    } else if (options.new_edits) {
      // No _rev: a live document makes it a conflict; a deleted or missing
      // one is created anew, with no old document.
      auto current = Get(doc.id, GetOptions());
      if (current.ok()) continue;
    }
    call.new_doc = NewDocJson(doc);
    calls.push_back(std::move(call));
    which.push_back(i);
  }
  if (calls.empty()) return Status::OK();

  std::shared_ptr<validation::ValidateFunctions> functions = owner_->validate_functions();
  if (!functions) {
    return Status::Internal("validate_doc_update needs a JavaScript runtime, and none is installed");
  }
  std::string sec = Security();
  if (sec.empty()) sec = "{}";
  std::vector<Status> outcomes;
  Status s = functions->Validate(**set, calls, UserCtxJson(name_, options.user), sec, &outcomes);
  if (!s.ok()) return s;
  if (outcomes.size() != calls.size()) return Status::Internal("validate_doc_update gave no outcome");
  for (size_t k = 0; k < which.size(); ++k) {
    if (outcomes[k].ok()) continue;
    const size_t i = which[k];
    valid[i] = false;
    Refuse(docs[i], options, std::move(outcomes[k]), &results[i]);
  }
  return Status::OK();
}

void DatabaseImpl::NoteDesignWrite() { design_gen_.fetch_add(1, std::memory_order_acq_rel); }

bool DatabaseImpl::IsDesignDoc(std::string_view id) { return IsDesignDocId(id); }

}  // namespace settee

namespace settee::validation {

void SetValidateFunctions(Store& store, std::shared_ptr<ValidateFunctions> functions) {
  static_cast<StoreImpl&>(store).set_validate_functions(std::move(functions));
}

std::shared_ptr<ValidateFunctions> GetValidateFunctions(Store& store) {
  return static_cast<StoreImpl&>(store).validate_functions();
}

}  // namespace settee::validation
