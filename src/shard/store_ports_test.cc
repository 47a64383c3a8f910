// StorePersistence's durability ladder on the embedded stores (SQLite rows and checkpoints) under
// a manual clock: periodic requests become checkpoints, the row is written at most every flush
// interval, quit and freeze write it at once, and a load prefers a fresher checkpoint. Also the
// degradation ladder: ephemeral characters are never written, and a zone in single-shard mode
// has its saves held back, then written (ReleaseZone) or discarded (DropZone).
// Also the shard's other writer to a store, PlacementWriter, on a MemoryDirectory.
#include "telos/shard/store_ports.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/forwarding_directory.h"
#include "telos/directory/memory_directory.h"
#include "telos/shard/placement_writer.h"
#include "telos/shard/social_port.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/character_state.h"

namespace telos::shard {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;
constexpr int64_t kRowFlushMs = 60'000;
constexpr std::string_view kPasswordHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";

class DurabilityLadderTest : public ::testing::Test {
 protected:
  DurabilityLadderTest()
      : log_("test", LogLevel::kInfo,
             std::make_shared<spdlog::sinks::ostream_sink_mt>(log_stream_)) {
    store::SqliteStoreOptions options;
    options.path = ":memory:";
    auto opened = store::SqliteStore::Open(options, clock_);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    db_ = std::move(opened).value();
    auto account = db_->accounts().Create("owner", kPasswordHash);
    RELEASE_ASSERT(account.ok(), account.status().ToString());
    world::CharacterState state =
        world::NewCharacter("Ada", *world::ParseRef("town:north_gate", ""));
    store::CharacterRecord record;
    record.name = "Ada";
    record.account_id = account->id;
    record.zone_id = "town";
    record.room_id = "north_gate";
    record.state_json = world::EncodeCharacter(state);
    RELEASE_ASSERT(db_->characters().Create(record).ok(), "create");
    claimed_ = *db_->characters().ClaimOwnership("Ada", 0);
    persistence_ = std::make_unique<StorePersistence>(db_->characters(), metrics_, log_);
    persistence_->EnableCheckpoints(db_->checkpoints(), clock_, kRowFlushMs, metrics_);
    persistence_->Start();
    persistence_->Register("ada", "Ada", claimed_.account_id, claimed_.state_version,
                           claimed_.owner_epoch);
  }
  ~DurabilityLadderTest() override { persistence_->Stop(); }

  // Requests a save of Ada standing in `room` and waits until it is written.
  void Save(const std::string& room, world::SaveReason reason) {
    world::CharacterState state = world::NewCharacter("Ada", *world::ParseRef(room, ""));
    persistence_->RequestSave({"ada", world::EncodeCharacter(state), reason});
    persistence_->AwaitSaved("ada");  // rows
    ASSERT_TRUE(persistence_->FlushCheckpoints(milliseconds(5000)));
  }

  // Requests a save without waiting for it (the saver keeps its memory of the versions it
  // wrote, as it does while a character walks between zones of this shard).
  void Request(const std::string& room, world::SaveReason reason) {
    world::CharacterState state = world::NewCharacter("Ada", *world::ParseRef(room, ""));
    persistence_->RequestSave({"ada", world::EncodeCharacter(state), reason});
  }
  void FlushAll() {
    ASSERT_TRUE(persistence_->FlushAll(milliseconds(5000)).ok());
    ASSERT_TRUE(persistence_->FlushCheckpoints(milliseconds(5000)));
  }

  std::string RowRoom() { return db_->characters().Load("Ada")->room_id; }
  int64_t RowVersion() { return db_->characters().Load("Ada")->state_version; }
  std::string LogText() {
    log_.Flush();
    return log_stream_.str();
  }
  std::optional<store::Checkpoint> Checkpoint() {
    auto cp = db_->checkpoints().Get("Ada");
    if (!cp.ok()) return std::nullopt;
    return *cp;
  }

  ManualClock clock_;
  std::ostringstream log_stream_;  // declared before the logger: outlives it
  Logger log_;
  Metrics metrics_;
  std::unique_ptr<store::SqliteStore> db_;
  store::CharacterRecord claimed_;
  std::unique_ptr<StorePersistence> persistence_;
};

TEST_F(DurabilityLadderTest, PeriodicSavesCheckpointUntilTheRowIsDue) {
  Save("town:lantern_row", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "north_gate");  // the row waits for its interval
  auto cp = Checkpoint();
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->room_id, "lantern_row");
  EXPECT_EQ(cp->owner_epoch, claimed_.owner_epoch);
  EXPECT_EQ(cp->state_version, claimed_.state_version);  // taken at the pre-CAS version

