// Tests of storage/rev_tree: revision ids, merging replicated histories,
// winners and conflicts, stemming, and the binary encoding.
//
// The merge and stemming cases are ported from CouchDB's
// src/couch/test/eunit/couch_key_tree_tests.erl and PouchDB's
// tests/unit/test.merge.js. A CouchDB tree {Pos, {Key, Value, Children}} maps
// to nodes "Pos-Key"; a path is MergePath(start, [newest, ..., oldest]).
#include "storage/rev_tree.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace settee {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = RevTree::MergeKind;
using Hashes = std::vector<std::string>;

// Merges a path whose newest revision carries a body (like a replicated doc).
RevTree::MergeResult Merge(RevTree* t, uint64_t start, const Hashes& newest_first,
                           bool deleted = false) {
  return t->MergePath(start, newest_first, deleted, /*has_body=*/true, /*seq=*/1);
}

// Builds a tree by merging each path in turn.
RevTree Tree(const std::vector<std::pair<uint64_t, Hashes>>& paths) {
  RevTree t;
  for (const auto& [start, hashes] : paths) Merge(&t, start, hashes);
  return t;
}

std::vector<std::string> RevStrings(const RevTree& t, const std::vector<int>& idx) {
  std::vector<std::string> out;
  for (int i : idx) out.push_back(t.RevString(i));
  return out;
}

std::vector<std::string> RevStrings(const std::vector<RevId>& revs) {
  std::vector<std::string> out;
  for (const RevId& r : revs) out.push_back(r.ToString());
  return out;
}

int FindRev(const RevTree& t, const std::string& rev) {
  RevId id;
  EXPECT_TRUE(RevId::Parse(rev, &id)) << rev;
  return t.Find(id);
}

// Checks every invariant rev_tree.h promises.
void ExpectInvariants(const RevTree& t) {
  std::set<std::pair<uint64_t, std::string>> seen;
  for (int i = 0; i < static_cast<int>(t.size()); ++i) {
    const RevTree::Node& nd = t.node(i);
    EXPECT_GE(nd.gen, 1u);
    EXPECT_FALSE(nd.hash.empty());
    EXPECT_TRUE(seen.insert({nd.gen, nd.hash}).second) << "duplicate " << t.RevString(i);
    if (nd.parent != RevTree::kNone) {
      ASSERT_GE(nd.parent, 0);
      ASSERT_LT(nd.parent, i) << "parent after child at " << i;
      EXPECT_EQ(t.node(nd.parent).gen + 1, nd.gen);
    }
  }
  std::vector<int> leaves = t.Leaves();
  if (t.empty()) {
    EXPECT_EQ(t.Winner(), RevTree::kNone);
  } else {
    ASSERT_FALSE(leaves.empty());
    EXPECT_EQ(t.Winner(), leaves[0]);
  }
  for (int i = 0; i < static_cast<int>(t.size()); ++i) {
    EXPECT_EQ(t.IsLeaf(i), std::find(leaves.begin(), leaves.end(), i) != leaves.end());
  }
}

// ---------------------------------------------------------------------------
// RevId

TEST(RevIdTest, ParsesValidRevs) {
  RevId r;
  ASSERT_TRUE(RevId::Parse("1-967a00dff5e02add41819138abb3284d", &r));
  EXPECT_EQ(r.gen, 1u);
  EXPECT_EQ(r.hash, "967a00dff5e02add41819138abb3284d");
  EXPECT_EQ(r.ToString(), "1-967a00dff5e02add41819138abb3284d");

  ASSERT_TRUE(RevId::Parse("12-abc-def", &r));  // split at the FIRST '-'
  EXPECT_EQ(r.gen, 12u);
  EXPECT_EQ(r.hash, "abc-def");

  ASSERT_TRUE(RevId::Parse("007-x", &r));  // leading zeros, as list_to_integer
  EXPECT_EQ(r.gen, 7u);
  EXPECT_EQ(r.ToString(), "7-x");

  ASSERT_TRUE(RevId::Parse("18446744073709551615-a", &r));
  EXPECT_EQ(r.gen, UINT64_MAX);
}

TEST(RevIdTest, RejectsInvalidRevs) {
  RevId r;
  for (const char* bad : {"", "-", "abc", "-abc", "1-", "1", "0-abc", "00-abc", "+1-abc",
                          "-1-abc", "1a-abc", " 1-abc", "1 -abc", "0x1-abc",
                          "18446744073709551616-a", "99999999999999999999999-a"}) {
    EXPECT_FALSE(RevId::Parse(bad, &r)) << bad;
  }
}

TEST(RevIdTest, OrdersByGenThenHashBytewise) {
  RevId a{2, "b"}, b{10, "a"}, c{10, "b"}, d{10, "\xff"}, e{10, "B"};
  EXPECT_TRUE(a < b);  // numeric gen, not string "10" < "2"
  EXPECT_TRUE(b < c);
  EXPECT_TRUE(c < d);  // bytes compare unsigned
  EXPECT_TRUE(e < b);  // 'B' < 'a'
  EXPECT_FALSE(c < c);
  EXPECT_TRUE(c == (RevId{10, "b"}));
  EXPECT_FALSE(b == c);
}

// ---------------------------------------------------------------------------
// Merging: couch_key_tree_tests.erl "Key tree merge"

TEST(RevTreeMergeTest, MergeIntoEmptyTreeIsNewLeaf) {
  RevTree t;
  auto r = Merge(&t, 1, {"1"});
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(t.RevString(r.index), "1-1");
  EXPECT_EQ(t.DebugString(), "1-1");
}

