// Writing a changed option back into the TOML/INI file `settee --config`
// reads (CLI11's format: `[serve]` sections of `key = value` lines), so a
// configuration change made over HTTP (PUT /_node/_local/_config/...)
// survives a restart, as CouchDB persists its config to local.ini.
//
// Only the one line of the option changes; comments, order and every other
// line stay as they were. The file is replaced atomically (a temporary
// file renamed over it), so a crash leaves the old or the new file.
//
// Thread safety: none; callers serialize edits of one file (NodeConfig's
// lock does).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

// Reads the values of `key` in `[section]` of the file at `path` (a quoted
// string, a bare word, or a one-line array of quoted strings; `key` matches
// with '-' and '_' alike, as CLI11 reads it), lets `edit` change the list,
// and writes the option back: an array when `as_array`, else the first
// value; no line at all when the list is empty. A key that is not there is
// added at the end of its section (the section is added at the end of the
// file if missing). kInvalidArgument for a value this cannot read (a
// multi-line array): nothing is written then; IO errors as they come.
Status EditConfigOption(const std::string& path, std::string_view section, std::string_view key,
                        bool as_array,
                        const std::function<void(std::vector<std::string>* values)>& edit);

}  // namespace settee
