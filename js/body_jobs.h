// The big bodies of one part of an encoded batch (js/prelude/doc_encode.js,
// dbBulkDocsEncoded), compressed and hashed (storage/document.h's
// HoldBodyCompressed) on V8's worker threads while the isolate's thread goes
// back to JS to encode the next part.
//
// A batch of big documents spends about a tenth of its time in Snappy and
// the revision hash (50 massive documents: ~5 ms of ~45); done in the
// encoder's call they are added to the walk's time, done here they run
// beside it. The caller's thread takes the jobs no worker has started when
// it waits, so a busy worker pool (V8's GC tasks share it) costs no more
// than doing them in the call.
//
// Ownership and threads: one BodyJobs belongs to one thread (an isolate's),
// which calls Add, Start and Wait; only the jobs' work runs elsewhere.
// From Add to the Wait after Start (or a Drop), the jobs' documents must
// stay where they are (no resize of the vector holding them) and their bytes
// unchanged; `keep` holds the bytes' memory until then.
#pragma once

#include <memory>
#include <string_view>

#include "storage/document.h"

namespace settee::js {

class BodyJobs {
 public:
  BodyJobs() = default;
  ~BodyJobs() { Wait(); }
  BodyJobs(const BodyJobs&) = delete;
  BodyJobs& operator=(const BodyJobs&) = delete;

  // Bodies from this size up are worth a job (smaller ones do not compress
  // by HoldBodyCompressed's rule).
  static size_t MinBodyBytes();

  // Queues `body` for `doc` (a new document without attachments, `deleted`
  // set): held compressed when that saves enough, else copied into
  // doc->body, as BuildEncodedDocs does in line.
  void Add(IncomingDoc* doc, std::string_view body);
  // Hands the queued jobs to a worker thread (nothing to do without jobs).
  void Start(std::shared_ptr<void> keep);
  // Runs the jobs no worker has taken and waits for the others: afterwards
  // no job refers to a document or a byte. Idempotent.
  void Wait();
  // Forgets the jobs added since the last Start, unrun (their documents are
  // being dropped).
  void Drop() { queued_.reset(); }

 private:
  struct State;
  static void Drain(State& s);
  void WaitRunning();
  std::shared_ptr<State> queued_;   // added since the last Start
  std::shared_ptr<State> running_;  // started, not yet waited for
};

}  // namespace settee::js
