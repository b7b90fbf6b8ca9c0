// Revision trees. See rev_tree.h for the model and docs/rev_tree_format.md
// for the encoding.
#include "storage/rev_tree.h"

#include <bit>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <limits>

#include "util/coding.h"

namespace settee {

namespace {

using Node = RevTree::Node;
constexpr int kNone = RevTree::kNone;

// ---- Encoding constants. DO NOT CHANGE: they are embedded in stored
// document records (docs/rev_tree_format.md). A new layout gets a new
// format version byte instead.
constexpr char kFormatVersion = 0x01;
constexpr uint8_t kFlagDeleted = 0x01;  // the revision is a tombstone
constexpr uint8_t kFlagHasBody = 0x02;  // the revision's body is stored
constexpr uint8_t kFlagHexHash = 0x04;  // hash is 32 lowercase hex, stored as 16 raw bytes
constexpr uint8_t kFlagRoot = 0x08;     // no parent: an explicit gen follows, not a parent delta
constexpr uint8_t kKnownFlags = kFlagDeleted | kFlagHasBody | kFlagHexHash | kFlagRoot;
// ---- End of frozen constants.

// The smallest possible encoded node: flags, a one-byte delta or gen, a
// one-byte length plus one hash byte, a one-byte seq. Bounds the node count
// a buffer can claim, so garbage cannot make Decode reserve gigabytes.
constexpr size_t kMinEncodedNodeBytes = 5;
constexpr size_t kPackedHashBytes = 16;
constexpr size_t kHexHashChars = 32;

// Trees up to this many nodes find their leaves without a heap allocation.
constexpr size_t kInlineMarks = 256;

// True if `leaf_a` sorts before `leaf_b` in CouchDB's leaf order (winner
// first): live before deleted, higher gen, then higher hash.
inline bool LeafBefore(const Node& a, const Node& b) {
  if (a.deleted != b.deleted) return !a.deleted;
  if (a.gen != b.gen) return a.gen > b.gen;
  return a.hash > b.hash;
}

// Which nodes have at least one child. Storage is inline for small trees so
// that Winner() on the hot write path does not allocate.
class ChildMarks {
 public:
  explicit ChildMarks(const std::vector<Node>& nodes) {
    const size_t n = nodes.size();
    if (n <= kInlineMarks) {
      marks_ = inline_;
      std::memset(inline_, 0, n);
    } else {
      heap_.assign(n, 0);
      marks_ = heap_.data();
    }
    for (const Node& nd : nodes) {
      if (nd.parent != kNone) marks_[nd.parent] = 1;
    }
  }
  ChildMarks(const ChildMarks&) = delete;
  ChildMarks& operator=(const ChildMarks&) = delete;

  bool HasChild(int i) const { return marks_[i] != 0; }

