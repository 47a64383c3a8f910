// The conformance suite itself (see store_conformance.h). Backends instantiate it elsewhere.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
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

}  // namespace
}  // namespace telos::store
