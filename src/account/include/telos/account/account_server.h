// AccountServer: the account service's gRPC face (telos.v1.Accounts, schema/proto/telos/v1/
// fleet.proto). Fleet gates call it on their login screens through RemoteAccountDesk.
//
// Every call is checked in the same order, on gRPC's callback thread and without blocking:
//   1. the caller token (rpc::CallerTokenMatches): PermissionDenied "caller token missing or
//      wrong" otherwise;
//   2. field sizes (the bounds below): InvalidArgument naming the field;
//   3. the in-flight bound (options.calls_in_flight_max): ResourceExhausted when exceeded, so a
//      flood of logins queues no unbounded hashing work.
// The call then runs on the BlockingRunner (password hashing, the stores) and is finished from
// there; gRPC's callback threads never block. Errors cross the wire with rpc::ToGrpc, so the
// client sees the exact telos code.
//
// Every call is answered by the desk (LocalAccountDesk), which owns the login rules: the login
// ticket Authenticate and CreateAccount return is what ListCharacters, CreateCharacter,
// ClaimCharacter and RenewAssertion take the account from (the request names no account), and
// the assertions it signs are bound to the gate named in the claim and short-lived. This
// server adds only the transport's checks above.
//
// Lifecycle: construct, Start() once, Stop() (also run by the destructor). Stop() waits for
// every call in flight, so the blocking runner must keep running tasks until Stop() returns.
// The desk, logger and metrics must outlive the server.
//
// Thread safety: Start() and Stop() from one thread (main); calls arrive on gRPC's threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "telos/account/account_desk.h"
#include "telos/base/blocking.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace telos::account {

// Bounds on what a caller may send. They are looser than the account rules (which give the
// player a precise reason); they only keep absurd requests away from the hashing and the stores.
inline constexpr size_t kRpcNameBytesMax = 64;        // account and character names
inline constexpr size_t kRpcPasswordBytesMax = 1024;  // passwords, old and new
inline constexpr size_t kRpcAddressBytesMax = 128;    // the player's network address
inline constexpr size_t kRpcGateIdBytesMax = limits::kSignedDocumentFieldBytesMax;
inline constexpr size_t kRpcZoneIdBytesMax = limits::kZoneIdBytesMax;
inline constexpr size_t kRpcRoomIdBytesMax = limits::kRoomIdBytesMax;

struct AccountServerOptions {
  // "host:port"; port 0 asks the kernel for a free one (Start() returns it).
  std::string listen_address = "127.0.0.1:7100";
  // The bearer token every caller must present; empty accepts every caller.
  std::string caller_token;
  // Calls accepted but not yet finished; more are refused with ResourceExhausted.
  size_t calls_in_flight_max = 256;
  // On Stop(), calls still running after this long are cancelled.
  int64_t shutdown_grace_ms = 2000;
};

class AccountServer {
 public:
  AccountServer(AccountServerOptions options, AccountDesk& desk, BlockingRunner blocking,
                Logger& log, Metrics& metrics);
  ~AccountServer();
  AccountServer(const AccountServer&) = delete;
  AccountServer& operator=(const AccountServer&) = delete;

  // Binds and starts serving. Returns the bound port; Unavailable naming the address when it
  // cannot listen there (in use, not local, malformed).
  // REQUIRES: called once.
  Result<uint16_t> Start();
  // Stops accepting calls, cancels those still running after shutdown_grace_ms, and waits for
  // every call in flight to finish. Idempotent.
  void Stop();

 private:
  class Service;
  const std::string listen_address_;
  const int64_t shutdown_grace_ms_;
  // Declared before server_: gRPC requires the service to outlive the server.
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  bool started_ = false;
};

}  // namespace telos::account