 private:
  uint8_t inline_[kInlineMarks];
  std::vector<uint8_t> heap_;
  uint8_t* marks_;
};

void SortLeaves(const std::vector<Node>& nodes, std::vector<int>* leaves) {
  std::sort(leaves->begin(), leaves->end(),
            [&nodes](int a, int b) { return LeafBefore(nodes[a], nodes[b]); });
}

// Packs 8 lowercase hex chars (little-endian in `x`) into 4 bytes at `out`;
// false if any is not one (uppercase included: it is deliberately not
// packed, as it must round-trip exactly). Eight chars at a time in one
// register (SWAR): every node of every tree a write encodes comes through
// here, and a per-char table lookup was a measurable part of a bulk insert.
inline bool PackLowerHex8(uint64_t x, char* out) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  if (x & kHigh) return false;
  // With every byte below 0x80 these sums cannot carry into the next byte;
  // each byte's high bit tells whether it is >= lo (or <= hi).
  auto at_least = [&](uint64_t lo) { return (x + (0x80 - lo) * kOnes) & kHigh; };
  auto at_most = [&](uint64_t hi) { return ~(x + (0x7f - hi) * kOnes) & kHigh; };
  const uint64_t digit = at_least('0') & at_most('9');
  const uint64_t letter = at_least('a') & at_most('f');
  if ((digit | letter) != kHigh) return false;
  // '0'-'9' keep their low nibble; 'a'-'f' (0x61-0x66) add 9 to theirs.
  const uint64_t nibbles = (x & (0x0f * kOnes)) + ((x >> 6) & kOnes) * 9;
  // Byte 2k becomes (nibble 2k << 4) | nibble 2k+1.
  const uint64_t pairs = (nibbles << 4) | (nibbles >> 8);
  for (int k = 0; k < 4; ++k) out[k] = static_cast<char>(pairs >> (16 * k));
  return true;
}

// Packs 32 lowercase hex chars into 16 bytes at `out`; false (out partly
// written) if `s` is not exactly that.
bool PackLowerHex32(const std::string& s, char* out) {
  if (s.size() != kHexHashChars) return false;
  for (size_t i = 0; i < kHexHashChars; i += 8) {
    uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    if (!PackLowerHex8(x, out + i / 2)) return false;
  }
  return true;
}

void UnpackHex(std::string_view raw, std::string* hex) {
  static constexpr char kDigits[] = "0123456789abcdef";
  hex->resize(kHexHashChars);
  char* p = hex->data();
  for (size_t i = 0; i < kPackedHashBytes; ++i) {
    const auto b = static_cast<unsigned char>(raw[i]);
    p[2 * i] = kDigits[b >> 4];
    p[2 * i + 1] = kDigits[b & 0xf];
  }
}

bool SameRev(const Node& a, const Node& b) { return a.gen == b.gen && a.hash == b.hash; }

// True if two nodes share a RevId. Quadratic for small trees (no allocation),
// sort-based above that.
bool HasDuplicateRevs(const std::vector<Node>& nodes) {
  const size_t n = nodes.size();
  if (n < 2) return false;
  if (n <= 32) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        if (SameRev(nodes[i], nodes[j])) return true;
      }
    }
    return false;
  }
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&nodes](int a, int b) {
    const Node& x = nodes[a];
    const Node& y = nodes[b];
    return x.gen != y.gen ? x.gen < y.gen : x.hash < y.hash;
  });
  for (size_t i = 1; i < n; ++i) {
    if (SameRev(nodes[order[i - 1]], nodes[order[i]])) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// RevId

bool RevId::Parse(std::string_view s, RevId* out) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == s.size()) return false;
  uint64_t gen = 0;
  for (size_t i = 0; i < dash; ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (gen > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;  // overflow
    gen = gen * 10 + digit;
  }
  if (gen < 1) return false;
  out->gen = gen;
  out->hash.assign(s.substr(dash + 1));
  return true;
}

std::string RevId::ToString() const {
  std::string s = std::to_string(gen);
  s.push_back('-');
  s.append(hash);
  return s;
}

// ---------------------------------------------------------------------------
// RevTree: queries

std::string RevTree::RevString(int i) const {
  const Node& nd = nodes_[i];
  std::string s = std::to_string(nd.gen);
  s.push_back('-');
  s.append(nd.hash);
  return s;
}

RevId RevTree::Rev(int i) const { return RevId{nodes_[i].gen, nodes_[i].hash}; }

int RevTree::Find(const RevId& rev) const {
  const int n = static_cast<int>(nodes_.size());
  for (int i = 0; i < n; ++i) {
    const Node& nd = nodes_[i];
    if (nd.gen == rev.gen && nd.hash == rev.hash) return i;
  }
  return kNone;
}

bool RevTree::IsLeaf(int i) const {
  const int n = static_cast<int>(nodes_.size());
  if (i < 0 || i >= n) return false;
  // Children always have higher indices.
  for (int j = i + 1; j < n; ++j) {
    if (nodes_[j].parent == i) return false;
  }
  return true;
}

