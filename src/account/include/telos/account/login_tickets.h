// LoginTickets: the account service's memory of which players authenticated through it.
//
// Authenticate and CreateAccount issue a ticket (kLoginTicketRandomBytes random bytes as hex)
// bound to the account; every later call about that account's characters presents it, and
// the account is taken from the ticket, never from the caller. So a caller that holds the
// caller token (a gate) can act only for players who typed their password through it, and
// account ids, which are sequential, are worth nothing on their own.
//
// A ticket lives `idle_ms` from its last use: a login screen left idle loses it, and a session
// playing keeps it by renewing its assertion (every half assertion lifetime, which the bounds
// in limits.h keep shorter than `idle_ms`). Once a ticket has claimed a character it also
// remembers that session's nonce: it renews only that session's assertion.
//
// Bounded: at most `tickets_max` at once; issuing one more forgets the least recently used
// (an unbounded table would be a leak a login flood could grow). Expired tickets are dropped as
// calls pass. Tickets live in this process's memory: a restart forgets them, and sessions then
// cannot renew (their players log in again when their session next needs a fresh assertion).
//
// Time comes from the Clock's monotonic reading (ManualClock in tests). Thread-safe: one small
// mutex, never held across anything but the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::account {

// The message of every refusal (whose code, LoginExpired, is what callers act on): the gate
// shows it to the player and asks them to log in again.
inline constexpr std::string_view kTicketRefusedMessage =
    "Your login has expired; please log in again.";

class LoginTickets {
 public:
  explicit LoginTickets(const Clock& clock, int64_t idle_ms = limits::kLoginTicketIdleMs,
                        size_t tickets_max = limits::kLoginTicketsMax);
  LoginTickets(const LoginTickets&) = delete;
  LoginTickets& operator=(const LoginTickets&) = delete;

  // A fresh ticket for `account_id`.
  std::string Issue(int64_t account_id);
  // The ticket's account, and the ticket's life starts again. LoginExpired
  // (kTicketRefusedMessage) for an unknown, expired or forgotten ticket.
  Result<int64_t> Redeem(std::string_view ticket);
  // Remembers that the ticket claimed the session `nonce` (a later claim replaces it).
  void BindSession(std::string_view ticket, std::string nonce);
  // As Redeem, but only for the session the ticket claimed last: LoginExpired otherwise.
  Result<int64_t> RedeemForSession(std::string_view ticket, std::string_view nonce);

  // Forgets every ticket of the account (its password changed): their sessions can renew no
  // more and its characters cannot be claimed with them. Returns how many were dropped.
  size_t RevokeAccount(int64_t account_id);
  size_t size() const;

 private:
  struct Entry {
    int64_t account_id = 0;
    Instant expires;
    std::string nonce;  // the session the ticket claimed last; empty before a claim
  };
  using Table = std::map<std::string, Entry, std::less<>>;

  // Drops every expired ticket. REQUIRES: mu_ held.
  void PurgeExpired(Instant now);
  // The live entry for `ticket` with its life restarted, or end(). REQUIRES: mu_ held.
  Table::iterator Touch(std::string_view ticket, Instant now);

  const Clock& clock_;
  const int64_t idle_ms_;
  const size_t tickets_max_;
  mutable std::mutex mu_;
  Table tickets_;                                    // guarded by mu_
  std::set<std::pair<Instant, std::string>> order_;  // guarded by mu_; by expiry (= last use)
};

}  // namespace telos::account
