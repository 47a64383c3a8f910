// LoginLockout: locks out password guessing against one account without letting a stranger
// lock the account's owner out.
//
// A lock keyed by the account alone is a weapon: anyone who knows a name can keep its owner
// out forever by failing a few logins now and then. So the lock is keyed by (account, address):
//   1. Pair lock. `failures_before_lock` consecutive failed logins of one account from one
//      address lock that pair for `lock_base`, doubling with each further failure up to
//      `lock_max`. A success from the pair clears it; a failure that comes more than
//      `failures_forgotten_after` after the pair's previous one starts the count afresh (longer
//      than `lock_max`, so waiting out a full lock does not reset it). Other addresses are
//      untouched, so the owner's address stays open while a stranger's is locked.
//   2. Account bound, against guessing spread over many addresses (each below its pair lock and
//      below AddressThrottle's per-address limit). Failed logins of one account from addresses
//      that never logged into it are counted in a `account_window`; once
//      `account_failures_from_strangers_max` are inside, only the account's known addresses
//      (the last `known_addresses_per_account_max` that logged in successfully) may try until
//      the oldest ages out. A stranger can thus close the account to new addresses for a while,
//      never to the owner's usual one.
// AddressThrottle (per address, over every account and unknown names) is the third throttle;
// AccountService applies all three.
//
// State lives in memory, bounded: at most `pairs_max` pairs and `accounts_max` accounts, the
// one with the oldest activity forgotten first when full. A restart forgets every lock (the
// attacker then meets the locks afresh); known addresses are forgotten too, so right after a
// restart during a spread attack the owner waits like a stranger until the window passes.
//
// Time comes from the Clock (ManualClock in tests). Thread safety: any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/account/address_throttle.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::account {

struct LoginLockoutLimits {
  int64_t failures_before_lock = limits::kLoginFailuresBeforeAccountLock;
  Duration lock_base = std::chrono::milliseconds(limits::kAccountLockBaseMs);
  Duration lock_max = std::chrono::milliseconds(limits::kAccountLockMaxMs);
  Duration failures_forgotten_after =
      std::chrono::milliseconds(limits::kLoginFailuresForgottenAfterMs);
  size_t account_failures_from_strangers_max = limits::kAccountFailuresFromStrangersMax;
  Duration account_window = std::chrono::milliseconds(limits::kAccountFailureWindowMs);
  size_t pairs_max = limits::kLockoutPairsMax;
  size_t accounts_max = limits::kLockoutAccountsMax;
  size_t known_addresses_per_account_max = limits::kKnownAddressesPerAccountMax;
};

class LoginLockout {
 public:
  explicit LoginLockout(const Clock& clock, LoginLockoutLimits limits = {});

  // OK, or ResourceExhausted with the wait in the message.
  Status Check(int64_t account_id, std::string_view address);
  // A wrong password for the account from `address`. Returns how long the pair is now locked
  // (zero when it is not), for the log.
  Duration RecordFailure(int64_t account_id, std::string_view address);
  // A right password: clears the pair and makes `address` known to the account.
  void RecordSuccess(int64_t account_id, std::string_view address);
  // Clears the pair only (a right password where being known means nothing, such as the
  // password command).
  void Forgive(int64_t account_id, std::string_view address);

 private:
  struct Pair {
    int64_t consecutive_failures = 0;
    Instant last_failure{};
    Instant locked_until{};
  };
  struct Account {
    EventWindow stranger_failures;
    std::vector<std::string> known;  // most recent last, at most known_addresses_per_account_max
    Instant last_activity{};
  };
  using PairKey = std::pair<int64_t, std::string>;

  bool KnownLocked(const Account& account, std::string_view address) const;
  Account& AccountLocked(int64_t account_id, Instant now);

  const Clock& clock_;
  const LoginLockoutLimits limits_;
  std::mutex mu_;
  std::map<PairKey, Pair> pairs_;        // guarded by mu_
  std::map<int64_t, Account> accounts_;  // guarded by mu_
};

}  // namespace telos::account
