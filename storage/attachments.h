// Attachment entries inside stored document bodies.
//
// A revision's attachments are kept in its stored body as its last member,
// "_attachments", in the form a plain GET returns them (CouchDB's stubs):
//   "_attachments":{"name":{"content_type":..,"revpos":N,"digest":"md5-..",
//                           "length":N,"stub":true}, ...}
// so that reads without attachment options serve the body as stored, and the
// revision id covers the attachments' names, types and digests. The bodies
// themselves live in the AttachmentStore under their digest; the encoding
// (gzip or not) is a property of the stored body, read from its header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

struct AttachmentEntry {
  std::string name;
  std::string content_type;
  std::string digest;
  uint64_t revpos = 0;
  uint64_t length = 0;
};

// The attachments of a stored body (none when it has no _attachments).
// `rest`, when given, gets the body without its _attachments member.
Status ParseStoredAttachments(std::string_view body, std::vector<AttachmentEntry>* out,
                              std::string* rest = nullptr);

// True if a stored body may have attachments: a cheap test before parsing.
bool MayHaveAttachments(std::string_view body);

// Appends `entries` to `body` (a JSON object without _attachments) as its
// last member; no member when `entries` is empty.
void AppendAttachmentsMember(std::string* body, const std::vector<AttachmentEntry>& entries);

// Appends one entry's JSON object. `stub`: the whole stub, closed. Otherwise
// the members the inline form shares with it (no length, no stub), left open
// for the caller's "data" or "follows" and closing brace. Encoding info when
// `encoding` is non-empty.
void AppendAttachmentJson(std::string* out, const AttachmentEntry& e, bool stub,
                          std::string_view encoding, uint64_t encoded_length);

}  // namespace settee
