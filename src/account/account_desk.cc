#include "telos/account/account_desk.h"

#include "telos/auth/documents.h"

namespace telos::account {

Result<bool> LocalAccountDesk::AccountExists(std::string_view name, std::string_view address) {
  return service_.AccountExists(name, address);
}

Result<AccountRef> LocalAccountDesk::CreateAccount(std::string_view name, std::string_view password,
                                                   std::string_view address) {
  auto account = service_.CreateAccount(name, password, address);
  if (!account.ok()) return account.status();
  return AccountRef{account->id, account->name};
}

Result<AccountRef> LocalAccountDesk::Authenticate(std::string_view name, std::string_view password,
                                                  std::string_view address) {
  auto account = service_.Authenticate(name, password, address);
  if (!account.ok()) return account.status();
  return AccountRef{account->id, account->name};
}

Result<std::vector<CharacterSummary>> LocalAccountDesk::Characters(int64_t account_id) {
  return service_.Characters(account_id);
}

Status LocalAccountDesk::CreateCharacter(int64_t account_id, std::string_view name,
                                         std::string_view zone_id, std::string_view room_id) {
  return service_.CreateCharacter(account_id, name, zone_id, room_id).status();
}

Result<CharacterClaim> LocalAccountDesk::ClaimCharacter(int64_t account_id, std::string_view name) {
  auto record = service_.CheckOwnership(account_id, name);
  if (!record.ok()) return record.status();
  CharacterClaim claim;
  claim.name = record->name;
  claim.account_id = record->account_id;
  claim.record = std::move(*record);
  return claim;
}

Status LocalAccountDesk::ChangePassword(std::string_view character_name,
                                        std::string_view old_password,
                                        std::string_view new_password) {
  return service_.ChangePassword(character_name, old_password, new_password);
}

Result<CharacterClaim> AssertingAccountDesk::ClaimCharacter(int64_t account_id,
                                                            std::string_view name) {
  auto claim = inner_.ClaimCharacter(account_id, name);
  if (!claim.ok()) return claim;
  CharacterClaim out;
  out.name = claim->name;
  out.account_id = claim->account_id;
  out.record.name = claim->name;
  out.record.account_id = claim->account_id;
  out.assertion =
      auth::IssueAssertion(key_, claim->account_id, claim->name, assertion_ttl_ms_, clock_);
  return out;
}

}  // namespace telos::account