  // The freshest of the two is the checkpoint: a tie goes to it.
  const auto choice = store::ChooseFreshest(*db_->characters().Load("Ada"), *cp);
  EXPECT_EQ(choice.source, store::LoadSource::kCheckpoint);

  clock_.Advance(milliseconds(kRowFlushMs));
  Save("town:tanners_walk", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "tanners_walk");  // due: the row is written
  const auto after = store::ChooseFreshest(*db_->characters().Load("Ada"), *Checkpoint());
  EXPECT_EQ(after.source, store::LoadSource::kRow);

  // And the next periodic request is a checkpoint again, at the row's new version.
  Save("town:west_gate", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "tanners_walk");
  EXPECT_EQ(Checkpoint()->room_id, "west_gate");
  EXPECT_EQ(Checkpoint()->state_version, db_->characters().Load("Ada")->state_version);
}

TEST_F(DurabilityLadderTest, QuitAndFreezeWriteTheRowAtOnce) {
  Save("town:lantern_row", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "lantern_row");
  Save("town:west_gate", world::SaveReason::kFreeze);
  EXPECT_EQ(RowRoom(), "west_gate");
  EXPECT_FALSE(Checkpoint().has_value());
}

TEST_F(DurabilityLadderTest, AZombieOwnersCheckpointCannotBeatTheNewOwner) {
  Save("town:lantern_row", world::SaveReason::kPeriodic);
  // Another shard claims the character and checkpoints it.
  auto taken = *db_->characters().ClaimOwnership("Ada", 0);
  store::Checkpoint theirs = *Checkpoint();
  theirs.owner_epoch = taken.owner_epoch;
  theirs.room_id = "west_gate";
  ASSERT_TRUE(db_->checkpoints().Put(theirs).ok());
  // The zombie's next checkpoint is refused by the store and dropped by the writer.
  Save("town:tanners_walk", world::SaveReason::kPeriodic);
  EXPECT_EQ(Checkpoint()->room_id, "west_gate");
  EXPECT_EQ(Checkpoint()->owner_epoch, taken.owner_epoch);
}

// ---------------------------------------------------------------- ephemeral characters

TEST_F(DurabilityLadderTest, AnEphemeralCharacterIsNeverWrittenAndItsSavesDropQuietly) {
  persistence_->RegisterEphemeral("ada");
  Save("town:lantern_row", world::SaveReason::kQuit);
  Save("town:west_gate", world::SaveReason::kPeriodic);
  Save("town:tanners_walk", world::SaveReason::kFreeze);
  EXPECT_EQ(RowRoom(), "north_gate");
  EXPECT_EQ(RowVersion(), claimed_.state_version);
  EXPECT_FALSE(Checkpoint().has_value());
  const std::string log = LogText();
  EXPECT_THAT(log, Not(HasSubstr("dropped")));
  EXPECT_THAT(log, Not(HasSubstr("ada")));

  // Once unregistered and claimed for real, the character is written again.
  persistence_->Unregister("ada");
  persistence_->Register("ada", "Ada", claimed_.account_id, claimed_.state_version,
                         claimed_.owner_epoch);
  Save("town:tanners_walk", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "tanners_walk");
}

// ---------------------------------------------------------------- single-shard mode

TEST_F(DurabilityLadderTest, AHeldZoneKeepsTheNewestSaveUntilReleasedAndWritesNoCheckpoint) {
  persistence_->HoldZone("town");
  Save("town:lantern_row", world::SaveReason::kPeriodic);
  Save("town:west_gate", world::SaveReason::kQuit);
  Save("town:tanners_walk", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "north_gate");
  EXPECT_EQ(RowVersion(), claimed_.state_version);
  EXPECT_FALSE(Checkpoint().has_value());  // a periodic save of a held zone is no checkpoint

  persistence_->ReleaseZone("town");
  FlushAll();
  EXPECT_EQ(RowRoom(), "tanners_walk");                 // the newest one
  EXPECT_EQ(RowVersion(), claimed_.state_version + 1);  // and only that one
  EXPECT_FALSE(Checkpoint().has_value());

  // Released: saves flow as before.
  Save("town:west_gate", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "west_gate");
  EXPECT_EQ(RowVersion(), claimed_.state_version + 2);
}

