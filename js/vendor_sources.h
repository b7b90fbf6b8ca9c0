// JS library files embedded into the binary at build time (js/CMakeLists.txt
// generates vendor_sources.cc from Debian's node-readable-stream). The
// prelude compiles one on first use through native.vendorSource(name), so
// an isolate that never requires 'stream' never parses them.
#pragma once

#include <string_view>

namespace settee::js {

struct VendorFile {
  const char* name;    // "readable-stream/lib/_stream_readable.js"
  const char* source;  // the file's text, as installed
};

// Ends with {nullptr, nullptr}.
extern const VendorFile kVendorFiles[];

// The embedded file `name`, or nullptr.
inline const char* FindVendorSource(std::string_view name) {
  for (const VendorFile* f = kVendorFiles; f->name != nullptr; ++f) {
    if (name == f->name) return f->source;
  }
  return nullptr;
}

}  // namespace settee::js
