// Single-document write scaling: does a second writer thread add throughput?
//
// Every case is a ratio of two configurations measured in the same round:
// the two sides run alternately `--tries` times and each keeps its best (a
// shared machine only ever slows a run down, so the best of a few is the
// least disturbed), and every round runs every case; the program prints
// each round's ratios and their medians.
//
//   own_db     T threads, each putting new small documents into its own
//              database: aggregate docs/s with 2 threads / with 1 thread.
//   shared_db  the same, both threads putting into one database.
//   own_cost, shared_cost
//              CPU microseconds per put with 2 threads / with 1, and sleeps
//              (voluntary context switches) per 1000 puts: what a second
//              writer costs, measured so that other processes taking the
//              cores barely move it (the figure to read on a busy machine);
//              and the CPU microseconds per put of the backend's own threads
//              (LevelDB's flushes), its ratio the share of the writers' CPU;
//              and per put, each writer's time runnable but waiting for a
//              core (runq, from /proc/thread-self/schedstat) and asleep
//              (wall time neither on a core nor runnable): where the wall
//              time that CPU per put does not explain went; and the
//              throughput within the 50 us windows of the run in which every
//              writer finished puts (all-running), with the share of the
//              run's windows that were such: what the write path gives two
//              writers that both have a core, apart from how often they
//              had one.
//   raw_shared shared_db's puts straight into one KV store of the backend,
//              no document layer: what the store's write gives two threads
//              (shared_db's ceiling, as each put ends in one store write).
//   lean_shared
//              shared_db's ceiling for the memory document store the model
//              in docs/architecture.md asks for, with no MVCC reads, views
//              or ordered id index: each put parses its document, hashes its
//              revision, builds and encodes its record and allocates it
//              outside any lock (the work of a real put's build), and under
//              a spin lock only checks its id in an open-addressing hash
//              index, takes the next sequence, links the record into the
//              index and an append-only by-sequence array and updates the
//              counters. What two writers of one database share per put is
//              then the lock's line (lock, sequence and counters), the
//              published sequence and the array's tail: the fewest lines a
//              store that assigns sequences in one order can move.
//   bulk100    own_db with _bulk_docs of 100 instead of single puts.
//   cpu        shared-nothing arithmetic on 1 and 2 threads: the parallelism
//              the machine delivers right now, the ceiling of the others
//              (~150 ms of work per thread, whatever --docs is).
//   cpu_map    shared-nothing std::map inserts per thread: the ceiling for
//              allocation- and cache-heavy work (the memory backend's kind;
//              ~150 ms per thread too).
//   line_trip  the cost of moving one cache line between the two threads'
//              cores and back (two threads taking turns at one atomic),
//              median ns per round trip: what every line a put shares with
//              the other writer costs it. On the 2-vCPU VMs we measure on
//              it depends on where the host runs the vCPUs (0.45-0.73 us
//              on different days), and the one-database ratio with it
//              (docs/architecture.md's model). The base column is the same
//              hand-over within one thread (no transfer).
//   thread_cpu one writer putting 5 x --docs small documents into its own
//              database (several memtables: a sustained run), then the
//              store's close: CPU microseconds per put of each kind of
//              thread from /proc/self/task/*/stat (the writer, LevelDB's
//              background thread, the log mapper) and their minor page
//              faults per 1000 puts. Printed as the writer's figure (base)
//              against the thread's (other), the ratio the thread's share.
//   get_storm  median latency of one db.get while another thread writes to
//              the same database / median with no writer; and the control,
//              with the writer writing to another database (what a busy
//              second core costs a get that shares no data with it).
// It also prints the median time of one put on an idle store next to a raw
// KVStore put of the same key and value (the fixed cost of the document
// layer's write path).
//
// Usage: write_scaling_bench [--rounds N] [--tries N] [--docs N] [--backend memory|leveldb|both]
//                            [--cases own_db,shared_db,...]
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "settee/store.h"
#include "storage/doc_record.h"
#include "storage/document.h"
#include "storage/spin_wait.h"

namespace settee {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  int rounds = 5;
  int tries = 3;
  int docs = 20000;  // per thread, as in issue 14's table
  std::vector<StoreOptions::Backend> backends{StoreOptions::Backend::kMemory,
                                              StoreOptions::Backend::kLevelDB};
  std::set<std::string> cases{"own_db", "shared_db", "own_cost", "shared_cost", "raw_shared", "lean_shared", "bulk100",
                              "cpu", "cpu_map", "line_trip", "get_storm", "idle_put", "thread_cpu"};
};

const char* Name(StoreOptions::Backend b) {
  return b == StoreOptions::Backend::kMemory ? "memory" : "leveldb";
}

