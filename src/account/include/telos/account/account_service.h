// AccountService: accounts and the characters they own, for the gate's login screens.
//
// It creates accounts (argon2id password hashes), authenticates them, creates characters under
// the naming rules, and claims a character for play (ClaimOwnership mints the owner_epoch that
// fences every later save).
//
// The login path cannot be starved, nor an owner locked out by a stranger:
//   - Account creation is throttled per address (`creations_per_address_max` in a window) and
//     for everyone (`creations_max` in a window): ResourceExhausted "Too many new accounts from
//     your address; ..." or "Too many new accounts are being made right now; ...". An attempt
//     counts once its name and password pass the rules, whether or not the name is taken.
//   - Every argon2id hash (creation, login, password change) first takes a HashAdmission
//     ticket: creations have a small share of the slots and a tiny wait queue, logins the rest;
//     a full queue is answered ResourceExhausted "The server is busy; please try again in a
//     moment." at once. A flood of creations thus holds at most a few blocking-pool threads,
//     and logins of existing accounts still get slots.
//   - Failed logins are throttled per address (AddressThrottle, injected: it is shared with
//     the process's wiring) and per (account, address) pair with an account-wide bound for
//     addresses that never logged in (LoginLockout, which explains why). A stranger's failures
//     lock the stranger's address, not the owner's. The account row's failed_logins and
//     locked_until_ms are no longer written or read: that lock was per account.
//   - Unknown-account answers cost like wrong passwords: Authenticate of an unknown name and
//     AccountExists answering "no" record a failure against the address, and an address over
//     its limit is refused by AccountExists too, so enumerating names is throttled like
//     guessing passwords.
// Every refusal is ResourceExhausted with a sentence the gate shows the player as it is.
//
// Every method blocks on the stores and on password hashing: call it from a blocking pool,
// never from an event loop or a zone executor. Thread-safe if the stores are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/account/address_throttle.h"
#include "telos/account/hash_admission.h"
#include "telos/account/login_lockout.h"
#include "telos/account/passwords.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/roles.h"
#include "telos/base/status.h"
#include "telos/store/account_store.h"
#include "telos/store/character_store.h"

namespace telos::account {

struct CharacterSummary {
  std::string name;
  std::string zone_id;
  int64_t updated_at_ms = 0;
};

// The service's own bounds; the defaults come from limits.h, tests shrink them.
struct AccountServiceLimits {
  size_t creations_per_address_max = limits::kAccountCreationsPerAddressMax;
  Duration creation_per_address_window =
      std::chrono::milliseconds(limits::kAccountCreationPerAddressWindowMs);
  size_t creations_max = limits::kAccountCreationsMax;
  Duration creation_window = std::chrono::milliseconds(limits::kAccountCreationWindowMs);
  HashAdmissionLimits hashing;
  LoginLockoutLimits lockout;
};

class AccountService {
 public:
  AccountService(store::AccountStore& accounts, store::CharacterStore& characters,
                 const PasswordHasher& hasher, AddressThrottle& throttle, const Clock& clock,
                 Logger& log, Metrics& metrics, AccountServiceLimits limits = {});

  // True if an account of that name exists (the login screen asks before offering to create).
  // "No" counts as a failed login from `address`; ResourceExhausted when the address is over
  // its limit.
  Result<bool> AccountExists(std::string_view name, std::string_view address);
  // InvalidArgument (name or password rules), ResourceExhausted (too many creations from the
  // address or overall; the server busy), AlreadyExists, Unavailable.
  Result<store::AccountRecord> CreateAccount(std::string_view name, std::string_view password,
                                             std::string_view address);
  // PermissionDenied ("wrong name or password"), ResourceExhausted (throttled, locked or busy,
  // with the wait in the message), Unavailable.
  Result<store::AccountRecord> Authenticate(std::string_view name, std::string_view password,
                                            std::string_view address);
  Result<std::vector<CharacterSummary>> Characters(int64_t account_id);
  // Creates a character row at `zone_id`/`room_id` holding its first state, a fresh level-1
  // character standing there (world::NewCharacter). The state is made here, not taken from the
  // caller: a gate may pick the name and the start room, never the character's stats or goods.
  // InvalidArgument (name rules), AlreadyExists, ResourceExhausted (too many characters).
  Result<store::CharacterRecord> CreateCharacter(int64_t account_id, std::string_view name,
                                                 std::string_view zone_id,
                                                 std::string_view room_id);
  // Takes a character for play: PermissionDenied if `account_id` does not own it. The returned
  // row carries the new owner_epoch and the state to load.
  Result<store::CharacterRecord> ClaimCharacter(int64_t account_id, std::string_view name,
                                                int64_t directory_epoch);
  // Checks that `account_id` owns the character (PermissionDenied otherwise) without claiming
  // it: in a fleet the world that admits the character mints its owner_epoch.
  Result<store::CharacterRecord> CheckOwnership(int64_t account_id, std::string_view name);
  // The id of the account that owns the character (NotFound for no such character).
  Result<int64_t> AccountOfCharacter(std::string_view name);
  // The account's staff roles as stored now (NotFound for no such account): what an assertion
  // is signed with at every claim and renewal.
  Result<Roles> RolesOf(int64_t account_id);
  // Verifies `old_password` for the account owning `character_name`, then stores the new hash.
  // Wrong old passwords count in LoginLockout under a pseudo-address of their own, so guessing
  // through the password command is slowed without touching the account's logins.
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password);

 private:
  void RecordFailure(const store::AccountRecord& account, std::string_view address);

  store::AccountStore& accounts_;
  store::CharacterStore& characters_;
  const PasswordHasher& hasher_;
  AddressThrottle& throttle_;
  Logger& log_;
  AddressThrottle creations_per_address_;
  RateWindow creations_;
  HashAdmission hashing_;
  LoginLockout lockout_;
  prometheus::Counter& logins_ok_;
  prometheus::Counter& logins_failed_;
  prometheus::Counter& logins_throttled_;
  prometheus::Counter& logins_busy_;
  prometheus::Counter& creations_throttled_;
  prometheus::Counter& creations_busy_;
  prometheus::Counter& accounts_created_;
  prometheus::Counter& characters_created_;
};

}  // namespace telos::account