std::vector<int> RevTree::Leaves() const {
  std::vector<int> leaves;
  ChildMarks marks(nodes_);
  const int n = static_cast<int>(nodes_.size());
  for (int i = 0; i < n; ++i) {
    if (!marks.HasChild(i)) leaves.push_back(i);
  }
  SortLeaves(nodes_, &leaves);
  return leaves;
}

int RevTree::Winner() const {
  ChildMarks marks(nodes_);
  int best = kNone;
  const int n = static_cast<int>(nodes_.size());
  for (int i = 0; i < n; ++i) {
    if (marks.HasChild(i)) continue;
    if (best == kNone || LeafBefore(nodes_[i], nodes_[best])) best = i;
  }
  return best;
}

std::vector<int> RevTree::Conflicts() const {
  std::vector<int> leaves = Leaves();
  std::vector<int> result;
  for (size_t k = 1; k < leaves.size(); ++k) {
    if (!nodes_[leaves[k]].deleted) result.push_back(leaves[k]);
  }
  return result;
}

std::vector<int> RevTree::DeletedConflicts() const {
  std::vector<int> leaves = Leaves();
  std::vector<int> result;
  for (size_t k = 1; k < leaves.size(); ++k) {
    if (nodes_[leaves[k]].deleted) result.push_back(leaves[k]);
  }
  return result;
}

std::vector<int> RevTree::LeavesUnder(int i) const {
  std::vector<int> leaves;
  const int n = static_cast<int>(nodes_.size());
  if (i < 0 || i >= n) return leaves;
  // Descendants of i all have higher indices, and each one's parent comes
  // before it, so one forward pass marks the whole subtree.
  std::vector<uint8_t> in_subtree(n - i, 0);
  in_subtree[0] = 1;
  for (int j = i + 1; j < n; ++j) {
    const int p = nodes_[j].parent;
    if (p >= i && in_subtree[p - i]) in_subtree[j - i] = 1;
  }
  ChildMarks marks(nodes_);
  for (int j = i; j < n; ++j) {
    if (in_subtree[j - i] && !marks.HasChild(j)) leaves.push_back(j);
  }
  SortLeaves(nodes_, &leaves);
  return leaves;
}

std::vector<int> RevTree::Ancestry(int i) const {
  std::vector<int> path;
  if (i < 0 || i >= static_cast<int>(nodes_.size())) return path;
  // Parents have lower indices, so this terminates even on a hand-built tree.
  for (int j = i; j != kNone; j = nodes_[j].parent) path.push_back(j);
  return path;
}

// ---------------------------------------------------------------------------
// RevTree: mutation

int RevTree::AddRevision(int parent, RevId rev, bool deleted, bool has_body, uint64_t seq) {
  const int n = static_cast<int>(nodes_.size());
  if (rev.gen < 1 || rev.hash.empty() || n == INT_MAX) return kNone;
  if (parent != kNone) {
    if (parent < 0 || parent >= n) return kNone;
    if (rev.gen != nodes_[parent].gen + 1) return kNone;
  }
  if (Find(rev) != kNone) return kNone;
  nodes_.push_back(Node{rev.gen, std::move(rev.hash), parent, deleted, has_body, seq});
  return n;
}

