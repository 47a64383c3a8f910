#include "telos/rpc/status_mapping.h"

#include <gtest/gtest.h>

namespace telos::rpc {
namespace {

TEST(StatusMapping, EveryTelosCodeSurvivesARoundTrip) {
  for (int c = 1; c <= static_cast<int>(kStatusCodeLast); ++c) {
    const Status original(static_cast<StatusCode>(c), "why " + std::to_string(c));
    const Status back = FromGrpc(ToGrpc(original));
    EXPECT_EQ(back.code(), original.code()) << c;
    EXPECT_EQ(back.message(), original.message());
  }
  EXPECT_TRUE(FromGrpc(ToGrpc(Status())).ok());
}

TEST(StatusMapping, TransportFailuresMapToTheNearestCode) {
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")).code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "slow")).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "who")).code(),
            StatusCode::kPermissionDenied);
  // Details that are not one of ours are ignored.
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::NOT_FOUND, "x", "99")).code(),
            StatusCode::kNotFound);
}

// Issue 23: an expired login is a code of its own across gRPC, so a gate tells it from a refusal
// of its caller token by code alone. It travels as PERMISSION_DENIED (what a binary that
// predates the code sees, with the same message); a bare PERMISSION_DENIED or UNAUTHENTICATED,
// as a caller-token check or a foreign server sends, is never read as the login's.
TEST(StatusMapping, AnExpiredLoginIsToldApartFromARefusedCaller) {
  const grpc::Status wire = ToGrpc(Status::LoginExpired("please log in again"));
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(FromGrpc(wire).code(), StatusCode::kLoginExpired);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "token")).code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "token")).code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeName(StatusCode::kLoginExpired), "login_expired");
}

}  // namespace
}  // namespace telos::rpc
