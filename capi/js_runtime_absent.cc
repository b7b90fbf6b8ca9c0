// JsRuntime (include/settee/js_runtime.h) in a build without the JS runtime
// (SETTEE_WITH_JS=OFF): the API is there and says so, so one header fits
// every build of the library.
#include "settee/js_runtime.h"

namespace settee {

Result<std::unique_ptr<JsRuntime>> JsRuntime::Start(Store*, const JsRuntimeOptions&) {
  return Status(Status::Code::kInvalidOperation,
                "settee was built without the JS runtime (SETTEE_WITH_JS=OFF)");
}

bool JsRuntimeAvailable() { return false; }

}  // namespace settee
