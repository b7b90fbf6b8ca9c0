// Revision ids and revision trees: CouchDB's key tree (couch_key_tree.erl) and
// PouchDB's rev_tree (pouchdb-merge), as one flat vector of nodes.
//
// A document's history is a forest. Each node is a revision "gen-hash"; a
// child's generation is its parent's plus one. Stemming (revs_limit) cuts old
// revisions away, which can leave several roots at different generations.
//
// Representation
// --------------
// Nodes live in a std::vector in topological order: a parent always has a
// lower index than its children. That makes a leaf test a single reverse pass
// (children are seen before their parent), makes Ancestry() a walk of parent
// links, and makes Decode() able to reject cycles by checking parent < self.
// No child lists are kept: trees are small (usually one path) and rebuilt from
// bytes on every read, so a compact vector beats a pointer structure.
//
// Invariants (kept by every mutator, checked by Decode):
//   * node(i).parent == kNone or node(i).parent < i;
//   * node(i).gen == node(node(i).parent).gen + 1 for non-roots; gen >= 1;
//   * hashes are non-empty and no RevId appears twice.
//
// Thread safety: RevTree is a value type with no internal locking. Const
// methods may run concurrently; anything else needs external synchronization
// (or a copy per thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

// A revision id "N-hash": N = generation (>= 1), hash = opaque string
// (normally 32 lowercase hex).
struct RevId {
  uint64_t gen = 0;
  std::string hash;

  // Parses "N-hash": splits at the first '-'; N is a decimal integer >= 1
  // with no sign or junk (leading zeros are accepted, as Erlang's
  // list_to_integer does, and do not survive ToString()) that fits in 64
  // bits; hash is non-empty and may itself contain '-'. Returns false (and
  // leaves *out unspecified) otherwise; callers report "Invalid rev format".
  static bool Parse(std::string_view s, RevId* out);
  // "N-hash".
  std::string ToString() const;

  friend bool operator==(const RevId& a, const RevId& b) {
    return a.gen == b.gen && a.hash == b.hash;
  }
  // By gen, then hash bytewise (unsigned bytes).
  friend bool operator<(const RevId& a, const RevId& b) {
    return a.gen != b.gen ? a.gen < b.gen : a.hash < b.hash;
  }
};

// A document's revision forest (PROTOCOL.md §3). Nodes live in a flat vector;
// indices are stable until Stem(), Decode(), or a MergePath() that reports
// `renumbered`. A value type: not thread-safe, callers copy or lock.
class RevTree {
 public:
  static constexpr int kNone = -1;

  struct Node {
    uint64_t gen;
    std::string hash;
    int parent;     // index of the parent, or kNone for a root
    bool deleted;   // a tombstone revision
    bool has_body;  // its body is stored ("available"); false for ancestors known only by id
    uint64_t seq;   // database sequence at which this revision was added (0 if unknown)

    friend bool operator==(const Node&, const Node&) = default;
  };

  bool empty() const { return nodes_.empty(); }
  size_t size() const { return nodes_.size(); }
  // REQUIRES: 0 <= i < size()
  const Node& node(int i) const { return nodes_[i]; }
  const std::vector<Node>& nodes() const { return nodes_; }

  // "gen-hash" of node i. REQUIRES: 0 <= i < size()
  std::string RevString(int i) const;
  // REQUIRES: 0 <= i < size()
  RevId Rev(int i) const;
  // Index of `rev`, or kNone. O(size()).
  int Find(const RevId& rev) const;
  // True iff node i exists and has no children. O(size() - i).
  bool IsLeaf(int i) const;

  // All leaves, winner first, then the rest in CouchDB's order: non-deleted
  // before deleted, then higher gen first, then higher hash (bytewise) first.
  // O(size()) plus a sort of the leaves.
  std::vector<int> Leaves() const;
  // Leaves()[0], or kNone when empty. One pass; allocates only for trees of
  // more than a few hundred nodes.
  int Winner() const;
  // Non-winning leaves that are not deleted (CouchDB's _conflicts), and those
  // that are (_deleted_conflicts), both in Leaves() order.
  std::vector<int> Conflicts() const;
  std::vector<int> DeletedConflicts() const;
  // Leaves descending from node i (i itself if it is a leaf), in Leaves()
  // order. For `latest=true`. Empty if i is out of range.
  std::vector<int> LeavesUnder(int i) const;
  // i, its parent, grandparent, ... up to its root. Empty if i is out of range.
  std::vector<int> Ancestry(int i) const;

  // Appends a child of `parent` (kNone: a new root). REQUIRES: rev not
  // present, rev.hash non-empty, rev.gen >= 1; if parent != kNone, parent is
  // a valid index and rev.gen == node(parent).gen + 1. Returns the new index,
  // or kNone (adding nothing) if a requirement is violated.
  int AddRevision(int parent, RevId rev, bool deleted, bool has_body, uint64_t seq);

