// AccountService: accounts and the characters they own, for the gate's login screens.
//
// It creates accounts (argon2id password hashes), authenticates them with two throttles — per
// network address (AddressThrottle) and per account (consecutive failures lock the account for
// a time that doubles, up to a cap) — creates characters under the naming rules, and claims a
// character for play (ClaimOwnership mints the owner_epoch that fences every later save).
//
// Every method blocks on the stores and on password hashing: call it from a blocking pool,
// never from an event loop or a zone executor. Thread-safe if the stores are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/account/address_throttle.h"
#include "telos/account/passwords.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/store/account_store.h"
#include "telos/store/character_store.h"

namespace telos::account {

struct CharacterSummary {
  std::string name;
  std::string zone_id;
  int64_t updated_at_ms = 0;
};

class AccountService {
 public:
  AccountService(store::AccountStore& accounts, store::CharacterStore& characters,
                 const PasswordHasher& hasher, AddressThrottle& throttle, const Clock& clock,
                 Logger& log, Metrics& metrics);

  // True if an account of that name exists (the login screen asks before offering to create).
  Result<bool> AccountExists(std::string_view name);
  // InvalidArgument (name or password rules), AlreadyExists, Unavailable.
  Result<store::AccountRecord> CreateAccount(std::string_view name, std::string_view password);
  // PermissionDenied ("wrong name or password"), ResourceExhausted (throttled or locked, with
  // the wait in the message), Unavailable.
  Result<store::AccountRecord> Authenticate(std::string_view name, std::string_view password,
                                            std::string_view address);
  Result<std::vector<CharacterSummary>> Characters(int64_t account_id);
  // Creates a character row holding `state_json` (the world's fresh character) at `zone_id`.
  // InvalidArgument (name rules), AlreadyExists, ResourceExhausted (too many characters).
  Result<store::CharacterRecord> CreateCharacter(int64_t account_id, std::string_view name,
                                                 std::string_view state_json,
                                                 std::string_view zone_id,
                                                 std::string_view room_id);
  // Takes a character for play: PermissionDenied if `account_id` does not own it. The returned
  // row carries the new owner_epoch and the state to load.
  Result<store::CharacterRecord> ClaimCharacter(int64_t account_id, std::string_view name,
                                                int64_t directory_epoch);
  // Checks that `account_id` owns the character (PermissionDenied otherwise) without claiming
  // it: in a fleet the world that admits the character mints its owner_epoch.
  Result<store::CharacterRecord> CheckOwnership(int64_t account_id, std::string_view name);
  // Verifies `old_password` for the account owning `character_name`, then stores the new hash.
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password);

 private:
  int64_t NowUnixMs() const;
  Status CheckLock(const store::AccountRecord& account) const;
  void RecordFailure(const store::AccountRecord& account);

  store::AccountStore& accounts_;
  store::CharacterStore& characters_;
  const PasswordHasher& hasher_;
  AddressThrottle& throttle_;
  const Clock& clock_;
  Logger& log_;
  prometheus::Counter& logins_ok_;
  prometheus::Counter& logins_failed_;
  prometheus::Counter& logins_throttled_;
  prometheus::Counter& accounts_created_;
  prometheus::Counter& characters_created_;
};

}  // namespace telos::account