std::string TempPath() {
  static std::atomic<int> counter{0};
  auto p = std::filesystem::temp_directory_path() /
           ("settee_write_scaling_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(p);
  return p.string();
}

// A store that removes its directory when done.
struct TempStore {
  std::unique_ptr<Store> store;
  std::string dir;

  explicit TempStore(StoreOptions::Backend backend) {
    StoreOptions options;
    options.backend = backend;
    if (backend == StoreOptions::Backend::kLevelDB) options.path = dir = TempPath();
    auto s = Store::Open(options);
    if (!s.ok()) {
      std::fprintf(stderr, "open: %s\n", s.status().ToString().c_str());
      std::exit(1);
    }
    store = std::move(s).value();
  }
  ~TempStore() {
    store.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
  std::shared_ptr<Database> Create(const std::string& name) {
    auto db = store->CreateDatabase(name);
    if (!db.ok()) std::exit(1);
    return *db;
  }
};

std::string DocId(int thread, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t%d_%08d", thread, i);
  return buf;
}

// The document issue 14's script writes: {_id, v}.
std::string DocBody(int i) { return R"({"v":)" + std::to_string(i) + "}"; }

// Runs body(t) on `threads` threads released together; returns wall seconds
// from the release to the last one's end.
double RunThreads(int threads, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(t);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// What the calling thread has used so far: CPU seconds and voluntary
// context switches (each a sleep: a wait on a lock, condition variable or
// I/O that gave the core away).
struct ThreadUsage {
  double cpu = 0;
  double sleeps = 0;
  double yields = 0;  // involuntary switches: preemptions and yields that gave the core away
  // The calling thread's, or with RUSAGE_SELF the whole process's.
  static ThreadUsage Now(int who = RUSAGE_THREAD) {
    rusage ru{};
    getrusage(who, &ru);
    auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
    return {secs(ru.ru_utime) + secs(ru.ru_stime), static_cast<double>(ru.ru_nvcsw),
            static_cast<double>(ru.ru_nivcsw)};
  }
};

// The calling thread's scheduler times from /proc/thread-self/schedstat:
// nanoseconds on a CPU and nanoseconds runnable but waiting for one (zeros
// where the kernel does not report them).
struct SchedTimes {
  double run_ns = 0;
  double runq_ns = 0;
  static SchedTimes Now() {
    SchedTimes t;
    std::ifstream in("/proc/thread-self/schedstat");
    in >> t.run_ns >> t.runq_ns;
    return t;
  }
};

// Per put, over all threads of the last PutThroughput run: CPU microseconds
// and sleeps. Unlike throughput these barely move when other processes take
// the cores, so they show what a second writer costs even on a busy machine:
// CPU per put rises with cache-line traffic and spinning, sleeps with every
// futex handoff.
struct PutCost {
  double cpu_us = 0;
  double sleeps = 0;
  double yields = 0;
  // CPU microseconds per put of every other thread of the process, from the
  // writers' release to the store's close: the backend's own threads
  // (LevelDB's background thread flushing memtables and compacting).
  double background_us = 0;
  // Of each writer's wall time, per put: runnable but waiting for a core
  // (another thread had it: the other writer, LevelDB's background thread,
  // the log mapper, other processes), and neither running nor runnable
  // (asleep: a futex wait, I/O).
  double runq_us = 0;
  double blocked_us = 0;
  // The run cut into 50 us windows: puts per second within the windows
  // where every writer finished puts (was given a core and was not held up
  // behind the others), and the share of windows that were such. What the
  // write path gives T writers that run at once, apart from how often the
  // machine lets them (a throughput ratio mixes the two). Windows where one
  // writer waits for the other (held up behind a preempted one) do not
  // count either: one database's share against own databases' in the same
  // run tells how much of the run that was.
  double all_running_rate = 0;
  double all_running_share = 0;
  // Whether the kernel gave the writers' scheduler times (SchedTimes): with
  // none runq_us and blocked_us come out zero and the whole wall time.
  bool sched_known = false;
};

// See PutCost::all_running_rate: `done[t]` are writer t's put completion
// times (ns, one clock).
void AllRunning(const std::vector<std::vector<int64_t>>& done, PutCost* cost) {
  constexpr int64_t kWindowNs = 50'000;
  // A writer progressing at all does several puts in a window (each is a
  // few microseconds); one that got a core for only a sliver does not.
  constexpr int kMinPutsEach = 3;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& d : done) {
    if (d.empty()) return;
    first = std::min(first, d.front());
    last = std::max(last, d.back());
  }
  const size_t windows = static_cast<size_t>((last - first) / kWindowNs) + 1;
  std::vector<std::vector<int>> counts(done.size(), std::vector<int>(windows, 0));
  for (size_t t = 0; t < done.size(); ++t) {
    for (int64_t at : done[t]) ++counts[t][static_cast<size_t>((at - first) / kWindowNs)];
  }
  size_t all = 0;
  double puts = 0;
  for (size_t w = 0; w < windows; ++w) {
    bool every = true;
    int sum = 0;
    for (const auto& c : counts) {
      every = every && c[w] >= kMinPutsEach;
      sum += c[w];
    }
    if (!every) continue;
    ++all;
    puts += sum;
  }
  cost->all_running_share = static_cast<double>(all) / static_cast<double>(windows);
  cost->all_running_rate = all == 0 ? 0 : puts / (static_cast<double>(all) * kWindowNs * 1e-9);
}

// CPU seconds of the whole process so far (every thread).
double ProcessCpu() { return ThreadUsage::Now(RUSAGE_SELF).cpu; }
PutCost last_put_cost;

// Aggregate puts per second of `threads` threads, each putting `docs` new
// documents, into its own database or all into one.
double PutThroughput(StoreOptions::Backend backend, int threads, bool shared, int docs) {
  auto ts = std::make_unique<TempStore>(backend);
  std::vector<std::shared_ptr<Database>> dbs;
  for (int t = 0; t < threads; ++t) {
    if (shared && t > 0) dbs.push_back(dbs[0]);
    else dbs.push_back(ts->Create("db" + std::to_string(t)));
  }
  std::vector<ThreadUsage> used(threads);
  std::vector<SchedTimes> sched(threads);
  std::vector<double> wall(threads);
  std::vector<std::vector<int64_t>> done(threads);
  for (auto& d : done) d.reserve(static_cast<size_t>(docs));
  const double process_start = ProcessCpu();
  const ThreadUsage main_start = ThreadUsage::Now();
  double secs = RunThreads(threads, [&](int t) {
    const ThreadUsage start = ThreadUsage::Now();
    const SchedTimes sched_start = SchedTimes::Now();
    const auto wall_start = Clock::now();
    for (int i = 0; i < docs; ++i) {
      Check(dbs[t]->Put(DocId(t, i), DocBody(i)).status(), "put");
      done[t].push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            Clock::now().time_since_epoch()).count());
    }
    wall[t] = std::chrono::duration<double, std::nano>(Clock::now() - wall_start).count();
    const SchedTimes sched_end = SchedTimes::Now();
    sched[t] = {sched_end.run_ns - sched_start.run_ns, sched_end.runq_ns - sched_start.runq_ns};
    const ThreadUsage end = ThreadUsage::Now();
    used[t] = {end.cpu - start.cpu, end.sleeps - start.sleeps, end.yields - start.yields};
  });
  // The close waits for a flush or compaction in progress, whose CPU then
  // counts; a memtable left unflushed does not (the next open replays it).
  dbs.clear();
  ts->store.reset();
  const double process_cpu = ProcessCpu() - process_start;
  const double main_cpu = ThreadUsage::Now().cpu - main_start.cpu;
  ts.reset();
  PutCost cost;
  double writers_cpu = 0;
  for (const ThreadUsage& u : used) {
    cost.cpu_us += u.cpu * 1e6 / (threads * docs);
    cost.sleeps += u.sleeps / (threads * docs);
    cost.yields += u.yields / (threads * docs);
    writers_cpu += u.cpu;
  }
  for (int t = 0; t < threads; ++t) {
    const double per = 1e3 * threads * docs;  // ns -> us per put
    cost.runq_us += sched[t].runq_ns / per;
    cost.blocked_us += std::max(0.0, wall[t] - sched[t].run_ns - sched[t].runq_ns) / per;
    cost.sched_known = cost.sched_known || sched[t].run_ns != 0 || sched[t].runq_ns != 0;
  }
  cost.background_us = std::max(0.0, process_cpu - main_cpu - writers_cpu) * 1e6 / (threads * docs);
  AllRunning(done, &cost);
  last_put_cost = cost;
  return threads * docs / secs;
}

