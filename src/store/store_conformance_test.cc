// The conformance suite itself (see store_conformance.h). Backends instantiate it elsewhere.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "store_conformance.h"
#include "telos/base/limits.h"

namespace telos::store {
namespace {

int64_t UnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

#define CONFORMANCE_TEST(name) TEST_P(StoreConformanceTest, name)

CONFORMANCE_TEST(CreateThenLoadRoundTrips) {
  const int64_t account = NewAccount("alice");
  const int64_t created_ms = UnixMs(clock_);
  auto created = characters().Create(Draft("Aldric", account));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->state_version, 1);
  EXPECT_EQ(created->owner_epoch, 0);
  EXPECT_EQ(created->created_at_ms, created_ms);
  EXPECT_EQ(created->updated_at_ms, created_ms);

  auto loaded = characters().Load("aLDRIC");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*loaded, *created);
  EXPECT_EQ(loaded->name, "Aldric");  // the display spelling survives
  EXPECT_EQ(loaded->state_json, R"({"hp":20,"gold":5})");
}

CONFORMANCE_TEST(NamesAreUniqueIgnoringCase) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  auto again = characters().Create(Draft("ALDRIC", account));
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  EXPECT_EQ(characters().Load("aldric")->name, "Aldric");
}

CONFORMANCE_TEST(CreateNeedsAnExistingAccountAndAValidName) {
  EXPECT_EQ(characters().Create(Draft("Nobody", 424242)).status().code(), StatusCode::kNotFound);
  const int64_t account = NewAccount("alice");
  for (const std::string& bad : std::vector<std::string>{"", "two words", "semi;colon",
                                                         std::string(30, 'a'), "caf\xC3\xA9"}) {
    EXPECT_EQ(characters().Create(Draft(bad, account)).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  CharacterRecord huge = Draft("Bloat", account);
  huge.state_json.assign(limits::kCharacterStateBytesMax + 1, 'x');
  EXPECT_EQ(characters().Create(huge).status().code(), StatusCode::kInvalidArgument);
}

CONFORMANCE_TEST(SaveWritesStateAndBumpsTheVersion) {
  const int64_t account = NewAccount("alice");
  const CharacterRecord created = MustCreate("Aldric", account);
  auto claimed = characters().ClaimOwnership("aldric", 0);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(claimed->owner_epoch, 1);
  EXPECT_EQ(claimed->state_version, 1);

  clock_.Advance(std::chrono::seconds(5));
  CharacterRecord next = *claimed;
  next.zone_id = "town";
  next.room_id = "town.bank";
  next.state_json = R"({"hp":17,"gold":105})";
  auto saved = characters().Save(next, 1, claimed->owner_epoch);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(*saved, 2);

  auto loaded = characters().Load("Aldric");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->state_version, 2);
  EXPECT_EQ(loaded->owner_epoch, 1);
  EXPECT_EQ(loaded->zone_id, "town");
  EXPECT_EQ(loaded->room_id, "town.bank");
  EXPECT_EQ(loaded->state_json, R"({"hp":17,"gold":105})");
  EXPECT_EQ(loaded->created_at_ms, created.created_at_ms);
  EXPECT_EQ(loaded->updated_at_ms, created.created_at_ms + 5'000);
  EXPECT_EQ(loaded->account_id, account);
}

CONFORMANCE_TEST(LostVersionRaceIsAConflict) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  CharacterRecord first = Draft("Aldric", account);
  first.state_json = "first";
  ASSERT_EQ(*characters().Save(first, 1, epoch), 2);

  CharacterRecord second = Draft("Aldric", account);
  second.state_json = "second";
  auto lost = characters().Save(second, 1, epoch);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), StatusCode::kConflict) << lost.status().ToString();
  EXPECT_FALSE(IsFenced(lost.status()));
  EXPECT_EQ(characters().Load("Aldric")->state_json, "first");

  // Re-read and rebase wins.
  const int64_t current = characters().Load("Aldric")->state_version;
  EXPECT_EQ(*characters().Save(second, current, epoch), 3);
  EXPECT_EQ(characters().Load("Aldric")->state_json, "second");
}

CONFORMANCE_TEST(StaleOwnerIsFencedAndTheRowIsUntouched) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t old_epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  const CharacterRecord taken = *characters().ClaimOwnership("Aldric", 0);  // a handoff
  ASSERT_GT(taken.owner_epoch, old_epoch);

  CharacterRecord zombie = Draft("Aldric", account);
  zombie.state_json = "zombie";
  zombie.zone_id = "nowhere";
  auto refused = characters().Save(zombie, taken.state_version, old_epoch);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(IsFenced(refused.status()));
  EXPECT_NE(refused.status().message().find("fenced"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(*characters().Load("Aldric"), taken);

  // The fence outranks the version check: a zombie is never told to rebase.
  auto also_refused = characters().Save(zombie, taken.state_version + 7, old_epoch);
  EXPECT_EQ(also_refused.status().code(), StatusCode::kFailedPrecondition);

  // The new owner saves normally; a writer above the row's epoch is also accepted.
  EXPECT_TRUE(characters().Save(zombie, taken.state_version, taken.owner_epoch).ok());
  EXPECT_TRUE(characters().Save(zombie, taken.state_version + 1, taken.owner_epoch + 5).ok());
}

CONFORMANCE_TEST(ClaimOwnershipIsMonotonic) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  EXPECT_EQ(characters().ClaimOwnership("Aldric", 0)->owner_epoch, 1);
  EXPECT_EQ(characters().ClaimOwnership("Aldric", 0)->owner_epoch, 2);
  // The directory may know a higher epoch (the row was restored from a backup, say).
  EXPECT_EQ(characters().ClaimOwnership("Aldric", 10)->owner_epoch, 11);
  // Or a lower one (the directory was evicted): the row's floor still holds.
  EXPECT_EQ(characters().ClaimOwnership("Aldric", 3)->owner_epoch, 12);
  EXPECT_EQ(characters().Load("Aldric")->owner_epoch, 12);
  EXPECT_EQ(characters().Load("Aldric")->state_version, 1);  // a claim is not a save

  EXPECT_EQ(characters().ClaimOwnership("Nobody", 0).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(characters().ClaimOwnership("Aldric", -1).status().code(),
            StatusCode::kInvalidArgument);
}

CONFORMANCE_TEST(SaveOfAMissingCharacterIsNotFound) {
  const int64_t account = NewAccount("alice");
  EXPECT_EQ(characters().Save(Draft("Ghost", account), 1, 1).status().code(),
            StatusCode::kNotFound);
  MustCreate("Aldric", account);
  EXPECT_EQ(characters().Save(Draft("Aldric", account), 0, 1).status().code(),
            StatusCode::kInvalidArgument);
}

CONFORMANCE_TEST(DeleteRemovesTheCharacterAndItsMail) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  ASSERT_TRUE(mail().Send("Postmaster", "Aldric", "welcome", "hello").ok());
  ASSERT_TRUE(characters().Delete("ALDRIC").ok());
  EXPECT_EQ(characters().Load("Aldric").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(characters().Delete("Aldric").code(), StatusCode::kNotFound);

  // The name is free again, and the new character does not inherit the old one's mail.
  const CharacterRecord reborn = MustCreate("aldric", account);
  EXPECT_EQ(reborn.state_version, 1);
  EXPECT_TRUE(mail().List("aldric")->empty());
}

CONFORMANCE_TEST(ListByAccountIsPerAccountAndBounded) {
  const int64_t alice = NewAccount("alice");
  const int64_t bob = NewAccount("bob");
  MustCreate("Aldric", alice);
  clock_.Advance(std::chrono::seconds(1));
  MustCreate("Brenna", alice);
  MustCreate("Corvin", bob);

  auto listed = characters().ListByAccount(alice);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "Aldric");
  EXPECT_EQ((*listed)[1].name, "Brenna");
  EXPECT_EQ(characters().ListByAccount(bob)->size(), 1u);
  EXPECT_TRUE(characters().ListByAccount(999)->empty());

  for (size_t i = 1; i < limits::kCharactersPerAccountMax; ++i) {
    MustCreate("Alt" + std::to_string(i), bob);
  }
  EXPECT_EQ(characters().Create(Draft("OneTooMany", bob)).status().code(),
            StatusCode::kResourceExhausted);
}