RevTree::MergeResult RevTree::MergePath(uint64_t start,
                                        const std::vector<std::string>& hashes_newest_first,
                                        bool deleted, bool has_body, uint64_t seq) {
  MergeResult result{MergeKind::kInternalNode, kNone};
  const size_t len = hashes_newest_first.size();
  if (len == 0 || start < len) return result;
  for (const std::string& h : hashes_newest_first) {
    if (h.empty()) return result;
  }
  if (nodes_.size() + len > static_cast<size_t>(INT_MAX)) return result;

  // Element k (oldest first) has gen base+k and hash hashes[len-1-k].
  const uint64_t base = start - len + 1;
  auto hash_of = [&](size_t k) -> const std::string& { return hashes_newest_first[len - 1 - k]; };

  // One pass over the tree locates every path element: the path covers a
  // contiguous range of generations, so each node is compared at most once.
  std::vector<int> present(len, kNone);
  const int n0 = static_cast<int>(nodes_.size());
  for (int i = 0; i < n0; ++i) {
    const Node& nd = nodes_[i];
    if (nd.gen < base || nd.gen > start) continue;
    const size_t k = static_cast<size_t>(nd.gen - base);
    if (nd.hash == hash_of(k)) present[k] = i;
  }
  const bool was_empty = nodes_.empty();

  auto append = [&](int parent, size_t k, bool del, bool body) {
    nodes_.push_back(Node{base + k, hash_of(k), parent, del, body, seq});
    return static_cast<int>(nodes_.size()) - 1;
  };

  bool out_of_order = false;  // some parent now has a higher index than its child
  int prev = kNone;           // the last present element seen
  size_t gap_start = 0;       // elements [gap_start, k) are absent
  for (size_t k = 0; k < len; ++k) {
    const int i = present[k];
    if (i == kNone) continue;
    if (k > 0 && nodes_[i].parent == kNone) {
      // A root whose parent the path names (stemmed, or a disjoint root):
      // hang it under the missing revisions, which hang under `prev` (or
      // become a new root themselves).
      int p = prev;
      for (size_t j = gap_start; j < k; ++j) p = append(p, j, false, false);
      nodes_[i].parent = p;
      if (p > i) out_of_order = true;
      result.changed = true;
    }
    // A present non-root keeps its parent; absent revisions before it are
    // dropped since they cannot be attached consistently.
    prev = i;
    gap_start = k + 1;
  }

  if (gap_start < len) {
    // New revisions after the newest present one.
    if (prev == kNone) {
      result.kind = was_empty ? MergeKind::kNewLeaf : MergeKind::kNewBranch;
    } else {
      bool prev_was_leaf = true;  // anchor gained no children above
      for (int j = 0; j < n0; ++j) {
        if (nodes_[j].parent == prev) {
          prev_was_leaf = false;
          break;
        }
      }
      result.kind = prev_was_leaf ? MergeKind::kNewLeaf : MergeKind::kNewBranch;
    }
    int p = prev;
    for (size_t k = gap_start; k + 1 < len; ++k) p = append(p, k, false, false);
    result.index = append(p, len - 1, deleted, has_body);
    result.changed = true;
  } else {
    result.index = present[len - 1];
    Node& newest = nodes_[result.index];
    if (has_body && !newest.has_body) {
      // couch_key_tree's value_pref: an available revision beats a missing one.
      newest.has_body = true;
      newest.deleted = deleted;
      newest.seq = seq;
      result.took_body = true;
      result.changed = true;
    }
  }

  if (out_of_order) {
    std::vector<int> old_to_new;
    Renumber(&old_to_new);
    result.index = old_to_new[result.index];
    result.renumbered = true;
  }
  return result;
}

void RevTree::Renumber(std::vector<int>* old_to_new) {
  const int n = static_cast<int>(nodes_.size());
  std::vector<int> order;
  order.reserve(n);
  std::vector<uint8_t> placed(n, 0);
  std::vector<int> chain;
  for (int i = 0; i < n; ++i) {
    // Emit i after every not-yet-emitted ancestor, topmost first.
    for (int j = i; j != kNone && !placed[j]; j = nodes_[j].parent) {
      placed[j] = 1;
      chain.push_back(j);
    }
    while (!chain.empty()) {
      order.push_back(chain.back());
      chain.pop_back();
    }
  }
  old_to_new->assign(n, kNone);
  for (int k = 0; k < n; ++k) (*old_to_new)[order[k]] = k;
  std::vector<Node> renumbered;
  renumbered.reserve(n);
  for (int k = 0; k < n; ++k) {
    Node& nd = nodes_[order[k]];
    if (nd.parent != kNone) nd.parent = (*old_to_new)[nd.parent];
    renumbered.push_back(std::move(nd));
  }
  nodes_.swap(renumbered);
}