// Every save carries (zone, shard, lease epoch); a store whose zone fence has moved past that
// epoch refuses it.
TEST_F(DurabilityLadderTest, SavesCarryTheZoneStampAndAStaleTenureIsRefused) {
  persistence_->SetShard("world-7");
  persistence_->SetLeaseEpoch("town", 4);
  Save("town:lantern_row", world::SaveReason::kQuit);
  auto row = db_->characters().Load("Ada");
  EXPECT_EQ(row->writer_shard, "world-7");
  EXPECT_EQ(row->zone_lease_epoch, 4);
  ASSERT_EQ(*db_->characters().RaiseZoneFence("town", 5, "world-8"), 5);
  Save("town:west_gate", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "lantern_row") << "a save of tenure 4 after tenure 5 began";
  EXPECT_THAT(LogText(), HasSubstr("zone fenced"));
}

// Held while Redis was away, then the lease was won again at a new epoch: the held save is
// written under the confirmed tenure, not refused for carrying the old one.
TEST_F(DurabilityLadderTest, HeldSavesAreWrittenUnderTheTenureThatResumesTheZone) {
  persistence_->SetLeaseEpoch("town", 4);
  persistence_->HoldZone("town");
  Save("town:tanners_walk", world::SaveReason::kQuit);
  ASSERT_EQ(*db_->characters().RaiseZoneFence("town", 5, "world-0"), 5);  // as ResumeZone does
  persistence_->SetLeaseEpoch("town", 5);
  persistence_->ReleaseZone("town");
  FlushAll();
  EXPECT_EQ(RowRoom(), "tanners_walk");
  EXPECT_EQ(db_->characters().Load("Ada")->zone_lease_epoch, 5);
}

// Stopping in single-shard mode hands the held saves to the store at their own epoch.
TEST_F(DurabilityLadderTest, SubmitHeldWritesWhatWasHeldAtItsEpoch) {
  persistence_->SetLeaseEpoch("town", 3);
  persistence_->HoldZone("town");
  Save("town:west_gate", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "north_gate");
  persistence_->SubmitHeld();
  FlushAll();
  EXPECT_EQ(RowRoom(), "west_gate");
  EXPECT_EQ(db_->characters().Load("Ada")->zone_lease_epoch, 3);
}

TEST_F(DurabilityLadderTest, HoldingOneZoneLetsSavesInOtherZonesThrough) {
  persistence_->HoldZone("lobby");
  Save("town:lantern_row", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "lantern_row");
  Save("town:west_gate", world::SaveReason::kPeriodic);
  ASSERT_TRUE(Checkpoint().has_value());
  EXPECT_EQ(Checkpoint()->room_id, "west_gate");
}

TEST_F(DurabilityLadderTest, ReleasingAZoneThatWasNeverHeldChangesNothing) {
  persistence_->ReleaseZone("town");
  Save("town:lantern_row", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "north_gate");  // still the ladder: a checkpoint, not the row
  ASSERT_TRUE(Checkpoint().has_value());
  EXPECT_EQ(Checkpoint()->room_id, "lantern_row");
}

TEST_F(DurabilityLadderTest, ADroppedZoneDiscardsWhatWasHeldAndLaterSavesUntilReleased) {
  persistence_->HoldZone("town");
  Save("town:lantern_row", world::SaveReason::kQuit);
  persistence_->DropZone("town");
  FlushAll();
  EXPECT_EQ(RowRoom(), "north_gate");
  EXPECT_THAT(LogText(), HasSubstr("saves held in single-shard mode dropped"));

  // The peer's copy is the live one now: nothing of this zone is written, rows or checkpoints.
  Save("town:west_gate", world::SaveReason::kQuit);
  Save("town:tanners_walk", world::SaveReason::kPeriodic);
  EXPECT_EQ(RowRoom(), "north_gate");
  EXPECT_EQ(RowVersion(), claimed_.state_version);
  EXPECT_FALSE(Checkpoint().has_value());

  // A new tenure: what was dropped stays dropped, and new saves are written again.
  persistence_->ReleaseZone("town");
  FlushAll();
  EXPECT_EQ(RowRoom(), "north_gate");
  Save("town:square", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "square");
}

