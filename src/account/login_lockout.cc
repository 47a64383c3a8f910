#include "telos/account/login_lockout.h"

#include <algorithm>
#include <tuple>

#include "telos/base/assert.h"

namespace telos::account {

LoginLockout::LoginLockout(const Clock& clock, LoginLockoutLimits limits)
    : clock_(clock), limits_(limits) {
  RELEASE_ASSERT(limits_.failures_before_lock >= 1 && limits_.pairs_max >= 1 &&
                     limits_.accounts_max >= 1 && limits_.account_failures_from_strangers_max >= 1,
                 "LoginLockout limits must be positive");
}

bool LoginLockout::KnownLocked(const Account& account, std::string_view address) const {
  return std::find(account.known.begin(), account.known.end(), address) != account.known.end();
}

LoginLockout::Account& LoginLockout::AccountLocked(int64_t account_id, Instant now) {
  auto it = accounts_.find(account_id);
  if (it == accounts_.end()) {
    if (accounts_.size() >= limits_.accounts_max) {
      const auto victim =
          std::min_element(accounts_.begin(), accounts_.end(), [](const auto& a, const auto& b) {
            return a.second.last_activity < b.second.last_activity;
          });
      accounts_.erase(victim);
    }
    it = accounts_.emplace(account_id, Account{}).first;
  }
  it->second.last_activity = now;
  return it->second;
}

Status LoginLockout::Check(int64_t account_id, std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  if (auto pair = pairs_.find(PairKey(account_id, address)); pair != pairs_.end()) {
    if (pair->second.locked_until > now) {
      return Status::ResourceExhausted(
          "Too many failed logins for this account from your address; " +
          TryAgainIn(pair->second.locked_until - now));
    }
  }
  auto account = accounts_.find(account_id);
  if (account == accounts_.end() || KnownLocked(account->second, address)) return Status::Ok();
  EventWindow& strangers = account->second.stranger_failures;
  if (!strangers.Full(now, limits_.account_failures_from_strangers_max, limits_.account_window)) {
    return Status::Ok();
  }
  return Status::ResourceExhausted(
      "Too many failed logins for this account from unfamiliar addresses; " +
      TryAgainIn(strangers.WaitAt(now, limits_.account_window)));
}

Duration LoginLockout::RecordFailure(int64_t account_id, std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  PairKey key(account_id, address);
  auto it = pairs_.find(key);
  if (it == pairs_.end()) {
    if (pairs_.size() >= limits_.pairs_max) {
      // Unlocked pairs go first (their locked_until is in the past), oldest failure first; a
      // flood of new pairs thus frees the locks that matter last.
      const auto victim =
          std::min_element(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) {
            return std::tie(a.second.locked_until, a.second.last_failure) <
                   std::tie(b.second.locked_until, b.second.last_failure);
          });
      pairs_.erase(victim);
    }
    it = pairs_.emplace(std::move(key), Pair{}).first;
  }
  Pair& pair = it->second;
  if (pair.consecutive_failures > 0 && now - pair.last_failure > limits_.failures_forgotten_after) {
    pair.consecutive_failures = 0;
  }
  ++pair.consecutive_failures;
  pair.last_failure = now;
  Duration locked_for{0};
  if (pair.consecutive_failures >= limits_.failures_before_lock) {
    // Each failure past the threshold doubles the lock, up to the cap.
    locked_for = limits_.lock_base;
    for (int64_t extra = pair.consecutive_failures - limits_.failures_before_lock;
         extra > 0 && locked_for < limits_.lock_max; --extra) {
      locked_for *= 2;
    }
    locked_for = std::min(locked_for, limits_.lock_max);
    pair.locked_until = now + locked_for;
  }

  Account& account = AccountLocked(account_id, now);
  if (!KnownLocked(account, address)) {
    account.stranger_failures.Add(now, limits_.account_failures_from_strangers_max,
                                  limits_.account_window);
  }
  return locked_for;
}

void LoginLockout::Forgive(int64_t account_id, std::string_view address) {
  std::lock_guard lock(mu_);
  pairs_.erase(PairKey(account_id, address));
}

void LoginLockout::RecordSuccess(int64_t account_id, std::string_view address) {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  pairs_.erase(PairKey(account_id, address));
  Account& account = AccountLocked(account_id, now);
  auto known = std::find(account.known.begin(), account.known.end(), address);
  if (known != account.known.end()) account.known.erase(known);
  account.known.emplace_back(address);
  if (account.known.size() > limits_.known_addresses_per_account_max) {
    account.known.erase(account.known.begin());
  }
}

}  // namespace telos::account
