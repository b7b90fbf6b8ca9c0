// Attachment pieces of the document endpoints (endpoints_document.cc), kept
// with the standalone attachment endpoints in endpoints_attachments.cc:
// multipart/related documents in and out, and the attachment read options.
#pragma once

#include <functional>
#include <string>

#include "runtime/couch_server.h"
#include "settee/database.h"

namespace settee {

// Reads attachments, atts_since and att_encoding_info from the query.
Status ParseAttachmentOptions(RequestContext& ctx, GetOptions* opts);

// True if the Accept header names `type` (e.g. "multipart/related").
bool Accepts(const RequestContext& ctx, std::string_view type);

// GET /db/doc?attachments=true with Accept: multipart/related: the document
// (with "follows" entries), then each attachment body as a part, streamed.
// `after_read`, when set, rewrites the document as read (a read filter that
// keeps _attachments) or refuses it, before anything is sent.
Status SendDocMultipartRelated(RequestContext& ctx, Database& db, const std::string& docid,
                               GetOptions opts,
                               const std::function<Status(std::string* doc_json)>& after_read = {});

// Writes one open_revs revision (found, JSON with "follows" entries) as a
// part of a multipart/mixed answer whose boundary is `boundary`: plain JSON
// when no body follows, else a nested multipart/related part.
bool WriteOpenRevPart(RequestContext& ctx, Database& db, const std::string& docid,
                      const std::string& doc_json, const std::string& boundary);

// PUT /db/doc with a multipart/related body (the document, then the bodies
// of its "follows" attachments). `check_doc` may refuse the document part,
// or change its JSON, before anything else looks at it.
Status PutDocMultipart(RequestContext& ctx, Database& db, const std::string& docid,
                       const UpdateOptions& opts,
                       const std::function<Status(std::string* doc_json)>& check_doc,
                       DocUpdateResult* result);

void RegisterAttachmentEndpoints(CouchServer& server);

}  // namespace settee
