#include "settee/status.h"

namespace settee {

std::string_view Status::ErrorName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kBadRequest: return "bad_request";
    case Code::kIllegalDocId: return "illegal_docid";
    case Code::kIllegalDatabaseName: return "illegal_database_name";
    case Code::kDocValidation: return "doc_validation";
    case Code::kQueryParseError: return "query_parse_error";
    case Code::kInvalidDesignDoc: return "invalid_design_doc";
    case Code::kCompilationError: return "compilation_error";
    case Code::kUnauthorized: return "unauthorized";
    case Code::kForbidden: return "forbidden";
    case Code::kNotFound: return "not_found";
    case Code::kConflict: return "conflict";
    case Code::kFileExists: return "file_exists";
    case Code::kMissingStub: return "missing_stub";
    case Code::kPreconditionFailed: return "precondition_failed";
    case Code::kDocumentTooLarge: return "document_too_large";
    case Code::kTooLarge: return "too_large";
    case Code::kAttachmentTooLarge: return "attachment_too_large";
    case Code::kBadContentType: return "bad_content_type";
    case Code::kNotAcceptable: return "not_acceptable";
    case Code::kRangeNotSatisfiable: return "requested_range_not_satisfiable";
    case Code::kTimeout: return "timeout";
    case Code::kNoUsableIndex: return "no_usable_index";
    case Code::kInvalidOperator: return "invalid_operator";
    case Code::kReduceOverflow: return "reduce_overflow_error";
    case Code::kInvalidOperation: return "invalid_operation";
    case Code::kIOError: return "io_error";
    case Code::kCorruption: return "corruption";
    case Code::kInternal: return "unknown_error";
  }
  return "unknown_error";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(ErrorName());
  s += ": ";
  s += reason_;
  return s;
}

}  // namespace settee
