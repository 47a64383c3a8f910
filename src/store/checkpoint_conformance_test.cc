// The CheckpointStore conformance suite itself (see checkpoint_conformance.h). Backends
// instantiate it elsewhere.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_conformance.h"
#include "telos/base/limits.h"

namespace telos::store {
namespace {

int64_t UnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

bool IsStale(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition &&
         status.message().find("stale") != std::string::npos;
}

#define CHECKPOINT_TEST(name) TEST_P(CheckpointConformanceTest, name)

CHECKPOINT_TEST(PutThenGetRoundTrips) {
  const Checkpoint put = Draft("Aldric", 3, 12);
  ASSERT_TRUE(checkpoints().Put(put).ok());

  auto got = checkpoints().Get("aLDRIC");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  Checkpoint expected = put;
  expected.written_at_ms = UnixMs(clock_);  // set by the store from its clock
  EXPECT_EQ(*got, expected);
  EXPECT_EQ(got->name, "Aldric");  // the display spelling survives
}

CHECKPOINT_TEST(GetOfUnknownIsNotFound) {
  EXPECT_EQ(checkpoints().Get("Nobody").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 1, 1)).ok());
  EXPECT_EQ(checkpoints().Get("Nobody").status().code(), StatusCode::kNotFound);
}

CHECKPOINT_TEST(NewerReplacesOlder) {
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 1, 5)).ok());

  // A higher state_version at the same epoch.
  clock_.Advance(std::chrono::seconds(10));
  Checkpoint later = Draft("Aldric", 1, 6);
  later.room_id = "town.bank";
  later.state_json = R"({"hp":18,"gold":105})";
  ASSERT_TRUE(checkpoints().Put(later).ok());
  auto got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state_version, 6);
  EXPECT_EQ(got->room_id, "town.bank");
  EXPECT_EQ(got->state_json, R"({"hp":18,"gold":105})");
  EXPECT_EQ(got->written_at_ms, UnixMs(clock_));

  // A higher epoch wins even with a lower state_version: the epoch is compared first.
  Checkpoint claimed = Draft("Aldric", 2, 3);
  claimed.zone_id = "castle";
  ASSERT_TRUE(checkpoints().Put(claimed).ok());
  got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner_epoch, 2);
  EXPECT_EQ(got->state_version, 3);
  EXPECT_EQ(got->zone_id, "castle");
}

CHECKPOINT_TEST(StalePutIsRefusedAndLeavesTheStoredOne) {
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 4, 10)).ok());
  auto before = checkpoints().Get("Aldric");
  ASSERT_TRUE(before.ok());
  clock_.Advance(std::chrono::seconds(10));

  // A lower state_version at the same epoch: a slow write overtaken by a newer one.
  Checkpoint older = Draft("Aldric", 4, 9);
  older.state_json = R"({"old":true})";
  Status status = checkpoints().Put(older);
  EXPECT_TRUE(IsStale(status)) << status.ToString();

  // A lower epoch with a higher state_version: a zombie owner.
  Checkpoint zombie = Draft("Aldric", 3, 99);
  zombie.state_json = R"({"zombie":true})";
  status = checkpoints().Put(zombie);
  EXPECT_TRUE(IsStale(status)) << status.ToString();

  // The stored checkpoint is untouched, written_at_ms included; any letter case is the same
  // character.
  status = checkpoints().Put(Draft("ALDRIC", 4, 1));
  EXPECT_TRUE(IsStale(status)) << status.ToString();
  auto after = checkpoints().Get("Aldric");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);
}

CHECKPOINT_TEST(EqualPairIsAcceptedAndReplaces) {
  const Checkpoint first = Draft("Aldric", 2, 7);
  ASSERT_TRUE(checkpoints().Put(first).ok());
  // An idempotent retry of the same checkpoint.
  ASSERT_TRUE(checkpoints().Put(first).ok());
  auto got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state_json, first.state_json);

  // The normal case between two row saves: same fences, newer content. It must replace.
  clock_.Advance(std::chrono::seconds(10));
  Checkpoint next = first;
  next.room_id = "town.gate";
  next.state_json = R"({"hp":3,"gold":5})";
  ASSERT_TRUE(checkpoints().Put(next).ok());
  got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  Checkpoint expected = next;
  expected.written_at_ms = UnixMs(clock_);
  EXPECT_EQ(*got, expected);
}