// PutThroughput's costs on 1 and 2 threads, run alternately `tries` times;
// the least of each (disturbance only adds), but the all-running rate and
// share both of the try with the highest rate (the share is that rate's).
std::pair<PutCost, PutCost> PutCosts(StoreOptions::Backend backend, bool shared, int docs,
                                     int tries) {
  PutCost one{1e18, 1e18, 1e18, 1e18, 1e18, 1e18, 0, 0}, two{1e18, 1e18, 1e18, 1e18, 1e18, 1e18, 0, 0};
  for (int i = 0; i < tries; ++i) {
    for (int threads : {1, 2}) {
      PutThroughput(backend, threads, shared, docs);
      PutCost& best = threads == 1 ? one : two;
      best.cpu_us = std::min(best.cpu_us, last_put_cost.cpu_us);
      best.sleeps = std::min(best.sleeps, last_put_cost.sleeps);
      best.yields = std::min(best.yields, last_put_cost.yields);
      best.background_us = std::min(best.background_us, last_put_cost.background_us);
      best.runq_us = std::min(best.runq_us, last_put_cost.runq_us);
      best.blocked_us = std::min(best.blocked_us, last_put_cost.blocked_us);
      best.sched_known = best.sched_known || last_put_cost.sched_known;
      if (last_put_cost.all_running_rate > best.all_running_rate) {
        best.all_running_rate = last_put_cost.all_running_rate;
        best.all_running_share = last_put_cost.all_running_share;
      }
    }
  }
  return {one, two};
}

// One thread of this process as /proc/self/task/<tid>/stat shows it.
struct TaskUsage {
  std::string name;
  double cpu = 0;        // user + system seconds
  double minflt = 0;     // minor page faults
};

