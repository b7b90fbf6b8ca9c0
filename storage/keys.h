// The key layout of a settee store inside its KVStore (docs/storage_format.md).
//
// DO NOT CHANGE THESE PREFIXES OR KIND BYTES: they are embedded in on-disk
// data. Add new kinds with new bytes.
//
//   'M' name                         store metadata (uuid, next database id)
//   'C' db_name                      catalog: db name -> database id
//   'X' db_id                        a deleted database whose keys are being purged
//   'D' db_id kind ...               everything belonging to one database:
//        'd' docid                   document record (storage/doc_record.h)
//        's' seq                     change block: the by-sequence entries of one
//                                    write batch, keyed by its last seq
//        'o' seq                     the change at seq was superseded (empty value)
//        'r' varint(len) docid rev   body of a non-winning revision
//        'l' docid                   _local document (docid without "_local/")
//        'i'                         counters as of creation or the last purge; the newest
//                                    change block's supersede them when its seq is past these
//        'p' name                    database properties (revs_limit, security)
//        'a' lenpref(digest)         attachment body header (storage/attachment_store.h)
//        'a' lenpref(digest) chunk   attachment body chunk (fixed32 BE index)
//        'v' signature ...           view and Mango indexes (storage/views.cc)
//        'u' purge_seq               purge info: one logged purge request
//
// db_id and seq are 8-byte big-endian so that they sort numerically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace settee::keys {

constexpr char kMetaPrefix = 'M';
constexpr char kCatalogPrefix = 'C';
constexpr char kPurgePrefix = 'X';
constexpr char kDatabasePrefix = 'D';

// The bytes after kDatabasePrefix that name the database (fixed64 BE id).
constexpr size_t kDatabaseIdBytes = 8;

constexpr char kDocKind = 'd';
constexpr char kSeqKind = 's';
constexpr char kObsoleteKind = 'o';
constexpr char kRevBodyKind = 'r';
constexpr char kLocalKind = 'l';
constexpr char kCountersKind = 'i';
constexpr char kPropertyKind = 'p';
constexpr char kAttachmentKind = 'a';
constexpr char kViewKind = 'v';
constexpr char kPurgeInfoKind = 'u';

// Names of a database's properties (KeyBuilder::Property). DO NOT CHANGE:
// stored.
constexpr std::string_view kRevsLimitProperty = "revs_limit";
constexpr std::string_view kSecurityProperty = "security";
constexpr std::string_view kPurgedInfosLimitProperty = "purged_infos_limit";

inline std::string Meta(std::string_view name) {
  std::string k(1, kMetaPrefix);
  k.append(name);
  return k;
}

inline std::string Catalog(std::string_view db_name) {
  std::string k(1, kCatalogPrefix);
  k.append(db_name);
  return k;
}

inline std::string Purge(uint64_t db_id) {
  std::string k(1, kPurgePrefix);
  coding::PutFixed64BE(&k, db_id);
  return k;
}

// 'D' + db_id: the prefix of everything a database owns.
inline std::string DatabasePrefix(uint64_t db_id) {
  std::string k(1, kDatabasePrefix);
  coding::PutFixed64BE(&k, db_id);
  return k;
}

// The smallest key greater than every key starting with `prefix`, or "" if
// there is none (prefix all 0xff).
inline std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto c = static_cast<unsigned char>(end.back());
    if (c != 0xff) {
      end.back() = static_cast<char>(c + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

// Builds the keys of one database; cheap to copy.
class DatabaseKeys {
 public:
  explicit DatabaseKeys(uint64_t db_id) : prefix_(DatabasePrefix(db_id)) {}

  const std::string& prefix() const { return prefix_; }

  std::string KindPrefix(char kind, size_t extra = 0) const {
    std::string k;
    k.reserve(prefix_.size() + 1 + extra);  // one allocation per key
    k.append(prefix_);
    k.push_back(kind);
    return k;
  }
  std::string Doc(std::string_view docid) const {
    std::string k = KindPrefix(kDocKind, docid.size());
    k.append(docid);
    return k;
  }
  // Doc() into *out, reusing its buffer (a read path's scratch).
  void DocInto(std::string_view docid, std::string* out) const {
    out->assign(prefix_);
    out->push_back(kDocKind);
    out->append(docid);
  }
  // A key of a seq-keyed kind (kSeqKind, kObsoleteKind).
  std::string KindSeq(char kind, uint64_t seq) const {
    std::string k = KindPrefix(kind, 8);
    coding::PutFixed64BE(&k, seq);
    return k;
  }
  std::string Seq(uint64_t seq) const { return KindSeq(kSeqKind, seq); }
  std::string Obsolete(uint64_t seq) const { return KindSeq(kObsoleteKind, seq); }
  std::string PurgeInfo(uint64_t purge_seq) const { return KindSeq(kPurgeInfoKind, purge_seq); }
  // All stored non-winning bodies of `docid` share this prefix.
  std::string RevBodyPrefix(std::string_view docid) const {
    std::string k = KindPrefix(kRevBodyKind);
    coding::PutLengthPrefixed(&k, docid);
    return k;
  }
  std::string RevBody(std::string_view docid, std::string_view rev) const {
    std::string k = KindPrefix(kRevBodyKind, 5 + docid.size() + rev.size());
    coding::PutLengthPrefixed(&k, docid);
    k.append(rev);
    return k;
  }
  std::string Local(std::string_view local_id) const {
    std::string k = KindPrefix(kLocalKind);
    k.append(local_id);
    return k;
  }
  std::string Counters() const { return KindPrefix(kCountersKind); }
  std::string Property(std::string_view name) const {
    std::string k = KindPrefix(kPropertyKind);
    k.append(name);
    return k;
  }

  // An attachment body's header; its chunks' keys extend it.
  std::string Attachment(std::string_view digest) const {
    std::string k = KindPrefix(kAttachmentKind, 5 + digest.size() + 4);
    coding::PutLengthPrefixed(&k, digest);
    return k;
  }
  std::string AttachmentChunk(std::string_view digest, uint32_t index) const {
    std::string k = Attachment(digest);
    coding::PutFixed32BE(&k, index);
    return k;
  }

  // Strips the database prefix and kind byte from a key of that kind.
  std::string_view Suffix(std::string_view key) const { return key.substr(prefix_.size() + 1); }

 private:
  std::string prefix_;
};

}  // namespace settee::keys
