// Local-to-local replication speed on the memory backend, against a
// baseline measured in the same run: writing the same documents to a fresh
// database with plain _bulk_docs batches (the least a replication must do on
// the target). Prints docs/s for each and the ratio
//   replication time / bulk-write time
// for 100,000 small documents, with the replicator's default batch size
// (100, PouchDB's) and CouchDB's (500), reading _changes ahead
// (batches_limit 10) and, for comparison, not (batches_limit 1).
//
//   build/bench/replication_bench [docs]
//   build/bench/replication_bench --pull URL [runs]
//
// --pull times pulling the remote database URL into a fresh in-memory
// database, `runs` times (default 5), and prints each run's milliseconds
// and the best: scripts/bench_replication.sh sets PouchDB beside it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/resource.h>

#include "replication/http_endpoint.h"
#include "replication/local_endpoint.h"
#include "replication/replicator.h"
#include "settee/store.h"

namespace settee {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU seconds of the whole process (every thread) so far: on a loaded
// machine wall time mostly measures the neighbours, CPU time the work.
double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Timing {
  double wall = 0;
  double cpu = 0;
};

std::string Batch(int from, int to) {
  std::string docs = "[";
  for (int i = from; i < to; ++i) {
    char buf[96];
    std::snprintf(buf, sizeof buf, R"(%s{"_id":"doc%08d","n":%d,"name":"small"})",
                  i == from ? "" : ",", i, i);
    docs += buf;
  }
  return docs + "]";
}

Timing BulkWrite(Database& db, int docs) {
  auto start = Clock::now();
  double cpu = CpuSeconds();
  std::vector<DocUpdateResult> results;
  for (int i = 0; i < docs; i += 100) {
    Status s = db.BulkDocsArray(Batch(i, std::min(docs, i + 100)), {}, &results);
    if (!s.ok()) std::abort();
  }
  return {Seconds(start), CpuSeconds() - cpu};
}

Timing Replicate(Store* store, const char* target, uint64_t batch_size,
                 uint64_t batches_limit = 10) {
  replication::ReplicationOptions options;
  options.batch_size = batch_size;
  options.batches_limit = batches_limit;
  options.create_target = true;
  options.server_uuid = store->uuid();
  replication::Replicator r(std::make_unique<replication::LocalEndpoint>(store, "source"),
                            std::make_unique<replication::LocalEndpoint>(store, target),
                            options);
  auto start = Clock::now();
  double cpu = CpuSeconds();
  Status s = r.Run();
  Timing t{Seconds(start), CpuSeconds() - cpu};
  if (!s.ok() || r.Stats().docs_written == 0) {
    std::fprintf(stderr, "replication failed: %s\n", s.ToString().c_str());
    std::abort();
  }
  return t;
}

int Pull(const char* url_text, int runs) {
  auto url = replication::ParseUrl(url_text);
  if (!url.ok()) {
    std::fprintf(stderr, "%s\n", url.status().ToString().c_str());
    return 2;
  }
  StoreOptions options;
  options.backend = StoreOptions::Backend::kMemory;
  auto store = Store::Open(options);
  double best = 1e9;
  uint64_t written = 0;
  for (int i = 0; i < runs; ++i) {
    std::string target = "pull" + std::to_string(i);
    replication::ReplicationOptions ro;
    ro.create_target = true;
    ro.server_uuid = (*store)->uuid();
    replication::Replicator r(std::make_unique<replication::HttpEndpoint>(*url),
                              std::make_unique<replication::LocalEndpoint>(store->get(), target),
                              ro);
    auto start = Clock::now();
    Status s = r.Run();
    double ms = Seconds(start) * 1000;
    if (!s.ok()) {
      std::fprintf(stderr, "pull failed: %s\n", s.ToString().c_str());
      return 1;
    }
    written = r.Stats().docs_written;
    std::printf("run %d: %.1f ms\n", i, ms);
    best = std::min(best, ms);
  }
  std::printf("settee pull: %llu docs, best %.1f ms\n", static_cast<unsigned long long>(written),
              best);
  return 0;
}

}  // namespace
}  // namespace settee

int main(int argc, char** argv) {
  using namespace settee;
  if (argc > 2 && std::string(argv[1]) == "--pull") {
    return Pull(argv[2], argc > 3 ? std::atoi(argv[3]) : 5);
  }
  int docs = argc > 1 ? std::atoi(argv[1]) : 100000;
  StoreOptions options;
  options.backend = StoreOptions::Backend::kMemory;
  auto store = Store::Open(options);
  auto source = (*store)->CreateDatabase("source");
  auto baseline_db = (*store)->CreateDatabase("baseline");
  BulkWrite(**source, docs);
  Timing baseline = BulkWrite(**baseline_db, docs);
  Timing r100 = Replicate(store->get(), "target100", 100);
  Timing r500 = Replicate(store->get(), "target500", 500);
  Timing serial = Replicate(store->get(), "target100serial", 100, 1);
  std::printf("%d small docs, memory backend, one run (time and CPU time, every thread's,\n"
              "as multiples of the baseline's):\n", docs);
  std::printf("  bulk write baseline (100/batch)  %8.0f docs/s\n", docs / baseline.wall);
  auto line = [&](const char* name, const Timing& t, const char* note) {
    std::printf("  %s  %8.0f docs/s  (%.2fx time, %.2fx CPU%s)\n", name, docs / t.wall,
                t.wall / baseline.wall, t.cpu / baseline.cpu, note);
  };
  line("replicate, batch_size 100       ", r100, "");
  line("replicate, batch_size 500       ", r500, "");
  line("replicate, 100, batches_limit 1 ", serial, "; no read-ahead");
  return 0;
}
