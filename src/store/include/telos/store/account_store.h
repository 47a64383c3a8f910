// AccountStore: durable player accounts.
//
// An account has a numeric id, a unique name (case-insensitive; the display spelling is kept)
// and a password hash. The store never sees a password: hashing and verification (argon2id)
// live in the account service, which hands the store the encoded hash string. The failed-login
// counter and lock are plain fields with atomic updates; the lockout policy (how many failures,
// for how long) belongs to the caller. Staff roles (telos/base/roles.h) are a bit set on the row,
// changed by `telos admin grant` / `revoke`, read by the account service when it signs an
// assertion. An account's characters are listed through
// CharacterStore::ListByAccount.
//
// Ownership: the store owns the rows; records are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the blocking pool, never from a zone executor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/roles.h"
#include "telos/base/status.h"

namespace telos::store {

struct AccountRecord {
  int64_t id = 0;               // assigned by the store, never reused
  std::string name;             // display spelling; unique by its lower-case key
  std::string password_hash;    // an encoded argon2id string ("$argon2id$...")
  int64_t created_at_ms = 0;    // Unix milliseconds
  int64_t failed_logins = 0;    // consecutive failures since the last success
  int64_t locked_until_ms = 0;  // Unix milliseconds; 0 means not locked
  Roles roles = kRolePlayer;    // staff roles; a new account has none

  bool operator==(const AccountRecord&) const = default;
};

class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // AlreadyExists when the name is taken in any letter case.
  // REQUIRES: ValidateAccountName(name) is OK; password_hash starts with "$argon2id$" and is at
  //           most limits::kPasswordHashBytesMax bytes (else InvalidArgument), so that a plain
  //           password can never be stored by mistake.
  virtual Result<AccountRecord> Create(std::string_view name, std::string_view password_hash) = 0;

  // NotFound when there is no such account.
  virtual Result<AccountRecord> Load(std::string_view name) = 0;
  virtual Result<AccountRecord> LoadById(int64_t id) = 0;

  // REQUIRES: the same rule on password_hash as Create.
  virtual Status SetPasswordHash(int64_t id, std::string_view password_hash) = 0;

  // Adds one to failed_logins atomically and returns the new count.
  virtual Result<int64_t> RecordLoginFailure(int64_t id) = 0;
  // Clears failed_logins and any lock.
  virtual Status RecordLoginSuccess(int64_t id) = 0;
  // Locks the account until `until_ms` (Unix milliseconds); 0 unlocks.
  virtual Status LockUntil(int64_t id, int64_t until_ms) = 0;

  // Sets the bits of `grant` and clears those of `revoke` in one atomic update, and returns the
  // account's roles after it. NotFound when there is no such account.
  // REQUIRES: RolesKnown(grant) and RolesKnown(revoke) (else InvalidArgument).
  virtual Result<Roles> UpdateRoles(int64_t id, Roles grant, Roles revoke) = 0;
};

}  // namespace telos::store