CONFORMANCE_TEST(ConcurrentRebasingWritersLoseNoUpdate) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  constexpr int kThreads = 4;
  constexpr int kSavesEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSavesEach;) {
        auto current = characters().Load("Aldric");
        ASSERT_TRUE(current.ok());
        CharacterRecord next = *current;
        next.state_json = std::to_string(t) + ":" + std::to_string(i);
        auto saved = characters().Save(next, current->state_version, epoch);
        if (saved.ok()) {
          ++i;
        } else {
          ASSERT_EQ(saved.status().code(), StatusCode::kConflict) << saved.status().ToString();
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(characters().Load("Aldric")->state_version, 1 + kThreads * kSavesEach);
}

// ------------------------------------------------------------ the zone fence (third fence)

// A copy of `record` as a save of `zone` by `shard` at `lease_epoch` would carry it.
CharacterRecord InZone(CharacterRecord record, std::string zone, std::string shard,
                       int64_t lease_epoch) {
  record.zone_id = std::move(zone);
  record.writer_shard = std::move(shard);
  record.zone_lease_epoch = lease_epoch;
  return record;
}

bool Contains(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

// The fence of `zone` as stored, read without raising it (1 is the lowest fence a raise
// stores, so a raise to 1 never changes a fence that exists).
int64_t FenceOf(CharacterStore& store, std::string_view zone) {
  auto fence = store.RaiseZoneFence(zone, 1, "reader");
  EXPECT_TRUE(fence.ok()) << fence.status().ToString();
  return fence.ok() ? *fence : -1;
}

CONFORMANCE_TEST(WriterShardAndZoneLeaseEpochRoundTrip) {
  const int64_t account = NewAccount("alice");
  const CharacterRecord plain = MustCreate("Aldric", account);
  EXPECT_EQ(plain.writer_shard, "");
  EXPECT_EQ(plain.zone_lease_epoch, 0);
  EXPECT_EQ(*characters().Load("Aldric"), plain);

  // Create stores what it is given, without judging any fence.
  auto given = characters().Create(InZone(Draft("Brenna", account), "town", "shard-a", 3));
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->writer_shard, "shard-a");
  EXPECT_EQ(given->zone_lease_epoch, 3);
  EXPECT_EQ(*characters().Load("brenna"), *given);

  // Save writes both; Load, ListByAccount and ClaimOwnership return them.
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  const CharacterRecord next = InZone(Draft("Aldric", account), "forest", "shard-b", 7);
  ASSERT_EQ(*characters().Save(next, 1, epoch), 2);
  auto loaded = characters().Load("Aldric");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->zone_id, "forest");
  EXPECT_EQ(loaded->writer_shard, "shard-b");
  EXPECT_EQ(loaded->zone_lease_epoch, 7);
  auto listed = characters().ListByAccount(account);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0], *loaded);
  auto claimed = characters().ClaimOwnership("Aldric", 0);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->writer_shard, "shard-b");
  EXPECT_EQ(claimed->zone_lease_epoch, 7);

  // An unleased save (the lobby) records itself as such.
  ASSERT_EQ(*characters().Save(InZone(*claimed, "lobby", "shard-c", 0), 2, claimed->owner_epoch),
            3);
  EXPECT_EQ(characters().Load("Aldric")->writer_shard, "shard-c");
  EXPECT_EQ(characters().Load("Aldric")->zone_lease_epoch, 0);
}

CONFORMANCE_TEST(RaiseZoneFenceRaisesNeverLowersAndValidates) {
  EXPECT_EQ(*characters().RaiseZoneFence("town", 3, "shard-a"), 3);
  EXPECT_EQ(*characters().RaiseZoneFence("town", 5, "shard-b"), 5);
  // A stale tenure learns that it is stale: the stored fence is above its epoch.
  EXPECT_EQ(*characters().RaiseZoneFence("town", 4, "shard-c"), 5);
  EXPECT_EQ(*characters().RaiseZoneFence("town", 5, "shard-b"), 5);
  // Zones are independent.
  EXPECT_EQ(*characters().RaiseZoneFence("forest", 1, "shard-a"), 1);
  const std::string longest(limits::kZoneIdBytesMax, 'z');
  EXPECT_EQ(*characters().RaiseZoneFence(longest, 9, ""), 9);

  for (const auto& [zone, epoch, shard] :
       std::vector<std::tuple<std::string, int64_t, std::string>>{
           {"", 1, "shard-a"},
           {longest + "z", 1, "shard-a"},
           {"town", 0, "shard-a"},
           {"town", -6, "shard-a"},
           {"town", 9, std::string(kShardIdBytesMax + 1, 's')}}) {
    EXPECT_EQ(characters().RaiseZoneFence(zone, epoch, shard).status().code(),
              StatusCode::kInvalidArgument)
        << zone << " " << epoch;
  }
  EXPECT_EQ(FenceOf(characters(), "town"), 5);
}

