#include "js/v8_init.h"

#include <memory>
#include <mutex>

#include <libplatform/libplatform.h>
#include <v8-initialization.h>
#include <v8-platform.h>

#include "js/worker_platform.h"

namespace settee::js {

namespace {

// Flags applied before the caller's. --no-lazy-feedback-allocation: V8 10.2
// otherwise allocates a function's feedback vector only after several calls,
// so a long first call (a script's main loop, a map function over a big
// batch) gets OSR-compiled with parts of its loops still lacking type
// feedback and stays on generic paths: the issue-4 string loop runs ~1.8x
// slower than with eager feedback (bench/js/run_js_bench.py measures it).
//
// --max-semi-space-size=4 (MiB; V8's default lets each semi-space grow to
// 16): a young generation grown to 16 MiB walks fresh pages between
// scavenges, and on the VMs we measure on every first touch of a page is a
// paravirtual page fault of microseconds. Once a big write had grown it,
// settee bench's all-docs-include-docs (the last basics case before
// replication) sat at 0.33-0.45 ms median against a 0.077 ms min, half its
// iterations faulting; at 4 MiB (and at 8, or with 16 from the start) the
// median is the min's 0.08 ms. The smaller young generation also lowers the
// basics suite's peak RSS (memory backend 251 -> 232 MB) and runs the eval
// suite's string loop ~1.4x faster (86-97 ms against 129-150 ms, one run
// each, same machine).
//
// --minor-mc: the young generation is collected by V8's young-generation
// mark-compactor instead of the scavenger. The scavenger copies survivors
// object by object in the order it finds them (siblings together, then the
// last sibling's children first, interleaved across its parallel tasks), so
// a big document built depth first ends up scattered across the old space,
// and every later walk of it (bulkDocs' encoder, a map function, a JSON
// text) misses the cache at nearly every object: 150 ns an object for the
// workload's 50 massive documents (80 MB of objects, most of it in the
// 273,000 objects and 2 million strings). The mark-compactor moves a young
// page whose objects mostly survive to the old space whole, so objects
// keep the order they were made in, which is the order a walk visits them:
// a plain JS walk of those documents 42 -> 11.5 ms (strings untouched) and
// 70 -> 25 ms (every string read), the massive-docs bulkDocs 99-155 -> 69-72
// ms of isolate CPU, same machine and load, alternating processes.
constexpr char kDefaultFlags[] = "--no-lazy-feedback-allocation --max-semi-space-size=4 --minor-mc";

std::once_flag g_once;
// Deliberately leaked: isolates on detached threads may still reference it
// while static destructors run.
v8::Platform* g_platform = nullptr;  // libplatform's, owned by g_worker_platform
WorkerPlatform* g_worker_platform = nullptr;
}  // namespace

void InitializeV8(const std::string& flags) {
  std::call_once(g_once, [&] {
    // Background threads for GC and compilation; two cores are typical here
    // and the isolate threads themselves do the JS work. They are
    // WorkerPlatform's (worker_platform.h: posting to libplatform's blocked
    // the isolate threads); libplatform's own single worker runs only the
    // delayed worker tasks (WorkerPlatform hands those to it).
    auto platform = v8::platform::NewDefaultPlatform(
        /*thread_pool_size=*/1, v8::platform::IdleTaskSupport::kDisabled,
        v8::platform::InProcessStackDumping::kDisabled, nullptr);
    g_platform = platform.get();
    g_worker_platform = new WorkerPlatform(std::move(platform), /*workers=*/2);
    v8::V8::SetFlagsFromString(kDefaultFlags);
    if (!flags.empty()) v8::V8::SetFlagsFromString(flags.data(), flags.size());
    v8::V8::InitializePlatform(g_worker_platform);
    v8::V8::Initialize();
  });
}

v8::Platform* V8Platform() { return g_platform; }

v8::Platform* V8WorkerPlatform() { return g_worker_platform; }

}  // namespace settee::js
