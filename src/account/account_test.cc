#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telos/account/account_desk.h"
#include "telos/account/account_service.h"
#include "telos/account/hash_admission.h"
#include "telos/account/login_tickets.h"
#include "telos/account/names.h"
#include "telos/account/passwords.h"
#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/limits.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/character_state.h"

namespace telos::account {
namespace {

using namespace std::chrono_literals;

constexpr const char* kHome = "192.0.2.1";     // the owner's usual address
constexpr const char* kStranger = "10.6.6.6";  // someone else's

// Polls `done` until it holds or five seconds pass; returns whether it held.
bool PollUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

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
  EXPECT_NE(refused.message().find("try again in 57 seconds"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(throttle.Check("10.0.0.2").ok());  // other addresses are unaffected
  clock.Advance(57s);                            // the oldest failure ages out, as told
  EXPECT_TRUE(throttle.Check("10.0.0.1").ok());
}

TEST(AddressThrottleTest, AdmitCountsAndLongWaitsReadInMinutes) {
  ManualClock clock;
  AddressThrottle throttle(clock, 2, 60min, "Too many new accounts from your address");
  EXPECT_TRUE(throttle.Admit("10.0.0.1").ok());
  EXPECT_TRUE(throttle.Check("10.0.0.1").ok());  // Check alone counts nothing
  EXPECT_TRUE(throttle.Admit("10.0.0.1").ok());
  auto refused = throttle.Admit("10.0.0.1");
  ASSERT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(), "Too many new accounts from your address; try again in 60 minutes.");
  clock.Advance(60min);
  EXPECT_TRUE(throttle.Admit("10.0.0.1").ok());
}

TEST(RateWindowTest, RefusesEveryonePastTheBound) {
  ManualClock clock;
  RateWindow window(clock, 2, 60s, "Too many new accounts are being made right now");
  EXPECT_TRUE(window.Admit().ok());
  EXPECT_TRUE(window.Admit().ok());
  clock.Advance(1s);
  auto refused = window.Admit();
  ASSERT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "Too many new accounts are being made right now; try again in 59 seconds.");
  clock.Advance(59s);
  EXPECT_TRUE(window.Admit().ok());
}

TEST(HashAdmissionTest, CreationsBeyondTheirShareAreBusyAtOnceAndLoginsKeepTheRest) {
  HashAdmission admission({.hashes_in_flight_max = 2,
                           .creation_hashes_in_flight_max = 1,
                           .creation_waiters_max = 0,
                           .login_waiters_max = 1});
  std::optional<HashAdmission::Ticket> creation;
  auto first = admission.Admit(HashWork::kCreation);
  ASSERT_TRUE(first.ok());
  creation.emplace(std::move(*first));
  // The creation share is taken and creations may not wait: busy, without blocking.
  auto second = admission.Admit(HashWork::kCreation);
  ASSERT_EQ(second.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(), kServerBusy);
  // The slot creations cannot take is a login's.
  auto login = admission.Admit(HashWork::kLogin);
  ASSERT_TRUE(login.ok());
  EXPECT_EQ(admission.in_flight(), 2u);

  // Every slot busy: one login may wait, the next is told at once.
  std::optional<HashAdmission::Ticket> waited;
  std::thread waiter([&] {
    auto ticket = admission.Admit(HashWork::kLogin);
    if (ticket.ok()) waited.emplace(std::move(*ticket));
  });
  ASSERT_TRUE(PollUntil([&] { return admission.waiting(HashWork::kLogin) == 1; }));
  EXPECT_EQ(admission.Admit(HashWork::kLogin).status().code(), StatusCode::kResourceExhausted);
  creation.reset();  // the freed slot goes to the waiting login
  waiter.join();
  ASSERT_TRUE(waited.has_value());
  EXPECT_EQ(admission.in_flight(), 2u);
  EXPECT_EQ(admission.waiting(HashWork::kLogin), 0u);
}

TEST(HashAdmissionTest, AFreedSlotGoesToAWaitingLoginBeforeAWaitingCreation) {
  HashAdmission admission({.hashes_in_flight_max = 2,
                           .creation_hashes_in_flight_max = 1,
                           .creation_waiters_max = 1,
                           .login_waiters_max = 1});
  std::optional<HashAdmission::Ticket> a, b;
  auto ta = admission.Admit(HashWork::kLogin);
  auto tb = admission.Admit(HashWork::kLogin);
  ASSERT_TRUE(ta.ok() && tb.ok());
  a.emplace(std::move(*ta));
  b.emplace(std::move(*tb));
  std::atomic<bool> creation_started = false, login_started = false;
  std::optional<HashAdmission::Ticket> c, l;
  std::thread creator([&] {
    auto t = admission.Admit(HashWork::kCreation);
    if (t.ok()) c.emplace(std::move(*t));
    creation_started = true;
  });
  ASSERT_TRUE(PollUntil([&] { return admission.waiting(HashWork::kCreation) == 1; }));
  std::thread login([&] {
    auto t = admission.Admit(HashWork::kLogin);
    if (t.ok()) l.emplace(std::move(*t));
    login_started = true;
  });
  ASSERT_TRUE(PollUntil([&] { return admission.waiting(HashWork::kLogin) == 1; }));
  a.reset();
  ASSERT_TRUE(PollUntil([&] { return login_started.load(); }));
  EXPECT_FALSE(creation_started.load());  // it came first, but logins are served first
  EXPECT_EQ(admission.waiting(HashWork::kCreation), 1u);
  b.reset();
  ASSERT_TRUE(PollUntil([&] { return creation_started.load(); }));
  creator.join();
  login.join();
  EXPECT_TRUE(c.has_value());
  EXPECT_TRUE(l.has_value());
}

class AccountServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open({":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    Remake({});
  }
  void Remake(AccountServiceLimits limits) {
    service_ = std::make_unique<AccountService>(store_->accounts(), store_->characters(), hasher_,
                                                throttle_, clock_, log_, metrics_, limits);
  }
  ManualClock clock_;
  PasswordHasher hasher_{PasswordCost::ForTests()};
  AddressThrottle throttle_{clock_, limits::kLoginFailuresPerAddressMax, 60s};
  Logger log_{"test", LogLevel::kError};
  Metrics metrics_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<AccountService> service_;
};
TEST_F(AccountServiceTest, CreateAuthenticateAndPlay) {
  EXPECT_FALSE(*service_->AccountExists("ada", kHome));
  auto account = service_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(account.ok()) << account.status().ToString();
  EXPECT_TRUE(*service_->AccountExists("ADA", kHome));
  EXPECT_EQ(service_->CreateAccount("Ada", "another password", kHome).status().code(),
            StatusCode::kAlreadyExists);
  auto login = service_->Authenticate("ada", "difference engine", "127.0.0.1");
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  EXPECT_EQ(login->id, account->id);

  auto created = service_->CreateCharacter(account->id, "lovelace", "lobby", "atrium");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, "Lovelace");
  // The service makes the first state: a fresh character, named as shown, in the start room.
  auto stored = store_->characters().Load("lovelace");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->room_id, "atrium");
  auto state = world::DecodeCharacter(stored->state_json);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(*state, world::NewCharacter("Lovelace", world::Ref{"lobby", "atrium"}));
  auto list = service_->Characters(account->id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "Lovelace");
  EXPECT_EQ((*list)[0].zone_id, "lobby");

  auto claimed = service_->ClaimCharacter(account->id, "LOVELACE", 0);
  ASSERT_TRUE(claimed.ok());
  EXPECT_GT(claimed->owner_epoch, created->owner_epoch);
  auto other = service_->CreateAccount("babbage", "analytical engine", kHome);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(service_->ClaimCharacter(other->id, "lovelace", 0).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(AccountServiceTest, RulesAreEnforced) {
  EXPECT_EQ(service_->CreateAccount("x", "long enough pw", kHome).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->CreateAccount("ada", "short", kHome).status().code(),
            StatusCode::kInvalidArgument);
  auto account = service_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(account.ok());
  EXPECT_EQ(service_->CreateCharacter(account->id, "God", "lobby", "atrium").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AccountServiceTest, WrongPasswordsLockTheAddressForGrowingTimes) {
  ASSERT_TRUE(service_->CreateAccount("ada", "difference engine", kHome).ok());
  for (int64_t i = 0; i < limits::kLoginFailuresBeforeAccountLock; ++i) {
    auto s = service_->Authenticate("ada", "wrong guess", kStranger);
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(s.status().message(), "Wrong account name or password.");
  }
  // Locked from that address now: even the right password is refused, with the wait.
  auto locked = service_->Authenticate("ada", "difference engine", kStranger);
  ASSERT_EQ(locked.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(locked.status().message(),
            "Too many failed logins for this account from your address; try again in 60 "
            "seconds.");
  clock_.Advance(61s);
  // One more failure doubles the lock.
  EXPECT_EQ(service_->Authenticate("ada", "wrong again", kStranger).status().code(),
            StatusCode::kPermissionDenied);
  locked = service_->Authenticate("ada", "difference engine", kStranger);
  ASSERT_EQ(locked.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(locked.status().message().find("try again in 2 minutes."), std::string::npos)
      << locked.status().message();
  clock_.Advance(121s);
  ASSERT_TRUE(service_->Authenticate("ada", "difference engine", kStranger).ok());
  // The success cleared the pair: one wrong password is just wrong again.
  EXPECT_EQ(service_->Authenticate("ada", "wrong guess", kStranger).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(service_->Authenticate("ada", "difference engine", kStranger).ok());
}

// The hole: the lock was per account, so anyone knowing the name kept its owner out.
TEST_F(AccountServiceTest, AStrangersFailuresDoNotLockTheOwnerOut) {
  ASSERT_TRUE(service_->CreateAccount("ada", "difference engine", kHome).ok());
  for (int64_t i = 0; i < limits::kLoginFailuresBeforeAccountLock + 2; ++i) {
    (void)service_->Authenticate("ada", "wrong guess", kStranger);
  }
  EXPECT_EQ(service_->Authenticate("ada", "difference engine", kStranger).status().code(),
            StatusCode::kResourceExhausted);
  auto owner = service_->Authenticate("ada", "difference engine", kHome);
  EXPECT_TRUE(owner.ok()) << owner.status().ToString();
  // Even from an address the owner never used: the stranger's lock is the stranger's.
  auto travelling = service_->Authenticate("ada", "difference engine", "198.51.100.7");
  EXPECT_TRUE(travelling.ok()) << travelling.status().ToString();
}

TEST_F(AccountServiceTest, GuessesSpreadOverAddressesCloseTheAccountToUnfamiliarOnesOnly) {
  AccountServiceLimits limits;
  limits.lockout.account_failures_from_strangers_max = 10;
  limits.lockout.account_window = 15min;
  Remake(limits);
  ASSERT_TRUE(service_->CreateAccount("ada", "difference engine", kHome).ok());
  ASSERT_TRUE(service_->Authenticate("ada", "difference engine", kHome).ok());  // kHome is known
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(
        service_->Authenticate("ada", "wrong guess", "10.5.0." + std::to_string(i)).status().code(),
        StatusCode::kPermissionDenied);
  }
  auto unfamiliar = service_->Authenticate("ada", "difference engine", "198.51.100.7");
  ASSERT_EQ(unfamiliar.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(unfamiliar.status().message(),
            "Too many failed logins for this account from unfamiliar addresses; try again in 15 "
            "minutes.");
  auto owner = service_->Authenticate("ada", "difference engine", kHome);
  EXPECT_TRUE(owner.ok()) << owner.status().ToString();
  clock_.Advance(15min);
  EXPECT_TRUE(service_->Authenticate("ada", "difference engine", "198.51.100.7").ok());
}

TEST_F(AccountServiceTest, CreationsAreThrottledPerAddress) {
  for (size_t i = 0; i < limits::kAccountCreationsPerAddressMax; ++i) {
    const std::string name = "ada" + std::to_string(i);
    ASSERT_TRUE(service_->CreateAccount(name, "difference engine", kStranger).ok()) << name;
  }
  auto refused = service_->CreateAccount("adaz", "difference engine", kStranger);
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "Too many new accounts from your address; try again in 60 minutes.");
  EXPECT_FALSE(*service_->AccountExists("adaz", kHome));
  EXPECT_TRUE(service_->CreateAccount("babbage", "analytical engine", kHome).ok());
  clock_.Advance(std::chrono::milliseconds(limits::kAccountCreationPerAddressWindowMs));
  EXPECT_TRUE(service_->CreateAccount("adaz", "difference engine", kStranger).ok());
}

TEST_F(AccountServiceTest, CreationsAreThrottledOverall) {
  AccountServiceLimits limits;
  limits.creations_max = 4;
  limits.creation_window = 60s;
  Remake(limits);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(service_
                    ->CreateAccount("ada" + std::to_string(i), "difference engine",
                                    "10.4.0." + std::to_string(i))
                    .ok());
  }
  clock_.Advance(1s);
  auto refused = service_->CreateAccount("adaz", "difference engine", "10.4.1.1");
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "Too many new accounts are being made right now; try again in 59 seconds.");
  clock_.Advance(59s);
  EXPECT_TRUE(service_->CreateAccount("adaz", "difference engine", "10.4.1.1").ok());
}

// The hole: AccountExists answered "no such account" for free, so names were enumerated
// without ever meeting the throttle that slows password guessing.
TEST_F(AccountServiceTest, UnknownNamesCostLikeWrongPasswords) {
  ASSERT_TRUE(service_->CreateAccount("ada", "difference engine", kHome).ok());
  for (size_t i = 0; i < limits::kLoginFailuresPerAddressMax; ++i) {
    auto exists = service_->AccountExists("nobody" + std::to_string(i), kStranger);
    ASSERT_TRUE(exists.ok()) << i << ": " << exists.status().ToString();
    EXPECT_FALSE(*exists);
  }
  auto refused = service_->AccountExists("ada", kStranger);
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("Too many failed logins from your address"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(service_->Authenticate("ada", "difference engine", kStranger).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(*service_->AccountExists("ada", kHome));
  EXPECT_TRUE(service_->Authenticate("ada", "difference engine", kHome).ok());
}

TEST_F(AccountServiceTest, UnknownAccountLooksLikeAWrongPassword) {
  auto s = service_->Authenticate("nobody_here", "whatever pw", "10.0.0.9");
  EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.status().message(), "Wrong account name or password.");
}

TEST_F(AccountServiceTest, ChangePasswordNeedsTheOldOne) {
  auto account = service_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(service_->CreateCharacter(account->id, "Lovelace", "lobby", "atrium").ok());
  EXPECT_EQ(service_->ChangePassword("lovelace", "wrong", "new password here").code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(service_->ChangePassword("lovelace", "difference engine", "new password here").ok());
  EXPECT_FALSE(service_->Authenticate("ada", "difference engine", "1.1.1.1").ok());
  EXPECT_TRUE(service_->Authenticate("ada", "new password here", "1.1.1.1").ok());
}

// The password command's wrong guesses used to count against the account itself, locking its
// logins from everywhere; now they lock only the password command.
TEST_F(AccountServiceTest, PasswordCommandGuessesLockOnlyThePasswordCommand) {
  auto account = service_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(service_->CreateCharacter(account->id, "Lovelace", "lobby", "atrium").ok());
  for (int64_t i = 0; i < limits::kLoginFailuresBeforeAccountLock; ++i) {
    EXPECT_EQ(service_->ChangePassword("lovelace", "wrong guess", "new password here").code(),
              StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(service_->ChangePassword("lovelace", "difference engine", "new password here").code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(service_->Authenticate("ada", "difference engine", kHome).ok());
}

// A fixed pool standing in for main's blocking pool (FIFO, like boost::asio::thread_pool).
class TestPool {
 public:
  explicit TestPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~TestPool() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void Post(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

// The hole: every creation hashed, so a flood of them from a few addresses queued every login
// in the blocking pool behind hundreds of argon2id runs. Creation rates are raised out of the
// way here so that admission alone is tested: logins from other addresses must finish after at
// most a handful of the flood's hashes, and the flood beyond the admission bound must be told
// "busy" at once (far quicker than one hash).
TEST(AccountFloodTest, LoginsFromOtherAddressesFinishWhileCreationsFlood) {
  ManualClock clock;
  auto store = store::SqliteStore::Open({":memory:"}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // Slow enough that a hash dominates a busy answer, fast enough for a unit test.
  PasswordHasher hasher(PasswordCost{1, size_t{4} << 20});
  AddressThrottle throttle(clock, limits::kLoginFailuresPerAddressMax, 60s);
  Logger log("test", LogLevel::kError);
  Metrics metrics;
  AccountServiceLimits service_limits;
  service_limits.creations_per_address_max = 100'000;
  service_limits.creations_max = 100'000;
  AccountService service((*store)->accounts(), (*store)->characters(), hasher, throttle, clock, log,
                         metrics, service_limits);

  constexpr int kPlayers = 8;
  constexpr int kFlood = 400;
  for (int i = 0; i < kPlayers; ++i) {
    ASSERT_TRUE(service
                    .CreateAccount("player" + std::to_string(i), "difference engine",
                                   "10.1.0." + std::to_string(i))
                    .ok());
  }
  auto hash_time = std::chrono::steady_clock::duration::max();
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(hasher.Hash("difference engine").ok());
    hash_time = std::min(hash_time, std::chrono::steady_clock::now() - start);
  }

  std::mutex mu;
  std::condition_variable cv;
  int done = 0;                                                 // guarded by mu
  int created_before_last_login = 0;                            // guarded by mu
  int created = 0, busy = 0, logins_ok = 0, logins_done = 0;    // guarded by mu
  std::vector<std::chrono::steady_clock::duration> busy_times;  // guarded by mu
  std::chrono::steady_clock::duration last_login_after{};       // guarded by mu
  {
    TestPool pool(4);
    for (int i = 0; i < kFlood; ++i) {
      pool.Post([&, i] {
        const auto start = std::chrono::steady_clock::now();
        auto result = service.CreateAccount("flood" + std::to_string(i), "difference engine",
                                            "10.66.0." + std::to_string(i % 3));
        const auto took = std::chrono::steady_clock::now() - start;
        std::lock_guard lock(mu);
        if (result.ok()) ++created;
        if (result.status().code() == StatusCode::kResourceExhausted) {
          EXPECT_EQ(result.status().message(), kServerBusy);
          ++busy;
          busy_times.push_back(took);
        }
        ++done;
        cv.notify_all();
      });
    }
    // Posted behind the whole flood: the worst place in the pool's queue.
    const auto logins_posted = std::chrono::steady_clock::now();
    for (int i = 0; i < kPlayers; ++i) {
      pool.Post([&, i] {
        auto result = service.Authenticate("player" + std::to_string(i), "difference engine",
                                           "10.1.0." + std::to_string(i));
        std::lock_guard lock(mu);
        if (result.ok()) ++logins_ok;
        if (++logins_done == kPlayers) {
          created_before_last_login = created;
          last_login_after = std::chrono::steady_clock::now() - logins_posted;
        }
        ++done;
        cv.notify_all();
      });
    }
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 60s, [&] { return done == kFlood + kPlayers; }))
        << done << " of " << kFlood + kPlayers << " calls finished";
  }
  EXPECT_EQ(logins_ok, kPlayers);
  // Admission lets one creation hash and one wait; the rest of the flood is answered busy, so
  // only the few creations that hashed while the pool drained it came before the logins.
  EXPECT_LE(created_before_last_login, 40) << "of a flood of " << kFlood;
  EXPECT_GE(busy, kFlood - 40);
  // In time, the same bound: without admission the logins waited for all 400 hashes (spread
  // over the cores), with it for the drained busy answers and a few hashes.
  EXPECT_LT(last_login_after, 100 * hash_time)
      << "the last login took "
      << std::chrono::duration<double, std::milli>(last_login_after).count() << " ms, one hash "
      << std::chrono::duration<double, std::milli>(hash_time).count() << " ms";
  ASSERT_FALSE(busy_times.empty());
  std::sort(busy_times.begin(), busy_times.end());
  const auto median_busy = busy_times[busy_times.size() / 2];
  EXPECT_LT(median_busy, hash_time)
      << "a busy answer took " << std::chrono::duration<double, std::micro>(median_busy).count()
      << " us, one hash " << std::chrono::duration<double, std::micro>(hash_time).count() << " us";
}

// ------------------------------------------------------------------ the embedded desk

// The desk `telos serve` hands its gate, and the account service serves over gRPC: it issues
// login tickets and takes the account from them (issue 23 item 2).
class LocalDeskTest : public AccountServiceTest {
 protected:
  static constexpr int64_t kTtlMs = 5 * 60 * 1000;
  void SetUp() override {
    AccountServiceTest::SetUp();
    desk_ = std::make_unique<LocalAccountDesk>(*service_, key_, clock_,
                                               LocalAccountDeskOptions{kTtlMs});
  }
  const auth::SigningKey key_ = auth::SigningKey::Generate();
  std::unique_ptr<LocalAccountDesk> desk_;
};

TEST_F(LocalDeskTest, OnlyTheTicketOfTheAccountThatLoggedInClaims) {
  auto ada = desk_->CreateAccount("ada", "difference engine", kHome);
  auto charles = desk_->CreateAccount("babbage", "analytical engine", kHome);
  ASSERT_TRUE(ada.ok() && charles.ok());
  ASSERT_TRUE(desk_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  EXPECT_NE(ada->ticket, charles->ticket);
  EXPECT_EQ(ada->ticket.size(), limits::kLoginTicketBytesMax);

  for (const std::string& ticket :
       {std::string(), std::to_string(ada->id), std::string("not a ticket")}) {
    SCOPED_TRACE("ticket '" + ticket + "'");
    auto claim = desk_->ClaimCharacter(ticket, "lovelace", "gate-1");
    EXPECT_EQ(claim.status().code(), StatusCode::kLoginExpired);
    EXPECT_EQ(claim.status().message(), kTicketRefusedMessage);
    EXPECT_EQ(desk_->Characters(ticket).status().code(), StatusCode::kLoginExpired);
    EXPECT_EQ(desk_->CreateCharacter(ticket, "usurper", "lobby", "atrium").code(),
              StatusCode::kLoginExpired);
  }
  EXPECT_EQ(desk_->ClaimCharacter(charles->ticket, "lovelace", "gate-1").status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_FALSE(store_->characters().Load("usurper").ok());

  auto claim = desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1");
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  auto assertion = auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_);
  ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
  EXPECT_EQ(assertion->account_id, ada->id);
  EXPECT_EQ(assertion->gate_id, "gate-1");
  EXPECT_EQ(claim->assertion_expires_unix_ms, assertion->expires_unix_ms);
  // A claim names its gate: an assertion good through every gate is never issued.
  EXPECT_EQ(desk_->ClaimCharacter(ada->ticket, "lovelace", "").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LocalDeskTest, AnExpiredTicketIsRefusedAndUseKeepsOneAlive) {
  auto ada = desk_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(ada.ok());
  ASSERT_TRUE(desk_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto login = desk_->Authenticate("ada", "difference engine", kHome);
  ASSERT_TRUE(login.ok());

  // Used just before it would lapse, the second ticket lives on; the first, idle, does not.
  clock_.Advance(std::chrono::milliseconds(limits::kLoginTicketIdleMs - 1));
  ASSERT_TRUE(desk_->Characters(login->ticket).ok());
  clock_.Advance(1ms);
  auto late = desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1");
  EXPECT_EQ(late.status().code(), StatusCode::kLoginExpired);
  EXPECT_EQ(late.status().message(), kTicketRefusedMessage);
  EXPECT_TRUE(desk_->ClaimCharacter(login->ticket, "lovelace", "gate-1").ok());
}

TEST_F(LocalDeskTest, RenewalKeepsNonceAccountCharacterAndGate) {
  auto ada = desk_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(ada.ok());
  ASSERT_TRUE(desk_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto claim = desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1");
  ASSERT_TRUE(claim.ok());
  auto first = auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_);
  ASSERT_TRUE(first.ok());
  clock_.Advance(std::chrono::milliseconds(kTtlMs - 1));
  auto renewed = desk_->RenewAssertion(ada->ticket, claim->assertion);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  clock_.Advance(2ms);  // the first has lapsed
  EXPECT_FALSE(auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_).ok());
  auto next = auth::VerifyAssertion(key_.verify_key(), renewed->assertion, clock_);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->nonce, first->nonce);
  EXPECT_EQ(next->gate_id, "gate-1");
  EXPECT_EQ(next->character, "Lovelace");
  EXPECT_EQ(next->account_id, ada->id);
  // A lapsed assertion is not renewed, and a ticket renews only the session it claimed.
  EXPECT_EQ(desk_->RenewAssertion(ada->ticket, claim->assertion).status().code(),
            StatusCode::kLoginExpired);
  auto other_login = desk_->Authenticate("ada", "difference engine", kHome);
  ASSERT_TRUE(other_login.ok());
  EXPECT_EQ(desk_->RenewAssertion(other_login->ticket, renewed->assertion).status().code(),
            StatusCode::kLoginExpired);
}

TEST_F(LocalDeskTest, TheAssertionCarriesTheAccountsRolesAndARenewalReadsThemAgain) {
  auto ada = desk_->CreateAccount("ada", "difference engine", kHome);
  auto charles = desk_->CreateAccount("babbage", "analytical engine", kHome);
  ASSERT_TRUE(ada.ok() && charles.ok());
  ASSERT_TRUE(desk_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  ASSERT_TRUE(desk_->CreateCharacter(charles->ticket, "babbage", "lobby", "atrium").ok());
  ASSERT_TRUE(store_->accounts().UpdateRoles(ada->id, kRoleAdmin, 0).ok());

  auto claim = desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1");
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_)->roles, kRoleAdmin);
  auto player = desk_->ClaimCharacter(charles->ticket, "babbage", "gate-1");
  ASSERT_TRUE(player.ok());
  EXPECT_EQ(auth::VerifyAssertion(key_.verify_key(), player->assertion, clock_)->roles,
            kRolePlayer);

  // A revoke reaches the playing session at its next renewal.
  ASSERT_TRUE(store_->accounts().UpdateRoles(ada->id, 0, kRoleAdmin).ok());
  auto renewed = desk_->RenewAssertion(ada->ticket, claim->assertion);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(auth::VerifyAssertion(key_.verify_key(), renewed->assertion, clock_)->roles,
            kRolePlayer);
}

TEST_F(LocalDeskTest, APasswordChangeRevokesTheAccountsTicketsAndStopsRenewal) {
  auto ada = desk_->CreateAccount("ada", "difference engine", kHome);
  ASSERT_TRUE(ada.ok());
  ASSERT_TRUE(desk_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto claim = desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1");
  ASSERT_TRUE(claim.ok());
  auto other = desk_->CreateAccount("bob", "analytical engine", kHome);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(desk_->ChangePassword("lovelace", "difference engine", "a new engine, at last").ok());
  EXPECT_EQ(desk_->RenewAssertion(ada->ticket, claim->assertion).status().code(),
            StatusCode::kLoginExpired);
  EXPECT_EQ(desk_->Characters(ada->ticket).status().code(), StatusCode::kLoginExpired);
  EXPECT_EQ(desk_->ClaimCharacter(ada->ticket, "lovelace", "gate-1").status().code(),
            StatusCode::kLoginExpired);
  EXPECT_TRUE(desk_->Characters(other->ticket).ok());  // another account's login is untouched
  auto again = desk_->Authenticate("ada", "a new engine, at last", kHome);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(desk_->ClaimCharacter(again->ticket, "lovelace", "gate-1").ok());
}

TEST(LoginTicketsTest, BoundedAndLeastRecentlyUsedGoesFirst) {
  ManualClock clock;
  LoginTickets tickets(clock, 60'000, 3);
  const std::string a = tickets.Issue(1);
  clock.Advance(1ms);
  const std::string b = tickets.Issue(2);
  clock.Advance(1ms);
  const std::string c = tickets.Issue(3);
  clock.Advance(1ms);
  ASSERT_TRUE(tickets.Redeem(a).ok());  // a is now the most recently used
  const std::string d = tickets.Issue(4);
  EXPECT_EQ(tickets.size(), 3u);
  EXPECT_FALSE(tickets.Redeem(b).ok());
  EXPECT_EQ(*tickets.Redeem(a), 1);
  EXPECT_EQ(*tickets.Redeem(c), 3);
  EXPECT_EQ(*tickets.Redeem(d), 4);
  clock.Advance(60s);
  EXPECT_FALSE(tickets.Redeem(a).ok());
  EXPECT_EQ(tickets.size(), 0u);
}

}  // namespace
}  // namespace telos::account
