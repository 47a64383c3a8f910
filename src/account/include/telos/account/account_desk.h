// AccountDesk: what the gate's login screens need from accounts, wherever they live.
//
// `telos serve` answers in-process (AssertingAccountDesk over LocalAccountDesk over
// AccountService and the SQLite stores); a fleet gate asks the account service over gRPC
// (RemoteAccountDesk). Either way what ClaimCharacter hands the gate is a signed assertion
// ("this account may play this character") that the world verifies offline before it claims
// and loads the character itself.
//
// Every method blocks (password hashing, stores, network): call it from a blocking pool.
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/account/account_service.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/store/character_record.h"

namespace telos::account {

struct AccountRef {
  int64_t id = 0;
  std::string name;
};

struct CharacterClaim {
  std::string name;  // display name
  int64_t account_id = 0;
  // From LocalAccountDesk, the row as it stands (ownership checked, nothing claimed); from a
  // desk that signs, only name and account_id.
  store::CharacterRecord record;
  // The serialized, signed assertion the world checks. Empty from LocalAccountDesk alone.
  std::string assertion;
};

class AccountDesk {
 public:
  virtual ~AccountDesk() = default;
  // `address` is the player's network address: every call that answers about a name or
  // hashes a password is throttled by it (AccountService explains how).
  virtual Result<bool> AccountExists(std::string_view name, std::string_view address) = 0;
  // Errors as AccountService::CreateAccount / Authenticate.
  virtual Result<AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                           std::string_view address) = 0;
  virtual Result<AccountRef> Authenticate(std::string_view name, std::string_view password,
                                          std::string_view address) = 0;
  virtual Result<std::vector<CharacterSummary>> Characters(int64_t account_id) = 0;
  // A new character standing in room `room_id` of `zone_id`; the account service makes its
  // first state (AccountService::CreateCharacter).
  virtual Status CreateCharacter(int64_t account_id, std::string_view name,
                                 std::string_view zone_id, std::string_view room_id) = 0;
  // PermissionDenied if the account does not own the character; NotFound if there is none.
  virtual Result<CharacterClaim> ClaimCharacter(int64_t account_id, std::string_view name) = 0;
  virtual Status ChangePassword(std::string_view character_name, std::string_view old_password,
                                std::string_view new_password) = 0;
};

// The in-process desk over an AccountService (serve, and the account service process itself).
// ClaimCharacter only checks ownership: the world that admits the character claims it (minting
// owner_epoch) itself. kVerifyOnly is the one mode left; the parameter stays while callers
// still name it.
enum class ClaimMode { kVerifyOnly };

class LocalAccountDesk final : public AccountDesk {
 public:
  explicit LocalAccountDesk(AccountService& service, ClaimMode /*mode*/ = ClaimMode::kVerifyOnly)
      : service_(service) {}
  Result<bool> AccountExists(std::string_view name, std::string_view address) override;
  Result<AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                   std::string_view address) override;
  Result<AccountRef> Authenticate(std::string_view name, std::string_view password,
                                  std::string_view address) override;
  Result<std::vector<CharacterSummary>> Characters(int64_t account_id) override;
  Status CreateCharacter(int64_t account_id, std::string_view name, std::string_view zone_id,
                         std::string_view room_id) override;
  Result<CharacterClaim> ClaimCharacter(int64_t account_id, std::string_view name) override;
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password) override;

 private:
  AccountService& service_;
};

// Wraps a desk whose claims carry no assertion (LocalAccountDesk) and hands out signed
// assertions instead, as the account service does: `telos serve` talks to its world the way any
// gate does.
class AssertingAccountDesk final : public AccountDesk {
 public:
  AssertingAccountDesk(AccountDesk& inner, const auth::SigningKey& key, int64_t assertion_ttl_ms,
                       const Clock& clock)
      : inner_(inner), key_(key), assertion_ttl_ms_(assertion_ttl_ms), clock_(clock) {}
  Result<bool> AccountExists(std::string_view name, std::string_view address) override {
    return inner_.AccountExists(name, address);
  }
  Result<AccountRef> CreateAccount(std::string_view name, std::string_view password,
                                   std::string_view address) override {
    return inner_.CreateAccount(name, password, address);
  }
  Result<AccountRef> Authenticate(std::string_view name, std::string_view password,
                                  std::string_view address) override {
    return inner_.Authenticate(name, password, address);
  }
  Result<std::vector<CharacterSummary>> Characters(int64_t account_id) override {
    return inner_.Characters(account_id);
  }
  Status CreateCharacter(int64_t account_id, std::string_view name, std::string_view zone_id,
                         std::string_view room_id) override {
    return inner_.CreateCharacter(account_id, name, zone_id, room_id);
  }
  Result<CharacterClaim> ClaimCharacter(int64_t account_id, std::string_view name) override;
  Status ChangePassword(std::string_view character_name, std::string_view old_password,
                        std::string_view new_password) override {
    return inner_.ChangePassword(character_name, old_password, new_password);
  }

 private:
  AccountDesk& inner_;
  const auth::SigningKey& key_;
  const int64_t assertion_ttl_ms_;
  const Clock& clock_;
};

}  // namespace telos::account