TEST(RevTreeMergeTest, MergeIsReflexive) {
  RevTree t = Tree({{1, {"1"}}});
  auto r = Merge(&t, 1, {"1"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.index, 0);
  EXPECT_EQ(t.size(), 1u);
}

TEST(RevTreeMergeTest, MergingPrefixOfTreeYieldsTree) {
  RevTree t = Tree({{1, {"1"}}, {1, {"2"}}});
  EXPECT_EQ(t.DebugString(), "1-1 1-2");
  EXPECT_EQ(Merge(&t, 1, {"1"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t.DebugString(), "1-1 1-2");
}

TEST(RevTreeMergeTest, UnrelatedRootIsNewBranch) {
  RevTree t = Tree({{1, {"1"}}, {1, {"2"}}});
  auto r = Merge(&t, 1, {"3"});
  EXPECT_EQ(r.kind, Kind::kNewBranch);
  EXPECT_EQ(t.DebugString(), "1-1 1-2 1-3");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("1-3", "1-2", "1-1"));
}

TEST(RevTreeMergeTest, ReflexiveForChildNodes) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  EXPECT_EQ(t.DebugString(), "1-1(2-1a(3-1aa))");
  auto r = Merge(&t, 3, {"1aa", "1a", "1"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(t.RevString(r.index), "3-1aa");
  EXPECT_EQ(t.size(), 3u);
}

TEST(RevTreeMergeTest, MergingTreeToItselfIsItself) {
  RevTree t = Tree({{2, {"1a", "1"}}, {2, {"1b", "1"}}});
  ASSERT_EQ(t.DebugString(), "1-1(2-1a,2-1b)");
  RevTree before = t;
  for (int leaf : before.Leaves()) {
    std::vector<int> anc = before.Ancestry(leaf);
    Hashes path;
    for (int i : anc) path.push_back(before.node(i).hash);
    EXPECT_EQ(Merge(&t, before.node(leaf).gen, path).kind, Kind::kInternalNode);
  }
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeTreeOfOddLength) {
  RevTree t = Tree({{2, {"1a", "1"}}, {2, {"1b", "1"}}});
  auto r = Merge(&t, 3, {"1aa", "1a", "1"});
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_EQ(t.RevString(r.index), "3-1aa");
  EXPECT_EQ(t.DebugString(), "1-1(2-1a(3-1aa),2-1b)");
}

TEST(RevTreeMergeTest, UnevenLengthAtNodeTwoIsNewBranch) {
  // PouchDB "Merging tree of uneven length at node 2", one path at a time.
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  EXPECT_EQ(Merge(&t, 2, {"1a", "1"}).kind, Kind::kInternalNode);
  EXPECT_EQ(Merge(&t, 2, {"1b", "1"}).kind, Kind::kNewBranch);
  EXPECT_EQ(t.DebugString(), "1-1(2-1a(3-1aa),2-1b)");
}

TEST(RevTreeMergeTest, MergeTreeWithStem) {
  RevTree t = Tree({{2, {"1a", "1"}}, {2, {"1b", "1"}}});
  RevTree before = t;
  auto r = Merge(&t, 2, {"1a"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeWithStemAtDeeperLevel) {
  RevTree t = Tree({{2, {"1a", "1"}}, {3, {"1bb", "1b", "1"}}});
  ASSERT_EQ(t.DebugString(), "1-1(2-1a,2-1b(3-1bb))");
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 3, {"1bb"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeWithStemAtDeeperLevelWithDeeperPaths) {
  RevTree t = Tree({{2, {"1a"}}, {3, {"1bb", "1b"}}});
  ASSERT_EQ(t.DebugString(), "2-1a 2-1b(3-1bb)");
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 3, {"1bb"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeSingleTreeWithDeeperStem) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 3, {"1aa"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeTreeWithLargeStem) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 3, {"1aa", "1a"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, MergeStems) {
  RevTree t = Tree({{3, {"1aa", "1a"}}});
  ASSERT_EQ(t.DebugString(), "2-1a(3-1aa)");
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 3, {"1aa"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, DisjointStemCreatesConflict) {
  RevTree t = Tree({{2, {"1a", "1"}}});
  auto r = Merge(&t, 3, {"1aa"});
  EXPECT_EQ(r.kind, Kind::kNewBranch);
  EXPECT_EQ(t.DebugString(), "1-1(2-1a) 3-1aa");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("3-1aa", "2-1a"));
  EXPECT_THAT(RevStrings(t, t.Conflicts()), ElementsAre("2-1a"));
}

TEST(RevTreeMergeTest, FullHistoryReconnectsDisjointStem) {
  // couch_key_tree's should_create_no_conflicts_on_merge. CouchDB reports
  // new_leaf (it extends the first tree, then stemming folds the duplicate);
  // here the newest revision was already present, so kInternalNode, changed.
  RevTree t = Tree({{2, {"1a", "1"}}, {3, {"1aa"}}});
  auto r = Merge(&t, 3, {"1aa", "1a", "1"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(t.RevString(r.index), "3-1aa");
  EXPECT_EQ(t.DebugString(), "1-1(2-1a(3-1aa))");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("3-1aa"));
  ExpectInvariants(t);
}

TEST(RevTreeMergeTest, IgnoresConflictingBranch) {
  // COUCHDB-902: foo has conflicts foo2/foo3; foo4 is an edit of foo3.
  RevTree t = Tree({{2, {"foo2", "foo"}}, {2, {"foo3", "foo"}}});
  auto r = Merge(&t, 3, {"foo4", "foo3", "foo"});
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_EQ(t.DebugString(), "1-foo(2-foo2,2-foo3(3-foo4))");
  EXPECT_TRUE(t.node(FindRev(t, "3-foo4")).has_body);
}

// ---------------------------------------------------------------------------
// Merging: PouchDB test.merge.js

TEST(RevTreeMergeTest, PouchMergingNewLeaf) {
  RevTree t = Tree({{2, {"2_0", "1"}}});
  auto r = Merge(&t, 3, {"3", "2_0"});
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_EQ(t.DebugString(), "1-1(2-2_0(3-3))");
}

TEST(RevTreeMergeTest, PouchNewBranchIndependentOfOrder) {
  RevTree a = Tree({{2, {"2_0", "1"}}});
  RevTree b = Tree({{2, {"2_1", "1"}}});
  EXPECT_EQ(Merge(&a, 2, {"2_1", "1"}).kind, Kind::kNewBranch);
  EXPECT_EQ(Merge(&b, 2, {"2_0", "1"}).kind, Kind::kNewBranch);
  EXPECT_EQ(a.DebugString(), "1-1(2-2_0,2-2_1)");
  EXPECT_EQ(b.DebugString(), a.DebugString());
}

TEST(RevTreeMergeTest, PouchNewLeafWhenBranchesExist) {
  RevTree t = Tree({{2, {"2_0", "1"}}, {2, {"2_1", "1"}}});
  EXPECT_EQ(Merge(&t, 3, {"3", "2_0"}).kind, Kind::kNewLeaf);
  EXPECT_EQ(t.DebugString(), "1-1(2-2_0(3-3),2-2_1)");
}

TEST(RevTreeMergeTest, PouchDeepBranch) {
  RevTree t = Tree({{3, {"3", "2_0", "1"}}, {2, {"2_1", "1"}}});
  EXPECT_EQ(Merge(&t, 3, {"3_1", "2_0"}).kind, Kind::kNewBranch);
  EXPECT_EQ(t.DebugString(), "1-1(2-2_0(3-3,3-3_1),2-2_1)");
}

TEST(RevTreeMergeTest, PouchNewInformationReconnectsStemmingConflicts) {
  // The old root is at index 0, the stemmed "3-3" at index 1: attaching the
  // missing 2-2_0 between them must renumber so parents stay first.
  RevTree t = Tree({{1, {"1"}}, {3, {"3"}}});
  ASSERT_EQ(t.DebugString(), "1-1 3-3");
  auto r = t.MergePath(3, {"3", "2_0", "1"}, false, true, 7);
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.renumbered);
  EXPECT_EQ(t.RevString(r.index), "3-3");
  EXPECT_EQ(t.DebugString(), "1-1(2-2_0(3-3))");
  EXPECT_THAT(RevStrings(t, t.Ancestry(r.index)), ElementsAre("3-3", "2-2_0", "1-1"));
  const RevTree::Node& added = t.node(FindRev(t, "2-2_0"));
  EXPECT_FALSE(added.has_body);
  EXPECT_FALSE(added.deleted);
  EXPECT_EQ(added.seq, 7u);
  ExpectInvariants(t);
}

TEST(RevTreeMergeTest, PouchMergingUnstemmedRecoversWithoutLosingInfo) {
  RevTree t = Tree({{2, {"2_1"}}, {3, {"3"}}, {3, {"3_1"}}});
  ASSERT_EQ(t.DebugString(), "2-2_1 3-3 3-3_1");
  auto r = Merge(&t, 3, {"3", "2_0", "1"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_EQ(t.DebugString(), "1-1(2-2_0(3-3)) 2-2_1 3-3_1");
  ExpectInvariants(t);
}

TEST(RevTreeMergeTest, ExtendsRootUpward) {
  RevTree t = Tree({{5, {"e", "d"}}});
  ASSERT_EQ(t.DebugString(), "4-d(5-e)");
  auto r = Merge(&t, 5, {"e", "d", "c", "b"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(t.DebugString(), "2-b(3-c(4-d(5-e)))");
  EXPECT_THAT(RevStrings(t, t.Ancestry(r.index)), ElementsAre("5-e", "4-d", "3-c", "2-b"));
  ExpectInvariants(t);
}

TEST(RevTreeMergeTest, DoesNotGraftHistoryOntoNodeWithAParent) {
  // The path claims 3-c descends from 2-x, but 3-c already has parent 2-b:
  // the claim cannot be attached anywhere and is ignored.
  RevTree t = Tree({{3, {"c", "b", "a"}}});
  RevTree before = t;
  auto r = Merge(&t, 3, {"c", "x", "y"});
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(t, before);
}

TEST(RevTreeMergeTest, NewRootPathGetsGenerationsFromStart) {
  RevTree t;
  auto r = t.MergePath(7, {"g", "f", "e"}, /*deleted=*/true, /*has_body=*/true, /*seq=*/42);
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_EQ(t.DebugString(), "5-e(6-f(7-g))");
  const RevTree::Node& newest = t.node(r.index);
  EXPECT_TRUE(newest.deleted);
  EXPECT_TRUE(newest.has_body);
  EXPECT_EQ(newest.seq, 42u);
  for (int i : t.Ancestry(r.index)) {
    if (i == r.index) continue;
    EXPECT_FALSE(t.node(i).has_body) << t.RevString(i);
    EXPECT_FALSE(t.node(i).deleted) << t.RevString(i);
    EXPECT_EQ(t.node(i).seq, 42u);
  }
}

TEST(RevTreeMergeTest, BodilessNewestTakesBodyOnce) {
  RevTree t = Tree({{3, {"c", "b", "a"}}});
  const int b = FindRev(t, "2-b");
  ASSERT_FALSE(t.node(b).has_body);
  auto r = t.MergePath(2, {"b", "a"}, /*deleted=*/true, /*has_body=*/true, /*seq=*/9);
  EXPECT_EQ(r.kind, Kind::kInternalNode);
  EXPECT_TRUE(r.took_body);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.index, b);
  EXPECT_TRUE(t.node(b).has_body);
  EXPECT_TRUE(t.node(b).deleted);
  EXPECT_EQ(t.node(b).seq, 9u);

  // Already available: the stored revision wins, nothing changes.
  auto again = t.MergePath(2, {"b", "a"}, false, true, 10);
  EXPECT_FALSE(again.took_body);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(t.node(b).seq, 9u);
  // A bodiless merge never takes a body.
  auto bodiless = t.MergePath(1, {"a"}, false, false, 11);
  EXPECT_FALSE(bodiless.took_body);
  EXPECT_FALSE(t.node(FindRev(t, "1-a")).has_body);
}

TEST(RevTreeMergeTest, RejectsBadArguments) {
  RevTree t = Tree({{2, {"b", "a"}}});
  RevTree before = t;
  for (auto r : {t.MergePath(1, {"b", "a"}, false, true, 1),  // start < len
                 t.MergePath(0, {"a"}, false, true, 1),       // gen 0
                 t.MergePath(3, {}, false, true, 1),          // empty path
                 t.MergePath(2, {"b", ""}, false, true, 1)}) {  // empty hash
    EXPECT_EQ(r.kind, Kind::kInternalNode);
    EXPECT_EQ(r.index, RevTree::kNone);
    EXPECT_FALSE(r.changed);
  }
  EXPECT_EQ(t, before);
}

// ---------------------------------------------------------------------------
// AddRevision (interactive edits)

TEST(RevTreeAddTest, AddsChildrenAndRoots) {
  RevTree t;
  EXPECT_TRUE(t.empty());
  const int a = t.AddRevision(RevTree::kNone, {1, "a"}, false, true, 1);
  const int b = t.AddRevision(a, {2, "b"}, false, true, 2);
  const int c = t.AddRevision(b, {3, "c"}, true, true, 3);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.node(c).parent, b);
  EXPECT_TRUE(t.node(c).deleted);
  EXPECT_EQ(t.node(c).seq, 3u);
  EXPECT_EQ(t.Rev(c), (RevId{3, "c"}));
  EXPECT_EQ(t.Find(RevId{2, "b"}), b);
  EXPECT_EQ(t.Find(RevId{2, "c"}), RevTree::kNone);
  EXPECT_FALSE(t.IsLeaf(a));
  EXPECT_TRUE(t.IsLeaf(c));
  EXPECT_FALSE(t.IsLeaf(99));
  EXPECT_FALSE(t.IsLeaf(-1));
}

TEST(RevTreeAddTest, RejectsViolatedRequirements) {
  RevTree t;
  const int a = t.AddRevision(RevTree::kNone, {1, "a"}, false, true, 1);
  EXPECT_EQ(t.AddRevision(RevTree::kNone, {1, "a"}, false, true, 1), RevTree::kNone);  // dup
  EXPECT_EQ(t.AddRevision(a, {3, "x"}, false, true, 1), RevTree::kNone);  // gen gap
  EXPECT_EQ(t.AddRevision(a, {1, "x"}, false, true, 1), RevTree::kNone);  // same gen
  EXPECT_EQ(t.AddRevision(5, {2, "x"}, false, true, 1), RevTree::kNone);  // bad parent
  EXPECT_EQ(t.AddRevision(-7, {2, "x"}, false, true, 1), RevTree::kNone);
  EXPECT_EQ(t.AddRevision(a, {2, ""}, false, true, 1), RevTree::kNone);   // empty hash
  EXPECT_EQ(t.AddRevision(RevTree::kNone, {0, "z"}, false, true, 1), RevTree::kNone);
  EXPECT_EQ(t.size(), 1u);
}

TEST(RevTreeAddTest, SetHasBody) {
  RevTree t = Tree({{2, {"b", "a"}}});
  const int a = FindRev(t, "1-a");
  EXPECT_FALSE(t.node(a).has_body);
  t.SetHasBody(a, true);
  EXPECT_TRUE(t.node(a).has_body);
  t.SetHasBody(a, false);
  EXPECT_FALSE(t.node(a).has_body);
  t.SetHasBody(17, true);  // out of range: no-op
  t.SetHasBody(RevTree::kNone, true);
  EXPECT_EQ(t.size(), 2u);
}

// ---------------------------------------------------------------------------
// Winner, leaves, conflicts

TEST(RevTreeWinnerTest, EmptyTree) {
  RevTree t;
  EXPECT_EQ(t.Winner(), RevTree::kNone);
  EXPECT_THAT(t.Leaves(), IsEmpty());
  EXPECT_THAT(t.Conflicts(), IsEmpty());
  EXPECT_EQ(t.DebugString(), "");
}

TEST(RevTreeWinnerTest, PouchWinningRevReturnsLongestLeaf) {
  RevTree t = Tree({
      {2, {"44d71a718b90e4696c06a90e08912c8f", "bfe70372c90ded1087239e5191984f76"}},
      {3,
       {"93c3db16462f656f7172ccabd3cf6cd6", "56e657612d55ab1a402dcb281c874f2a",
        "bfe70372c90ded1087239e5191984f76"}},
  });
  EXPECT_EQ(t.RevString(t.Winner()), "3-93c3db16462f656f7172ccabd3cf6cd6");
}

TEST(RevTreeWinnerTest, PouchWinningRevReturnsLongestLeafAcrossRoots) {
  // PouchDB issue #293: two disjoint roots.
  RevTree t = Tree({
      {3,
       {"28cd77a3ca30f79e1cfffcd6a41ca308", "bf5e08a4f9fa6d33a53f4a00ae3ea399",
        "203db1a1810a838895d561f67b224b5d"}},
      {2, {"1b8dfbb1267e213328920bae43f2f597", "c6d5cce35bcfbef90b20f140d723cbdb"}},
      {3,
       {"64a9842c6aea50bf24660378e496e853", "59ed830b84b276ab776c3c51aaf93a16",
        "c6d5cce35bcfbef90b20f140d723cbdb"}},
  });
  EXPECT_EQ(t.RevString(t.Winner()), "3-64a9842c6aea50bf24660378e496e853");
  EXPECT_THAT(RevStrings(t, t.Leaves()),
              ElementsAre("3-64a9842c6aea50bf24660378e496e853",
                          "3-28cd77a3ca30f79e1cfffcd6a41ca308",
                          "2-1b8dfbb1267e213328920bae43f2f597"));
}

TEST(RevTreeWinnerTest, LiveLeafOfLowerGenBeatsDeletedLeaf) {
  RevTree t = Tree({{2, {"d", "a"}}});
  Merge(&t, 3, {"c", "b", "a"}, /*deleted=*/true);
  EXPECT_EQ(t.RevString(t.Winner()), "2-d");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("2-d", "3-c"));
  EXPECT_THAT(t.Conflicts(), IsEmpty());
  EXPECT_THAT(RevStrings(t, t.DeletedConflicts()), ElementsAre("3-c"));
}

TEST(RevTreeWinnerTest, DeletedWinnerWhenAllLeavesDeleted) {
  RevTree t = Tree({});
  Merge(&t, 2, {"x", "a"}, true);
  Merge(&t, 3, {"z", "y", "a"}, true);
  EXPECT_EQ(t.RevString(t.Winner()), "3-z");
  EXPECT_TRUE(t.node(t.Winner()).deleted);
  EXPECT_THAT(RevStrings(t, t.DeletedConflicts()), ElementsAre("2-x"));
}

TEST(RevTreeWinnerTest, TieBreakByHigherHash) {
  RevTree t = Tree({{2, {"x", "a"}}, {2, {"y", "a"}}, {2, {"Y", "a"}}});
  EXPECT_EQ(t.RevString(t.Winner()), "2-y");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("2-y", "2-x", "2-Y"));
  EXPECT_THAT(RevStrings(t, t.Conflicts()), ElementsAre("2-x", "2-Y"));
}

TEST(RevTreeWinnerTest, FullLeafOrder) {
  RevTree t = Tree({{3, {"a", "p", "r"}}, {3, {"b", "p", "r"}}, {2, {"z", "r"}}});
  Merge(&t, 5, {"q", "s", "o", "x", "r"}, true);
  Merge(&t, 4, {"t", "u", "w", "r"}, true);
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("3-b", "3-a", "2-z", "5-q", "4-t"));
  EXPECT_EQ(t.RevString(t.Winner()), "3-b");
  EXPECT_THAT(RevStrings(t, t.Conflicts()), ElementsAre("3-a", "2-z"));
  EXPECT_THAT(RevStrings(t, t.DeletedConflicts()), ElementsAre("5-q", "4-t"));
  ExpectInvariants(t);
}

TEST(RevTreeWinnerTest, LongLinearHistory) {
  RevTree t;
  int prev = RevTree::kNone;
  for (uint64_t g = 1; g <= 1000; ++g) {
    prev = t.AddRevision(prev, {g, "h" + std::to_string(g)}, false, true, g);
    ASSERT_NE(prev, RevTree::kNone);
  }
  EXPECT_EQ(t.Winner(), 999);
  EXPECT_THAT(t.Leaves(), ElementsAre(999));
  EXPECT_EQ(t.Ancestry(999).size(), 1000u);
  EXPECT_THAT(t.LeavesUnder(0), ElementsAre(999));
  EXPECT_THAT(t.Stem(1000), IsEmpty());
  EXPECT_EQ(t.size(), 1000u);
  std::vector<RevId> removed = t.Stem(10);
  EXPECT_EQ(removed.size(), 990u);
  EXPECT_EQ(removed.front().ToString(), "1-h1");
  EXPECT_EQ(removed.back().ToString(), "990-h990");
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(t.RevString(t.Winner()), "1000-h1000");
  EXPECT_EQ(t.Ancestry(t.Winner()).size(), 10u);
  EXPECT_EQ(t.DebugString().substr(0, 10), "991-h991(9");
  ExpectInvariants(t);
}

// ---------------------------------------------------------------------------
// LeavesUnder, Ancestry

TEST(RevTreeNavigationTest, LeavesUnder) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}, {2, {"1b", "1"}}});
  Merge(&t, 3, {"1ab", "1a", "1"}, /*deleted=*/true);
  ASSERT_EQ(t.DebugString(), "1-1(2-1a(3-1aa,3-1ab),2-1b)");
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "1-1"))),
              ElementsAre("3-1aa", "2-1b", "3-1ab"));
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "2-1a"))), ElementsAre("3-1aa", "3-1ab"));
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "2-1b"))), ElementsAre("2-1b"));
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "3-1ab"))), ElementsAre("3-1ab"));
  EXPECT_THAT(t.LeavesUnder(RevTree::kNone), IsEmpty());
  EXPECT_THAT(t.LeavesUnder(static_cast<int>(t.size())), IsEmpty());
}

