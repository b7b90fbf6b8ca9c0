// Test helpers for replication: compare two databases document by document
// and revision tree by revision tree.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "settee/database.h"

namespace settee::testing {

// Every document id (deleted ones too) with its leaves, each leaf's body
// with its `_revisions` history: equal maps mean equal revision trees (as
// far as both sides keep history) and equal bodies.
inline std::map<std::string, std::map<std::string, std::string>> TreeDump(Database& db) {
  std::vector<std::string> ids;
  ChangesOptions options;
  options.all_docs_style = true;
  uint64_t last = 0;
  Status s = db.Changes(
      options,
      [&](const ChangeRow& row) {
        ids.push_back(row.id);
        return true;
      },
      &last);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const std::string& id : ids) {
    GetOptions get;
    get.revs = true;
    std::vector<OpenRevResult> leaves;
    s = db.GetOpenRevs(id, {}, get, &leaves);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto& doc = out[id];
    for (const OpenRevResult& leaf : leaves) doc[leaf.rev] = leaf.found ? leaf.doc : "missing";
    // The winner (and so _conflicts) must agree too.
    GetOptions winner;
    winner.conflicts = true;
    winner.deleted_conflicts = true;
    auto w = db.Get(id, winner);
    doc["winner"] = w.ok() ? *w : std::string(w.status().reason());
  }
  return out;
}

inline void ExpectSameDatabases(Database& a, Database& b) {
  auto da = TreeDump(a), db = TreeDump(b);
  EXPECT_EQ(da.size(), db.size());
  for (const auto& [id, leaves] : da) {
    auto it = db.find(id);
    if (it == db.end()) {
      ADD_FAILURE() << "missing on " << b.name() << ": " << id;
      continue;
    }
    EXPECT_EQ(leaves, it->second) << "document " << id;
  }
}

}  // namespace settee::testing
