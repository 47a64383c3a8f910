// AccountDesk: what the gate's login screens need from accounts, wherever they live.
//
// `telos serve` answers in-process (LocalAccountDesk over AccountService and the SQLite
// stores); a fleet gate asks the account service over gRPC (RemoteAccountDesk), which serves
// the same LocalAccountDesk. Either way:
//   - Authenticate and CreateAccount answer with a login ticket, and the calls about an
//     account's characters take the account from that ticket, never from the caller, so a
//     gate can act only for players who logged in through it (LoginTickets);
//   - what ClaimCharacter hands the gate is a signed assertion ("this account may play this
//     character through this gate until then") that the world verifies offline before it
//     claims and loads the character itself; it is short-lived, and the gate renews it with
//     RenewAssertion while the session lives.
//
// Every method blocks (password hashing, stores, network): call it from a blocking pool.
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/account/account_service.h"
#include "telos/account/login_tickets.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"
#include "telos/store/character_record.h"

namespace telos::account {

struct AccountRef {
  int64_t id = 0;
  std::string name;
  // The login ticket (LoginTickets): every later call about this account's characters presents
  // it, and the desk takes the account from it.
  std::string ticket;
};

struct CharacterClaim {
  std::string name;  // display name
  int64_t account_id = 0;
  // From LocalAccountDesk, the row as it stands (ownership checked, nothing claimed); over gRPC
  // only name and account_id.
  store::CharacterRecord record;
  // The serialized, signed assertion the world checks, bound to the gate that claimed.
  std::string assertion;
  int64_t assertion_expires_unix_ms = 0;  // the gate renews it before then
};

class AccountDesk {
 public:
  virtual ~AccountDesk() = default;
  // `address` is the player's network address: every call that answers about a name or
  // hashes a password is throttled by it (AccountService explains how).
  virtual Result<bool> AccountExists(std::string_view name, std::string_view address) = 0;
  // Errors as AccountService::CreateAccount / Authenticate; on success the reply carries a
  // fresh login ticket.
  virtual Result<AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                           std::string_view address) = 0;
  virtual Result<AccountRef> Authenticate(std::string_view name, std::string_view password,
                                          std::string_view address) = 0;
  // The next three act for the account of `ticket`: LoginExpired (kTicketRefusedMessage) when
  // it is unknown or expired (the player must log in again).
  virtual Result<std::vector<CharacterSummary>> Characters(std::string_view ticket) = 0;
  // A new character standing in room `room_id` of `zone_id`; the account service makes its
  // first state (AccountService::CreateCharacter).
  virtual Status CreateCharacter(std::string_view ticket, std::string_view name,
                                 std::string_view zone_id, std::string_view room_id) = 0;
  // A signed assertion for the character, bound to `gate_id`, the gate whose world stream will
  // present it. PermissionDenied if the account does not own the character; NotFound if there
  // is none.
  virtual Result<CharacterClaim> ClaimCharacter(std::string_view ticket, std::string_view name,
                                                std::string_view gate_id) = 0;
  // The session's assertion again with a new expiry. `assertion` must still be valid and be the
  // one `ticket` claimed last: LoginExpired otherwise, so that a caller tells "this session's
  // login is gone, stop asking" from a refusal of its own caller token (PermissionDenied, worth
  // asking again) by the code alone.
  virtual Result<CharacterClaim> RenewAssertion(std::string_view ticket,
                                                std::string_view assertion) = 0;
  virtual Status ChangePassword(std::string_view character_name, std::string_view old_password,
                                std::string_view new_password) = 0;
};

struct LocalAccountDeskOptions {
  int64_t assertion_ttl_ms = limits::kAssertionTtlMsDefault;
  int64_t ticket_idle_ms = limits::kLoginTicketIdleMs;
  size_t tickets_max = limits::kLoginTicketsMax;
};

// The in-process desk over an AccountService: the one place where login tickets are issued and
// required and assertions signed. `telos serve` hands it to its gate directly; the account
// service process serves it over gRPC (AccountServer), so both enforce exactly this logic.
// ClaimCharacter only checks ownership: the world that admits the character claims it (minting
// owner_epoch) itself.
class LocalAccountDesk final : public AccountDesk {
 public:
  // `service`, `key` and `clock` must outlive the desk.
  LocalAccountDesk(AccountService& service, const auth::SigningKey& key, const Clock& clock,
                   LocalAccountDeskOptions options = {});
  Result<bool> AccountExists(std::string_view name, std::string_view address) override;
  Result<AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                   std::string_view address) override;
  Result<AccountRef> Authenticate(std::string_view name, std::string_view password,
                                  std::string_view address) override;
  Result<std::vector<CharacterSummary>> Characters(std::string_view ticket) override;
  Status CreateCharacter(std::string_view ticket, std::string_view name, std::string_view zone_id,
                         std::string_view room_id) override;
  Result<CharacterClaim> ClaimCharacter(std::string_view ticket, std::string_view name,
                                        std::string_view gate_id) override;
  Result<CharacterClaim> RenewAssertion(std::string_view ticket,
                                        std::string_view assertion) override;
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password) override;

  const LoginTickets& tickets() const { return tickets_; }

 private:
  AccountService& service_;
  const auth::SigningKey& key_;
  const Clock& clock_;
  const LocalAccountDeskOptions options_;
  LoginTickets tickets_;
};

}  // namespace telos::account
