#include "telos/account/account_service.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "telos/account/names.h"
#include "telos/base/limits.h"
#include "telos/world/character_state.h"

namespace telos::account {
namespace {
constexpr std::string_view kWrongCredentials = "Wrong account name or password.";
// The pseudo-address wrong old passwords of the in-game password command count under: its own
// pair, so guessing there is slowed without locking the account's logins from anywhere.
constexpr std::string_view kPasswordCommandAddress = "(password command)";
}  // namespace

AccountService::AccountService(store::AccountStore& accounts, store::CharacterStore& characters,
                               const PasswordHasher& hasher, AddressThrottle& throttle,
                               const Clock& clock, Logger& log, Metrics& metrics,
                               AccountServiceLimits limits)
    : accounts_(accounts),
      characters_(characters),
      hasher_(hasher),
      throttle_(throttle),
      log_(log),
      creations_per_address_(clock, limits.creations_per_address_max,
                             limits.creation_per_address_window,
                             "Too many new accounts from your address"),
      creations_(clock, limits.creations_max, limits.creation_window,
                 "Too many new accounts are being made right now"),
      hashing_(limits.hashing),
      lockout_(clock, limits.lockout),
      logins_ok_(metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "ok"}})),
      logins_failed_(
          metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "wrong_password"}})),
      logins_throttled_(
          metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "throttled"}})),
      logins_busy_(metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "busy"}})),
      creations_throttled_(metrics.Counter("account_creations_refused_total",
                                           "Account creations refused before hashing, by reason",
                                           {{"reason", "throttled"}})),
      creations_busy_(metrics.Counter("account_creations_refused_total",
                                      "Account creations refused before hashing, by reason",
                                      {{"reason", "busy"}})),
      accounts_created_(metrics.Counter("accounts_created_total", "Accounts created")),
      characters_created_(metrics.Counter("characters_created_total", "Characters created")) {}

Result<bool> AccountService::AccountExists(std::string_view name, std::string_view address) {
  // "No such account" tells an enumerator as much as a wrong password does: it costs the same.
  if (Status s = throttle_.Check(address); !s.ok()) {
    logins_throttled_.Increment();
    return s;
  }
  auto account = accounts_.Load(name);
  if (account.ok()) return true;
  if (account.status().code() != StatusCode::kNotFound) return account.status();
  throttle_.RecordFailure(address);
  return false;
}

Result<store::AccountRecord> AccountService::CreateAccount(std::string_view name,
                                                           std::string_view password,
                                                           std::string_view address) {
  TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
  TELOS_RETURN_IF_ERROR(ValidateNewPassword(password, name));
  // Look first without counting, so an address over its limit never occupies a hashing slot.
  for (Status s : {creations_per_address_.Check(address), creations_.Check()}) {
    if (!s.ok()) {
      creations_throttled_.Increment();
      return s;
    }
  }
  auto ticket = hashing_.Admit(HashWork::kCreation);
  if (!ticket.ok()) {
    creations_busy_.Increment();
    return ticket.status();
  }
  // Count under the throttles' locks now that hashing is certain: a busy answer costs the
  // address nothing, and concurrent attempts cannot all slip past the checks above.
  if (Status s = creations_per_address_.Admit(address); !s.ok()) {
    creations_throttled_.Increment();
    return s;
  }
  if (Status s = creations_.Admit(); !s.ok()) {
    creations_throttled_.Increment();
    return s;
  }
  auto hash = hasher_.Hash(password);
  if (!hash.ok()) return hash.status();
  auto created = accounts_.Create(name, *hash);
  if (created.ok()) {
    accounts_created_.Increment();
    log_.Info("account created", {{"account", created->name}, {"address", address}});
  }
  return created;
}

void AccountService::RecordFailure(const store::AccountRecord& account, std::string_view address) {
  const Duration lock = lockout_.RecordFailure(account.id, address);
  if (lock > Duration::zero()) {
    log_.Warn("login locked for an account from an address after failed logins",
              {{"account", account.name},
               {"address", address},
               {"lock_ms", std::chrono::duration_cast<std::chrono::milliseconds>(lock).count()}});
  }
}

