// RemoteAccountDesk: the AccountDesk a fleet gate uses, a blocking gRPC client of the account
// service (AccountServer, telos.v1.Accounts).
//
// Each call carries the caller token and a deadline: call_deadline_ms, or
// hashing_call_deadline_ms for the calls that hash a password (CreateAccount, Authenticate,
// ChangePassword). The service's errors arrive with their exact telos code (rpc::FromGrpc). A
// transport failure (the service is down, unreachable, or did not answer before the deadline)
// is Unavailable "account service unreachable: ..."; for a write (CreateAccount,
// CreateCharacter, ClaimCharacter) that may still have been applied, so a retry can meet
// AlreadyExists.
//
// ClaimCharacter and RenewAssertion return a CharacterClaim whose `assertion` is the service's
// signed assertion and whose `record` holds only name and account_id: the world loads the
// character itself. The login ticket travels in each request; the service takes the account
// from it.
//
// Every method blocks (network): call it from a blocking pool. Thread-safe (one channel, shared
// by every call; it reconnects by itself after the service restarts).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "telos/account/account_desk.h"
#include "telos/base/status.h"

namespace telos::account {

struct RemoteAccountDeskOptions {
  std::string target = "127.0.0.1:7100";  // the account service, "host:port"
  std::string caller_token;               // empty sends none
  int64_t call_deadline_ms = 5'000;
  int64_t hashing_call_deadline_ms = 10'000;
};

class RemoteAccountDesk final : public AccountDesk {
 public:
  // Connects lazily: constructing never blocks and never fails.
  explicit RemoteAccountDesk(RemoteAccountDeskOptions options);
  ~RemoteAccountDesk() override;
  RemoteAccountDesk(const RemoteAccountDesk&) = delete;
  RemoteAccountDesk& operator=(const RemoteAccountDesk&) = delete;

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

 private:
  class Client;
  std::unique_ptr<Client> client_;
};

}  // namespace telos::account
