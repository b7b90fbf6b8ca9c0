// libFuzzer target: arbitrary bytes as an HTTP request stream, fed to the
// request parser in two pieces (split at the first input byte's value), as
// a connection would. Nothing may crash or loop.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  settee::http::ParserLimits limits;
  limits.max_header_bytes = 4096;
  limits.max_body_bytes = 1 << 16;
  settee::http::RequestParser parser(limits);
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t split = data[0] % (size + 1);
  std::string pending;
  for (std::string_view piece : {all.substr(0, split), all.substr(split)}) {
    pending.append(piece);
    for (int guard = 0; guard < 10000 && !pending.empty(); ++guard) {
      size_t consumed = 0;
      auto event = parser.Execute(pending, &consumed);
      if (consumed > pending.size()) __builtin_trap();
      pending.erase(0, consumed);
      if (event == settee::http::RequestParser::Event::kError) return 0;
      if (event == settee::http::RequestParser::Event::kMessageComplete) parser.TakeRequest();
      if (event == settee::http::RequestParser::Event::kNeedMore) break;
    }
  }
  return 0;
}
