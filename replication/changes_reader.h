// ChangesReader: reads the source's _changes ahead of the replicator's
// writes, on a thread of its own with an endpoint of its own (one Endpoint
// is used by one thread at a time), as PouchDB's batches_limit and
// CouchDB's changes reader process do: while batch N is fetched from the
// source and written to the target, batches N+1 .. N+limit-1 are already
// being read. `limit` counts the batches read and not yet done with (the
// one being written included), so limit 1 reads nothing ahead.
//
// With a `prepare` stage, the reading thread also does what a batch needs
// before it can be written (the replicator's _revs_diff and fetch of the
// missing revisions), so that fetching batch N+1 overlaps writing batch N
// (CouchDB overlaps them with several workers).
//
// Batches come out in order. Reading stops after a short batch (fewer rows
// than asked for) unless `continuous`, which then long-polls with `wait`;
// and at the first error, which Next() hands over after the batches read
// before it.
//
// Thread safety: Next() from one thread (the replicator's); Interrupt()
// from any thread. The destructor stops and joins the reading thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "replication/endpoint.h"
#include "settee/status.h"

namespace settee::replication {

// What the prepare stage made of one batch.
struct PreparedBatch {
  uint64_t revs_checked = 0;  // revisions asked about (_revs_diff)
  uint64_t revs_missing = 0;  // the ones the target lacked
  DocBatch docs;              // the missing revisions, with history
};

// Runs on the reading thread, with its source endpoint, for each batch
// with rows; an error ends reading as a reading error does.
using PrepareBatch =
    std::function<Status(Endpoint& source, const ChangesBatch& batch, PreparedBatch* out)>;

struct ChangesReaderOptions {
  std::string since = "0";
  uint64_t batch_size = 100;
  uint64_t limit = 10;  // batches in memory at once (>= 1)
  const std::vector<std::string>* doc_ids = nullptr;  // must outlive the reader
  const ChangesFilterSpec* filter = nullptr;          // must outlive the reader
  bool continuous = false;
  std::chrono::milliseconds wait{10'000};  // continuous: one long poll
  PrepareBatch prepare;  // optional
};

class ChangesReader {
 public:
  // `source` is opened already and used only by the reading thread.
  ChangesReader(std::unique_ptr<Endpoint> source, ChangesReaderOptions options);
  ~ChangesReader();
  ChangesReader(const ChangesReader&) = delete;
  ChangesReader& operator=(const ChangesReader&) = delete;

  // The next batch (waiting for it), and what `prepare` made of it (left
  // empty without one): marks the previous one done, so the reader may read
  // another. The reading error once the batches before it are out;
  // kTimeout "interrupted" after Interrupt().
  Status Next(ChangesBatch* out, PreparedBatch* prepared = nullptr);

  // Ends reading: wakes a blocked Next() and the source's wait.
  void Interrupt();

 private:
  void Read();

  std::unique_ptr<Endpoint> source_;
  ChangesReaderOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<ChangesBatch, PreparedBatch>> ready_;
  uint64_t outstanding_ = 0;  // read and not done with (ready_ + the one out)
  bool handed_out_ = false;   // a batch is out with the caller
  std::optional<Status> end_;  // why reading ended (OK: a one-shot feed ran out)
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace settee::replication