  enum class MergeKind { kNewLeaf, kNewBranch, kInternalNode };
  struct MergeResult {
    MergeKind kind;
    int index;  // node of the newest revision of the path (kNone on bad arguments)
    // The tree was modified at all: nodes added, a stemmed root re-attached
    // under its replicated ancestors, or the newest revision got its body.
    // (kInternalNode with changed == true is possible.)
    bool changed = false;
    // The newest revision was present without a body and has_body was given:
    // it now has_body (its deleted and seq were taken from the arguments),
    // so the caller must store the body. kind stays kInternalNode.
    bool took_body = false;
    // Existing nodes changed index (history was attached above an existing
    // root). `index` is already in the new numbering.
    bool renumbered = false;
  };

  // Merges a replicated history (a _revisions object): hashes_newest_first[0]
  // has generation `start`, hashes_newest_first[k] has start-k.
  //
  // Walking the path from oldest to newest:
  //   * Nodes already present are reused.
  //   * A present node that is a root while the path names its parent (it was
  //     stemmed, or arrived first as a disjoint root) is re-attached: the
  //     missing revisions between it and the previous present path element
  //     (or the start of the path) are added as bodiless ancestors above it.
  //     This extends a tree upward and reconnects stemming-induced conflicts.
  //   * Missing revisions before a present node that is not a root are not
  //     added: that node already has a parent, and the path's history before
  //     it cannot be attached anywhere.
  //   * Revisions newer than the newest present node are added as a chain
  //     under it (a new root when nothing is present: its gen is
  //     start-len+1). Added ancestors get has_body=false, deleted=false and
  //     `seq`; the newest gets `deleted`, `has_body` and `seq`.
  // kind describes the newest revision: kNewLeaf if it was added under a node
  // that was a leaf, or the tree was empty (as couch_key_tree, so that a first
  // edit counts as a new leaf); kNewBranch if added as a new root of a
  // non-empty tree or under a non-leaf; kInternalNode if it was already
  // present (then nothing but older ancestors is added, and possibly its body;
  // see took_body). Unlike couch_key_tree, re-attaching a stemmed root below
  // the newest revision is kInternalNode (with changed == true).
  // REQUIRES: start >= hashes.size() >= 1 and every hash non-empty; otherwise
  // nothing is done and {kInternalNode, kNone} is returned.
  MergeResult MergePath(uint64_t start, const std::vector<std::string>& hashes_newest_first,
                        bool deleted, bool has_body, uint64_t seq);

  // Stems to `limit` revisions per leaf (revs_limit), with the semantics of
  // PouchDB's stem() and CouchDB's repair_tree: every leaf's path keeps its
  // newest `limit` revisions and the stemmed paths are re-merged. So a node
  // survives iff it is within `limit` of ANY leaf below it (its distance to
  // that leaf is < limit), and an edge parent->child survives iff the parent
  // is within `limit` of some leaf below that child; otherwise the child
  // becomes a root. (A leaf's Ancestry() can still exceed `limit` when a
  // shorter sibling branch keeps an old ancestor alive, exactly as in
  // PouchDB; no path gets longer.) Leaves always survive; limit 0 is treated
  // as 1. Returns the removed nodes' RevIds (in index order) so their bodies
  // can be dropped. Indices change; the survivors keep their relative order.
  // O(size()).
  std::vector<RevId> Stem(uint32_t limit);

  // No-op if i is out of range.
  void SetHasBody(int i, bool has_body);

  // Compact binary encoding, documented in docs/rev_tree_format.md (a 32-char
  // lowercase-hex hash takes 16 raw bytes, other hashes are stored verbatim;
  // varints from util/coding.h). Appends to *out.
  void Encode(std::string* out) const;
  // Replaces *out with the tree encoded in `in`. Validates everything (format
  // version, flags, parent indices < own index, generations, sizes, unique
  // RevIds, no trailing bytes) and returns kCorruption on any malformed input;
  // *out is then empty. Never crashes or over-allocates on garbage.
  static Status Decode(std::string_view in, RevTree* out);

  // The structure as text, independent of node order: roots and children
  // sorted by RevId, e.g. "1-a(2-b(3-c),2-d) 3-x". For tests and logs.
  std::string DebugString() const;

  friend bool operator==(const RevTree& a, const RevTree& b) { return a.nodes_ == b.nodes_; }

 private:
  // Rebuilds nodes_ in topological order (parents first), keeping the
  // relative order of nodes otherwise. Fills (*old_to_new)[old] = new index.
  void Renumber(std::vector<int>* old_to_new);

  std::vector<Node> nodes_;
};

}  // namespace settee
