#include "telos/rpc/status_mapping.h"

#include <gtest/gtest.h>

namespace telos::rpc {
namespace {

TEST(StatusMapping, EveryTelosCodeSurvivesARoundTrip) {
  for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
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

}  // namespace
}  // namespace telos::rpc
