// ChooseFreshest (DESIGN.md invariant 8) and the SQLite CheckpointStore: the conformance suite
// plus what is specific to the embedded backend.

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

#include "checkpoint_conformance.h"
#include "store_test_util.h"
#include "telos/store/checkpoint_store.h"
#include "telos/store/sqlite_store.h"

namespace telos::store {
namespace {

// ------------------------------------------------------------------ ChooseFreshest

CharacterRecord Row(int64_t owner_epoch, int64_t state_version) {
  CharacterRecord r;
  r.name = "Aldric";
  r.account_id = 7;
  r.owner_epoch = owner_epoch;
  r.state_version = state_version;
  r.zone_id = "row-zone";
  r.room_id = "row-zone.room";
  r.state_json = R"({"from":"row"})";
  r.created_at_ms = 1'000;
  r.updated_at_ms = 2'000;
  return r;
}

Checkpoint Snapshot(int64_t owner_epoch, int64_t state_version) {
  Checkpoint c;
  c.name = "aldric";  // any letter case names the same character
  c.account_id = 7;
  c.owner_epoch = owner_epoch;
  c.state_version = state_version;
  c.zone_id = "ckpt-zone";
  c.room_id = "ckpt-zone.room";
  c.state_json = R"({"from":"checkpoint"})";
  c.written_at_ms = 3'000;
  return c;
}

void ExpectRowWins(const CharacterRecord& row, const std::optional<Checkpoint>& checkpoint) {
  const FreshestChoice choice = ChooseFreshest(row, checkpoint);
  EXPECT_EQ(choice.source, LoadSource::kRow);
  EXPECT_EQ(choice.record, row);
  EXPECT_EQ(choice.row_state_version, row.state_version);
}

void ExpectCheckpointWins(const CharacterRecord& row, const Checkpoint& checkpoint) {
  const FreshestChoice choice = ChooseFreshest(row, checkpoint);
  EXPECT_EQ(choice.source, LoadSource::kCheckpoint);
  // Identity and creation stay the row's; fences, position and state are the checkpoint's.
  EXPECT_EQ(choice.record.name, row.name);
  EXPECT_EQ(choice.record.account_id, row.account_id);
  EXPECT_EQ(choice.record.created_at_ms, row.created_at_ms);
  EXPECT_EQ(choice.record.updated_at_ms, checkpoint.written_at_ms);
  EXPECT_EQ(choice.record.owner_epoch, checkpoint.owner_epoch);
  EXPECT_EQ(choice.record.state_version, checkpoint.state_version);
  EXPECT_EQ(choice.record.zone_id, checkpoint.zone_id);
  EXPECT_EQ(choice.record.room_id, checkpoint.room_id);
  EXPECT_EQ(choice.record.state_json, checkpoint.state_json);
  EXPECT_EQ(choice.row_state_version, row.state_version);
}

TEST(ChooseFreshestTest, NoCheckpointMeansTheRow) {
  ExpectRowWins(Row(3, 10), std::nullopt);
}

TEST(ChooseFreshestTest, TieGoesToTheCheckpoint) {
  // The checkpoint was taken at the row's (pre-CAS) version and carries newer content.
  ExpectCheckpointWins(Row(3, 10), Snapshot(3, 10));
  ExpectCheckpointWins(Row(0, 1), Snapshot(0, 1));
  EXPECT_TRUE(CheckpointIsFresher(Row(3, 10), Snapshot(3, 10)));
}

TEST(ChooseFreshestTest, SameEpochHigherVersionWins) {
  ExpectCheckpointWins(Row(3, 10), Snapshot(3, 11));
  ExpectRowWins(Row(3, 11), Snapshot(3, 10));
}

TEST(ChooseFreshestTest, HigherEpochWinsWhateverTheVersion) {
  // The epoch is compared first: a newer owner's checkpoint beats a higher row version...
  ExpectCheckpointWins(Row(3, 50), Snapshot(4, 2));
  ExpectCheckpointWins(Row(3, 10), Snapshot(4, 11));
  ExpectCheckpointWins(Row(3, 10), Snapshot(4, 10));
  // ...and a zombie owner's checkpoint loses to a row claimed since, even with a higher
  // version.
  ExpectRowWins(Row(4, 2), Snapshot(3, 50));
  ExpectRowWins(Row(4, 10), Snapshot(3, 10));
  ExpectRowWins(Row(4, 10), Snapshot(3, 9));
}

TEST(ChooseFreshestTest, ExtremeFencesCompareExactly) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ExpectRowWins(Row(kMax, kMax), Snapshot(kMax, kMax - 1));
  ExpectCheckpointWins(Row(kMax, kMax), Snapshot(kMax, kMax));
  ExpectCheckpointWins(Row(kMax - 1, kMax), Snapshot(kMax, 1));
}

TEST(ChooseFreshestTest, CheckpointOfCopiesTheRow) {
  const CharacterRecord row = Row(5, 6);
  const Checkpoint c = CheckpointOf(row);
  EXPECT_EQ(c.name, row.name);
  EXPECT_EQ(c.account_id, row.account_id);
  EXPECT_EQ(c.owner_epoch, 5);
  EXPECT_EQ(c.state_version, 6);
  EXPECT_EQ(c.zone_id, row.zone_id);
  EXPECT_EQ(c.room_id, row.room_id);
  EXPECT_EQ(c.state_json, row.state_json);
  EXPECT_EQ(c.written_at_ms, 0);
  // A checkpoint of the row itself ties it, so it wins and loads the same content.
  ExpectCheckpointWins(row, c);
}

// ------------------------------------------------------------------ SQLite conformance

class SqliteCheckpointBackend final : public CheckpointBackend {
 public:
  explicit SqliteCheckpointBackend(const Clock& clock) {
    auto opened = SqliteStore::Open({.path = dir_.File("telos.db")}, clock);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    store_ = std::move(opened).value();
  }
  CheckpointStore& checkpoints() override { return store_->checkpoints(); }

