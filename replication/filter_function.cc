#include "replication/filter_function.h"

#include "util/json.h"

namespace settee::replication {

FilterFunction::FilterFunction(views::ViewFunctions* functions, std::string_view code,
                               std::string ddoc, std::string_view query_params,
                               std::string_view db_name, std::string_view security)
    : functions_(functions) {
  std::string req = "{\"method\":\"GET\",\"query\":" + std::string(query_params) +
                    ",\"headers\":{},\"body\":\"undefined\",\"userCtx\":{\"db\":";
  json::AppendQuoted(&req, db_name);
  req += ",\"name\":null,\"roles\":[\"_admin\"]},\"secObj\":" + std::string(security) + "}";
  code_.ddoc = std::move(ddoc);
  // The exception crosses as an emitted row of its own.
  code_.maps = {"function (doc) { var pass; try { pass = (" + std::string(code) + "\n)(doc, " +
                req +
                "); } catch (e) { emit('error', String(e && e.message || e)); return; }"
                " if (pass) emit(null, null); }"};
}

Result<bool> FilterFunction::Passes(const std::string& doc, std::string_view doc_id) {
  std::string out;
  Status s = functions_->Map(code_, {doc}, &out);
  if (!s.ok()) return s;
  // Per document, per function, the emitted [key, value] pairs: [[[]]]
  // rejected, [[[[null,null]]]] passed, [[[["error",message]]]] threw.
  json::Document rows;
  if (!json::Parse(out, &rows).ok() || !rows.IsArray() || rows.Empty() || !rows[0].IsArray() ||
      rows[0].Empty() || !rows[0][0].IsArray()) {
    return Status::Internal("unexpected output of a filter function: " + out);
  }
  const json::Value& pairs = rows[0][0];
  if (pairs.Empty()) return false;
  const json::Value& pair = pairs[0];
  if (pair.IsArray() && pair.Size() == 2 && pair[0].IsString() && pair[1].IsString()) {
    return Status::Internal("filter function threw on document \"" + std::string(doc_id) +
                            "\": " + std::string(json::View(pair[1])));
  }
  return true;
}

}  // namespace settee::replication
