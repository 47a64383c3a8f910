#include "telos/account/remote_account_desk.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <utility>

#include "telos/rpc/channels.h"
#include "telos/rpc/status_mapping.h"
#include "telos/v1/fleet.grpc.pb.h"

namespace telos::account {

class RemoteAccountDesk::Client {
 public:
  explicit Client(RemoteAccountDeskOptions options)
      : options_(std::move(options)),
        stub_(v1::Accounts::NewStub(rpc::MakeChannel(options_.target))) {}

  v1::Accounts::Stub& stub() { return *stub_; }

  // A context for one call, with its deadline and the caller token.
  void Prepare(grpc::ClientContext& context, bool hashes_password) const {
    const int64_t deadline_ms =
        hashes_password ? options_.hashing_call_deadline_ms : options_.call_deadline_ms;
    rpc::PrepareCall(context, std::chrono::milliseconds(deadline_ms), options_.caller_token);
  }

 private:
  const RemoteAccountDeskOptions options_;
  const std::unique_ptr<v1::Accounts::Stub> stub_;
};

namespace {

// The service's own errors carry their telos code in the details (rpc::ToGrpc); a status
// without details on UNAVAILABLE or DEADLINE_EXCEEDED came from the transport.
Status FromCall(const grpc::Status& status) {
  if (status.ok()) return Status();
  const bool transport = status.error_details().empty() &&
                         (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                          status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  if (transport) {
    return Status::Unavailable("account service unreachable: " + status.error_message());
  }
  return rpc::FromGrpc(status);
}

}  // namespace

RemoteAccountDesk::RemoteAccountDesk(RemoteAccountDeskOptions options)
    : client_(std::make_unique<Client>(std::move(options))) {}

RemoteAccountDesk::~RemoteAccountDesk() = default;

Result<bool> RemoteAccountDesk::AccountExists(std::string_view name, std::string_view address) {
  grpc::ClientContext context;
  client_->Prepare(context, false);
  v1::AccountName request;
  request.set_name(std::string(name));
  request.set_address(std::string(address));
  v1::AccountExistsReply reply;
  const Status s = FromCall(client_->stub().AccountExists(&context, request, &reply));
  if (!s.ok()) return s;
  return reply.exists();
}

Result<AccountRef> RemoteAccountDesk::CreateAccount(std::string_view name,
                                                    std::string_view password,
                                                    std::string_view address) {
  grpc::ClientContext context;
  client_->Prepare(context, true);
  v1::Credentials request;
  request.set_name(std::string(name));
  request.set_password(std::string(password));
  request.set_address(std::string(address));
  v1::AccountReply reply;
  const Status s = FromCall(client_->stub().CreateAccount(&context, request, &reply));
  if (!s.ok()) return s;
  return AccountRef{reply.account_id(), reply.name(), std::move(*reply.mutable_ticket())};
}

Result<AccountRef> RemoteAccountDesk::Authenticate(std::string_view name, std::string_view password,
                                                   std::string_view address) {
  grpc::ClientContext context;
  client_->Prepare(context, true);
  v1::Credentials request;
  request.set_name(std::string(name));
  request.set_password(std::string(password));
  request.set_address(std::string(address));
  v1::AccountReply reply;
  const Status s = FromCall(client_->stub().Authenticate(&context, request, &reply));
  if (!s.ok()) return s;
  return AccountRef{reply.account_id(), reply.name(), std::move(*reply.mutable_ticket())};
}

Result<std::vector<CharacterSummary>> RemoteAccountDesk::Characters(std::string_view ticket) {
  grpc::ClientContext context;
  client_->Prepare(context, false);
  v1::AccountRef request;
  request.set_ticket(std::string(ticket));
  v1::CharacterList reply;
  const Status s = FromCall(client_->stub().ListCharacters(&context, request, &reply));
  if (!s.ok()) return s;
  std::vector<CharacterSummary> out;
  out.reserve(static_cast<size_t>(reply.characters_size()));
  for (const v1::CharacterSummary& c : reply.characters()) {
    out.push_back(CharacterSummary{c.name(), c.zone_id(), c.updated_at_ms()});
  }
  return out;
}

Status RemoteAccountDesk::CreateCharacter(std::string_view ticket, std::string_view name,
                                          std::string_view zone_id, std::string_view room_id) {
  grpc::ClientContext context;
  client_->Prepare(context, false);
  v1::NewCharacter request;
  request.set_ticket(std::string(ticket));
  request.set_name(std::string(name));
  request.set_zone_id(std::string(zone_id));
  request.set_room_id(std::string(room_id));
  v1::Empty reply;
  return FromCall(client_->stub().CreateCharacter(&context, request, &reply));
}

namespace {

CharacterClaim ClaimFrom(v1::ClaimReply& reply) {
  CharacterClaim claim;
  claim.name = reply.name();
  claim.account_id = reply.account_id();
  claim.record.name = reply.name();
  claim.record.account_id = reply.account_id();
  claim.assertion = std::move(*reply.mutable_assertion());
  claim.assertion_expires_unix_ms = reply.assertion_expires_unix_ms();
  return claim;
}

}  // namespace

Result<CharacterClaim> RemoteAccountDesk::ClaimCharacter(std::string_view ticket,
                                                         std::string_view name,
                                                         std::string_view gate_id) {
  grpc::ClientContext context;
  client_->Prepare(context, false);
  v1::ClaimRequest request;
  request.set_ticket(std::string(ticket));
  request.set_name(std::string(name));
  request.set_gate_id(std::string(gate_id));
  v1::ClaimReply reply;
  const Status s = FromCall(client_->stub().ClaimCharacter(&context, request, &reply));
  if (!s.ok()) return s;
  return ClaimFrom(reply);
}

Result<CharacterClaim> RemoteAccountDesk::RenewAssertion(std::string_view ticket,
                                                         std::string_view assertion) {
  grpc::ClientContext context;
  client_->Prepare(context, false);
  v1::RenewRequest request;
  request.set_ticket(std::string(ticket));
  request.set_assertion(std::string(assertion));
  v1::ClaimReply reply;
  const Status s = FromCall(client_->stub().RenewAssertion(&context, request, &reply));
  if (!s.ok()) return s;
  return ClaimFrom(reply);
}

Status RemoteAccountDesk::ChangePassword(std::string_view character_name,
                                         std::string_view old_password,
                                         std::string_view new_password) {
  grpc::ClientContext context;
  client_->Prepare(context, true);
  v1::PasswordChange request;
  request.set_character(std::string(character_name));
  request.set_old_password(std::string(old_password));
  request.set_new_password(std::string(new_password));
  v1::Empty reply;
  return FromCall(client_->stub().ChangePassword(&context, request, &reply));
}

}  // namespace telos::account