TEST(RevTreeNavigationTest, LeavesUnderStaysInsideItsRoot) {
  RevTree t = Tree({{2, {"b", "a"}}, {3, {"z"}}, {4, {"y", "z"}}});
  ASSERT_EQ(t.DebugString(), "1-a(2-b) 3-z(4-y)");
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "1-a"))), ElementsAre("2-b"));
  EXPECT_THAT(RevStrings(t, t.LeavesUnder(FindRev(t, "3-z"))), ElementsAre("4-y"));
}

TEST(RevTreeNavigationTest, Ancestry) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}, {2, {"1b", "1"}}, {4, {"x"}}});
  EXPECT_THAT(RevStrings(t, t.Ancestry(FindRev(t, "3-1aa"))), ElementsAre("3-1aa", "2-1a", "1-1"));
  EXPECT_THAT(RevStrings(t, t.Ancestry(FindRev(t, "2-1b"))), ElementsAre("2-1b", "1-1"));
  EXPECT_THAT(RevStrings(t, t.Ancestry(FindRev(t, "4-x"))), ElementsAre("4-x"));
  EXPECT_THAT(t.Ancestry(-1), IsEmpty());
  EXPECT_THAT(t.Ancestry(100), IsEmpty());
}

// ---------------------------------------------------------------------------
// Stemming: couch_key_tree_tests.erl "Stemming" and PouchDB test.merge.js