Result<store::AccountRecord> AccountService::Authenticate(std::string_view name,
                                                          std::string_view password,
                                                          std::string_view address) {
  if (Status s = throttle_.Check(address); !s.ok()) {
    logins_throttled_.Increment();
    return s;
  }
  auto account = accounts_.Load(name);
  if (!account.ok()) {
    if (account.status().code() != StatusCode::kNotFound) return account.status();
    throttle_.RecordFailure(address);
    logins_failed_.Increment();
    return Status::PermissionDenied(std::string(kWrongCredentials));
  }
  if (Status s = lockout_.Check(account->id, address); !s.ok()) {
    logins_throttled_.Increment();
    return s;
  }
  auto ticket = hashing_.Admit(HashWork::kLogin);
  if (!ticket.ok()) {
    logins_busy_.Increment();
    return ticket.status();
  }
  if (!hasher_.Verify(account->password_hash, password)) {
    throttle_.RecordFailure(address);
    RecordFailure(*account, address);
    logins_failed_.Increment();
    return Status::PermissionDenied(std::string(kWrongCredentials));
  }
  TELOS_RETURN_IF_ERROR(accounts_.RecordLoginSuccess(account->id));
  lockout_.RecordSuccess(account->id, address);
  logins_ok_.Increment();
  return account;
}

Result<std::vector<CharacterSummary>> AccountService::Characters(int64_t account_id) {
  auto rows = characters_.ListByAccount(account_id);
  if (!rows.ok()) return rows.status();
  std::vector<CharacterSummary> out;
  for (const auto& row : *rows) out.push_back({row.name, row.zone_id, row.updated_at_ms});
  return out;
}

Result<store::CharacterRecord> AccountService::CreateCharacter(int64_t account_id,
                                                               std::string_view name,
                                                               std::string_view zone_id,
                                                               std::string_view room_id) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  store::CharacterRecord record;
  record.name = DisplayCharacterName(name);
  record.account_id = account_id;
  record.zone_id = std::string(zone_id);
  record.room_id = std::string(room_id);
  record.state_json = world::EncodeCharacter(
      world::NewCharacter(record.name, world::Ref{record.zone_id, record.room_id}));
  auto created = characters_.Create(record);
  if (created.ok()) {
    characters_created_.Increment();
    log_.Info("character created", {{"character", created->name}, {"account_id", account_id}});
  }
  return created;
}

Result<store::CharacterRecord> AccountService::ClaimCharacter(int64_t account_id,
                                                              std::string_view name,
                                                              int64_t directory_epoch) {
  TELOS_RETURN_IF_ERROR(CheckOwnership(account_id, name).status());
  return characters_.ClaimOwnership(name, directory_epoch);
}

Result<store::CharacterRecord> AccountService::CheckOwnership(int64_t account_id,
                                                              std::string_view name) {
  auto row = characters_.Load(name);
  if (!row.ok()) return row.status();
  if (row->account_id != account_id) {
    return Status::PermissionDenied("That character belongs to another account.");
  }
  return row;
}

Result<Roles> AccountService::RolesOf(int64_t account_id) {
  auto account = accounts_.LoadById(account_id);
  if (!account.ok()) return account.status();
  return account->roles;
}

Result<int64_t> AccountService::AccountOfCharacter(std::string_view name) {
  auto row = characters_.Load(name);
  if (!row.ok()) return row.status();
  return row->account_id;
}

Status AccountService::ChangePassword(std::string_view character_name,
                                      std::string_view old_password,
                                      std::string_view new_password) {
  auto row = characters_.Load(character_name);
  if (!row.ok()) return row.status();
  auto account = accounts_.LoadById(row->account_id);
  if (!account.ok()) return account.status();
  TELOS_RETURN_IF_ERROR(lockout_.Check(account->id, kPasswordCommandAddress));
  // One ticket for both hashes: the player is logged in, so this is a login's kind of work.
  auto ticket = hashing_.Admit(HashWork::kLogin);
  if (!ticket.ok()) return ticket.status();
  if (!hasher_.Verify(account->password_hash, old_password)) {
    RecordFailure(*account, kPasswordCommandAddress);
    return Status::PermissionDenied("That is not your current password.");
  }
  lockout_.Forgive(account->id, kPasswordCommandAddress);
  TELOS_RETURN_IF_ERROR(ValidateNewPassword(new_password, account->name));
  auto hash = hasher_.Hash(new_password);
  if (!hash.ok()) return hash.status();
  return accounts_.SetPasswordHash(account->id, *hash);
}

}  // namespace telos::account
