// Helpers for the C API tests: an error and a settee-owned string that free
// themselves, as a C caller must (settee_error_clear, settee_free).
#pragma once

#include <string>

#include "settee/settee.h"

namespace settee_test {

struct Err {
  settee_error e = SETTEE_ERROR_INIT;
  ~Err() { settee_error_clear(&e); }
  settee_error* operator&() { return &e; }
  std::string message() const { return e.message ? e.message : ""; }
};

struct Str {
  char* p = nullptr;
  ~Str() { settee_free(p); }
  // The out-parameter for a call, freeing what the last call gave.
  char** out() {
    settee_free(p);
    p = nullptr;
    return &p;
  }
  std::string str() const { return p ? p : "<null>"; }
};

}  // namespace settee_test
