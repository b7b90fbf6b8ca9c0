// Process-wide V8 setup: the platform and flags, created exactly once.
//
// V8 allows one platform per process and V8::Initialize() once per process;
// every isolate of every IsolatePool shares them. The platform lives until
// process exit (V8 cannot be re-initialized after V8::Dispose(), so it is
// never disposed).
//
// Thread safety: InitializeV8() may be called from any thread, any number of
// times; the first call does the work and the others wait for it.
#pragma once

#include <string>

namespace v8 {
class Platform;
}

namespace settee::js {

// Initializes V8 once. settee's default flags (v8_init.cc) are applied, then
// `flags` (e.g. "--max-semi-space-size=16"), so the caller's win; only the
// first call's flags count, later calls ignore theirs.
void InitializeV8(const std::string& flags = {});

// The process-wide platform whose message loops the isolates pump
// (v8::platform::PumpMessageLoop): libplatform's default platform. V8 itself
// is given a WorkerPlatform around it (worker_platform.h), whose own threads
// run V8's worker tasks. REQUIRES: InitializeV8() was called.
v8::Platform* V8Platform();

// The platform V8 was given (a WorkerPlatform around V8Platform()): settee's
// own work that runs beside V8's on its worker threads is posted here
// (CallOnWorkerThread). REQUIRES: InitializeV8() was called.
v8::Platform* V8WorkerPlatform();

}  // namespace settee::js