TEST_F(DurabilityLadderTest, DroppingAZoneThatWasNotHeldDropsItsSavesToo) {
  persistence_->DropZone("town");
  Save("town:lantern_row", world::SaveReason::kQuit);
  EXPECT_EQ(RowRoom(), "north_gate");
  Save("lobby:atrium", world::SaveReason::kQuit);  // another zone is not affected
  EXPECT_EQ(RowRoom(), "atrium");
}

// A save held for a zone the character has since left is older than the row written after
// they left it. Releasing the held zone must not write that older state over the newer row.
// (Fails today: CharacterSaver moves the held snapshot's base onto its own later write, see the
// chaining note in character_saver.h, so the stale state is written.)
TEST_F(DurabilityLadderTest, AReleasedHeldSaveDoesNotOverwriteANewerRowFromAnotherZone) {
  persistence_->HoldZone("town");
  Request("town:lantern_row", world::SaveReason::kPeriodic);  // held
  // Ada walks out of the town into the lobby (not held) and quits there: written at once, and
  // she is no longer claimed here (WorldShard unregisters her on quit).
  Request("lobby:atrium", world::SaveReason::kQuit);
  FlushAll();
  persistence_->Unregister("ada");
  ASSERT_EQ(RowRoom(), "atrium");
  const int64_t newer = RowVersion();

  persistence_->ReleaseZone("town");
  FlushAll();
  EXPECT_EQ(RowRoom(), "atrium") << "the held (older) town save overwrote the newer row";
  EXPECT_EQ(RowVersion(), newer);
}

// PlacementWriter on a MemoryDirectory under a ManualClock: its merge rule and its retries.

// Fails the next `failures_left_` registrations with Unavailable (a directory that is down).
class FlakyDirectory : public directory::ForwardingDirectory {
 public:
  using ForwardingDirectory::ForwardingDirectory;
  Status RegisterPlacement(std::string_view player, const directory::Placement& p) override {
    ++registrations_;
    if (failures_left_ > 0) {
      --failures_left_;
      return Status::Unavailable("directory down");
    }
    return ForwardingDirectory::RegisterPlacement(player, p);
  }
  std::atomic<int> failures_left_{0};
  std::atomic<int> registrations_{0};
};

// Polls (real time) until `done` holds or ten seconds pass.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class PlacementWriterTest : public ::testing::Test {
 protected:
  std::optional<directory::Placement> Lookup(const std::string& player) {
    auto found = memory_.LookupPlacement(player);
    return found.ok() ? *found : std::nullopt;
  }

  ManualClock clock_;
  directory::MemoryDirectory memory_{clock_};
  FlakyDirectory directory_{memory_};
  Logger log_{"test", LogLevel::kError};
  Metrics metrics_;
};

TEST_F(PlacementWriterTest, ATombstoneNamingNoZoneKeepsTheZoneOfTheRegistrationItReplaces) {
  ASSERT_TRUE(memory_.RegisterPlacement("ada", {"lobby", 1, "n1", "shard-a"}).ok());
  PlacementWriter writer(directory_, log_, metrics_, clock_);
  // She walked into the town and logged out before the registration was written: the two
  // coalesce into one tombstone, which must still record the town.
  writer.Register("ada", {"town", 1, "n1", "shard-a"});
  writer.Tombstone("ada", "shard-a", 1, "n1", "");
  EXPECT_EQ(writer.pending(), 1u);
  writer.Start();
  writer.Stop(60'000);
  EXPECT_EQ(writer.pending(), 0u);
  EXPECT_EQ(directory_.registrations_.load(), 0);  // coalesced: only the tombstone was written
  const auto stored = Lookup("ada");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->zone, "town");
  EXPECT_EQ(stored->shard, "");
}

