// BalanceReservations: the in-memory balance reservation in front of the ledger (issue 27
// item 5), so that a group-committed batch never carries more debits than the chips are there.
//
// For each account it has seen, it keeps the committed balance as last read or tracked (when
// known) and the chips reserved by wagers accepted but not yet committed. A wager is accepted
// only when every account it debits (all but the house) has available = balance - reserved
// >= its debit; the debit is then reserved until the batch commits: Applied moves it into the
// balance, Released gives it back. The ledger stays the authority: another instance may spend
// the same chips meanwhile, which only makes a posting of the batch refused by the ledger
// (never an overdraft); the owner then calls Forget so the next wager reads the balance afresh.
//
// Memory: at most kArcadeReservationAccountsMax accounts; past it, accounts with nothing
// reserved are forgotten (they are read again when next used).
//
// Thread safety: none; the WagerBatcher uses it under its mutex.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "telos/arcade/ledger.h"

namespace telos::arcade {

class BalanceReservations {
 public:
  // The debited accounts of `posting` whose balance is not known (to Load before TryReserve).
  std::vector<std::string> Unknown(const Posting& posting) const;
  // Records the committed balance of an account that is not known; ignored when it is.
  void Load(std::string_view account, int64_t balance);
  // Reserves every debit of `posting` when each is covered. REQUIRES: Unknown(posting) empty.
  // False (and nothing reserved) when an account would be overdrawn; `short_account` names it.
  bool TryReserve(const Posting& posting, std::string* short_account);
  // The posting committed: its legs move the known balances, its debits leave the reservation.
  void Applied(const Posting& posting);
  // The posting did not commit: its debits leave the reservation.
  void Released(const Posting& posting);
  // The balance of `account` may be stale: read it again before the next reservation.
  void Forget(std::string_view account);

  // balance - reserved, or nothing when the balance is not known.
  bool Available(std::string_view account, int64_t* available) const;
  int64_t Reserved(std::string_view account) const;
  size_t size() const { return accounts_.size(); }

 private:
  struct Entry {
    bool known = false;
    int64_t balance = 0;
    int64_t reserved = 0;
  };
  void Trim();

  std::unordered_map<std::string, Entry> accounts_;
};

}  // namespace telos::arcade
