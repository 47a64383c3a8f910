#include "telos/arcade/balance_reservations.h"

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::arcade {
namespace {

bool Debits(const Leg& leg) {
  return leg.amount < 0 && !MayGoNegative(leg.account);
}

}  // namespace

std::vector<std::string> BalanceReservations::Unknown(const Posting& posting) const {
  std::vector<std::string> out;
  for (const Leg& leg : posting.legs) {
    if (!Debits(leg)) continue;
    auto it = accounts_.find(leg.account);
    if (it == accounts_.end() || !it->second.known) out.push_back(leg.account);
  }
  return out;
}

void BalanceReservations::Load(std::string_view account, int64_t balance) {
  // Trimmed before the insertion, so the account being loaded is never the one dropped.
  if (accounts_.size() >= limits::kArcadeReservationAccountsMax) Trim();
  Entry& entry = accounts_[std::string(account)];
  if (entry.known) return;
  entry.known = true;
  entry.balance = balance;
}

bool BalanceReservations::TryReserve(const Posting& posting, std::string* short_account) {
  for (const Leg& leg : posting.legs) {
    if (!Debits(leg)) continue;
    auto it = accounts_.find(leg.account);
    RELEASE_ASSERT(it != accounts_.end() && it->second.known, "reserving on an unknown balance");
    if (it->second.balance - it->second.reserved < -leg.amount) {
      if (short_account != nullptr) *short_account = leg.account;
      return false;
    }
  }
  for (const Leg& leg : posting.legs) {
    if (Debits(leg)) accounts_[leg.account].reserved -= leg.amount;
  }
  return true;
}

void BalanceReservations::Applied(const Posting& posting) {
  for (const Leg& leg : posting.legs) {
    auto it = accounts_.find(leg.account);
    if (it == accounts_.end()) continue;
    if (it->second.known) it->second.balance += leg.amount;
    if (Debits(leg)) it->second.reserved += leg.amount;
    RELEASE_ASSERT(it->second.reserved >= 0, "a reservation released twice");
  }
}

void BalanceReservations::Released(const Posting& posting) {
  for (const Leg& leg : posting.legs) {
    if (!Debits(leg)) continue;
    auto it = accounts_.find(leg.account);
    RELEASE_ASSERT(it != accounts_.end(), "releasing a reservation never made");
    it->second.reserved += leg.amount;
    RELEASE_ASSERT(it->second.reserved >= 0, "a reservation released twice");
  }
}

void BalanceReservations::Forget(std::string_view account) {
  auto it = accounts_.find(std::string(account));
  if (it == accounts_.end()) return;
  if (it->second.reserved == 0) {
    accounts_.erase(it);
  } else {
    it->second.known = false;  // the reservation stays until its batch answers
  }
}

bool BalanceReservations::Available(std::string_view account, int64_t* available) const {
  auto it = accounts_.find(std::string(account));
  if (it == accounts_.end() || !it->second.known) return false;
  *available = it->second.balance - it->second.reserved;
  return true;
}

int64_t BalanceReservations::Reserved(std::string_view account) const {
  auto it = accounts_.find(std::string(account));
  return it == accounts_.end() ? 0 : it->second.reserved;
}

void BalanceReservations::Trim() {
  std::erase_if(accounts_, [](const auto& entry) { return entry.second.reserved == 0; });
}

}  // namespace telos::arcade
