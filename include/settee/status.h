// Status and Result: how every settee module reports success or failure.
//
// A Status carries one of CouchDB's error kinds ("not_found", "conflict",
// "bad_request", ...) and a human-readable reason. It is the only error
// channel across module boundaries: no exception crosses a public settee API,
// a libuv callback, a V8 callback or a thread boundary. The HTTP status code
// for each kind is decided once, in runtime/, never here.
//
// Thread safety: a Status is a plain value. Const methods may be called from
// many threads at once; mutation needs external synchronization.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace settee {

class [[nodiscard]] Status {
 public:
  // The error kinds. Each maps to the "error" member CouchDB puts in its
  // error responses (see ErrorName()).
  enum class Code : unsigned char {
    kOk = 0,
    kBadRequest,           // bad_request
    kIllegalDocId,         // illegal_docid
    kIllegalDatabaseName,  // illegal_database_name
    kDocValidation,        // doc_validation
    kQueryParseError,      // query_parse_error
    kInvalidDesignDoc,     // invalid_design_doc
    kCompilationError,     // compilation_error
    kUnauthorized,         // unauthorized
    kForbidden,            // forbidden
    kNotFound,             // not_found
    kConflict,             // conflict
    kFileExists,           // file_exists
    kMissingStub,          // missing_stub
    kPreconditionFailed,   // precondition_failed
    kDocumentTooLarge,     // document_too_large
    kTooLarge,             // too_large (request body)
    kAttachmentTooLarge,   // attachment_too_large
    kBadContentType,       // bad_content_type
    kNotAcceptable,        // not_acceptable
    kRangeNotSatisfiable,  // requested_range_not_satisfiable
    kTimeout,              // timeout
    kNoUsableIndex,        // no_usable_index
    kInvalidOperator,      // invalid_operator (Mango selectors)
    kReduceOverflow,       // reduce_overflow_error
    kInvalidOperation,     // operation not possible in the current state
    kIOError,              // storage failure
    kCorruption,           // stored data could not be decoded
    kInternal,             // unknown_error: a bug or an unexpected state
  };

  Status() noexcept = default;
  Status(Code code, std::string reason) : code_(code), reason_(std::move(reason)) {}

  static Status OK() { return Status(); }
  static Status BadRequest(std::string r) { return {Code::kBadRequest, std::move(r)}; }
  static Status NotFound(std::string r = "missing") { return {Code::kNotFound, std::move(r)}; }
  static Status Conflict(std::string r = "Document update conflict.") {
    return {Code::kConflict, std::move(r)};
  }
  static Status Forbidden(std::string r) { return {Code::kForbidden, std::move(r)}; }
  static Status Unauthorized(std::string r) { return {Code::kUnauthorized, std::move(r)}; }
  static Status IOError(std::string r) { return {Code::kIOError, std::move(r)}; }
  static Status Corruption(std::string r) { return {Code::kCorruption, std::move(r)}; }
  static Status Internal(std::string r) { return {Code::kInternal, std::move(r)}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsConflict() const { return code_ == Code::kConflict; }
  Code code() const { return code_; }
  const std::string& reason() const { return reason_; }

  // CouchDB's name for the kind, e.g. "not_found"; "ok" for success.
  std::string_view ErrorName() const { return ErrorName(code_); }
  static std::string_view ErrorName(Code code);

  // "not_found: missing" (for logs and test failure messages).
  std::string ToString() const;

  bool operator==(const Status& o) const { return code_ == o.code_ && reason_ == o.reason_; }

 private:
  Code code_ = Code::kOk;
  std::string reason_;
};

// Either a value or a non-OK Status. Absent results that are part of normal
// operation (a missing document) are a kNotFound Status, never an exception.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok()
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace settee
