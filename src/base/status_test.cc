#include "telos/base/status.h"

#include <gtest/gtest.h>

namespace telos {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::Unavailable("redis at 127.0.0.1:16379 refused the connection");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.ToString(), "unavailable: redis at 127.0.0.1:16379 refused the connection");
}

Status FailsThenNeverReached(bool& reached) {
  TELOS_RETURN_IF_ERROR(Status::Conflict("lost the race"));
  reached = true;
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstFailure) {
  bool reached = false;
  Status s = FailsThenNeverReached(reached);
  EXPECT_EQ(s.code(), StatusCode::kConflict);
  EXPECT_FALSE(reached);
}

TEST(ResultTest, HoldsAValueOrAStatus) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = Status::NotFound("no zone 'nowhere'");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  Result<int> bad = Status::Internal("boom");
  EXPECT_DEATH((void)bad.value(), "boom");
}

TEST(ResultDeathTest, BuildingFromOkStatusAborts) {
  EXPECT_DEATH((void)Result<int>{Status::Ok()}, "must carry an error");
}

}  // namespace
}  // namespace telos