TEST(RevTreeStemTest, NoEffectWhenLimitExceedsDepth) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  RevTree before = t;
  EXPECT_THAT(t.Stem(3), IsEmpty());
  EXPECT_THAT(t.Stem(1000), IsEmpty());
  EXPECT_EQ(t, before);
}

TEST(RevTreeStemTest, KeepsOneDeepestNode) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  EXPECT_THAT(RevStrings(t.Stem(1)), ElementsAre("1-1", "2-1a"));
  EXPECT_EQ(t.DebugString(), "3-1aa");
  EXPECT_EQ(t.node(0).parent, RevTree::kNone);
}

TEST(RevTreeStemTest, KeepsTwoDeepestNodes) {
  RevTree t = Tree({{3, {"1aa", "1a", "1"}}});
  EXPECT_THAT(RevStrings(t.Stem(2)), ElementsAre("1-1"));
  EXPECT_EQ(t.DebugString(), "2-1a(3-1aa)");
}

TEST(RevTreeStemTest, ZeroLimitActsAsOne) {
  RevTree t = Tree({{2, {"b", "a"}}});
  EXPECT_THAT(RevStrings(t.Stem(0)), ElementsAre("1-a"));
  EXPECT_EQ(t.DebugString(), "2-b");
}

TEST(RevTreeStemTest, PouchSimpleStemming) {
  RevTree t = Tree({{2, {"2_0", "1"}}});
  Merge(&t, 3, {"3", "2_0"});
  EXPECT_THAT(RevStrings(t.Stem(2)), ElementsAre("1-1"));
  EXPECT_EQ(t.DebugString(), "2-2_0(3-3)");
}

