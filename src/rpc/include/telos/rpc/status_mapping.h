// Carrying telos::Status across gRPC: the telos code rides in the gRPC code (a fixed mapping)
// and, exactly, in the error details string, so a round trip keeps codes gRPC has no name for
// (Conflict, UnknownResult, LoginExpired).
#pragma once

#include <grpcpp/support/status.h>

#include "telos/base/status.h"

namespace telos::rpc {

grpc::Status ToGrpc(const Status& status);
// A transport failure (UNAVAILABLE, DEADLINE_EXCEEDED, ...) maps to the nearest telos code.
Status FromGrpc(const grpc::Status& status);

}  // namespace telos::rpc