std::vector<RevId> RevTree::Stem(uint32_t limit) {
  std::vector<RevId> removed;
  if (limit == 0) limit = 1;
  const int n = static_cast<int>(nodes_.size());
  // No path can be longer than the tree is big (the common case: skip the
  // pass and its allocation on every write).
  if (static_cast<uint64_t>(n) <= limit) return removed;

  // dist[i] = generations from i down to its nearest leaf. Children come
  // after their parent, so a reverse pass sees every child first.
  constexpr uint64_t kUnset = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> dist(n, kUnset);
  bool any_change = false;
  for (int i = n - 1; i >= 0; --i) {
    if (dist[i] == kUnset) dist[i] = 0;  // no child seen: a leaf
    if (dist[i] >= limit) any_change = true;
    const int p = nodes_[i].parent;
    if (p != kNone) {
      if (dist[i] + 1 >= limit) any_change = true;  // this edge is cut
      dist[p] = std::min(dist[p], dist[i] + 1);
    }
  }
  if (!any_change) return removed;

  // A node is kept if some leaf below is within `limit` of it; the edge to
  // its parent is kept only if the parent is within `limit` of such a leaf.
  std::vector<int> new_index(n, kNone);
  std::vector<Node> kept;
  kept.reserve(n);
  for (int i = 0; i < n; ++i) {
    Node& nd = nodes_[i];
    if (dist[i] >= limit) {
      removed.push_back(RevId{nd.gen, nd.hash});
      continue;
    }
    if (nd.parent != kNone) {
      nd.parent = dist[i] + 1 < limit ? new_index[nd.parent] : kNone;
    }
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(nd));
  }
  nodes_.swap(kept);
  return removed;
}

void RevTree::SetHasBody(int i, bool has_body) {
  if (i < 0 || i >= static_cast<int>(nodes_.size())) return;
  nodes_[i].has_body = has_body;
}

// ---------------------------------------------------------------------------
// RevTree: encoding

void RevTree::Encode(std::string* out) const {
  out->push_back(kFormatVersion);
  coding::PutVarint64(out, nodes_.size());
  const int n = static_cast<int>(nodes_.size());
  for (int i = 0; i < n; ++i) {
    const Node& nd = nodes_[i];
    // Each node is assembled in a local buffer and appended once.
    char buf[1 + 2 * coding::kMaxVarint64Bytes + kPackedHashBytes];
    char* p = buf + 1;
    char packed[kPackedHashBytes];
    const bool hex = PackLowerHex32(nd.hash, packed);
    uint8_t flags = 0;
    if (nd.deleted) flags |= kFlagDeleted;
    if (nd.has_body) flags |= kFlagHasBody;
    if (hex) flags |= kFlagHexHash;
    if (nd.parent == kNone) flags |= kFlagRoot;
    buf[0] = static_cast<char>(flags);
    // A root carries its gen; any other node's gen is implied (parent's + 1)
    // and it carries its parent as a small backward delta instead.
    p = coding::EncodeVarint64(p, nd.parent == kNone ? nd.gen : static_cast<uint64_t>(i - nd.parent));
    if (hex) {
      std::memcpy(p, packed, kPackedHashBytes);
      p += kPackedHashBytes;
      p = coding::EncodeVarint64(p, nd.seq);
      out->append(buf, p - buf);
    } else {
      out->append(buf, p - buf);
      coding::PutLengthPrefixed(out, nd.hash);
      coding::PutVarint64(out, nd.seq);
    }
  }
}