// Every live thread of the process by tid. A thread that has exited is not
// listed (its CPU stays in the process's total).
std::map<long, TaskUsage> TaskUsages() {
  std::map<long, TaskUsage> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    // "tid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::vector<std::string> fields;  // from field 3 (state) on
    size_t p = close + 2;
    while (p < line.size()) {
      size_t q = line.find(' ', p);
      if (q == std::string::npos) q = line.size();
      fields.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    if (fields.size() < 13) continue;
    TaskUsage u;
    u.name = line.substr(open + 1, close - open - 1);
    u.minflt = std::atof(fields[7].c_str());                                      // field 10
    u.cpu = (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / ticks;  // 14, 15
    out[std::atol(entry.path().filename().c_str())] = u;
  }
  return out;
}

// CPU us per put and minor faults per 1000 puts of one kind of thread.
struct ThreadCost {
  double cpu_us = 0;
  double faults_per_1k = 0;
};
struct ThreadCpuSplit {
  ThreadCost writer, mapper, background;  // background: every other thread but main
};

// One writer putting `docs` new documents into its own database, then the
// store's close (which waits for a flush or compaction in progress).
ThreadCpuSplit ThreadCpu(StoreOptions::Backend backend, int docs) {
  auto ts = std::make_unique<TempStore>(backend);
  auto db = ts->Create("db0");
  std::atomic<long> writer_tid{0};
  const long main_tid = static_cast<long>(syscall(SYS_gettid));
  const auto before = TaskUsages();
  std::map<long, TaskUsage> writer_end;
  RunThreads(1, [&](int) {
    writer_tid = static_cast<long>(syscall(SYS_gettid));
    for (int i = 0; i < docs; ++i) Check(db->Put(DocId(0, i), DocBody(i)).status(), "put");
    writer_end = TaskUsages();  // the writer's own row, before it exits
  });
  db.reset();
  ts->store.reset();
  const auto after = TaskUsages();
  ts.reset();
  ThreadCpuSplit split;
  auto add = [&](ThreadCost* to, long tid, const TaskUsage& end) {
    auto it = before.find(tid);
    const TaskUsage start = it == before.end() ? TaskUsage{} : it->second;
    to->cpu_us += (end.cpu - start.cpu) * 1e6 / docs;
    to->faults_per_1k += (end.minflt - start.minflt) * 1000 / docs;
  };
  if (auto it = writer_end.find(writer_tid.load()); it != writer_end.end()) {
    add(&split.writer, it->first, it->second);
  }
  for (const auto& [tid, u] : after) {
    if (tid == main_tid || tid == writer_tid.load()) continue;
    add(u.name == "settee-logmap" ? &split.mapper : &split.background, tid, u);
  }
  return split;
}

// Aggregate puts per second of `threads` threads putting small keys straight
// into one KV store of the backend (the store's own, no document layer):
// shared_db's ceiling, since every put of one database ends in one write
// to its store.
double RawSharedThroughput(StoreOptions::Backend backend, int threads, int docs) {
  TempStore ts(backend);
  KVStore* kv = ts.store->kv();
  double secs = RunThreads(threads, [&](int t) {
    for (int i = 0; i < docs; ++i) Check(kv->Put({}, "~raw" + DocId(t, i), DocBody(i)), "raw put");
  });
  return threads * docs / secs;
}

// The lean_shared case's database (see the top of this file).
class LeanDb {
 public:
  struct Record {
    std::string id;
    std::string bytes;  // the encoded record (its seq field patched in a real store)
    uint64_t seq = 0;
  };

  explicit LeanDb(size_t capacity) {
    size_t slots = 16;
    while (slots < 4 * capacity) slots <<= 1;
    mask_ = slots - 1;
    index_.reset(new std::atomic<Record*>[slots]);
    for (size_t i = 0; i < slots; ++i) index_[i].store(nullptr, std::memory_order_relaxed);
    by_seq_.reset(new std::atomic<Record*>[capacity + 1]);
    capacity_ = capacity;
  }
  ~LeanDb() {
    for (size_t i = 0; i <= mask_; ++i) delete index_[i].load(std::memory_order_relaxed);
  }

  // Puts a new document (no _rev); false on a conflict (the id exists).
  bool Put(std::string_view id, std::string_view json) {
    // Outside the lock: everything a put's build does that needs no seq.
    IncomingDoc doc;
    Check(ParseIncomingDoc(json, id, 1 << 20, &doc), "lean parse");
    DocRecord record;
    RevId rev{1, ComputeRevHash("", doc.deleted, doc.body)};
    record.winner_rev = rev.ToString();
    record.tree.AddRevision(RevTree::kNone, std::move(rev), doc.deleted, true, 0);
    record.winner_body = std::move(doc.body);
    auto fresh = std::make_unique<Record>();
    fresh->id = std::move(doc.id);
    EncodeDocRecord(record, &fresh->bytes);
    const size_t hash = std::hash<std::string_view>()(fresh->id);
    const uint64_t size = record.winner_body.size();

    Lock();
    size_t i = hash & mask_;
    for (Record* r; (r = index_[i].load(std::memory_order_relaxed)) != nullptr; i = (i + 1) & mask_) {
      if (r->id == fresh->id) {
        Unlock();
        return false;
      }
    }
    if (head_.seq >= capacity_) std::exit(1);  // sized for the run
    const uint64_t seq = ++head_.seq;
    fresh->seq = seq;
    ++head_.doc_count;
    head_.external_size += size;
    Record* r = fresh.release();
    index_[i].store(r, std::memory_order_release);
    by_seq_[seq].store(r, std::memory_order_release);
    published_.store(seq, std::memory_order_release);
    Unlock();
    return true;
  }
  uint64_t published() const { return published_.load(std::memory_order_acquire); }

 private:
  void Lock() {
    SpinBackoff backoff;
    while (head_.locked.exchange(true, std::memory_order_acquire)) {
      while (head_.locked.load(std::memory_order_relaxed)) backoff.Pause();
    }
  }
  void Unlock() { head_.locked.store(false, std::memory_order_release); }

  // What every put writes under the lock, on one line.
  struct alignas(kNoFalseSharing) Head {
    std::atomic<bool> locked{false};
    uint64_t seq = 0;
    uint64_t doc_count = 0;
    uint64_t external_size = 0;
  };
  Head head_;
  alignas(kNoFalseSharing) std::atomic<uint64_t> published_{0};
  // Constant after construction (the arrays' contents change).
  alignas(kNoFalseSharing) size_t mask_ = 0;
  size_t capacity_ = 0;
  std::unique_ptr<std::atomic<Record*>[]> index_;   // open addressing, linear probes
  std::unique_ptr<std::atomic<Record*>[]> by_seq_;  // [1, seq]
};

// Aggregate puts per second of `threads` threads putting `docs` new
// documents each into one LeanDb.
double LeanSharedThroughput(int threads, int docs) {
  LeanDb db(static_cast<size_t>(threads) * docs);
  double secs = RunThreads(threads, [&](int t) {
    for (int i = 0; i < docs; ++i) {
      if (!db.Put(DocId(t, i), DocBody(i))) std::exit(1);  // every id is new
    }
  });
  if (db.published() != static_cast<uint64_t>(threads) * docs) std::exit(1);
  return threads * docs / secs;
}

double BulkThroughput(StoreOptions::Backend backend, int threads, int docs) {
  TempStore ts(backend);
  std::vector<std::shared_ptr<Database>> dbs;
  for (int t = 0; t < threads; ++t) dbs.push_back(ts.Create("db" + std::to_string(t)));
  constexpr int kBatch = 100;
  double secs = RunThreads(threads, [&](int t) {
    std::vector<std::string> texts(kBatch);
    std::vector<std::string_view> views(kBatch);
    std::vector<DocUpdateResult> results;
    for (int i = 0; i < docs; i += kBatch) {
      for (int k = 0; k < kBatch; ++k) {
        texts[k] = R"({"_id":")" + DocId(t, i + k) + R"(","v":)" + std::to_string(i + k) + "}";
        views[k] = texts[k];
      }
      Check(dbs[t]->BulkDocs(views, {}, &results), "bulk");
    }
  });
  return threads * (docs / kBatch * kBatch) / secs;
}

// The controls run a fixed time of work per thread, whatever --docs is: a
// run of a few milliseconds measures thread start-up, not parallelism. The
// item counts are calibrated once, on one thread, to take about this long.
constexpr double kControlSeconds = 0.15;

// Runs `step(i)` for i = 0, 1, ... on the calling thread until about
// kControlSeconds have passed; returns how many steps that was.
int64_t CalibrateItems(const std::function<void(int64_t)>& step) {
  const auto start = Clock::now();
  int64_t items = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < kControlSeconds) {
    for (int k = 0; k < 1024; ++k) step(items++);
  }
  return items;
}