TEST(RevTreeStemTest, PouchStemmingBranchesCutsLongPaths) {
  // Every root-to-leaf path keeps at most 2 revisions: 1-1 survives for
  // 2-2_1's sake, but 2-2_0 loses its parent.
  RevTree t = Tree({{3, {"3", "2_0", "1"}}, {3, {"3_1", "2_0", "1"}}, {2, {"2_1", "1"}}});
  ASSERT_EQ(t.DebugString(), "1-1(2-2_0(3-3,3-3_1),2-2_1)");
  EXPECT_THAT(t.Stem(2), IsEmpty());
  EXPECT_EQ(t.DebugString(), "1-1(2-2_1) 2-2_0(3-3,3-3_1)");
  ExpectInvariants(t);
}

TEST(RevTreeStemTest, PouchStemmingToLeaves) {
  RevTree t = Tree({{3, {"3", "2_0", "1"}}, {3, {"3_1", "2_0", "1"}}, {2, {"2_1", "1"}}});
  EXPECT_THAT(RevStrings(t.Stem(1)), ElementsAre("1-1", "2-2_0"));
  EXPECT_EQ(t.DebugString(), "2-2_1 3-3 3-3_1");
  ExpectInvariants(t);
}

TEST(RevTreeStemTest, StemmedPathsReMergeWithoutReExpanding) {
  RevTree t = Tree({{5, {"e", "d", "c", "b", "a"}}});
  EXPECT_THAT(RevStrings(t.Stem(3)), ElementsAre("1-a", "2-b"));
  ASSERT_EQ(t.DebugString(), "3-c(4-d(5-e))");

  // A stemmed history of the same revisions (as a replicator sends with
  // revs_limit) adds nothing.
  RevTree before = t;
  EXPECT_EQ(Merge(&t, 5, {"e", "d", "c"}).kind, Kind::kInternalNode);
  EXPECT_EQ(Merge(&t, 5, {"e", "d"}).kind, Kind::kInternalNode);
  EXPECT_EQ(t, before);

  // A new edit with a short history extends the leaf; stemming again keeps
  // the newest three and does not bring back the old ones.
  auto r = Merge(&t, 6, {"f", "e"});
  EXPECT_EQ(r.kind, Kind::kNewLeaf);
  EXPECT_THAT(RevStrings(t.Stem(3)), ElementsAre("3-c"));
  EXPECT_EQ(t.DebugString(), "4-d(5-e(6-f))");

  // The full history re-extends the root upward, and the next stem trims it
  // back to the same tree (merge-then-stem, as CouchDB's updater does).
  Merge(&t, 6, {"f", "e", "d", "c", "b", "a"});
  EXPECT_EQ(t.DebugString(), "1-a(2-b(3-c(4-d(5-e(6-f)))))");
  EXPECT_THAT(RevStrings(t.Stem(3)), ElementsAre("1-a", "2-b", "3-c"));
  EXPECT_EQ(t.DebugString(), "4-d(5-e(6-f))");
}