TEST_F(PlacementWriterTest, AFailedRegistrationIsRetriedOnceTheClockHasPassedThePause) {
  directory_.failures_left_ = 1;
  PlacementWriter writer(directory_, log_, metrics_, clock_);
  writer.Start();
  writer.Register("ada", {"town", 1, "n1", "shard-a"});
  ASSERT_TRUE(Eventually([&] { return directory_.registrations_.load() == 1; }));
  EXPECT_FALSE(Lookup("ada").has_value());
  EXPECT_EQ(writer.pending(), 1u);  // kept for a retry
  clock_.Advance(std::chrono::milliseconds(limits::kPlacementWriteRetryBackoffMs));
  ASSERT_TRUE(Eventually([&] { return writer.pending() == 0; }));
  EXPECT_EQ(directory_.registrations_.load(), 2);
  ASSERT_TRUE(Lookup("ada").has_value());
  EXPECT_EQ(Lookup("ada")->zone, "town");
  writer.Stop(0);
}

// ---------------------------------------------------------------- StoreSocial

// The social port on a SQLite store and a MemoryDirectory: friends and guild members show as
// online exactly when the presence roster has them; refusals carry the store's sentence.
TEST(StoreSocialTest, ListsShowWhoIsOnlineFromThePresenceRoster) {
  ManualClock clock;
  store::SqliteStoreOptions options;
  options.path = ":memory:";
  auto opened = store::SqliteStore::Open(options, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::SqliteStore> db = std::move(opened).value();
  auto account = db->accounts().Create("owner", kPasswordHash);
  ASSERT_TRUE(account.ok());
  for (const char* name : {"Ada", "Bea", "Cy"}) {
    store::CharacterRecord record;
    record.name = name;
    record.account_id = account->id;
    record.zone_id = "town";
    record.room_id = "north_gate";
    record.state_json = "{}";
    ASSERT_TRUE(db->characters().Create(record).ok()) << name;
  }
  directory::MemoryDirectory directory(clock);
  StoreSocial social(db->social(), directory, [](std::function<void()> task) { task(); });
  using Op = world::SocialRequest::Op;
  auto ask = [&](Op op, std::string arg) {
    return social.AnswerNow(world::SocialRequest{.op = op, .character = "Ada", .arg = arg});
  };
  ASSERT_TRUE(ask(Op::kFriendAdd, "Bea").status.ok());
  ASSERT_TRUE(ask(Op::kFriendAdd, "Cy").status.ok());
  ASSERT_TRUE(directory.SetPresence("bea", "gate-1", "world-1", 60'000).ok());
  world::SocialAnswer friends = ask(Op::kFriendList, "");
  ASSERT_TRUE(friends.status.ok()) << friends.status.ToString();
  ASSERT_EQ(friends.people.size(), 2u);
  EXPECT_EQ(friends.people[0].name, "Bea");
  EXPECT_TRUE(friends.people[0].online);
  EXPECT_EQ(friends.people[1].name, "Cy");
  EXPECT_FALSE(friends.people[1].online);

  ASSERT_TRUE(ask(Op::kGuildCreate, "Night Owls").status.ok());
  world::SocialAnswer invited = ask(Op::kGuildInvite, "bea");
  ASSERT_TRUE(invited.status.ok()) << invited.status.ToString();
  EXPECT_EQ(invited.guild, "Night Owls");
  ASSERT_TRUE(social
                  .AnswerNow(world::SocialRequest{
                      .op = Op::kGuildJoin, .character = "Bea", .arg = "night owls"})
                  .status.ok());
  world::SocialAnswer guild = ask(Op::kGuildInfo, "");
  ASSERT_TRUE(guild.status.ok());
  EXPECT_EQ(guild.guild, "Night Owls");
  EXPECT_EQ(guild.rank, "founder");
  ASSERT_EQ(guild.people.size(), 2u);
  EXPECT_EQ(guild.people[1].name, "Bea");
  EXPECT_EQ(guild.people[1].rank, "member");
  EXPECT_TRUE(guild.people[1].online);

  world::SocialAnswer refused = ask(Op::kGuildKick, "Cy");
  EXPECT_EQ(refused.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(refused.status.message(), "'Cy' is not in 'Night Owls'.");
  world::SocialAnswer locale = ask(Op::kLocaleSet, "fr-fr");
  ASSERT_TRUE(locale.status.ok());
  EXPECT_EQ(locale.locale, "fr-FR");
  EXPECT_EQ(ask(Op::kLocaleGet, "").locale, "fr-FR");
}

}  // namespace
}  // namespace telos::shard
