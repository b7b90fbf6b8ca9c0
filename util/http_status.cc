#include "util/http_status.h"

namespace settee {

int HttpStatusFor(Status::Code code) {
  using C = Status::Code;
  switch (code) {
    case C::kOk: return 200;
    case C::kBadRequest:
    case C::kIllegalDocId:
    case C::kIllegalDatabaseName:
    case C::kDocValidation:
    case C::kQueryParseError:
    case C::kInvalidDesignDoc:
    case C::kCompilationError:
    case C::kNoUsableIndex:
    case C::kInvalidOperator:
    case C::kInvalidOperation: return 400;
    case C::kUnauthorized: return 401;
    case C::kForbidden: return 403;
    case C::kNotFound: return 404;
    case C::kNotAcceptable: return 406;
    case C::kConflict: return 409;
    case C::kFileExists:
    case C::kMissingStub:
    case C::kPreconditionFailed: return 412;
    case C::kDocumentTooLarge:
    case C::kTooLarge:
    case C::kAttachmentTooLarge: return 413;
    case C::kBadContentType: return 415;
    case C::kRangeNotSatisfiable: return 416;
    case C::kTimeout:  // CouchDB answers an internal timeout with 500
    case C::kReduceOverflow:
    case C::kIOError:
    case C::kCorruption:
    case C::kInternal: return 500;
  }
  return 500;
}

}  // namespace settee
