#include "telos/account/account_desk.h"

#include "telos/auth/documents.h"

namespace telos::account {

LocalAccountDesk::LocalAccountDesk(AccountService& service, const auth::SigningKey& key,
                                   const Clock& clock, LocalAccountDeskOptions options)
    : service_(service),
      key_(key),
      clock_(clock),
      options_(options),
      tickets_(clock, options.ticket_idle_ms, options.tickets_max) {}

Result<bool> LocalAccountDesk::AccountExists(std::string_view name, std::string_view address) {
  return service_.AccountExists(name, address);
}

Result<AccountRef> LocalAccountDesk::CreateAccount(std::string_view name, std::string_view password,
                                                   std::string_view address) {
  auto account = service_.CreateAccount(name, password, address);
  if (!account.ok()) return account.status();
  return AccountRef{account->id, account->name, tickets_.Issue(account->id)};
}

Result<AccountRef> LocalAccountDesk::Authenticate(std::string_view name, std::string_view password,
                                                  std::string_view address) {
  auto account = service_.Authenticate(name, password, address);
  if (!account.ok()) return account.status();
  return AccountRef{account->id, account->name, tickets_.Issue(account->id)};
}

Result<std::vector<CharacterSummary>> LocalAccountDesk::Characters(std::string_view ticket) {
  auto account_id = tickets_.Redeem(ticket);
  if (!account_id.ok()) return account_id.status();
  return service_.Characters(*account_id);
}

Status LocalAccountDesk::CreateCharacter(std::string_view ticket, std::string_view name,
                                         std::string_view zone_id, std::string_view room_id) {
  auto account_id = tickets_.Redeem(ticket);
  if (!account_id.ok()) return account_id.status();
  return service_.CreateCharacter(*account_id, name, zone_id, room_id).status();
}

Result<CharacterClaim> LocalAccountDesk::ClaimCharacter(std::string_view ticket,
                                                        std::string_view name,
                                                        std::string_view gate_id) {
  if (gate_id.empty()) return Status::InvalidArgument("a claim names the gate it is for");
  auto account_id = tickets_.Redeem(ticket);
  if (!account_id.ok()) return account_id.status();
  auto record = service_.CheckOwnership(*account_id, name);
  if (!record.ok()) return record.status();
  auto roles = service_.RolesOf(*account_id);
  if (!roles.ok()) return roles.status();
  CharacterClaim claim;
  claim.name = record->name;
  claim.account_id = record->account_id;
  claim.record = std::move(*record);
  claim.assertion = auth::IssueAssertion(key_, claim.account_id, claim.name, std::string(gate_id),
                                         options_.assertion_ttl_ms, clock_, *roles);
  // Read back rather than recomputed, so the expiry the gate schedules by is the signed one.
  auto issued = auth::VerifyAssertion(key_.verify_key(), claim.assertion, clock_);
  if (!issued.ok()) return Status::Internal("a fresh assertion does not verify");
  claim.assertion_expires_unix_ms = issued->expires_unix_ms;
  tickets_.BindSession(ticket, issued->nonce);
  return claim;
}

Result<CharacterClaim> LocalAccountDesk::RenewAssertion(std::string_view ticket,
                                                        std::string_view assertion) {
  // Every refusal here is of the session's own credentials (the assertion it presents, the
  // ticket that claimed it): LoginExpired, whatever the wording.
  auto current = auth::VerifyAssertion(key_.verify_key(), std::string(assertion), clock_);
  if (!current.ok()) return Status::LoginExpired(current.status().message());
  auto account_id = tickets_.RedeemForSession(ticket, current->nonce);
  if (!account_id.ok()) return account_id.status();
  if (*account_id != current->account_id) {
    return Status::LoginExpired(std::string(kTicketRefusedMessage));
  }
  // The roles are read again, so the assertion the gate holds carries a grant or revoke made
  // since the login (a world takes roles from the assertion a character enters on).
  auto roles = service_.RolesOf(current->account_id);
  if (!roles.ok()) return roles.status();
  current->roles = *roles;
  CharacterClaim claim;
  claim.name = current->character;
  claim.account_id = current->account_id;
  claim.record.name = current->character;
  claim.record.account_id = current->account_id;
  claim.assertion = auth::RenewAssertion(key_, *current, options_.assertion_ttl_ms, clock_);
  auto renewed = auth::VerifyAssertion(key_.verify_key(), claim.assertion, clock_);
  if (!renewed.ok()) return Status::Internal("a renewed assertion does not verify");
  claim.assertion_expires_unix_ms = renewed->expires_unix_ms;
  return claim;
}

Status LocalAccountDesk::ChangePassword(std::string_view character_name,
                                        std::string_view old_password,
                                        std::string_view new_password) {
  TELOS_RETURN_IF_ERROR(service_.ChangePassword(character_name, old_password, new_password));
  // A changed password ends what the old one opened: every login ticket of the account goes,
  // so no session renews its assertion and no gate claims with them (the player logs in again
  // when a ticket is next needed).
  auto account = service_.AccountOfCharacter(character_name);
  if (account.ok()) tickets_.RevokeAccount(*account);
  return Status::Ok();
}

}  // namespace telos::account
