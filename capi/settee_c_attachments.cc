// The C API's attachment and Mango calls (include/settee/settee.h), over
// Database::PutAttachment/OpenAttachment/DeleteAttachment and
// storage/mango.h. Handles and errors as in settee_c.cc.
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "capi/c_api_internal.h"
#include "storage/mango.h"

using settee::Status;
using namespace settee_c;  // NOLINT: the C functions below are this module's surface

namespace {

// Checks the arguments every attachment call shares.
settee_code AttachmentArgs(const char* docid, const char* name, settee_error* err) {
  SETTEE_C_CHECK(Utf8Arg(docid, "docid", err));
  SETTEE_C_CHECK(Utf8Arg(name, "name", err));
  if (!*name) return InvalidArgument(err, "name is empty");
  return SETTEE_OK;
}

}  // namespace

extern "C" {

settee_code settee_db_put_attachment(settee_db* db, const char* docid, const char* name,
                                     const char* rev, const char* content_type, const void* data,
                                     size_t size, char** rev_out, settee_error* err) {
  if (rev_out) *rev_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(AttachmentArgs(docid, name, err));
  SETTEE_C_CHECK(OptionalUtf8Arg(rev, "rev", err));
  SETTEE_C_CHECK(OptionalUtf8Arg(content_type, "content_type", err));
  if (!data && size > 0) return InvalidArgument(err, "data is NULL");
  return Guarded(err, [&] {
    std::string bytes(static_cast<const char*>(data), data ? size : 0);
    auto r = call->PutAttachment(docid, name, rev ? rev : "",
                                 content_type ? content_type : "application/octet-stream",
                                 std::move(bytes));
    if (!r.ok()) return Fail(err, r.status());
    if (!r->status.ok()) return Fail(err, r->status);
    Give(rev_out, r->rev);
    return Ok(err);
  });
}

settee_code settee_db_get_attachment(settee_db* db, const char* docid, const char* name,
                                     const char* rev, void** data_out, size_t* size_out,
                                     char** content_type_out, settee_error* err) {
  if (data_out) *data_out = nullptr;
  if (size_out) *size_out = 0;
  if (content_type_out) *content_type_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(AttachmentArgs(docid, name, err));
  SETTEE_C_CHECK(OptionalUtf8Arg(rev, "rev", err));
  if (!data_out) return InvalidArgument(err, "data_out is NULL");
  if (!size_out) return InvalidArgument(err, "size_out is NULL");
  return Guarded(err, [&] {
    auto reader = call->OpenAttachment(docid, name, rev ? rev : "");
    if (!reader.ok()) return Fail(err, reader.status());
    const uint64_t length = (*reader)->info().length;
    // One byte more than the body, so that an empty one is not a NULL.
    char* bytes = static_cast<char*>(std::malloc(length + 1));
    if (!bytes) return Fail(err, SETTEE_ERR_INTERNAL, "out of memory");
    uint64_t got = 0;
    Status s = (*reader)->Read(0, length, [&](std::string_view piece) {
      if (piece.size() > length - got) return false;  // more than the stored length said
      std::memcpy(bytes + got, piece.data(), piece.size());
      got += piece.size();
      return true;
    });
    if (s.ok() && got != length) s = Status::Corruption("attachment body shorter than its length");
    if (!s.ok()) {
      std::free(bytes);
      return Fail(err, s);
    }
    *data_out = bytes;
    *size_out = static_cast<size_t>(length);
    Give(content_type_out, (*reader)->info().content_type);
    return Ok(err);
  });
}

settee_code settee_db_delete_attachment(settee_db* db, const char* docid, const char* name,
                                        const char* rev, char** rev_out, settee_error* err) {
  if (rev_out) *rev_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(AttachmentArgs(docid, name, err));
  SETTEE_C_CHECK(Utf8Arg(rev, "rev", err));
  return Guarded(err, [&] {
    auto r = call->DeleteAttachment(docid, name, rev);
    if (!r.ok()) return Fail(err, r.status());
    if (!r->status.ok()) return Fail(err, r->status);
    Give(rev_out, r->rev);
    return Ok(err);
  });
}

settee_code settee_db_create_index(settee_db* db, const char* index_json, char** json_out,
                                   settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(index_json, "index_json", err));
  return Guarded(err, [&] {
    std::string out;
    Status s = settee::mango::CreateIndex(call.store_ref(), call.db(), index_json, &out);
    if (!s.ok()) return Fail(err, s);
    Give(json_out, out);
    return Ok(err);
  });
}

settee_code settee_db_find(settee_db* db, const char* query_json, char** json_out,
                           settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(query_json, "query_json", err));
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  return Guarded(err, [&] {
    std::string out;
    Status s = settee::mango::Find(call.store_ref(), call.db(), query_json, &out);
    if (!s.ok()) return Fail(err, s);
    Give(json_out, out);
    return Ok(err);
  });
}

}  // extern "C"
