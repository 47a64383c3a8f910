#include "telos/rpc/status_mapping.h"

#include <string>

namespace telos::rpc {
namespace {

grpc::StatusCode GrpcCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return grpc::StatusCode::OK;
    case StatusCode::kInvalidArgument: return grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kNotFound: return grpc::StatusCode::NOT_FOUND;
    case StatusCode::kAlreadyExists: return grpc::StatusCode::ALREADY_EXISTS;
    case StatusCode::kFailedPrecondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kConflict: return grpc::StatusCode::ABORTED;
    case StatusCode::kUnavailable: return grpc::StatusCode::UNAVAILABLE;
    case StatusCode::kDeadlineExceeded: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case StatusCode::kResourceExhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case StatusCode::kPermissionDenied: return grpc::StatusCode::PERMISSION_DENIED;
    case StatusCode::kUnknownResult: return grpc::StatusCode::UNKNOWN;
    case StatusCode::kCancelled: return grpc::StatusCode::CANCELLED;
    case StatusCode::kInternal: return grpc::StatusCode::INTERNAL;
    // gRPC has no code of its own for it; a peer that predates it reads the details as no code
    // of its and sees PERMISSION_DENIED with the same message, as it always did.
    case StatusCode::kLoginExpired: return grpc::StatusCode::PERMISSION_DENIED;
  }
  return grpc::StatusCode::INTERNAL;
}

StatusCode TelosCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return StatusCode::kOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE: return StatusCode::kInvalidArgument;
    case grpc::StatusCode::NOT_FOUND: return StatusCode::kNotFound;
    case grpc::StatusCode::ALREADY_EXISTS: return StatusCode::kAlreadyExists;
    case grpc::StatusCode::FAILED_PRECONDITION: return StatusCode::kFailedPrecondition;
    case grpc::StatusCode::ABORTED: return StatusCode::kConflict;
    case grpc::StatusCode::UNAVAILABLE: return StatusCode::kUnavailable;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return StatusCode::kDeadlineExceeded;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return StatusCode::kResourceExhausted;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED: return StatusCode::kPermissionDenied;
    case grpc::StatusCode::CANCELLED: return StatusCode::kCancelled;
    case grpc::StatusCode::UNKNOWN: return StatusCode::kUnknownResult;
    default: return StatusCode::kInternal;
  }
}

}  // namespace

grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<int>(status.code());
  return grpc::Status(GrpcCode(status.code()), status.message(), std::to_string(code));
}

Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return Status();
  StatusCode code = TelosCode(status.error_code());
  const std::string& details = status.error_details();
  if (!details.empty() && details.size() <= 2 &&
      details.find_first_not_of("0123456789") == std::string::npos) {
    const int exact = std::stoi(details);
    if (exact > 0 && exact <= static_cast<int>(kStatusCodeLast)) {
      code = static_cast<StatusCode>(exact);
    }
  }
  return Status(code, status.error_message());
}

}  // namespace telos::rpc