CONFORMANCE_TEST(LeasedSaveAtTheFencePassesAndBelowItIsZoneFenced) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  ASSERT_EQ(*characters().RaiseZoneFence("town", 5, "shard-b"), 5);

  CharacterRecord current = InZone(Draft("Aldric", account), "town", "shard-b", 5);
  current.state_json = "tenure 5";
  ASSERT_EQ(*characters().Save(current, 1, epoch), 2);
  const CharacterRecord before = *characters().Load("Aldric");
  EXPECT_EQ(before.state_json, "tenure 5");

  // The old tenure (a paused shard that woke up) is refused, at the current version too.
  CharacterRecord zombie = InZone(Draft("Aldric", account), "town", "shard-a", 4);
  zombie.state_json = "tenure 4";
  auto refused = characters().Save(zombie, 2, epoch);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(IsFenced(refused.status()));
  EXPECT_TRUE(IsZoneFenced(refused.status()));
  EXPECT_TRUE(Contains(refused.status(), "zone fenced")) << refused.status().ToString();
  EXPECT_TRUE(Contains(refused.status(), "'town'")) << refused.status().ToString();
  EXPECT_TRUE(Contains(refused.status(), "lease_epoch 5")) << refused.status().ToString();
  EXPECT_TRUE(Contains(refused.status(), "lease_epoch 4")) << refused.status().ToString();
  EXPECT_EQ(*characters().Load("Aldric"), before);
  EXPECT_EQ(FenceOf(characters(), "town"), 5);

  // A save that would raise the fence but fails on another fence leaves the fence alone.
  auto conflict =
      characters().Save(InZone(Draft("Aldric", account), "town", "shard-c", 9), 1, epoch);
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict) << conflict.status().ToString();
  auto owner_fenced =
      characters().Save(InZone(Draft("Aldric", account), "town", "shard-c", 9), 2, epoch - 1);
  EXPECT_EQ(owner_fenced.status().code(), StatusCode::kFailedPrecondition);
  auto gone = characters().Save(InZone(Draft("Ghost", account), "town", "shard-c", 9), 1, epoch);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound) << gone.status().ToString();
  auto missing_zone =
      characters().Save(InZone(Draft("Aldric", account), "", "shard-c", 9), 2, epoch);
  EXPECT_EQ(missing_zone.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*characters().Load("Aldric"), before);
  EXPECT_EQ(FenceOf(characters(), "town"), 5);

  // A zone without a fence gets one from its first leased save.
  ASSERT_EQ(*characters().Save(InZone(before, "forest", "shard-d", 2), 2, epoch), 3);
  EXPECT_EQ(FenceOf(characters(), "forest"), 2);
  EXPECT_EQ(FenceOf(characters(), "town"), 5);
}

CONFORMANCE_TEST(LeasedSaveAboveTheFenceRaisesIt) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  ASSERT_EQ(*characters().RaiseZoneFence("town", 5, "shard-a"), 5);
  ASSERT_EQ(*characters().Save(InZone(Draft("Aldric", account), "town", "shard-b", 7), 1, epoch),
            2);
  EXPECT_EQ(FenceOf(characters(), "town"), 7);
  // The tenure whose raise was overtaken is stale from then on.
  EXPECT_EQ(*characters().RaiseZoneFence("town", 6, "shard-c"), 7);
  auto stale = characters().Save(InZone(Draft("Aldric", account), "town", "shard-a", 5), 2, epoch);
  EXPECT_TRUE(IsZoneFenced(stale.status())) << stale.status().ToString();
  auto loaded = characters().Load("Aldric");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->state_version, 2);
  EXPECT_EQ(loaded->writer_shard, "shard-b");
  EXPECT_EQ(loaded->zone_lease_epoch, 7);
}

CONFORMANCE_TEST(UnleasedSavesIgnoreZoneFences) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  ASSERT_EQ(*characters().RaiseZoneFence("town", 5, "shard-a"), 5);
  // zone_lease_epoch 0: an unleased zone or a write from outside any zone; neither judged nor
  // raised, whatever the zone.
  ASSERT_EQ(*characters().Save(InZone(Draft("Aldric", account), "town", "shard-x", 0), 1, epoch),
            2);
  ASSERT_EQ(*characters().Save(InZone(Draft("Aldric", account), "", "", 0), 2, epoch), 3);
  EXPECT_EQ(FenceOf(characters(), "town"), 5);
  EXPECT_EQ(characters().Load("Aldric")->zone_lease_epoch, 0);

  // Bad fence arguments are refused before anything is judged.
  CharacterRecord bad = InZone(Draft("Aldric", account), "town", "shard-a", -1);
  EXPECT_EQ(characters().Save(bad, 3, epoch).status().code(), StatusCode::kInvalidArgument);
  bad = InZone(Draft("Aldric", account), "town", std::string(kShardIdBytesMax + 1, 's'), 5);
  EXPECT_EQ(characters().Save(bad, 3, epoch).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(characters().Create(InZone(Draft("Brenna", account), "town", "s", -1)).status().code(),
            StatusCode::kInvalidArgument);
}

CONFORMANCE_TEST(VerdictOrderIsOwnerThenZoneThenVersion) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t old_epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  const int64_t new_epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  ASSERT_EQ(*characters().RaiseZoneFence("town", 5, "shard-b"), 5);
  const CharacterRecord before = *characters().Load("Aldric");
  const CharacterRecord stale_zone = InZone(Draft("Aldric", account), "town", "shard-a", 4);

  // All three fail: the owner fence is reported, as it always was.
  auto all = characters().Save(stale_zone, 7, old_epoch);
  EXPECT_EQ(all.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(all.status(), "fenced")) << all.status().ToString();
  EXPECT_FALSE(IsZoneFenced(all.status())) << all.status().ToString();
  // The owner fence alone, with the zone fence holding.
  auto owner = characters().Save(InZone(stale_zone, "town", "shard-b", 5), 1, old_epoch);
  EXPECT_TRUE(IsFenced(owner.status()));
  EXPECT_FALSE(IsZoneFenced(owner.status())) << owner.status().ToString();
  // Zone and version fail: the zone fence wins, a stale tenure is never told to rebase.
  auto zone = characters().Save(stale_zone, 7, new_epoch);
  EXPECT_TRUE(IsZoneFenced(zone.status())) << zone.status().ToString();
  // Only the version fails.
  auto version = characters().Save(InZone(stale_zone, "town", "shard-b", 5), 7, new_epoch);
  EXPECT_EQ(version.status().code(), StatusCode::kConflict) << version.status().ToString();

  EXPECT_EQ(*characters().Load("Aldric"), before);
  EXPECT_EQ(FenceOf(characters(), "town"), 5);
}