Status RevTree::Decode(std::string_view in, RevTree* out) {
  out->nodes_.clear();
  auto corrupt = [out](const char* why) {
    out->nodes_.clear();
    return Status::Corruption(std::string("bad revision tree: ") + why);
  };
  if (in.empty() || in[0] != kFormatVersion) return corrupt("unknown format version");
  in.remove_prefix(1);
  uint64_t count;
  if (!coding::GetVarint64(&in, &count)) return corrupt("truncated node count");
  if (count > in.size() / kMinEncodedNodeBytes || count > static_cast<uint64_t>(INT_MAX)) {
    return corrupt("node count exceeds input");
  }
  std::vector<Node>& nodes = out->nodes_;
  nodes.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (in.empty()) return corrupt("truncated node");
    const auto flags = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    if (flags & ~kKnownFlags) return corrupt("unknown node flags");
    Node nd{0, std::string(), kNone, (flags & kFlagDeleted) != 0, (flags & kFlagHasBody) != 0, 0};
    uint64_t v;
    if (!coding::GetVarint64(&in, &v)) return corrupt("truncated gen or parent");
    if (flags & kFlagRoot) {
      if (v < 1) return corrupt("generation 0");
      nd.gen = v;
    } else {
      if (v < 1 || v > i) return corrupt("parent index out of range");
      nd.parent = static_cast<int>(i - v);
      const uint64_t parent_gen = nodes[nd.parent].gen;
      if (parent_gen == std::numeric_limits<uint64_t>::max()) return corrupt("generation overflow");
      nd.gen = parent_gen + 1;
    }
    if (flags & kFlagHexHash) {
      if (in.size() < kPackedHashBytes) return corrupt("truncated hash");
      UnpackHex(in.substr(0, kPackedHashBytes), &nd.hash);
      in.remove_prefix(kPackedHashBytes);
    } else {
      std::string_view hash;
      if (!coding::GetLengthPrefixed(&in, &hash)) return corrupt("truncated hash");
      if (hash.empty()) return corrupt("empty hash");
      nd.hash.assign(hash);
    }
    if (!coding::GetVarint64(&in, &nd.seq)) return corrupt("truncated seq");
    nodes.push_back(std::move(nd));
  }
  if (!in.empty()) return corrupt("trailing bytes");
  if (HasDuplicateRevs(nodes)) return corrupt("duplicate revision");
  return Status::OK();
}

// ---------------------------------------------------------------------------
// RevTree: debugging

std::string RevTree::DebugString() const {
  const int n = static_cast<int>(nodes_.size());
  std::vector<std::vector<int>> children(n);
  std::vector<int> roots;
  for (int i = 0; i < n; ++i) {
    if (nodes_[i].parent == kNone) {
      roots.push_back(i);
    } else {
      children[nodes_[i].parent].push_back(i);
    }
  }
  auto by_rev = [this](int a, int b) {
    const Node& x = nodes_[a];
    const Node& y = nodes_[b];
    return x.gen != y.gen ? x.gen < y.gen : x.hash < y.hash;
  };
  std::sort(roots.begin(), roots.end(), by_rev);
  for (auto& c : children) std::sort(c.begin(), c.end(), by_rev);

  // Iterative, so a very deep (decoded) history cannot overflow the stack.
  // Stack entries: a node index, or one of the punctuation tokens below.
  constexpr int kClose = -2, kComma = -3, kSpace = -4;
  std::vector<int> stack;
  for (size_t k = roots.size(); k-- > 0;) {
    stack.push_back(roots[k]);
    if (k > 0) stack.push_back(kSpace);
  }
  std::string s;
  while (!stack.empty()) {
    const int t = stack.back();
    stack.pop_back();
    switch (t) {
      case kClose: s.push_back(')'); break;
      case kComma: s.push_back(','); break;
      case kSpace: s.push_back(' '); break;
      default: {
        s.append(RevString(t));
        const std::vector<int>& c = children[t];
        if (c.empty()) break;
        s.push_back('(');
        stack.push_back(kClose);
        for (size_t k = c.size(); k-- > 0;) {
          stack.push_back(c[k]);
          if (k > 0) stack.push_back(kComma);
        }
      }
    }
  }
  return s;
}

}  // namespace settee
