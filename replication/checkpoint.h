// Replication checkpoints: the "_local/<replication id>" document the
// replicator writes on both the source and the target, in CouchDB's format
// (couch_replicator_scheduler_job.erl do_checkpoint), so a CouchDB
// replicator can resume from a settee checkpoint and the other way round:
//
//   {"session_id", "source_last_seq", "replication_id_version": 4,
//    "history": [{"session_id","start_time","end_time","start_last_seq",
//                 "end_last_seq","recorded_seq","missing_checked",
//                 "missing_found","docs_read","docs_written",
//                 "doc_write_failures"}, ...]}   (newest first, at most 50)
//
// PouchDB's format ({"last_seq","history":[{"last_seq","session_id"}]}) is
// read too. Seqs are JSON text, as everywhere in replication/. Pure
// functions over JSON text; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace settee::replication {

struct CheckpointEntry {
  std::string session_id;
  std::string start_time;  // RFC 1123, as CouchDB writes it
  std::string end_time;
  std::string start_last_seq;  // JSON text
  std::string recorded_seq;    // JSON text
  uint64_t missing_checked = 0;
  uint64_t missing_found = 0;
  uint64_t docs_read = 0;
  uint64_t docs_written = 0;
  uint64_t doc_write_failures = 0;
};

// Where a replication resumes, from each side's checkpoint document (absent
// when nullopt), by CouchDB's rule (compare_replication_logs): the same
// top session on both sides gives its source_last_seq; otherwise the
// newest session recorded in both histories gives its recorded_seq;
// otherwise "0". `history` gets the history to carry forward (JSON array).
std::string StartSeqFromCheckpoints(const std::optional<std::string>& source_doc,
                                    const std::optional<std::string>& target_doc,
                                    std::string* history);

// The history one attempt of a replication writes, checkpoint after
// checkpoint. Every checkpoint has a session id of its own, as in CouchDB
// (so a side restored from a backup to an earlier checkpoint never matches
// a later one), but only the attempt's last two entries are kept in front of
// the history it resumed with: the last one in case the other side missed
// the newest checkpoint (a crash between the two writes), so that a resume
// still finds a common entry there. CouchDB checkpoints every 30 s and
// lets its history grow by an entry each time; checkpointing after every
// batch, as PouchDB does, would otherwise write 50 entries twice a batch.
// The earlier history is parsed once, here.
class CheckpointHistory {
 public:
  // `earlier`: the history resumed with (a JSON array text, "[]" when none).
  explicit CheckpointHistory(std::string_view earlier);
  // The history (JSON array text, newest first, at most 50 entries) for a
  // checkpoint of `entry`, which becomes the previous one for the next.
  std::string Add(const CheckpointEntry& entry);

 private:
  std::vector<std::string> earlier_;  // entries' JSON text, newest first
  std::string previous_;              // this attempt's last entry, if any
};

// `history` (a JSON array text, "[]" when none) with `entry` in front,
// trimmed to 50 entries.
std::string PrependHistory(const CheckpointEntry& entry, const std::string& history);

// The checkpoint document for `entry`, whose history (from PrependHistory)
// starts with it.
std::string BuildCheckpoint(const CheckpointEntry& entry, const std::string& history);

// "Tue, 01 Dec 2026 08:36:24 GMT" for now.
std::string Rfc1123Now();

}  // namespace settee::replication