TEST(RevTreeStemTest, StemmedConflictBranchStaysDisjointUntilReconnected) {
  RevTree t = Tree({{4, {"d", "c", "b", "a"}}, {2, {"x", "a"}}});
  EXPECT_THAT(RevStrings(t.Stem(2)), ElementsAre("2-b"));
  EXPECT_EQ(t.DebugString(), "1-a(2-x) 3-c(4-d)");
  EXPECT_THAT(RevStrings(t, t.Leaves()), ElementsAre("4-d", "2-x"));
  ExpectInvariants(t);
}

// ---------------------------------------------------------------------------
// Encoding

RevTree SampleTree() {
  RevTree t;
  const int a = t.AddRevision(RevTree::kNone, {1, "967a00dff5e02add41819138abb3284d"}, false,
                              false, 1);
  const int b = t.AddRevision(a, {2, "7051cbe5c8faecd085a3fa619e6e6337"}, false, true, 2);
  t.AddRevision(b, {3, "0123456789ABCDEF0123456789ABCDEF"}, true, true, 300);  // uppercase
  t.AddRevision(a, {2, "not-hex-at-all"}, false, true, 4);
  t.AddRevision(RevTree::kNone, {uint64_t{1} << 62, std::string("bin\0\xff", 5)}, false, true,
                UINT64_MAX);
  t.AddRevision(RevTree::kNone, {9, "0123456789abcdef0123456789abcde"}, false, true, 5);  // 31
  t.AddRevision(RevTree::kNone, {9, "0123456789abcdef0123456789abcdef0"}, false, true, 6);  // 33
  return t;
}