CHECKPOINT_TEST(DeleteRemovesAndIsIdempotent) {
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 5, 50)).ok());
  ASSERT_TRUE(checkpoints().Put(Draft("Brenna", 1, 1)).ok());

  ASSERT_TRUE(checkpoints().Delete("ALDRIC").ok());
  EXPECT_EQ(checkpoints().Get("Aldric").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(checkpoints().Get("Brenna").ok());  // others are untouched

  // Deleting again, or deleting what never was, is fine.
  EXPECT_TRUE(checkpoints().Delete("Aldric").ok());
  EXPECT_TRUE(checkpoints().Delete("Nobody").ok());

  // After a delete any pair is accepted again: nothing is left to be fresher.
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 0, 1)).ok());
  auto got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner_epoch, 0);
  EXPECT_EQ(got->state_version, 1);
}

CHECKPOINT_TEST(CharactersAreIndependent) {
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", 9, 90)).ok());
  ASSERT_TRUE(checkpoints().Put(Draft("Brenna", 1, 1)).ok());
  auto aldric = checkpoints().Get("Aldric");
  auto brenna = checkpoints().Get("Brenna");
  ASSERT_TRUE(aldric.ok());
  ASSERT_TRUE(brenna.ok());
  EXPECT_EQ(aldric->owner_epoch, 9);
  EXPECT_EQ(brenna->owner_epoch, 1);
}

CHECKPOINT_TEST(LargeFencesCompareExactly) {
  // Beyond 2^53 a double cannot tell these apart; the store must.
  constexpr int64_t kBig = (int64_t{1} << 53) + 1;
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", kBig, kBig)).ok());
  EXPECT_TRUE(IsStale(checkpoints().Put(Draft("Aldric", kBig, kBig - 1))));
  EXPECT_TRUE(IsStale(checkpoints().Put(Draft("Aldric", kBig - 1, kBig + 1))));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", kBig, kMax)).ok());
  ASSERT_TRUE(checkpoints().Put(Draft("Aldric", kMax, 1)).ok());
  EXPECT_TRUE(IsStale(checkpoints().Put(Draft("Aldric", kMax - 1, kMax))));
  auto got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner_epoch, kMax);
  EXPECT_EQ(got->state_version, 1);
}

CHECKPOINT_TEST(InvalidCheckpointsAreRefused) {
  for (const std::string& bad : std::vector<std::string>{"", "two words", std::string(30, 'a')}) {
    EXPECT_EQ(checkpoints().Put(Draft(bad, 1, 1)).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(checkpoints().Put(Draft("Aldric", 1, 0)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(checkpoints().Put(Draft("Aldric", -1, 1)).code(), StatusCode::kInvalidArgument);
  Checkpoint huge = Draft("Aldric", 1, 1);
  huge.state_json.assign(limits::kCharacterStateBytesMax + 1, 'x');
  EXPECT_EQ(checkpoints().Put(huge).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(checkpoints().Get("semi;colon").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(checkpoints().Get("Aldric").status().code(), StatusCode::kNotFound);
}

CHECKPOINT_TEST(ConcurrentWritersLeaveTheFreshest) {
  // Each writer climbs its own epoch's versions; whatever the interleaving, the highest pair
  // of all must be the one stored, and every refusal must be "stale".
  constexpr int kWriters = 4;
  constexpr int kVersions = 25;
  std::vector<std::thread> writers;
  std::vector<int> unexpected(kWriters, 0);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([this, w, &unexpected] {
      for (int v = 1; v <= kVersions; ++v) {
        const Status status = checkpoints().Put(Draft("Aldric", w, v));
        if (!status.ok() && !IsStale(status)) ++unexpected[static_cast<size_t>(w)];
      }
    });
  }
  for (std::thread& t : writers) t.join();
  for (int count : unexpected) EXPECT_EQ(count, 0);
  auto got = checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner_epoch, kWriters - 1);
  EXPECT_EQ(got->state_version, kVersions);
}

}  // namespace
}  // namespace telos::store
