#include "runtime/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace settee {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool SameKey(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] == '_' ? '-' : a[i];
    const char y = b[i] == '_' ? '-' : b[i];
    if (x != y) return false;
  }
  return true;
}

// One quoted string starting at in[*pos] == '"'; advances past it. A
// backslash is refused: CLI11 2.1 does not undo escapes as TOML would, so
// what it reads would not be what this reads.
bool ReadQuoted(std::string_view in, size_t* pos, std::string* out) {
  out->clear();
  for (size_t i = *pos + 1; i < in.size(); ++i) {
    if (in[i] == '\\') {
      return false;
    } else if (in[i] == '"') {
      *pos = i + 1;
      return true;
    } else {
      out->push_back(in[i]);
    }
  }
  return false;
}

// False unless CLI11 2.1 reads `v` (a line's text after '=', comment cut
// off) as the same values: it splits bare words at ',' and blanks.
bool ParseValue(std::string_view v, std::vector<std::string>* out) {
  v = Trim(v);
  out->clear();
  if (v.empty()) return true;
  if (v.front() == '"') {
    size_t pos = 0;
    std::string s;
    if (!ReadQuoted(v, &pos, &s) || pos != v.size()) return false;
    out->push_back(std::move(s));
    return true;
  }
  if (v.front() != '[') {  // a bare word (INI style)
    if (v.find_first_of(",\\ \t'`") != std::string_view::npos) return false;
    out->emplace_back(v);
    return true;
  }
  if (v.back() != ']') return false;  // a multi-line array
  size_t pos = 1;
  while (pos < v.size()) {
    const char c = v[pos];
    if (c == ' ' || c == '\t' || c == ',') {
      ++pos;
    } else if (c == ']') {
      return pos + 1 == v.size();
    } else if (c == '"') {
      std::string s;
      if (!ReadQuoted(v, &pos, &s)) return false;
      out->push_back(std::move(s));
    } else {
      return false;
    }
  }
  return false;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Errno() { return std::strerror(errno); }

// Writes `text` to a new file beside `target` with the mode of the file it
// replaces (admin passwords stay as private as the operator made them),
// syncs it, renames it over `target` and syncs the directory, so a crash
// leaves the old or the new file, complete.
Status ReplaceFile(const std::string& target, const std::string& text) {
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return Status::IOError("cannot stat " + target + ": " + Errno());
  const std::string tmp = target + ".settee-tmp";
  ::unlink(tmp.c_str());  // a leftover of a crash
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create " + tmp + ": " + Errno());
  Status s;
  if (::fchmod(fd, st.st_mode & 07777) != 0) s = Status::IOError("cannot chmod " + tmp + ": " + Errno());
  for (size_t done = 0; s.ok() && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) s = Status::IOError("cannot write " + tmp + ": " + Errno());
    else done += static_cast<size_t>(n);
  }
  if (s.ok() && ::fsync(fd) != 0) s = Status::IOError("cannot sync " + tmp + ": " + Errno());
  if (::close(fd) != 0 && s.ok()) s = Status::IOError("cannot write " + tmp + ": " + Errno());
  if (s.ok() && std::rename(tmp.c_str(), target.c_str()) != 0) {
    s = Status::IOError("cannot replace " + target + ": " + Errno());
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status::IOError("cannot open " + dir + ": " + Errno());
  const bool synced = ::fsync(dfd) == 0;
  ::close(dfd);
  if (!synced) return Status::IOError("cannot sync " + dir + ": " + Errno());
  return Status::OK();
}

}  // namespace

bool ConfigValueRoundTrips(std::string_view value) {
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '#' || c == '\\' || c == '"' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

Status EditConfigOption(const std::string& path, std::string_view section, std::string_view key,
                        bool as_array,
                        const std::function<void(std::vector<std::string>* values)>& edit) {
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    if (!in) return Status::IOError("cannot read " + path);
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  }
  const std::string header = "[" + std::string(section) + "]";
  size_t section_start = lines.size();  // the header line
  size_t section_end = lines.size();    // one past the section's last line
  size_t found = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = Trim(lines[i]);
    if (!t.empty() && t.front() == '[') {
      if (section_start != lines.size() && i > section_start) {
        section_end = i;
        break;
      }
      if (t == header) section_start = i;
      continue;
    }
    if (section_start == lines.size() || found != lines.size()) continue;
    const size_t eq = t.find('=');
    if (eq != std::string_view::npos && SameKey(Trim(t.substr(0, eq)), key)) found = i;
  }
  std::vector<std::string> values;
  std::string comment;  // kept on the rewritten line
  if (found != lines.size()) {
    std::string_view v = Trim(lines[found]);
    v = v.substr(v.find('=') + 1);
    // CLI11 cuts the line at '#', even inside quotes.
    if (const size_t hash = v.find('#'); hash != std::string_view::npos) {
      comment = " " + std::string(v.substr(hash));
      v = v.substr(0, hash);
    }
    bool ok = ParseValue(v, &values);
    for (const std::string& e : values) ok = ok && ConfigValueRoundTrips(e);
    if (!ok) {
      return Status::BadRequest("settee cannot rewrite the config file's " + std::string(key) +
                                " line without changing what it means: edit it by hand");
    }
  }
  const std::vector<std::string> before = values;
  edit(&values);
  if (values == before) return Status::OK();  // the file stays untouched
  for (const std::string& e : values) {
    if (!ConfigValueRoundTrips(e)) {
      return Status::BadRequest("a value kept in the config file must not hold '#', '\\', '\"' "
                                "or control characters");
    }
  }
  std::string line;
  if (!values.empty()) {
    line = std::string(key) + " = ";
    if (as_array) {
      line += "[";
      for (size_t i = 0; i < values.size(); ++i) line += (i ? ", " : "") + Quote(values[i]);
      line += "]";
    } else {
      line += Quote(values.front());
    }
  }
  if (found != lines.size()) {
    if (line.empty()) lines.erase(lines.begin() + found);
    else lines[found] = line + comment;
  } else if (!line.empty()) {
    if (section_start == lines.size()) {
      lines.push_back(header);
      lines.push_back(line);
    } else {
      // After the section's last non-blank line.
      size_t at = section_end;
      while (at > section_start + 1 && Trim(lines[at - 1]).empty()) --at;
      lines.insert(lines.begin() + at, line);
    }
  }
  std::string text;
  for (const std::string& l : lines) text += l + '\n';
  // A symlinked config file stays a symlink: its target is replaced.
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return Status::IOError("cannot resolve " + path + ": " + Errno());
  const std::string target = real;
  std::free(real);
  return ReplaceFile(target, text);
}

}  // namespace settee