 private:
  TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

CheckpointBackendFactory SqliteCheckpointFactory() {
  return {.name = "Sqlite", .make = [](const Clock& clock) -> std::unique_ptr<CheckpointBackend> {
            return std::make_unique<SqliteCheckpointBackend>(clock);
          }};
}

INSTANTIATE_TEST_SUITE_P(Sqlite, CheckpointConformanceTest,
                         ::testing::Values(SqliteCheckpointFactory()), CheckpointBackendName);

// ------------------------------------------------------------------ SQLite specifics

constexpr std::string_view kHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";

Checkpoint Draft(std::string name) {
  Checkpoint c = Snapshot(2, 4);
  c.name = std::move(name);
  return c;
}

TEST(SqliteCheckpointTest, DeletingACharacterDeletesItsCheckpoint) {
  ManualClock clock;
  auto store = SqliteStore::Open({.path = ":memory:"}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto account = (*store)->accounts().Create("alice", kHash);
  ASSERT_TRUE(account.ok());
  CharacterRecord draft;
  draft.name = "Aldric";
  draft.account_id = account->id;
  auto created = (*store)->characters().Create(draft);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  Checkpoint c = CheckpointOf(*created);
  c.owner_epoch = 9;
  ASSERT_TRUE((*store)->checkpoints().Put(c).ok());
  ASSERT_TRUE((*store)->checkpoints().Put(Draft("Brenna")).ok());
  ASSERT_TRUE((*store)->characters().Delete("aldric").ok());

  // A new character of the same name must not load the old one's checkpoint.
  EXPECT_EQ((*store)->checkpoints().Get("Aldric").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE((*store)->checkpoints().Get("Brenna").ok());  // only that character's
}

TEST(SqliteCheckpointTest, CheckpointsSurviveReopening) {
  TempDir dir;
  ManualClock clock;
  const std::string path = dir.File("telos.db");
  {
    auto store = SqliteStore::Open({.path = path}, clock);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_GE((*store)->schema_version(), 3);
    ASSERT_TRUE((*store)->checkpoints().Put(Draft("Aldric")).ok());
  }
  auto store = SqliteStore::Open({.path = path}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = (*store)->checkpoints().Get("Aldric");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->state_version, 4);
}

}  // namespace
}  // namespace telos::store
