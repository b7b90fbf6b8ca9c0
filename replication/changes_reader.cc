#include "replication/changes_reader.h"

namespace settee::replication {

ChangesReader::ChangesReader(std::unique_ptr<Endpoint> source, ChangesReaderOptions options)
    : source_(std::move(source)), options_(std::move(options)) {
  if (options_.limit == 0) options_.limit = 1;
  if (options_.batch_size == 0) options_.batch_size = 1;
  thread_ = std::thread([this] { Read(); });
}

ChangesReader::~ChangesReader() {
  Interrupt();
  thread_.join();
}

void ChangesReader::Interrupt() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  source_->Interrupt();
}

void ChangesReader::Read() {
  ChangesRequest request;
  request.since = options_.since;
  request.limit = options_.batch_size;
  request.doc_ids = options_.doc_ids;
  request.filter = options_.filter;
  bool caught_up = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || outstanding_ < options_.limit; });
      if (stop_) return;
    }
    request.wait = options_.continuous && caught_up ? options_.wait : std::chrono::milliseconds(0);
    ChangesBatch batch;
    PreparedBatch prepared;
    Status s = source_->Changes(request, &batch);
    if (s.ok() && !batch.rows.empty() && options_.prepare) {
      s = options_.prepare(*source_, batch, &prepared);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (!s.ok()) {
      end_ = s;
      cv_.notify_all();
      return;
    }
    const bool short_batch = batch.rows.size() < options_.batch_size;
    const bool moved = !batch.last_seq.empty() && batch.last_seq != request.since;
    if (moved) request.since = batch.last_seq;
    // A long poll that timed out is not handed over: nothing happened.
    if (!caught_up || !batch.rows.empty() || moved) {
      ready_.emplace_back(std::move(batch), std::move(prepared));
      ++outstanding_;
    }
    caught_up = short_batch;
    if (short_batch && !options_.continuous) {
      end_ = Status::OK();
      cv_.notify_all();
      return;
    }
    cv_.notify_all();
  }
}

Status ChangesReader::Next(ChangesBatch* out, PreparedBatch* prepared) {
  std::unique_lock<std::mutex> lock(mu_);
  if (handed_out_) {
    handed_out_ = false;
    --outstanding_;
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return stop_ || !ready_.empty() || end_.has_value(); });
  if (!ready_.empty()) {
    *out = std::move(ready_.front().first);
    if (prepared) *prepared = std::move(ready_.front().second);
    ready_.pop_front();
    handed_out_ = true;
    return Status::OK();
  }
  if (end_.has_value() && !end_->ok()) return *end_;
  if (stop_) return Status(Status::Code::kTimeout, "interrupted");
  return Status::Internal("read past the end of a one-shot changes feed");
}

}  // namespace settee::replication