CONFORMANCE_TEST(ZoneWritesAreRecordedInOrderWhenEnabled) {
  StoreBackend* recorder = Peer(/*record_zone_writes=*/true);
  ASSERT_NE(recorder, nullptr);
  CharacterStore& store = recorder->characters();
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  MustCreate("Brenna", account);
  const int64_t aldric = store.ClaimOwnership("Aldric", 0)->owner_epoch;
  const int64_t brenna = store.ClaimOwnership("Brenna", 0)->owner_epoch;
  EXPECT_TRUE(store.ListZoneWrites(0, 100)->empty());

  const int64_t t0 = UnixMs(clock_);
  ASSERT_TRUE(store.Save(InZone(Draft("Aldric", account), "town", "shard-a", 1), 1, aldric).ok());
  clock_.Advance(std::chrono::milliseconds(10));
  ASSERT_TRUE(store.Save(InZone(Draft("Brenna", account), "town", "shard-a", 1), 1, brenna).ok());
  clock_.Advance(std::chrono::milliseconds(10));
  ASSERT_EQ(*store.RaiseZoneFence("town", 2, "shard-b"), 2);
  ASSERT_TRUE(store.Save(InZone(Draft("Aldric", account), "town", "shard-b", 2), 2, aldric).ok());
  // Neither an unleased save nor a refused one is recorded.
  ASSERT_TRUE(store.Save(InZone(Draft("Brenna", account), "lobby", "shard-b", 0), 2, brenna).ok());
  EXPECT_FALSE(store.Save(InZone(Draft("Brenna", account), "town", "shard-a", 1), 3, brenna).ok());
  EXPECT_FALSE(store.Save(InZone(Draft("Brenna", account), "town", "shard-b", 2), 1, brenna).ok());

  auto writes = store.ListZoneWrites(0, 100);
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  ASSERT_EQ(writes->size(), 3u);
  const std::vector<ZoneWrite> expected = {
      {.id = (*writes)[0].id,
       .zone = "town",
       .lease_epoch = 1,
       .shard = "shard-a",
       .name_key = "aldric",
       .state_version = 2,
       .written_at_ms = t0},
      {.id = (*writes)[1].id,
       .zone = "town",
       .lease_epoch = 1,
       .shard = "shard-a",
       .name_key = "brenna",
       .state_version = 2,
       .written_at_ms = t0 + 10},
      {.id = (*writes)[2].id,
       .zone = "town",
       .lease_epoch = 2,
       .shard = "shard-b",
       .name_key = "aldric",
       .state_version = 3,
       .written_at_ms = t0 + 20},
  };
  EXPECT_EQ(*writes, expected);
  EXPECT_GT((*writes)[0].id, 0);
  EXPECT_LT((*writes)[0].id, (*writes)[1].id);
  EXPECT_LT((*writes)[1].id, (*writes)[2].id);

  // Paging, and the same history through the other connection.
  auto page = store.ListZoneWrites((*writes)[0].id, 1);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0], expected[1]);
  EXPECT_TRUE(store.ListZoneWrites((*writes)[2].id, 100)->empty());
  EXPECT_TRUE(store.ListZoneWrites(0, 0)->empty());
  EXPECT_EQ(*characters().ListZoneWrites(0, 100), expected);
  EXPECT_EQ(store.ListZoneWrites(-1, 10).status().code(), StatusCode::kInvalidArgument);
}

CONFORMANCE_TEST(ZoneWritesAreNotRecordedWhenDisabled) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  const int64_t epoch = characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  ASSERT_TRUE(
      characters().Save(InZone(Draft("Aldric", account), "town", "shard-a", 1), 1, epoch).ok());
  ASSERT_TRUE(
      characters().Save(InZone(Draft("Aldric", account), "town", "shard-a", 2), 2, epoch).ok());
  auto writes = characters().ListZoneWrites(0, 100);
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  EXPECT_TRUE(writes->empty());
}