std::atomic<uint64_t> control_sink{0};

uint64_t ArithmeticSteps(uint64_t h, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) {
    h = (h ^ static_cast<uint64_t>(i)) * 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

double CpuThroughput(int threads) {
  static const int64_t items = [] {
    uint64_t h = 1469598103934665603ULL;
    // Steps of 1024 iterations: a clock read per step stays out of the figure.
    const int64_t steps =
        CalibrateItems([&](int64_t i) { h = ArithmeticSteps(h, i * 1024, i * 1024 + 1024); });
    control_sink.store(h, std::memory_order_relaxed);  // keeps the loop from being optimized away
    return steps * 1024;
  }();
  double secs = RunThreads(threads, [&](int t) {
    control_sink.fetch_add(ArithmeticSteps(1469598103934665603ULL + t, 0, items), std::memory_order_relaxed);
  });
  return threads * static_cast<double>(items) / secs;
}

// Shared-nothing work shaped like a memory-backend write: each thread
// inserts keyed strings into a std::map of its own. Its 2t/1t ratio is the
// ceiling for allocation- and cache-heavy code on this machine right now
// (two vCPUs that share a physical core or a memory bus give less than the
// arithmetic loop's 2x).
double MapThroughput(int threads) {
  auto insert = [](std::map<std::string, std::string>& map, int t, int64_t i) {
    map.emplace("D\x01\x02\x03\x04\x05\x06\x07\x08d" + DocId(t, static_cast<int>(i)),
                DocBody(static_cast<int>(i)));
  };
  static const int64_t items = [&] {
    std::map<std::string, std::string> map;
    return CalibrateItems([&](int64_t i) { insert(map, 0, i); });
  }();
  double secs = RunThreads(threads, [&](int t) {
    std::map<std::string, std::string> map;
    for (int64_t i = 0; i < items; ++i) insert(map, t, i);
    if (map.size() != static_cast<size_t>(items)) std::exit(1);
  });
  return threads * static_cast<double>(items) / secs;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median nanoseconds of one round trip of a cache line between two
// threads: thread 0 writes odd values into one atomic, thread 1 the even
// ones, each waiting for the other's. Timed in groups of kGroup trips, and
// the median group taken: a thread preempted mid-group (its partner spins
// meanwhile) spoils only its group. At most kGroups groups or ~kSeconds.
// `threads` 1: one thread does both turns, the same instructions with no
// transfer.
double LineTripNs(int threads) {
  constexpr int kGroup = 1000, kGroups = 200;
  constexpr double kSeconds = 0.3;
  struct alignas(kNoFalseSharing) Line {
    std::atomic<uint64_t> turn{0};
  };
  Line line;
  std::atomic<bool> stop{false};
  std::vector<double> samples;
  // Spins, then yields (SpinBackoff): should the two threads share one
  // core (the other busy), a spinning waiter would hold it for its whole
  // time slice at every turn. False once thread 0 has stopped.
  auto wait_for = [&](uint64_t v) {
    SpinBackoff backoff;
    while (line.turn.load(std::memory_order_acquire) != v) {
      if (stop.load(std::memory_order_relaxed)) return false;
      backoff.Pause();
    }
    return true;
  };
  RunThreads(threads, [&](int t) {
    const auto begin = Clock::now();
    for (int g = 0; g < kGroups; ++g) {
      const auto start = Clock::now();
      for (int k = 0; k < kGroup; ++k) {
        const uint64_t base = 2 * (static_cast<uint64_t>(g) * kGroup + k);
        if (threads == 1 || t == 0) {
          wait_for(base);  // thread 0 is never stopped
          line.turn.store(base + 1, std::memory_order_release);
        }
        if (threads == 1 || t == 1) {
          if (!wait_for(base + 1)) return;
          line.turn.store(base + 2, std::memory_order_release);
        }
      }
      if (t == 0) {
        const auto end = Clock::now();
        samples.push_back(std::chrono::duration<double, std::nano>(end - start).count() / kGroup);
        if (std::chrono::duration<double>(end - begin).count() > kSeconds) break;
      }
    }
    if (t == 0) stop.store(true, std::memory_order_relaxed);
  });
  return Median(samples);
}

// What another thread does while GetLatency times its gets.
enum class Storm {
  kNone,     // nothing: the idle figure
  kSameDb,   // puts into the database the gets read
  kOtherDb,  // puts into another database of the store: the control, what a
             // busy second core costs a get that shares no data with it
};

// Median latency (ns) of single gets of random prefilled documents, timed
// in groups of 16 to keep clock reads out of the figure, while `storm`
// runs on another thread.
double GetLatency(StoreOptions::Backend backend, Storm storm, int docs) {
  TempStore ts(backend);
  auto db = ts.Create("db");
  auto other = storm == Storm::kOtherDb ? ts.Create("other") : db;
  {
    std::vector<std::string> texts;
    for (int i = 0; i < docs; ++i) {
      texts.push_back(R"({"_id":")" + DocId(9, i) + R"(","v":)" + std::to_string(i) + "}");
    }
    std::vector<std::string_view> views(texts.begin(), texts.end());
    std::vector<DocUpdateResult> results;
    Check(db->BulkDocs(views, {}, &results), "prefill");
  }
  std::atomic<bool> stop{false};
  std::thread writer;
  if (storm != Storm::kNone) {
    writer = std::thread([&] {
      for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        Check(other->Put(DocId(8, i), DocBody(i)).status(), "storm put");
      }
    });
  }
  constexpr int kGroup = 16;
  std::vector<double> samples;
  uint64_t x = 88172645463325252ULL;
  for (int g = 0; g < docs / kGroup; ++g) {
    auto start = Clock::now();
    for (int k = 0; k < kGroup; ++k) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      auto r = db->Get(DocId(9, static_cast<int>(x % docs)));
      if (!r.ok()) std::exit(1);
    }
    samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                      kGroup);
  }
  stop = true;
  if (writer.joinable()) writer.join();
  return Median(samples);
}

