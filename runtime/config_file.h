// Writing a changed option back into the TOML/INI file `settee --config`
// reads (CLI11's format: `[serve]` sections of `key = value` lines), so a
// configuration change made over HTTP (PUT /_node/_local/_config/...)
// survives a restart, as CouchDB persists its config to local.ini.
//
// Only the one line of the option changes; comments, order and every other
// line stay as they were. The file is replaced atomically (a temporary
// file with the old file's mode, synced, renamed over it; the directory
// synced), so a crash leaves the old or the new file. A symlinked file stays
// a symlink: the file it points to is replaced.
//
// The installed CLI11 (2.1) reads values more loosely than TOML: it cuts a
// line at '#' even inside quotes, keeps backslashes as they are, and splits
// bare words at ',' and blanks. So values that would not read back the same
// are refused rather than written.
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
// file if missing); an edit that changes no value writes nothing. kBadRequest, with nothing written, when the line there
// now would not read back the same after the rewrite (a multi-line array, a
// '#' or '\\' in a value, a bare word with ',' or a blank) or a value after
// `edit` fails ConfigValueRoundTrips; the reasons never name the file, as
// they go to HTTP clients. IO errors as they come.
Status EditConfigOption(const std::string& path, std::string_view section, std::string_view key,
                        bool as_array,
                        const std::function<void(std::vector<std::string>* values)>& edit);

// Whether `value`, written quoted, reads back as itself: no '#', '\\', '"'
// or control characters.
bool ConfigValueRoundTrips(std::string_view value);

}  // namespace settee
