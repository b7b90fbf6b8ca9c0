#include "storage/design_doc.h"

#include <algorithm>

#include "storage/collation.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::views {

namespace {

// Version of the index row format (docs/index_key_format.md, "Views"): part
// of every signature so that a format change rebuilds every index.
constexpr std::string_view kIndexFormat = "settee-view-1";

// Version of how a Mango ("query") index maps a document (mango.h's field
// paths): part of a query index's signature, so that a change to which
// documents an index holds rebuilds the indexes built before it. 2: an
// integer in a field path also names an array element ("tags.0", "tags.+1",
// "tags.01", as CouchDB's mango_doc:get_field).
constexpr std::string_view kMangoMapVersion = "mango-map-2";

std::string Signature(const MapCode& code, std::string_view lib) {
  std::string text(kIndexFormat);
  text += '\n';
  text += collation::IcuCollatorVersion();
  text += '\n';
  text += code.language;
  if (code.language == "query") {
    text += '\n';
    text += kMangoMapVersion;
  }
  for (const std::string& m : code.maps) {
    text += '\n';
    text += std::to_string(m.size());
    text += ':';
    text += m;
  }
  text += "\nlib:";
  text += lib;
  return Xxh128Hex(text);
}

}  // namespace

const ViewDef* DesignDoc::Find(std::string_view name) const {
  for (const ViewDef& v : views) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

Result<DesignDoc> ParseDesignDoc(std::string_view id, std::string_view json) {
  json::Document doc;
  Status s = json::Parse(json, &doc);
  if (!s.ok()) return s;
  if (!doc.IsObject()) return Status(Status::Code::kInvalidDesignDoc, "design document is not an object");
  DesignDoc out;
  out.id = std::string(id);
  out.code.ddoc = std::string(json);
  if (auto it = doc.FindMember("language"); it != doc.MemberEnd()) {
    if (!it->value.IsString()) {
      return Status(Status::Code::kInvalidDesignDoc, "`language` must be a string");
    }
    out.code.language = std::string(json::View(it->value));
  }
  const bool query = out.code.language == "query";
  std::string lib = "null";
  auto views = doc.FindMember("views");
  if (views != doc.MemberEnd() && !views->value.IsNull()) {
    if (!views->value.IsObject()) {
      return Status(Status::Code::kInvalidDesignDoc, "`views` is not an object");
    }
    std::vector<std::pair<std::string, std::string>> raw;  // name, map source
    for (auto& m : views->value.GetObject()) {
      std::string name(json::View(m.name));
      if (name == "lib") {
        lib = json::Serialize(m.value);
        continue;
      }
      if (!m.value.IsObject()) {
        return Status(Status::Code::kInvalidDesignDoc, "View " + name + " must be an object");
      }
      auto map = m.value.FindMember("map");
      std::string source;
      if (map != m.value.MemberEnd() && map->value.IsString() && !query) {
        source = std::string(json::View(map->value));
      } else if (map != m.value.MemberEnd() && map->value.IsObject() && query) {
        // Mango: the index definition is the "map"; its options ride along.
        json::Document def;
        def.SetObject();
        def.AddMember("map", json::Value(map->value, def.GetAllocator()), def.GetAllocator());
        if (auto o = m.value.FindMember("options"); o != m.value.MemberEnd()) {
          def.AddMember("options", json::Value(o->value, def.GetAllocator()), def.GetAllocator());
        }
        source = json::Serialize(def);
      } else {
        return Status(Status::Code::kInvalidDesignDoc,
                      "View " + name + " must have a " + (query ? "object" : "string") + " map");
      }
      ViewDef def;
      def.name = name;
      if (auto r = m.value.FindMember("reduce"); r != m.value.MemberEnd() && !r->value.IsNull()) {
        if (!r->value.IsString()) {
          return Status(Status::Code::kInvalidDesignDoc, "View " + name + " reduce must be a string");
        }
        def.reduce = std::string(json::View(r->value));
      }
      out.views.push_back(std::move(def));
      raw.emplace_back(name, std::move(source));
    }
    // Identical map functions share rows; the index orders them by source.
    std::vector<std::string> maps;
    for (auto& r : raw) maps.push_back(r.second);
    std::sort(maps.begin(), maps.end());
    maps.erase(std::unique(maps.begin(), maps.end()), maps.end());
    for (size_t i = 0; i < raw.size(); ++i) {
      out.views[i].map_index =
          static_cast<size_t>(std::lower_bound(maps.begin(), maps.end(), raw[i].second) - maps.begin());
    }
    out.code.maps = std::move(maps);
  }
  std::sort(out.views.begin(), out.views.end(),
            [](const ViewDef& a, const ViewDef& b) { return a.name < b.name; });
  out.signature = Signature(out.code, lib);
  return out;
}

DesignDoc TempDesignDoc(std::string language, std::string map, std::string reduce) {
  DesignDoc d;
  d.id = "_temp";
  d.code.language = std::move(language);
  d.code.maps.push_back(std::move(map));
  d.views.push_back(ViewDef{"temp", 0, std::move(reduce)});
  d.signature = Signature(d.code, "null");
  return d;
}

}  // namespace settee::views
