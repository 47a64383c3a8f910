#include <gtest/gtest.h>

#include "telos/account/account_service.h"
#include "telos/account/names.h"
#include "telos/account/passwords.h"
#include "telos/base/limits.h"
#include "telos/store/sqlite_store.h"

namespace telos::account {
namespace {

using namespace std::chrono_literals;

TEST(NamesTest, CharacterNames) {
  EXPECT_TRUE(ValidateCharacterName("Aldric").ok());
  EXPECT_TRUE(ValidateCharacterName("ada").ok());
  EXPECT_FALSE(ValidateCharacterName("Al").ok());
  EXPECT_FALSE(ValidateCharacterName("Thirteenchars").ok());
  EXPECT_FALSE(ValidateCharacterName("R2d2").ok());
  EXPECT_FALSE(ValidateCharacterName("Al dric").ok());
  EXPECT_FALSE(ValidateCharacterName("Caf\xC3\xA9").ok());
  auto reserved = ValidateCharacterName("Admin");
  ASSERT_FALSE(reserved.ok());
  EXPECT_NE(reserved.message().find("reserved"), std::string::npos);
  EXPECT_FALSE(ValidateCharacterName("SELF").ok());
  EXPECT_EQ(DisplayCharacterName("aLDRIC"), "Aldric");
}

TEST(NamesTest, AccountNames) {
  EXPECT_TRUE(ValidateAccountName("ada_lovelace1").ok());
  EXPECT_FALSE(ValidateAccountName("1ada").ok());
  EXPECT_FALSE(ValidateAccountName("ad").ok());
  EXPECT_FALSE(ValidateAccountName("ada-l").ok());
  EXPECT_FALSE(ValidateAccountName("root").ok());
}

TEST(PasswordsTest, HashVerifiesOnlyTheRightPassword) {
  PasswordHasher hasher(PasswordCost::ForTests());
  auto hash = hasher.Hash("correct horse battery");
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(hash->rfind("$argon2id$", 0), 0u) << *hash;
  EXPECT_TRUE(hasher.Verify(*hash, "correct horse battery"));
  EXPECT_FALSE(hasher.Verify(*hash, "correct horse batterY"));
  EXPECT_FALSE(hasher.Verify("not a hash", "x"));
  // Salted: the same password hashes differently each time.
  EXPECT_NE(*hash, *hasher.Hash("correct horse battery"));
}

TEST(PasswordsTest, DefaultCostIsOwaspArgon2id) {
  PasswordHasher hasher;
  auto hash = hasher.Hash("a long enough password");
  ASSERT_TRUE(hash.ok());
  EXPECT_NE(hash->find("$m=19456,t=2,p=1$"), std::string::npos) << *hash;
}

TEST(PasswordsTest, NewPasswordRules) {
  EXPECT_TRUE(ValidateNewPassword("long enough", "ada").ok());
  EXPECT_FALSE(ValidateNewPassword("short", "ada").ok());
  EXPECT_FALSE(ValidateNewPassword(std::string(200, 'x'), "ada").ok());
  EXPECT_FALSE(ValidateNewPassword("my ADA password", "ada").ok());
}

TEST(AddressThrottleTest, RefusesAfterTooManyFailuresThenForgives) {
  ManualClock clock;
  AddressThrottle throttle(clock, 3, 60s);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.Check("10.0.0.1").ok());
    throttle.RecordFailure("10.0.0.1");
    clock.Advance(1s);
  }
  auto refused = throttle.Check("10.0.0.1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("try again in 58 seconds"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(throttle.Check("10.0.0.2").ok());  // other addresses are unaffected
  clock.Advance(58s);                            // the oldest failure ages out
  EXPECT_TRUE(throttle.Check("10.0.0.1").ok());
}

class AccountServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open({":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    service_ = std::make_unique<AccountService>(store_->accounts(), store_->characters(), hasher_,
                                                throttle_, clock_, log_, metrics_);
  }
  ManualClock clock_;
  PasswordHasher hasher_{PasswordCost::ForTests()};
  AddressThrottle throttle_{clock_, 100, 60s};
  Logger log_{"test", LogLevel::kError};
  Metrics metrics_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<AccountService> service_;
};

TEST_F(AccountServiceTest, CreateAuthenticateAndPlay) {
  EXPECT_FALSE(*service_->AccountExists("ada"));
  auto account = service_->CreateAccount("ada", "difference engine");
  ASSERT_TRUE(account.ok()) << account.status().ToString();
  EXPECT_TRUE(*service_->AccountExists("ADA"));
  EXPECT_EQ(service_->CreateAccount("Ada", "another password").status().code(),
            StatusCode::kAlreadyExists);
  auto login = service_->Authenticate("ada", "difference engine", "127.0.0.1");
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  EXPECT_EQ(login->id, account->id);

  auto created = service_->CreateCharacter(account->id, "lovelace", "{}", "lobby", "atrium");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, "Lovelace");
  auto list = service_->Characters(account->id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "Lovelace");
  EXPECT_EQ((*list)[0].zone_id, "lobby");

  auto claimed = service_->ClaimCharacter(account->id, "LOVELACE", 0);
  ASSERT_TRUE(claimed.ok());
  EXPECT_GT(claimed->owner_epoch, created->owner_epoch);
  auto other = service_->CreateAccount("babbage", "analytical engine");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(service_->ClaimCharacter(other->id, "lovelace", 0).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(AccountServiceTest, RulesAreEnforced) {
  EXPECT_EQ(service_->CreateAccount("x", "long enough pw").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->CreateAccount("ada", "short").status().code(), StatusCode::kInvalidArgument);
  auto account = service_->CreateAccount("ada", "difference engine");
  ASSERT_TRUE(account.ok());
  EXPECT_EQ(service_->CreateCharacter(account->id, "God", "{}", "lobby", "atrium").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AccountServiceTest, WrongPasswordsLockTheAccountForGrowingTimes) {
  ASSERT_TRUE(service_->CreateAccount("ada", "difference engine").ok());
  for (int64_t i = 0; i < limits::kLoginFailuresBeforeAccountLock; ++i) {
    auto s = service_->Authenticate("ada", "wrong guess", "10.0.0." + std::to_string(i));
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(s.status().message(), "Wrong account name or password.");
  }
  // Locked now: even the right password is refused, with the wait.
  auto locked = service_->Authenticate("ada", "difference engine", "10.0.1.1");
  ASSERT_EQ(locked.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(locked.status().message().find("try again in 60 seconds"), std::string::npos)
      << locked.status().message();
  clock_.Advance(61s);
  ASSERT_TRUE(service_->Authenticate("ada", "difference engine", "10.0.1.1").ok());
}

TEST_F(AccountServiceTest, UnknownAccountLooksLikeAWrongPassword) {
  auto s = service_->Authenticate("nobody_here", "whatever pw", "10.0.0.9");
  EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.status().message(), "Wrong account name or password.");
}

TEST_F(AccountServiceTest, ChangePasswordNeedsTheOldOne) {
  auto account = service_->CreateAccount("ada", "difference engine");
  ASSERT_TRUE(service_->CreateCharacter(account->id, "Lovelace", "{}", "lobby", "atrium").ok());
  EXPECT_EQ(service_->ChangePassword("lovelace", "wrong", "new password here").code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(service_->ChangePassword("lovelace", "difference engine", "new password here").ok());
  EXPECT_FALSE(service_->Authenticate("ada", "difference engine", "1.1.1.1").ok());
  EXPECT_TRUE(service_->Authenticate("ada", "new password here", "1.1.1.1").ok());
}

}  // namespace
}  // namespace telos::account