// Median ns of one put into an idle store (each timed alone), for the
// document layer and for the raw KVStore with the same keys and values.
std::pair<double, double> IdlePut(StoreOptions::Backend backend, int docs) {
  TempStore ts(backend);
  auto db = ts.Create("db");
  std::vector<double> doc_ns, raw_ns;
  KVStore* kv = ts.store->kv();
  for (int i = 0; i < docs; ++i) {
    const std::string id = DocId(0, i), body = DocBody(i);
    auto start = Clock::now();
    Check(db->Put(id, body).status(), "put");
    auto mid = Clock::now();
    Check(kv->Put({}, "~raw" + id, body), "raw put");
    auto end = Clock::now();
    doc_ns.push_back(std::chrono::duration<double, std::nano>(mid - start).count());
    raw_ns.push_back(std::chrono::duration<double, std::nano>(end - mid).count());
  }
  return {Median(doc_ns), Median(raw_ns)};
}

// Runs base() and other() alternately `tries` times; the best of each.
// `higher_is_better`: throughputs (max) or latencies (min).
std::pair<double, double> BestOf(int tries, bool higher_is_better, const std::function<double()>& base,
                                 const std::function<double()>& other) {
  double b = 0, o = 0;
  for (int i = 0; i < tries; ++i) {
    double x = base(), y = other();
    if (i == 0 || (higher_is_better ? x > b : x < b)) b = x;
    if (i == 0 || (higher_is_better ? y > o : y < o)) o = y;
  }
  return {b, o};
}

struct Series {
  std::vector<double> ratios;
  std::vector<double> base, other;  // the two sides, for the printout
};

// "1.23 0.98 0.71" (1, 5 and 15 minutes), or "?".
std::string LoadAverage() {
  double avg[3];
  if (getloadavg(avg, 3) != 3) return "?";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", avg[0], avg[1], avg[2]);
  return buf;
}

// Issue 14's targets against the medians: one line per case that ran.
void PrintSummary(const std::map<std::string, Series>& series, const std::string& load_at_start) {
  struct Target {
    const char* name;  // a series name
    const char* what;
    double bound;
    bool at_least;  // ratio >= bound (else <=)
  };
  static const Target kTargets[] = {
      {"memory own_db 2t/1t", "2 threads, own databases, memory", 1.8, true},
      {"memory shared_db 2t/1t", "2 threads, one database, memory", 1.3, true},
      {"leveldb own_db 2t/1t", "2 threads, own databases, LevelDB", 1.6, true},
      {"leveldb shared_db 2t/1t", "2 threads, one database, LevelDB", 1.3, true},
      {"memory get_storm ns storm/idle", "get during a write storm, memory", 1.5, false},
      {"leveldb get_storm ns storm/idle", "get during a write storm, LevelDB", 1.5, false},
  };
  auto median_ratio = [&](const std::string& name) -> const Series* {
    auto it = series.find(name);
    return it == series.end() || it->second.ratios.empty() ? nullptr : &it->second;
  };
  std::printf("\nsummary against issue 14's targets (medians; load average %s at start, %s at end):\n",
              load_at_start.c_str(), LoadAverage().c_str());
  std::printf("  %-36s %8s  %-8s %s\n", "case", "ratio", "target", "met");
  for (const Target& t : kTargets) {
    const Series* s = median_ratio(t.name);
    if (s == nullptr) continue;
    const double r = Median(s->ratios);
    const bool met = t.at_least ? r >= t.bound : r <= t.bound;
    char target[16];
    std::snprintf(target, sizeof target, "%s%.1fx", t.at_least ? ">=" : "<=", t.bound);
    std::printf("  %-36s %7.2fx  %-8s %s\n", t.what, r, target, met ? "yes" : "NO");
  }
  for (const char* b : {"memory", "leveldb"}) {
    const Series* s = median_ratio(std::string(b) + " idle_put ns doc/raw");
    if (s == nullptr) continue;
    std::printf("  %-36s %7.2f us%s\n", (std::string("idle awaited put, ") + b).c_str(),
                Median(s->other) / 1000,
                std::string(b) == "memory" ? " (issue 14: no slower than ~1.4 us)" : "");
  }
  if (const Series* trip = median_ratio("line_trip ns 1t/2t")) {
    std::printf("  %-36s %7.2f us (the cost of each line a put shares with the other writer)\n",
                "cache line round trip, 2 threads", Median(trip->other) / 1000);
  }
  const Series* cpu = median_ratio("cpu 2t/1t (ops/s)");
  const Series* map = median_ratio("cpu_map 2t/1t (ops/s)");
  if (cpu != nullptr || map != nullptr) {
    std::printf("  controls (the parallelism the machine gave):");
    if (cpu != nullptr) std::printf(" cpu %.2fx", Median(cpu->ratios));
    if (map != nullptr) std::printf(" cpu_map %.2fx", Median(map->ratios));
    std::printf("\n");
    if (cpu != nullptr && Median(cpu->ratios) < 1.8) {
      std::printf("  the cpu control is below 1.8x: other processes held a core, so the 2t/1t rows "
                  "cannot be judged in this run\n");
    }
  }
}

