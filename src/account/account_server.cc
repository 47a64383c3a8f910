#include "telos/account/account_server.h"

#include <grpcpp/grpcpp.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string_view>
#include <utility>

#include "telos/auth/documents.h"
#include "telos/rpc/channels.h"
#include "telos/rpc/status_mapping.h"
#include "telos/v1/fleet.grpc.pb.h"

namespace telos::account {
namespace {

enum class Method : size_t {
  kAccountExists,
  kCreateAccount,
  kAuthenticate,
  kListCharacters,
  kCreateCharacter,
  kClaimCharacter,
  kRenewAssertion,
  kChangePassword,
};
constexpr size_t kMethodCount = 8;
constexpr std::array<const char*, kMethodCount> kMethodNames = {
    "AccountExists",   "CreateAccount",  "Authenticate",   "ListCharacters",
    "CreateCharacter", "ClaimCharacter", "RenewAssertion", "ChangePassword"};

Status CheckSize(std::string_view field, const std::string& value, size_t bytes_max) {
  if (value.size() <= bytes_max) return Status();
  return Status::InvalidArgument(std::string(field) + ": longer than " + std::to_string(bytes_max) +
                                 " bytes");
}

// The first failed check, or OK.
Status FirstError(std::initializer_list<Status> checks) {
  for (const Status& s : checks) {
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace

class AccountServer::Service final : public v1::Accounts::CallbackService {
 public:
  Service(AccountServerOptions options, AccountDesk& desk, BlockingRunner blocking, Logger& log,
          Metrics& metrics)
      : options_(std::move(options)), desk_(desk), blocking_(std::move(blocking)), log_(log) {
    for (size_t i = 0; i < kMethodCount; ++i) {
      calls_[i] =
          &metrics.Counter("account_rpc_calls_total", "Calls to the account service, by method",
                           {{"method", kMethodNames[i]}});
      errors_[i] = &metrics.Counter("account_rpc_errors_total",
                                    "Calls to the account service that ended in an error",
                                    {{"method", kMethodNames[i]}});
    }
  }

  // Blocks until no call is in flight (every reactor has been finished).
  void WaitIdle() {
    std::unique_lock lock(mu_);
    idle_cv_.wait(lock, [this] { return in_flight_ == 0; });
  }

  grpc::ServerUnaryReactor* AccountExists(grpc::CallbackServerContext* context,
                                          const v1::AccountName* request,
                                          v1::AccountExistsReply* reply) override {
    const Status valid =
        FirstError({CheckSize("name", request->name(), kRpcNameBytesMax),
                    CheckSize("address", request->address(), kRpcAddressBytesMax)});
    return Dispatch(context, Method::kAccountExists, valid, [this, request, reply]() -> Status {
      auto exists = desk_.AccountExists(request->name(), request->address());
      if (!exists.ok()) return exists.status();
      reply->set_exists(*exists);
      return Status();
    });
  }

  grpc::ServerUnaryReactor* CreateAccount(grpc::CallbackServerContext* context,
                                          const v1::Credentials* request,
                                          v1::AccountReply* reply) override {
    return Dispatch(context, Method::kCreateAccount, CheckCredentials(*request),
                    [this, request, reply]() -> Status {
                      auto account = desk_.CreateAccount(request->name(), request->password(),
                                                         request->address());
                      if (!account.ok()) return account.status();
                      reply->set_account_id(account->id);
                      reply->set_name(account->name);
                      reply->set_ticket(account->ticket);
                      return Status();
                    });
  }

  grpc::ServerUnaryReactor* Authenticate(grpc::CallbackServerContext* context,
                                         const v1::Credentials* request,
                                         v1::AccountReply* reply) override {
    return Dispatch(context, Method::kAuthenticate, CheckCredentials(*request),
                    [this, request, reply]() -> Status {
                      auto account = desk_.Authenticate(request->name(), request->password(),
                                                        request->address());
                      if (!account.ok()) return account.status();
                      reply->set_account_id(account->id);
                      reply->set_name(account->name);
                      reply->set_ticket(account->ticket);
                      return Status();
                    });
  }

  grpc::ServerUnaryReactor* ListCharacters(grpc::CallbackServerContext* context,
                                           const v1::AccountRef* request,
                                           v1::CharacterList* reply) override {
    return Dispatch(context, Method::kListCharacters,
                    CheckSize("ticket", request->ticket(), limits::kLoginTicketBytesMax),
                    [this, request, reply]() -> Status {
                      auto characters = desk_.Characters(request->ticket());
                      if (!characters.ok()) return characters.status();
                      for (const CharacterSummary& c : *characters) {
                        v1::CharacterSummary* out = reply->add_characters();
                        out->set_name(c.name);
                        out->set_zone_id(c.zone_id);
                        out->set_updated_at_ms(c.updated_at_ms);
                      }
                      return Status();
                    });
  }

  grpc::ServerUnaryReactor* CreateCharacter(grpc::CallbackServerContext* context,
                                            const v1::NewCharacter* request,
                                            v1::Empty* /*reply*/) override {
    // The service makes a new character's state itself (AccountService::CreateCharacter).
    const Status valid =
        FirstError({CheckSize("ticket", request->ticket(), limits::kLoginTicketBytesMax),
                    CheckSize("name", request->name(), kRpcNameBytesMax),
                    CheckSize("zone_id", request->zone_id(), kRpcZoneIdBytesMax),
                    CheckSize("room_id", request->room_id(), kRpcRoomIdBytesMax)});
    return Dispatch(context, Method::kCreateCharacter, valid, [this, request]() -> Status {
      return desk_.CreateCharacter(request->ticket(), request->name(), request->zone_id(),
                                   request->room_id());
    });
  }

  grpc::ServerUnaryReactor* ClaimCharacter(grpc::CallbackServerContext* context,
                                           const v1::ClaimRequest* request,
                                           v1::ClaimReply* reply) override {
    const Status valid =
        FirstError({CheckSize("ticket", request->ticket(), limits::kLoginTicketBytesMax),
                    CheckSize("name", request->name(), kRpcNameBytesMax),
                    CheckSize("gate_id", request->gate_id(), kRpcGateIdBytesMax)});
    return Dispatch(context, Method::kClaimCharacter, valid, [this, request, reply]() -> Status {
      auto claim = desk_.ClaimCharacter(request->ticket(), request->name(), request->gate_id());
      if (!claim.ok()) return claim.status();
      FillClaim(*claim, *reply);
      return Status();
    });
  }

  grpc::ServerUnaryReactor* RenewAssertion(grpc::CallbackServerContext* context,
                                           const v1::RenewRequest* request,
                                           v1::ClaimReply* reply) override {
    const Status valid = FirstError(
        {CheckSize("ticket", request->ticket(), limits::kLoginTicketBytesMax),
         CheckSize("assertion", request->assertion(), limits::kSnapshotAssertionBytesMax)});
    return Dispatch(context, Method::kRenewAssertion, valid, [this, request, reply]() -> Status {
      auto claim = desk_.RenewAssertion(request->ticket(), request->assertion());
      if (!claim.ok()) return claim.status();
      FillClaim(*claim, *reply);
      return Status();
    });
  }

  grpc::ServerUnaryReactor* ChangePassword(grpc::CallbackServerContext* context,
                                           const v1::PasswordChange* request,
                                           v1::Empty* /*reply*/) override {
    const Status valid =
        FirstError({CheckSize("character", request->character(), kRpcNameBytesMax),
                    CheckSize("old_password", request->old_password(), kRpcPasswordBytesMax),
                    CheckSize("new_password", request->new_password(), kRpcPasswordBytesMax)});
    return Dispatch(context, Method::kChangePassword, valid, [this, request]() -> Status {
      return desk_.ChangePassword(request->character(), request->old_password(),
                                  request->new_password());
    });
  }

 private:
  static void FillClaim(CharacterClaim& claim, v1::ClaimReply& reply) {
    reply.set_name(claim.name);
    reply.set_account_id(claim.account_id);
    reply.set_assertion(std::move(claim.assertion));
    reply.set_assertion_expires_unix_ms(claim.assertion_expires_unix_ms);
  }

  static Status CheckCredentials(const v1::Credentials& request) {
    return FirstError({CheckSize("name", request.name(), kRpcNameBytesMax),
                       CheckSize("password", request.password(), kRpcPasswordBytesMax),
                       CheckSize("address", request.address(), kRpcAddressBytesMax)});
  }

  // Runs the cheap checks here, on gRPC's thread, then hands `work` to the blocking runner,
  // which finishes the call. `work` may touch the request and reply: both live until the
  // reactor is finished.
  grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* context, Method method,
                                     Status valid, std::function<Status()> work) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    calls_[static_cast<size_t>(method)]->Increment();
    if (!rpc::CallerTokenMatches(*context, options_.caller_token)) {
      log_.Warn("caller refused: caller token missing or wrong",
                {{"method", kMethodNames[static_cast<size_t>(method)]}, {"peer", context->peer()}});
      Finish(reactor, method, Status::PermissionDenied("caller token missing or wrong"));
      return reactor;
    }
    if (!valid.ok()) {
      Finish(reactor, method, valid);
      return reactor;
    }
    bool admitted = false;
    {
      std::lock_guard lock(mu_);
      admitted = in_flight_ < options_.calls_in_flight_max;
      if (admitted) ++in_flight_;
    }
    if (!admitted) {
      // The gate shows this sentence to the player as it is.
      Finish(
          reactor, method,
          Status::ResourceExhausted("The account service is busy; please try again in a moment."));
      return reactor;
    }
    blocking_([this, context, reactor, method, work = std::move(work)] {
      // A caller that gave up (deadline, disconnect) gets no hashing done on its behalf.
      const Status status =
          context->IsCancelled() ? Status::Cancelled("the caller cancelled the call") : work();
      Finish(reactor, method, status);
      std::lock_guard lock(mu_);
      if (--in_flight_ == 0) idle_cv_.notify_all();
    });
    return reactor;
  }

  void Finish(grpc::ServerUnaryReactor* reactor, Method method, const Status& status) {
    if (!status.ok()) {
      errors_[static_cast<size_t>(method)]->Increment();
      if (status.code() == StatusCode::kInternal || status.code() == StatusCode::kUnavailable ||
          status.code() == StatusCode::kUnknownResult) {
        log_.Error("account call failed", {{"method", kMethodNames[static_cast<size_t>(method)]},
                                           {"error", status.ToString()}});
      }
    }
    reactor->Finish(rpc::ToGrpc(status));
  }

  const AccountServerOptions options_;
  AccountDesk& desk_;
  const BlockingRunner blocking_;
  Logger& log_;
  std::array<prometheus::Counter*, kMethodCount> calls_{};
  std::array<prometheus::Counter*, kMethodCount> errors_{};

  std::mutex mu_;
  std::condition_variable idle_cv_;
  size_t in_flight_ = 0;  // guarded by mu_
};

AccountServer::AccountServer(AccountServerOptions options, AccountDesk& desk,
                             BlockingRunner blocking, Logger& log, Metrics& metrics)
    : listen_address_(options.listen_address),
      shutdown_grace_ms_(options.shutdown_grace_ms),
      service_(
          std::make_unique<Service>(std::move(options), desk, std::move(blocking), log, metrics)) {}

AccountServer::~AccountServer() {
  Stop();
}

Result<uint16_t> AccountServer::Start() {
  RELEASE_ASSERT(!started_, "AccountServer::Start called twice");
  started_ = true;
  grpc::ServerBuilder builder;
  rpc::ConfigureServer(builder);
  // gRPC sets SO_REUSEPORT by default, which would let a second server share a busy port
  // silently; a port in use must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int selected_port = 0;
  builder.AddListeningPort(listen_address_, grpc::InsecureServerCredentials(), &selected_port);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || selected_port <= 0) {
    if (server_ != nullptr) {
      server_->Shutdown();
      server_->Wait();
      server_.reset();
    }
    return Status::Unavailable("account service cannot listen on " + listen_address_ +
                               " (address in use, not local, or malformed)");
  }
  return static_cast<uint16_t>(selected_port);
}

void AccountServer::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(shutdown_grace_ms_));
  server_->Wait();
  service_->WaitIdle();
  server_.reset();
}

}  // namespace telos::account
