#include "runtime/config_file.h"

#include <cstdio>
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

// One TOML basic string starting at in[*pos] == '"'; advances past it.
bool ReadQuoted(std::string_view in, size_t* pos, std::string* out) {
  out->clear();
  for (size_t i = *pos + 1; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 1 < in.size()) {
      out->push_back(in[++i]);
    } else if (in[i] == '"') {
      *pos = i + 1;
      return true;
    } else {
      out->push_back(in[i]);
    }
  }
  return false;
}

bool ParseValue(std::string_view v, std::vector<std::string>* out) {
  v = Trim(v);
  out->clear();
  if (v.empty()) return true;
  if (v.front() == '"') {
    size_t pos = 0;
    std::string s;
    if (!ReadQuoted(v, &pos, &s)) return false;
    out->push_back(std::move(s));
    return true;
  }
  if (v.front() != '[') {  // a bare word (INI style)
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

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

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
  if (found != lines.size()) {
    std::string_view t = Trim(lines[found]);
    if (!ParseValue(t.substr(t.find('=') + 1), &values)) {
      return Status::BadRequest("cannot read " + std::string(key) + " in " + path);
    }
  }
  edit(&values);
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
    else lines[found] = line;
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
  const std::string tmp = path + ".settee-tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IOError("cannot write " + tmp);
    for (const std::string& l : lines) out << l << '\n';
    out.flush();
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("cannot replace " + path);
  }
  return Status::OK();
}

}  // namespace settee