TEST(RevTreeEncodingTest, EmptyTreeRoundTrips) {
  RevTree t, out;
  std::string bytes;
  t.Encode(&bytes);
  EXPECT_EQ(bytes, std::string("\x01\x00", 2));
  out = SampleTree();
  ASSERT_TRUE(RevTree::Decode(bytes, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(RevTreeEncodingTest, GoldenBytes) {
  // Pins docs/rev_tree_format.md: any change here breaks stored data.
  RevTree t;
  const int a = t.AddRevision(RevTree::kNone, {1, "abc"}, false, true, 5);
  t.AddRevision(a, {2, "00112233445566778899aabbccddeeff"}, true, false, 300);
  std::string bytes;
  t.Encode(&bytes);
  const std::string expected(
      "\x01"                  // format version
      "\x02"                  // node count
      "\x0a\x01\x03"          // root|has_body, gen 1, hash length 3
      "abc\x05"               // hash, seq 5
      "\x05\x01"              // deleted|hex, parent delta 1
      "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff"
      "\xac\x02",             // seq 300
      29);
  EXPECT_EQ(bytes, expected);
  RevTree out;
  ASSERT_TRUE(RevTree::Decode(bytes, &out).ok());
  EXPECT_EQ(out, t);
}

TEST(RevTreeEncodingTest, OneNodeHexTreeIsCompact) {
  RevTree t;
  t.AddRevision(RevTree::kNone, {1, "967a00dff5e02add41819138abb3284d"}, false, true, 1);
  std::string bytes;
  t.Encode(&bytes);
  EXPECT_EQ(bytes.size(), 21u);  // version, count, flags, gen, 16-byte hash, seq
}

// Every byte value at every position of a 32-char hash: only all-lowercase
// hex packs (21 bytes), and everything round-trips exactly.
TEST(RevTreeEncodingTest, OnlyLowercaseHexPacksAndAllRoundTrip) {
  const std::string base = "0123456789abcdef0123456789abcdef";
  for (size_t pos = 0; pos < base.size(); ++pos) {
    for (int c = 0; c < 256; ++c) {
      std::string hash = base;
      hash[pos] = static_cast<char>(c);
      RevTree t;
      t.AddRevision(RevTree::kNone, {1, hash}, false, true, 1);
      std::string bytes;
      t.Encode(&bytes);
      const bool lower_hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      ASSERT_EQ(lower_hex, bytes.size() == 21u) << pos << " " << c;
      RevTree out;
      ASSERT_TRUE(RevTree::Decode(bytes, &out).ok()) << pos << " " << c;
      ASSERT_EQ(out.node(0).hash, hash) << pos << " " << c;
    }
  }
}

TEST(RevTreeEncodingTest, RoundTripsExactly) {
  RevTree t = SampleTree();
  std::string bytes;
  t.Encode(&bytes);
  RevTree out;
  ASSERT_TRUE(RevTree::Decode(bytes, &out).ok());
  EXPECT_EQ(out, t);
  EXPECT_EQ(out.node(2).hash, "0123456789ABCDEF0123456789ABCDEF");
  EXPECT_EQ(out.node(4).hash, std::string("bin\0\xff", 5));
  EXPECT_EQ(out.node(4).gen, uint64_t{1} << 62);
  EXPECT_EQ(out.node(4).seq, UINT64_MAX);
  std::string again;
  out.Encode(&again);
  EXPECT_EQ(again, bytes);
}

TEST(RevTreeEncodingTest, EncodeAppends) {
  RevTree t = SampleTree();
  std::string bytes = "prefix";
  t.Encode(&bytes);
  ASSERT_EQ(bytes.substr(0, 6), "prefix");
  RevTree out;
  ASSERT_TRUE(RevTree::Decode(std::string_view(bytes).substr(6), &out).ok());
  EXPECT_EQ(out, t);
}

TEST(RevTreeEncodingTest, RoundTripsMergedAndStemmedTrees) {
  RevTree t = Tree({{3, {"3", "2_0", "1"}}, {3, {"3_1", "2_0", "1"}}, {2, {"2_1", "1"}}});
  for (uint32_t limit : {5u, 2u, 1u}) {
    t.Stem(limit);
    std::string bytes;
    t.Encode(&bytes);
    RevTree out;
    ASSERT_TRUE(RevTree::Decode(bytes, &out).ok()) << limit;
    EXPECT_EQ(out, t);
    EXPECT_EQ(out.DebugString(), t.DebugString());
  }
}

void ExpectCorrupt(std::string_view bytes, const char* what) {
  RevTree out = SampleTree();
  Status s = RevTree::Decode(bytes, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << what << ": " << s.ToString();
  EXPECT_TRUE(out.empty()) << what;
}

TEST(RevTreeEncodingTest, RejectsSpecificCorruptions) {
  using S = std::string;
  ExpectCorrupt(S(""), "empty");
  ExpectCorrupt(S("\x02\x00", 2), "unknown version");
  ExpectCorrupt(S("\x01", 1), "no count");
  ExpectCorrupt(S("\x01\x80", 2), "truncated count varint");
  ExpectCorrupt(S("\x01\x00\x00", 3), "trailing bytes");
  ExpectCorrupt(S("\x01\x01\x1a\x01\x01z\x01", 7), "unknown flag");
  ExpectCorrupt(S("\x01\x01\x0a\x00\x01z\x01", 7), "root gen 0");
  ExpectCorrupt(S("\x01\x01\x0a\x01\x00\x01\x00", 7), "empty hash");
  ExpectCorrupt(S("\x01\x01\x02\x01\x01z\x01", 7), "non-root first node");
  ExpectCorrupt(S("\x01\x02\x0a\x01\x01z\x01\x02\x00\x01y\x01", 12), "parent delta 0");
  ExpectCorrupt(S("\x01\x02\x0a\x01\x01z\x01\x02\x02\x01y\x01", 12), "parent delta too big");
  ExpectCorrupt(S("\x01\x02\x0a\x01\x01z\x01\x0a\x01\x01z\x01", 12), "duplicate rev");
  ExpectCorrupt(S("\x01\x01\x0a\x01\x05z\x01", 7), "hash length past end");
  ExpectCorrupt(S("\x01\x01\x0e\x01" "0123456789", 14), "short packed hash");
  ExpectCorrupt(S("\x01\xff\xff\xff\xff\x0f\x0a\x01\x01z\x01", 11), "huge count");
  ExpectCorrupt(S("\x01\x02\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01z\x01"
                  "\x02\x01\x01y\x01", 21), "generation overflow");
}

TEST(RevTreeEncodingTest, DuplicateRevsRejectedInLargeTrees) {
  RevTree t;
  for (int i = 0; i < 40; ++i) t.AddRevision(RevTree::kNone, {1, "r" + std::to_string(i)}, false, true, 1);
  std::string bytes;
  t.Encode(&bytes);
  RevTree out;
  ASSERT_TRUE(RevTree::Decode(bytes, &out).ok());
  // Rewrite the last root's hash "r39" to "r00"... as "r1" would change the
  // length; "r39" -> "r19" keeps it and duplicates node 19.
  const size_t pos = bytes.rfind("r39");
  ASSERT_NE(pos, std::string::npos);
  bytes[pos + 1] = '1';
  ExpectCorrupt(bytes, "duplicate among 40");
}

TEST(RevTreeEncodingTest, EveryTruncationIsCorruption) {
  RevTree t = SampleTree();
  std::string bytes;
  t.Encode(&bytes);
  for (size_t len = 0; len < bytes.size(); ++len) {
    RevTree out;
    Status s = RevTree::Decode(std::string_view(bytes).substr(0, len), &out);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << "length " << len;
  }
}

// A successfully decoded garbage input must still be a valid tree that
// re-encodes to the same bytes.
void ExpectDecodedIsSound(const std::string& bytes, const RevTree& out) {
  ExpectInvariants(out);
  std::string again;
  out.Encode(&again);
  // Verbatim 32-lowercase-hex hashes re-encode packed, so compare trees.
  RevTree back;
  ASSERT_TRUE(RevTree::Decode(again, &back).ok());
  EXPECT_EQ(back, out);
}

TEST(RevTreeEncodingTest, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  int decoded = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes(rng() % 48, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    // Give half the inputs a valid version byte and small count so the
    // decoder gets past the header.
    if (iter % 2 == 0 && !bytes.empty()) {
      bytes[0] = '\x01';
      if (bytes.size() > 1) bytes[1] = static_cast<char>(rng() % 4);
    }
    RevTree out;
    Status s = RevTree::Decode(bytes, &out);
    if (s.ok()) {
      ++decoded;
      ExpectDecodedIsSound(bytes, out);
    } else {
      EXPECT_EQ(s.code(), Status::Code::kCorruption);
      EXPECT_TRUE(out.empty());
    }
  }
  EXPECT_GT(decoded, 0);  // the generator does reach valid encodings
}

TEST(RevTreeEncodingTest, MutatedEncodingsNeverCrash) {
  RevTree t = SampleTree();
  std::string valid;
  t.Encode(&valid);
  std::mt19937 rng(777);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes = valid;
    const int flips = 1 + rng() % 3;
    for (int f = 0; f < flips; ++f) {
      const size_t pos = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[pos] = static_cast<char>(rng()); break;
        case 1: bytes.erase(pos, 1 + rng() % 3); break;
        default: bytes.insert(pos, 1, static_cast<char>(rng())); break;
      }
      if (bytes.empty()) break;
    }
    RevTree out;
    Status s = RevTree::Decode(bytes, &out);
    if (s.ok()) {
      ExpectDecodedIsSound(bytes, out);
    } else {
      EXPECT_EQ(s.code(), Status::Code::kCorruption);
    }
  }
}

// ---------------------------------------------------------------------------
// Randomized consistency: build trees by interleaving edits, replicated
// paths and stemming; check every invariant after each step.

TEST(RevTreePropertyTest, RandomOperationsKeepInvariants) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 200; ++round) {
    RevTree t;
    // A "source" tree holding the full history that replicated paths come from.
    RevTree source;
    int counter = 0;
    for (int step = 0; step < 40; ++step) {
      const int op = rng() % 4;
      if (op <= 1 || source.empty()) {
        // Edit the source: a new child of a random node (or a new root).
        const int parent = source.empty() || rng() % 8 == 0
                               ? RevTree::kNone
                               : static_cast<int>(rng() % source.size());
        const uint64_t gen = parent == RevTree::kNone ? 1 : source.node(parent).gen + 1;
        const bool del = rng() % 5 == 0;
        ++counter;
        source.AddRevision(parent, {gen, "h" + std::to_string(counter)}, del, true, counter);
      } else if (op == 2) {
        // Replicate a random leaf of the source with a random history length.
        std::vector<int> leaves = source.Leaves();
        const int leaf = leaves[rng() % leaves.size()];
        std::vector<int> anc = source.Ancestry(leaf);
        anc.resize(1 + rng() % anc.size());
        Hashes path;
        for (int i : anc) path.push_back(source.node(i).hash);
        const size_t before = t.size();
        std::vector<int> old_leaves = t.Leaves();
        auto r = t.MergePath(source.node(leaf).gen, path, source.node(leaf).deleted, true, step);
        ASSERT_NE(r.index, RevTree::kNone);
        EXPECT_EQ(t.Rev(r.index), source.Rev(leaf));
        if (r.kind != Kind::kInternalNode) {
          EXPECT_GT(t.size(), before);
        }
        if (!r.changed) {
          EXPECT_EQ(t.size(), before);
        }
        // A replicated leaf is a leaf of the merged tree.
        EXPECT_TRUE(t.IsLeaf(r.index));
        // Merging the same path again changes nothing.
        RevTree snapshot = t;
        auto again = t.MergePath(source.node(leaf).gen, path, source.node(leaf).deleted, true, step);
        EXPECT_EQ(again.kind, Kind::kInternalNode);
        EXPECT_FALSE(again.changed);
        EXPECT_EQ(t, snapshot);
      } else {
        const uint32_t limit = 1 + rng() % 6;
        std::set<std::pair<uint64_t, std::string>> before_revs, after_revs;
        for (const auto& nd : t.nodes()) before_revs.insert({nd.gen, nd.hash});
        std::vector<std::string> leaves_before = RevStrings(t, t.Leaves());
        std::vector<size_t> path_len_before;
        for (int leaf : t.Leaves()) path_len_before.push_back(t.Ancestry(leaf).size());
        std::vector<RevId> removed = t.Stem(limit);
        for (const auto& nd : t.nodes()) after_revs.insert({nd.gen, nd.hash});
        EXPECT_EQ(after_revs.size() + removed.size(), before_revs.size());
        for (const RevId& r : removed) {
          EXPECT_TRUE(before_revs.count({r.gen, r.hash}));
          EXPECT_FALSE(after_revs.count({r.gen, r.hash}));
        }
        // Leaves (and their order) survive stemming.
        EXPECT_EQ(RevStrings(t, t.Leaves()), leaves_before);
        // Each leaf keeps its newest `limit` revisions, and no path grew.
        std::vector<int> leaves = t.Leaves();
        for (size_t k = 0; k < leaves.size(); ++k) {
          const size_t len = t.Ancestry(leaves[k]).size();
          EXPECT_GE(len, std::min<size_t>(limit, path_len_before[k]));
          EXPECT_LE(len, path_len_before[k]);
        }
        // Every survivor is within `limit` of a leaf below it, through
        // edges that themselves are within `limit` of that leaf.
        std::vector<uint64_t> nearest(t.size(), UINT64_MAX);
        for (int leaf : leaves) {
          for (int i : t.Ancestry(leaf)) {
            nearest[i] = std::min(nearest[i], t.node(leaf).gen - t.node(i).gen);
          }
        }
        for (size_t i = 0; i < t.size(); ++i) EXPECT_LT(nearest[i], limit) << t.RevString(i);
      }
      ExpectInvariants(t);
      std::string bytes;
      t.Encode(&bytes);
      RevTree back;
      ASSERT_TRUE(RevTree::Decode(bytes, &back).ok());
      ASSERT_EQ(back, t);
    }
  }
}

}  // namespace
}  // namespace settee
