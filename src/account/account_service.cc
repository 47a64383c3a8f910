#include "telos/account/account_service.h"

#include <algorithm>

#include "telos/account/names.h"
#include "telos/base/limits.h"

namespace telos::account {
namespace {
constexpr std::string_view kWrongCredentials = "Wrong account name or password.";
}  // namespace

AccountService::AccountService(store::AccountStore& accounts, store::CharacterStore& characters,
                               const PasswordHasher& hasher, AddressThrottle& throttle,
                               const Clock& clock, Logger& log, Metrics& metrics)
    : accounts_(accounts),
      characters_(characters),
      hasher_(hasher),
      throttle_(throttle),
      clock_(clock),
      log_(log),
      logins_ok_(metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "ok"}})),
      logins_failed_(
          metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "wrong_password"}})),
      logins_throttled_(
          metrics.Counter("logins_total", "Logins by outcome", {{"outcome", "throttled"}})),
      accounts_created_(metrics.Counter("accounts_created_total", "Accounts created")),
      characters_created_(metrics.Counter("characters_created_total", "Characters created")) {}

int64_t AccountService::NowUnixMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
      .count();
}

Result<bool> AccountService::AccountExists(std::string_view name) {
  auto account = accounts_.Load(name);
  if (account.ok()) return true;
  if (account.status().code() == StatusCode::kNotFound) return false;
  return account.status();
}

Result<store::AccountRecord> AccountService::CreateAccount(std::string_view name,
                                                           std::string_view password) {
  TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
  TELOS_RETURN_IF_ERROR(ValidateNewPassword(password, name));
  auto hash = hasher_.Hash(password);
  if (!hash.ok()) return hash.status();
  auto created = accounts_.Create(name, *hash);
  if (created.ok()) {
    accounts_created_.Increment();
    log_.Info("account created", {{"account", created->name}});
  }
  return created;
}

Status AccountService::CheckLock(const store::AccountRecord& account) const {
  const int64_t now_ms = NowUnixMs();
  if (account.locked_until_ms <= now_ms) return Status::Ok();
  const int64_t wait_s = (account.locked_until_ms - now_ms + 999) / 1000;  // rounded up
  return Status::ResourceExhausted("Too many failed logins for this account; try again in " +
                                   std::to_string(wait_s) + " seconds.");
}

void AccountService::RecordFailure(const store::AccountRecord& account) {
  auto failures = accounts_.RecordLoginFailure(account.id);
  if (!failures.ok() || *failures < limits::kLoginFailuresBeforeAccountLock) return;
  // Each failure past the threshold doubles the lock, up to the cap.
  const int64_t extra = std::min<int64_t>(*failures - limits::kLoginFailuresBeforeAccountLock, 20);
  const int64_t lock_ms = std::min(limits::kAccountLockBaseMs << extra, limits::kAccountLockMaxMs);
  if (accounts_.LockUntil(account.id, NowUnixMs() + lock_ms).ok()) {
    log_.Warn("account locked after failed logins",
              {{"account", account.name}, {"failures", *failures}, {"lock_ms", lock_ms}});
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
  if (Status s = CheckLock(*account); !s.ok()) {
    logins_throttled_.Increment();
    return s;
  }
  if (!hasher_.Verify(account->password_hash, password)) {
    throttle_.RecordFailure(address);
    RecordFailure(*account);
    logins_failed_.Increment();
    return Status::PermissionDenied(std::string(kWrongCredentials));
  }
  TELOS_RETURN_IF_ERROR(accounts_.RecordLoginSuccess(account->id));
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
                                                               std::string_view state_json,
                                                               std::string_view zone_id,
                                                               std::string_view room_id) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  store::CharacterRecord record;
  record.name = DisplayCharacterName(name);
  record.account_id = account_id;
  record.zone_id = std::string(zone_id);
  record.room_id = std::string(room_id);
  record.state_json = std::string(state_json);
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

Status AccountService::ChangePassword(std::string_view character_name,
                                      std::string_view old_password,
                                      std::string_view new_password) {
  auto row = characters_.Load(character_name);
  if (!row.ok()) return row.status();
  auto account = accounts_.LoadById(row->account_id);
  if (!account.ok()) return account.status();
  if (!hasher_.Verify(account->password_hash, old_password)) {
    RecordFailure(*account);
    return Status::PermissionDenied("That is not your current password.");
  }
  TELOS_RETURN_IF_ERROR(ValidateNewPassword(new_password, account->name));
  auto hash = hasher_.Hash(new_password);
  if (!hash.ok()) return hash.status();
  return accounts_.SetPasswordHash(account->id, *hash);
}

}  // namespace telos::account