int Main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rounds") {
      cfg.rounds = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--tries") {
      cfg.tries = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--docs") {
      cfg.docs = std::max(1000, std::atoi(next().c_str()));
    } else if (a == "--backend") {
      std::string b = next();
      cfg.backends.clear();
      if (b == "memory" || b == "both") cfg.backends.push_back(StoreOptions::Backend::kMemory);
      if (b == "leveldb" || b == "both") cfg.backends.push_back(StoreOptions::Backend::kLevelDB);
    } else if (a == "--cases") {
      cfg.cases.clear();
      std::string list = next();
      for (size_t p = 0; p <= list.size();) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        cfg.cases.insert(list.substr(p, q - p));
        p = q + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--rounds N] [--tries N] [--docs N] [--backend memory|leveldb|both] "
                   "[--cases own_db,shared_db,own_cost,shared_cost,raw_shared,lean_shared,bulk100,cpu,cpu_map,line_trip,get_storm,idle_put,thread_cpu]\n",
                   argv[0]);
      return 2;
    }
  }
  auto want = [&](const char* c) { return cfg.cases.count(c) > 0; };
  const std::string load_at_start = LoadAverage();

  std::map<std::string, Series> series;  // insertion order is not needed: names sort well
  // The cpu case's ratio this round: a 2t/1t ratio divided by it is the
  // share of the parallelism the machine gave that the case turned into
  // throughput (printed for throughput ratios when cpu runs).
  double cpu_ratio = 0;
  auto record = [&](const std::string& name, double base, double other, double ratio) {
    Series& s = series[name];
    s.base.push_back(base);
    s.other.push_back(other);
    s.ratios.push_back(ratio);
    const bool scaling = name.find("2t/1t") != std::string::npos && name.rfind("cpu", 0) != 0;
    const int digits = base < 100 && other < 100 ? 2 : 0;  // per-put costs are small
    if (scaling && cpu_ratio > 0) {
      series[name + " vs cpu"].ratios.push_back(ratio / cpu_ratio);
      std::printf("  %-34s %12.*f %12.*f  %5.2fx  (%.2f of cpu)\n", name.c_str(), digits, base,
                  digits, other, ratio, ratio / cpu_ratio);
    } else {
      std::printf("  %-34s %12.*f %12.*f  %5.2fx\n", name.c_str(), digits, base, digits, other,
                  ratio);
    }
    std::fflush(stdout);
  };

  for (int round = 1; round <= cfg.rounds; ++round) {
    std::printf("round %d/%d%38s %12s %12s  ratio\n", round, cfg.rounds, "", "base", "other");
    const int tries = cfg.tries;
    if (want("cpu")) {
      auto [one, two] = BestOf(tries, true, [&] { return CpuThroughput(1); },
                               [&] { return CpuThroughput(2); });
      cpu_ratio = two / one;
      record("cpu 2t/1t (ops/s)", one, two, cpu_ratio);
    }
    if (want("line_trip")) {
      auto [one, two] = BestOf(tries, false, [&] { return LineTripNs(1); },
                               [&] { return LineTripNs(2); });
      record("line_trip ns 1t/2t", one, two, two / one);
    }
    if (want("cpu_map")) {
      auto [one, two] = BestOf(tries, true, [&] { return MapThroughput(1); },
                               [&] { return MapThroughput(2); });
      record("cpu_map 2t/1t (ops/s)", one, two, two / one);
    }
    for (auto backend : cfg.backends) {
      const std::string b = Name(backend);
      if (want("own_db")) {
        auto [one, two] = BestOf(tries, true, [&] { return PutThroughput(backend, 1, false, cfg.docs); },
                                 [&] { return PutThroughput(backend, 2, false, cfg.docs); });
        record(b + " own_db 2t/1t", one, two, two / one);
      }
      if (want("shared_db")) {
        auto [one, two] = BestOf(tries, true, [&] { return PutThroughput(backend, 1, true, cfg.docs); },
                                 [&] { return PutThroughput(backend, 2, true, cfg.docs); });
        record(b + " shared_db 2t/1t", one, two, two / one);
      }
      for (bool shared : {false, true}) {
        if (!want(shared ? "shared_cost" : "own_cost")) continue;
        auto [one, two] = PutCosts(backend, shared, cfg.docs, tries);
        const std::string n = b + (shared ? " shared_db" : " own_db");
        record(n + " cpu us/put 2t:1t", one.cpu_us, two.cpu_us, two.cpu_us / one.cpu_us);
        // The backend's own threads, as a share of the writers' CPU: with
        // T writers the process needs T * (1 + share) cores.
        record(n + " background us/put", one.background_us, two.background_us,
               two.background_us / std::max(1e-9, two.cpu_us));
        // Sleeps are ~0 alone: print them per 1000 puts, the ratio as 2t - 1t.
        record(n + " sleeps/1k puts 2t", one.sleeps * 1000, two.sleeps * 1000,
               (two.sleeps - one.sleeps) * 1000);
        record(n + " preempts/1k puts 2t", one.yields * 1000, two.yields * 1000,
               (two.yields - one.yields) * 1000);
        // A writer's wall time per put not on a core: waiting in the run
        // queue, and asleep. The ratio column is 2t - 1t (us a put).
        if (one.sched_known && two.sched_known) {
          record(n + " runq us/put", one.runq_us, two.runq_us, two.runq_us - one.runq_us);
          record(n + " asleep us/put", one.blocked_us, two.blocked_us,
                 two.blocked_us - one.blocked_us);
        } else {
          std::printf("  %-34s %12s %12s  (no /proc/thread-self/schedstat)\n",
                      (n + " runq, asleep us/put").c_str(), "n/a", "n/a");
        }
        // Throughput while every writer was running (see PutCost; the ratio
        // 2t/1t, not set against the cpu control: the windows already leave
        // out the time the machine did not give), and how much of the run
        // that was (the ratio column: 2t's share).
        record(n + " all-running puts/s", one.all_running_rate, two.all_running_rate,
               two.all_running_rate / std::max(1.0, one.all_running_rate));
        record(n + " all-running share", one.all_running_share, two.all_running_share,
               two.all_running_share);
      }
      if (want("lean_shared") && backend == StoreOptions::Backend::kMemory) {
        auto [one, two] = BestOf(tries, true, [&] { return LeanSharedThroughput(1, cfg.docs); },
                                 [&] { return LeanSharedThroughput(2, cfg.docs); });
        record(b + " lean_shared 2t/1t", one, two, two / one);
      }
      if (want("raw_shared")) {
        auto [one, two] = BestOf(tries, true, [&] { return RawSharedThroughput(backend, 1, cfg.docs); },
                                 [&] { return RawSharedThroughput(backend, 2, cfg.docs); });
        record(b + " raw_shared 2t/1t", one, two, two / one);
      }
      if (want("bulk100")) {
        auto [one, two] = BestOf(tries, true, [&] { return BulkThroughput(backend, 1, cfg.docs * 5); },
                                 [&] { return BulkThroughput(backend, 2, cfg.docs * 5); });
        record(b + " bulk100 2t/1t", one, two, two / one);
      }
      if (want("get_storm")) {
        auto [idle, storm] = BestOf(tries, false, [&] { return GetLatency(backend, Storm::kNone, cfg.docs); },
                                    [&] { return GetLatency(backend, Storm::kSameDb, cfg.docs); });
        record(b + " get_storm ns storm/idle", idle, storm, storm / idle);
        auto [idle2, other] =
            BestOf(tries, false, [&] { return GetLatency(backend, Storm::kNone, cfg.docs); },
                   [&] { return GetLatency(backend, Storm::kOtherDb, cfg.docs); });
        record(b + " get_storm ns other-db/idle", idle2, other, other / idle2);
      }
      if (want("thread_cpu")) {
        // The least of `tries` runs, per figure: disturbance only adds.
        ThreadCpuSplit best;
        for (int i = 0; i < tries; ++i) {
          const ThreadCpuSplit s = ThreadCpu(backend, cfg.docs * 5);
          auto keep = [&](ThreadCost* b, const ThreadCost& x) {
            if (i == 0 || x.cpu_us < b->cpu_us) b->cpu_us = x.cpu_us;
            if (i == 0 || x.faults_per_1k < b->faults_per_1k) b->faults_per_1k = x.faults_per_1k;
          };
          keep(&best.writer, s.writer);
          keep(&best.mapper, s.mapper);
          keep(&best.background, s.background);
        }
        const double w = std::max(1e-9, best.writer.cpu_us);
        record(b + " thread_cpu us/put bg", w, best.background.cpu_us, best.background.cpu_us / w);
        record(b + " thread_cpu us/put mapper", w, best.mapper.cpu_us, best.mapper.cpu_us / w);
        // Against the writer's faults, as the CPU rows are against its CPU
        // (no ratio, NaN, when the writer took none).
        const double f = best.writer.faults_per_1k;
        auto per_writer_fault = [&](double x) { return f > 0 ? x / f : std::nan(""); };
        record(b + " thread_cpu faults/1k bg", f, best.background.faults_per_1k,
               per_writer_fault(best.background.faults_per_1k));
        record(b + " thread_cpu faults/1k mapper", f, best.mapper.faults_per_1k,
               per_writer_fault(best.mapper.faults_per_1k));
      }
      if (want("idle_put")) {
        auto [doc, raw] = IdlePut(backend, cfg.docs);
        record(b + " idle_put ns doc/raw", raw, doc, doc / raw);
      }
    }
  }

  std::printf("\nmedians over %d rounds (throughput in docs/s or ops/s, latency in ns):\n",
              cfg.rounds);
  std::printf("  %-34s %12s %12s  %s\n", "case", "base", "other", "ratio");
  for (auto& [name, s] : series) {
    if (s.base.empty()) {
      std::printf("  %-34s %12s %12s  %5.2fx\n", name.c_str(), "", "", Median(s.ratios));
    } else {
      const double b = Median(s.base), o = Median(s.other);
      const int digits = b < 100 && o < 100 ? 2 : 0;
      std::printf("  %-34s %12.*f %12.*f  %5.2fx\n", name.c_str(), digits, b, digits, o,
                  Median(s.ratios));
    }
  }
  PrintSummary(series, load_at_start);
  return 0;
}

}  // namespace
}  // namespace settee

int main(int argc, char** argv) { return settee::Main(argc, argv); }