// Two shards fight over one zone, each on its own connection: a writer takes a tenure (a fresh
// epoch from a shared counter, raised before it saves), saves until it is fenced or has saved
// enough, then takes another. Right after each raise it also replays a save of its previous
// tenure, as a shard paused past its lease would on waking with saves queued; its own raise has
// already fenced that one, so it must be refused every time. No save may succeed below a fence
// whose raise had returned before the save began, and the history must show the tenures in
// epoch order.
CONFORMANCE_TEST(ConcurrentTenuresNeverSaveBelowTheFence) {
  constexpr int kWriters = 2;
  constexpr int kTenuresEach = 12;
  constexpr int kSaveAttemptsPerTenure = 4;
  const std::vector<std::string> names = {"Aldric", "Brenna"};
  const int64_t account = NewAccount("alice");
  int64_t owner_epoch = 0;
  for (const std::string& name : names) {
    MustCreate(name, account);
    // One owner for both shards, so only the zone fence and the version can refuse a save.
    owner_epoch = characters().ClaimOwnership(name, 0)->owner_epoch;
  }
  std::vector<CharacterStore*> stores;
  for (int w = 0; w < kWriters; ++w) {
    StoreBackend* peer = Peer(/*record_zone_writes=*/true);
    ASSERT_NE(peer, nullptr);
    stores.push_back(&peer->characters());
  }

  std::atomic<int64_t> next_epoch{0};
  std::atomic<int64_t> highest_raised{0};  // the highest fence a returned raise reported
  std::atomic<int> ready{0};
  std::mutex mu;
  std::map<int64_t, std::string> shard_of_epoch;  // GUARDED_BY(mu)
  std::vector<std::string> violations;            // GUARDED_BY(mu)
  std::vector<int> saved(kWriters, 0);
  std::vector<int> zombies_refused(kWriters, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      CharacterStore& store = *stores[static_cast<size_t>(w)];
      const std::string shard = "shard-" + std::to_string(w);
      const auto fail = [&](std::string what) {
        std::lock_guard lock(mu);
        violations.push_back(shard + ": " + std::move(what));
      };
      // One save attempt of `name` at `epoch`; returns its status.
      const auto save = [&](const std::string& name, int64_t epoch) -> Status {
        auto current = store.Load(name);
        if (!current.ok()) return current.status();
        CharacterRecord next = InZone(*current, "arena", shard, epoch);
        next.state_json = shard + "@" + std::to_string(epoch);
        const int64_t fence_before = highest_raised.load();
        auto result = store.Save(next, current->state_version, owner_epoch);
        if (!result.ok()) return result.status();
        ++saved[static_cast<size_t>(w)];
        if (epoch < fence_before) {
          fail("a save at lease_epoch " + std::to_string(epoch) +
               " succeeded after the fence reached " + std::to_string(fence_before));
        }
        return Status::Ok();
      };
      ready.fetch_add(1);
      while (ready.load() < kWriters) std::this_thread::yield();
      int64_t previous_epoch = 0;
      for (int tenure = 0; tenure < kTenuresEach; ++tenure) {
        const int64_t epoch = next_epoch.fetch_add(1) + 1;
        {
          std::lock_guard lock(mu);
          shard_of_epoch[epoch] = shard;
        }
        auto fence = store.RaiseZoneFence("arena", epoch, shard);
        if (!fence.ok()) return fail("raise failed: " + fence.status().ToString());
        int64_t seen = highest_raised.load();
        while (seen < *fence && !highest_raised.compare_exchange_weak(seen, *fence)) {
        }
        if (previous_epoch > 0) {
          const Status zombie = save(names[0], previous_epoch);
          if (!IsZoneFenced(zombie)) {
            return fail("a save of the previous tenure was not zone fenced: " + zombie.ToString());
          }
          ++zombies_refused[static_cast<size_t>(w)];
        }
        previous_epoch = epoch;
        if (*fence > epoch) continue;  // overtaken before it began
        for (int attempt = 0; attempt < kSaveAttemptsPerTenure; ++attempt) {
          const Status status = save(names[static_cast<size_t>(attempt) % names.size()], epoch);
          if (IsZoneFenced(status)) break;  // overtaken: this tenure is over
          if (!status.ok() && status.code() != StatusCode::kConflict) {
            return fail("unexpected: " + status.ToString());
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const std::string& violation : violations) ADD_FAILURE() << violation;
  for (int refused : zombies_refused) EXPECT_EQ(refused, kTenuresEach - 1);

  // The history holds every successful save, in id order, never going back in epoch, each
  // written by the shard that held that epoch.
  auto writes = characters().ListZoneWrites(0, kZoneWritesListMax);
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  const int total_saved = saved[0] + saved[1];
  ASSERT_EQ(writes->size(), static_cast<size_t>(total_saved));
  EXPECT_GT(total_saved, 0);
  std::map<std::string, int64_t> last_version;
  for (size_t i = 0; i < writes->size(); ++i) {
    const ZoneWrite& write = (*writes)[i];
    EXPECT_EQ(write.zone, "arena");
    EXPECT_EQ(write.shard, shard_of_epoch[write.lease_epoch]) << write.lease_epoch;
    if (i > 0) {
      EXPECT_GT(write.id, (*writes)[i - 1].id);
      EXPECT_GE(write.lease_epoch, (*writes)[i - 1].lease_epoch)
          << "write " << write.id << " went back in epoch";
    }
    last_version[write.name_key] = write.state_version;
  }
  // Each row ends as its last recorded write left it.
  for (const std::string& name : names) {
    auto row = characters().Load(name);
    ASSERT_TRUE(row.ok());
    const auto found = last_version.find(NameKey(name));
    if (found == last_version.end()) {
      EXPECT_EQ(row->state_version, 1);
      continue;
    }
    EXPECT_EQ(row->state_version, found->second);
    EXPECT_EQ(row->state_json, row->writer_shard + "@" + std::to_string(row->zone_lease_epoch));
  }
  EXPECT_EQ(FenceOf(characters(), "arena"), next_epoch.load());
}

CONFORMANCE_TEST(AccountsRoundTripAndTrackLogins) {
  auto created = accounts().Create("Alice", kHash);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_GT(created->id, 0);
  EXPECT_EQ(created->created_at_ms, UnixMs(clock_));
  EXPECT_EQ(accounts().Create("ALICE", kHash).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(accounts().Create("Mallory", "hunter2").status().code(),
            StatusCode::kInvalidArgument);  // never a plain password

  auto loaded = accounts().Load("alice");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, *created);
  EXPECT_EQ(*accounts().LoadById(created->id), *created);
  EXPECT_EQ(accounts().Load("nobody").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(accounts().LoadById(created->id + 100).status().code(), StatusCode::kNotFound);

  const std::string rehashed = std::string(kHash) + "2";
  ASSERT_TRUE(accounts().SetPasswordHash(created->id, rehashed).ok());
  EXPECT_EQ(accounts().Load("Alice")->password_hash, rehashed);

  EXPECT_EQ(*accounts().RecordLoginFailure(created->id), 1);
  EXPECT_EQ(*accounts().RecordLoginFailure(created->id), 2);
  ASSERT_TRUE(accounts().LockUntil(created->id, 1'900'000'000'000).ok());
  EXPECT_EQ(accounts().Load("Alice")->failed_logins, 2);
  EXPECT_EQ(accounts().Load("Alice")->locked_until_ms, 1'900'000'000'000);
  ASSERT_TRUE(accounts().RecordLoginSuccess(created->id).ok());
  EXPECT_EQ(accounts().Load("Alice")->failed_logins, 0);
  EXPECT_EQ(accounts().Load("Alice")->locked_until_ms, 0);
  EXPECT_EQ(accounts().RecordLoginFailure(created->id + 100).status().code(),
            StatusCode::kNotFound);
}

CONFORMANCE_TEST(AccountRolesAreGrantedAndRevokedDurably) {
  const int64_t alice = NewAccount("Alice");
  const int64_t bob = NewAccount("Bob");
  EXPECT_EQ(accounts().Load("alice")->roles, kRolePlayer);  // a new account is a player

  auto granted = accounts().UpdateRoles(alice, kRoleAdmin, 0);
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(*granted, kRoleAdmin);
  EXPECT_EQ(*accounts().UpdateRoles(alice, kRoleBuilder, 0), kRoleAdmin | kRoleBuilder);
  EXPECT_EQ(accounts().Load("Alice")->roles, kRoleAdmin | kRoleBuilder);
  EXPECT_EQ(accounts().LoadById(alice)->roles, kRoleAdmin | kRoleBuilder);
  EXPECT_EQ(accounts().LoadById(bob)->roles, kRolePlayer);  // only the account named

  // Another connection (another process) sees the row as written.
  StoreBackend* peer = Peer(false);
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->accounts().LoadById(alice)->roles, kRoleAdmin | kRoleBuilder);

  EXPECT_EQ(*accounts().UpdateRoles(alice, 0, kRoleAdmin), kRoleBuilder);
  EXPECT_EQ(*accounts().UpdateRoles(alice, 0, kRoleAdmin), kRoleBuilder);  // revoking twice
  EXPECT_EQ(accounts().Load("alice")->roles, kRoleBuilder);

  EXPECT_EQ(accounts().UpdateRoles(alice + 100, kRoleAdmin, 0).status().code(),
            StatusCode::kNotFound);
  // A bit no role uses is refused, and the row is left as it was.
  EXPECT_EQ(accounts().UpdateRoles(alice, 1u << 7, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(accounts().Load("alice")->roles, kRoleBuilder);
}

CONFORMANCE_TEST(AuditRowsAreAppendedAndListedNewestFirst) {
  auto first = audit().Append({0, 1'000, "Ada", "kick", "Bob", "ok; reason: spam", "world-a"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = audit().Append({0, 2'000, "Ada", "mute", "Carol", "ok", "world-b"});
  ASSERT_TRUE(second.ok());
  auto third = audit().Append({0, 3'000, "operator", "ban", "bob", "account", ""});
  ASSERT_TRUE(third.ok());
  EXPECT_LT(*first, *second);
  EXPECT_LT(*second, *third);

  auto all = audit().List(10, "", "");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0], (AuditRow{*third, 3'000, "operator", "ban", "bob", "account", ""}));
  EXPECT_EQ((*all)[2],
            (AuditRow{*first, 1'000, "Ada", "kick", "Bob", "ok; reason: spam", "world-a"}));
  EXPECT_EQ(audit().List(1, "", "")->front().id, *third);
  auto by_ada = audit().List(10, "ADA", "");
  ASSERT_TRUE(by_ada.ok());
  EXPECT_EQ(by_ada->size(), 2u);
  auto about_bob = audit().List(10, "", "Bob");
  ASSERT_TRUE(about_bob.ok());
  EXPECT_EQ(about_bob->size(), 2u);  // "Bob" and "bob"

  EXPECT_EQ(audit().Append({0, 1, "", "kick", "x", "", ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(audit()
                .Append({0, 1, "Ada", "kick", "x",
                         std::string(limits::kAuditDetailBytesMax + 1, 'a'), ""})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(audit().List(0, "", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(audit().List(limits::kAuditListMax + 1, "", "").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(audit().List(10, "", "")->size(), 3u);  // refused rows left nothing behind
}

CONFORMANCE_TEST(MailIsDeliveredListedReadAndDeleted) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  MustCreate("Brenna", account);
  const int64_t sent_ms = UnixMs(clock_);
  auto first = mail().Send("Brenna", "aldric", "Dinner", "At the inn, at dusk.");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = mail().Send("Postmaster", "ALDRIC", "Parcel", "A parcel awaits you.");
  ASSERT_TRUE(second.ok());

  auto box = mail().List("Aldric");
  ASSERT_TRUE(box.ok());
  ASSERT_EQ(box->size(), 2u);
  EXPECT_EQ((*box)[0], (MailHeader{.id = *first,
                                   .from = "Brenna",
                                   .subject = "Dinner",
                                   .sent_at_ms = sent_ms,
                                   .read = false}));
  EXPECT_EQ((*box)[1].id, *second);
  EXPECT_EQ(*mail().CountUnread("aldric"), 2);
  EXPECT_TRUE(mail().List("Brenna")->empty());

  auto letter = mail().Read("Aldric", *first);
  ASSERT_TRUE(letter.ok());
  EXPECT_EQ(letter->to, "Aldric");
  EXPECT_EQ(letter->body, "At the inn, at dusk.");
  EXPECT_TRUE(letter->read);
  EXPECT_TRUE(mail().List("Aldric")->at(0).read);
  EXPECT_EQ(*mail().CountUnread("aldric"), 1);

  // Another character cannot read or delete it.
  EXPECT_EQ(mail().Read("Brenna", *first).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mail().Delete("Brenna", *first).code(), StatusCode::kNotFound);

  ASSERT_TRUE(mail().Delete("Aldric", *first).ok());
  EXPECT_EQ(mail().Read("Aldric", *first).status().code(), StatusCode::kNotFound);
  // Ids are never reused.
  auto third = mail().Send("Brenna", "Aldric", "Again", "Still hungry.");
  ASSERT_TRUE(third.ok());
  EXPECT_GT(*third, *second);
}

CONFORMANCE_TEST(MailIsBounded) {
  const int64_t account = NewAccount("alice");
  MustCreate("Aldric", account);
  EXPECT_EQ(mail().Send("Brenna", "Ghost", "hi", "hi").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mail().Send("", "Aldric", "hi", "hi").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mail()
                .Send("Brenna", "Aldric", "hi", std::string(limits::kMailBodyBytesMax + 1, 'x'))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(mail()
                .Send("Brenna", "Aldric", std::string(limits::kMailSubjectBytesMax + 1, 's'), "")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      mail().Send("Brenna", "Aldric", "max", std::string(limits::kMailBodyBytesMax, 'x')).ok());
  for (size_t i = 1; i < limits::kMailboxMessagesMax; ++i) {
    ASSERT_TRUE(mail().Send("Brenna", "Aldric", "spam", "spam").ok()) << i;
  }
  EXPECT_EQ(mail().Send("Brenna", "Aldric", "spam", "spam").status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(mail().List("Aldric")->size(), limits::kMailboxMessagesMax);
}

GameEvent BossKill(std::string source, int64_t sequence, std::string actor, int64_t at_ms) {
  return {std::move(source), sequence, "boss_kill", "dungeon:lich", std::move(actor), at_ms};
}

CONFORMANCE_TEST(AGameEventIsAppliedOncePerSourceSequence) {
  ASSERT_EQ(*records().Apply("director", BossKill("world-1", 1, "Aldric", 1'000)),
            Applied::kApplied);
  // The same event again (a redelivery, a repeated publish): nothing changes.
  EXPECT_EQ(*records().Apply("director", BossKill("world-1", 1, "Aldric", 1'000)),
            Applied::kDuplicate);
  // An older one from the same source is a duplicate too; another source has its own sequence.
  ASSERT_EQ(*records().Apply("director", BossKill("world-1", 3, "Brenna", 3'000)),
            Applied::kApplied);
  EXPECT_EQ(*records().Apply("director", BossKill("world-1", 2, "Cato", 2'000)),
            Applied::kDuplicate);
  ASSERT_EQ(*records().Apply("director", BossKill("world-2", 1, "Dara", 4'000)), Applied::kApplied);
  auto tallies = records().Tallies();
  ASSERT_TRUE(tallies.ok()) << tallies.status().ToString();
  ASSERT_EQ(tallies->size(), 1u);
  EXPECT_EQ(tallies->front(),
            (Tally{"boss_kill", "dungeon:lich", 3, "Aldric", 1'000, "Dara", 4'000}));
  EXPECT_EQ(*records().Watermark("director", "world-1"), 3);
  EXPECT_EQ(*records().Watermark("director", "world-2"), 1);
  EXPECT_EQ(*records().Watermark("director", "world-3"), 0);
  // Watermarks are per consumer: another consumer applies the same event for itself.
  EXPECT_EQ(*records().Apply("auditor", BossKill("world-1", 1, "Aldric", 1'000)),
            Applied::kApplied);
  EXPECT_EQ(records().Tallies()->front().count, 4);
}

CONFORMANCE_TEST(TalliesAreOrderedAndBadEventsRefused) {
  ASSERT_TRUE(records().Apply("d", {"w", 1, "record", "fastest_run", "Aldric", 5}).ok());
  ASSERT_TRUE(records().Apply("d", {"w", 2, "boss_kill", "moor:wyrm", "", 6}).ok());
  ASSERT_TRUE(records().Apply("d", {"w", 3, "boss_kill", "dungeon:lich", "Brenna", 7}).ok());
  auto tallies = records().Tallies();
  ASSERT_TRUE(tallies.ok()) << tallies.status().ToString();
  std::vector<std::pair<std::string, std::string>> keys;
  for (const Tally& t : *tallies) keys.emplace_back(t.kind, t.subject);
  EXPECT_EQ(keys, (std::vector<std::pair<std::string, std::string>>{{"boss_kill", "dungeon:lich"},
                                                                    {"boss_kill", "moor:wyrm"},
                                                                    {"record", "fastest_run"}}));
  const std::string long_text(limits::kRecordFieldBytesMax + 1, 'x');
  const GameEvent bad[] = {{"", 1, "k", "s", "", 0},        {"w", 0, "k", "s", "", 0},
                           {"w", 9, "", "s", "", 0},        {"w", 9, "k", "", "", 0},
                           {long_text, 9, "k", "s", "", 0}, {"w", 9, "k", "s", long_text, 0}};
  for (const GameEvent& e : bad) {
    EXPECT_EQ(records().Apply("d", e).status().code(), StatusCode::kInvalidArgument)
        << e.source.size() << " " << e.sequence << " " << e.kind << " " << e.subject;
  }
  EXPECT_EQ(records().Apply("", {"w", 9, "k", "s", "", 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*records().Watermark("d", "w"), 3);  // the refused ones changed nothing
}

CONFORMANCE_TEST(APublishersSequenceGrowsAndOutlivesItsConnection) {
  EXPECT_EQ(*records().ReserveSequence("world-1"), 1);
  EXPECT_EQ(*records().ReserveSequence("world-1"), 2);
  EXPECT_EQ(*records().ReserveSequence("world-2"), 1);  // each source its own
  {
    // A restarted world (another connection to the same database) goes on past 2, never from 1.
    std::unique_ptr<StoreBackend> restarted = backend_->OpenPeer(clock_, false);
    ASSERT_NE(restarted, nullptr);
    EXPECT_EQ(*restarted->records().ReserveSequence("world-1"), 3);
  }
  EXPECT_EQ(*records().ReserveSequence("world-1"), 4);
  EXPECT_EQ(records().ReserveSequence("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      records().ReserveSequence(std::string(limits::kRecordFieldBytesMax + 1, 'w')).status().code(),
      StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------- social: guilds

CONFORMANCE_TEST(GuildsAreFoundedJoinedOnAnInvitationAndListedByRank) {
  const int64_t account = NewAccount("guildfolk");
  for (const char* name : {"Aldric", "Brenna", "Cedric", "Dara"}) MustCreate(name, account);
  auto created = social().CreateGuild("Iron Wolves", "aldric");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, "Iron Wolves");
  // Joining needs an invitation from the founder or an officer.
  EXPECT_EQ(social().JoinGuild("Brenna", "iron wolves").status().code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(social().InviteToGuild("Aldric", "brenna").ok());
  auto joined = social().JoinGuild("Brenna", "IRON WOLVES");
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(*joined, "Iron Wolves");
  // A member may not invite; an officer may.
  EXPECT_EQ(social().InviteToGuild("Brenna", "Cedric").code(), StatusCode::kPermissionDenied);
  ASSERT_TRUE(social().SetGuildRank("Aldric", "Brenna", GuildRank::kOfficer).ok());
  ASSERT_TRUE(social().InviteToGuild("Brenna", "Cedric").ok());
  ASSERT_TRUE(social().JoinGuild("Cedric", "Iron Wolves").ok());

  auto roster = social().GuildOf("cedric");
  ASSERT_TRUE(roster.ok()) << roster.status().ToString();
  ASSERT_TRUE(roster->has_value());
  EXPECT_EQ((*roster)->guild, "Iron Wolves");
  EXPECT_EQ((*roster)->rank, GuildRank::kMember);
  EXPECT_EQ((*roster)->members, (std::vector<GuildMember>{{"Aldric", GuildRank::kFounder},
                                                          {"Brenna", GuildRank::kOfficer},
                                                          {"Cedric", GuildRank::kMember}}));
  auto none = social().GuildOf("Dara");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // Demoted, Brenna may invite no more.
  ASSERT_TRUE(social().SetGuildRank("Aldric", "Brenna", GuildRank::kMember).ok());
  EXPECT_EQ(social().InviteToGuild("Brenna", "Dara").code(), StatusCode::kPermissionDenied);
}

CONFORMANCE_TEST(GuildRulesRefuseWithTheSameCodesEverywhere) {
  const int64_t account = NewAccount("guildrules");
  for (const char* name : {"Aldric", "Brenna", "Cedric"}) MustCreate(name, account);
  ASSERT_TRUE(social().CreateGuild("Iron Wolves", "Aldric").ok());
  // Names.
  for (const char* bad : {"", "ab", "9lives", "Two  Spaces", "semi;colon", "trailing ",
                          "a name far longer than thirty-two bytes"}) {
    EXPECT_EQ(social().CreateGuild(bad, "Brenna").status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(social().CreateGuild("iron wolves", "Brenna").status().code(),
            StatusCode::kAlreadyExists);  // taken, in any case
  EXPECT_EQ(social().CreateGuild("Second", "Aldric").status().code(),
            StatusCode::kAlreadyExists);  // already in a guild
  EXPECT_EQ(social().CreateGuild("Ghosts", "Nobody").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(social().InviteToGuild("Aldric", "Nobody").code(), StatusCode::kNotFound);
  EXPECT_EQ(social().InviteToGuild("Brenna", "Cedric").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(social().JoinGuild("Brenna", "No Such Guild").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(social().InviteToGuild("Aldric", "Brenna").ok());
  ASSERT_TRUE(social().InviteToGuild("Aldric", "Brenna").ok());  // again: still one invitation
  ASSERT_TRUE(social().JoinGuild("Brenna", "Iron Wolves").ok());
  EXPECT_EQ(social().InviteToGuild("Aldric", "Brenna").code(), StatusCode::kAlreadyExists);
  // Ranks: founder only, never to or from founder.
  EXPECT_EQ(social().SetGuildRank("Brenna", "Aldric", GuildRank::kOfficer).code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(social().SetGuildRank("Aldric", "Aldric", GuildRank::kMember).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(social().SetGuildRank("Aldric", "Brenna", GuildRank::kFounder).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(social().SetGuildRank("Aldric", "Cedric", GuildRank::kOfficer).code(),
            StatusCode::kNotFound);
  // Removal needs a higher rank.
  EXPECT_EQ(social().RemoveFromGuild("Brenna", "Aldric").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(social().RemoveFromGuild("Aldric", "Cedric").code(), StatusCode::kNotFound);
  // The founder leaves last.
  EXPECT_EQ(social().LeaveGuild("Aldric").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(social().RemoveFromGuild("Aldric", "Brenna").ok());
  EXPECT_FALSE(social().GuildOf("Brenna")->has_value());
  EXPECT_EQ(social().LeaveGuild("Brenna").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(social().LeaveGuild("Aldric").ok());  // alone: the guild ends
  EXPECT_FALSE(social().GuildOf("Aldric")->has_value());
  EXPECT_EQ(social().JoinGuild("Cedric", "Iron Wolves").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(social().CreateGuild("Iron Wolves", "Cedric").ok());  // the name is free again
}

CONFORMANCE_TEST(AGuildIsBoundedAndForgetsADeletedCharacter) {
  // kGuildMembersMax characters take several accounts (kCharactersPerAccountMax each).
  std::vector<std::string> names;
  for (size_t i = 0; names.size() < limits::kGuildMembersMax + 1; ++i) {
    const int64_t account = NewAccount("bulk" + std::to_string(i));
    for (size_t k = 0;
         k < limits::kCharactersPerAccountMax && names.size() < limits::kGuildMembersMax + 1; ++k) {
      const std::string name = "Member" + std::to_string(names.size());
      MustCreate(name, account);
      names.push_back(name);
    }
  }
  ASSERT_TRUE(social().CreateGuild("Crowd", names[0]).ok());
  for (size_t i = 1; i < limits::kGuildMembersMax; ++i) {
    ASSERT_TRUE(social().InviteToGuild(names[0], names[i]).ok()) << i;
    ASSERT_TRUE(social().JoinGuild(names[i], "Crowd").ok()) << i;
  }
  EXPECT_EQ(social().InviteToGuild(names[0], names.back()).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(social().GuildOf(names[0])->value().members.size(), limits::kGuildMembersMax);
  ASSERT_TRUE(characters().Delete(names[1]).ok());
  EXPECT_EQ(social().GuildOf(names[0])->value().members.size(), limits::kGuildMembersMax - 1);
  ASSERT_TRUE(social().InviteToGuild(names[0], names.back()).ok());
}

// --------------------------------------------------------------------------- social: friends

CONFORMANCE_TEST(FriendsAreAddedListedRemovedAndBounded) {
  const int64_t account = NewAccount("friendly");
  for (const char* name : {"Aldric", "Brenna", "Cedric"}) MustCreate(name, account);
  ASSERT_TRUE(social().AddFriend("aldric", "CEDRIC").ok());
  ASSERT_TRUE(social().AddFriend("Aldric", "Brenna").ok());
  EXPECT_EQ(*social().Friends("Aldric"), (std::vector<std::string>{"Brenna", "Cedric"}));
  EXPECT_TRUE(social().Friends("Brenna")->empty());  // one-way
  EXPECT_EQ(social().AddFriend("Aldric", "Brenna").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(social().AddFriend("Aldric", "aldric").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(social().AddFriend("Aldric", "Nobody").code(), StatusCode::kNotFound);
  EXPECT_EQ(social().AddFriend("Aldric", "no;such").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(social().RemoveFriend("Aldric", "brenna").ok());
  EXPECT_EQ(social().RemoveFriend("Aldric", "Brenna").code(), StatusCode::kNotFound);
  EXPECT_EQ(*social().Friends("Aldric"), (std::vector<std::string>{"Cedric"}));
  ASSERT_TRUE(characters().Delete("Cedric").ok());
  EXPECT_TRUE(social().Friends("Aldric")->empty());
}

CONFORMANCE_TEST(AFriendsListHoldsAtMostTheLimit) {
  std::vector<std::string> names;
  for (size_t i = 0; names.size() < limits::kFriendsMax + 2; ++i) {
    const int64_t account = NewAccount("pals" + std::to_string(i));
    for (size_t k = 0;
         k < limits::kCharactersPerAccountMax && names.size() < limits::kFriendsMax + 2; ++k) {
      const std::string name = "Pal" + std::to_string(names.size());
      MustCreate(name, account);
      names.push_back(name);
    }
  }
  for (size_t i = 1; i <= limits::kFriendsMax; ++i) {
    ASSERT_TRUE(social().AddFriend(names[0], names[i]).ok()) << i;
  }
  EXPECT_EQ(social().AddFriend(names[0], names.back()).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(social().Friends(names[0])->size(), limits::kFriendsMax);
}

// ---------------------------------------------------------------------------- social: locale

CONFORMANCE_TEST(ALocaleIsValidatedNormalizedAndKeptPerAccount) {
  const int64_t account = NewAccount("polyglot");
  MustCreate("Aldric", account);
  MustCreate("Brenna", account);
  EXPECT_EQ(*social().LocaleOf("Aldric"), "");
  ASSERT_TRUE(social().SetLocale("Aldric", "DE-de").ok());
  EXPECT_EQ(*social().LocaleOf("aldric"), "de-DE");
  EXPECT_EQ(*social().LocaleOf("Brenna"), "de-DE");  // the account's, shared by its characters
  for (const char* bad : {"", "de", "de_DE", "deu-DE", "d1-DE", "de-DE-x"}) {
    EXPECT_EQ(social().SetLocale("Aldric", bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(*social().LocaleOf("Aldric"), "de-DE");  // a refusal changes nothing
  EXPECT_EQ(social().SetLocale("Nobody", "en-US").code(), StatusCode::kNotFound);
  EXPECT_EQ(social().LocaleOf("Nobody").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace telos::store
