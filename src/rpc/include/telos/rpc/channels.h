// Channel and server settings every role shares: keepalives short enough that a dead peer is
// noticed within seconds (DESIGN.md section 5), bounded message sizes, and the caller token
// that gates use to prove themselves to the account service.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

namespace telos::rpc {

// Bytes; larger messages are refused by both ends.
inline constexpr int kMessageBytesMax = 4 * 1024 * 1024;
// A ping every 2 s with no traffic; a peer silent 3 s after a ping is dead.
inline constexpr int kKeepaliveTimeMs = 2000;
inline constexpr int kKeepaliveTimeoutMs = 3000;

// Metadata key carrying the shared caller token ("authorization: Bearer <token>").
inline constexpr const char* kAuthorizationHeader = "authorization";

// An insecure (loopback or private network) channel to `target` ("host:port") with keepalives.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target);

// Applies the matching server-side settings: accept the client's pings, same message bound.
void ConfigureServer(grpc::ServerBuilder& builder);

// Sets a deadline and the caller token (if any) on a client call.
void PrepareCall(grpc::ClientContext& context, std::chrono::milliseconds deadline,
                 const std::string& caller_token);

// True when the call carries `expected` as its bearer token (constant-time compare). An empty
// `expected` accepts every caller.
bool CallerTokenMatches(const grpc::ServerContextBase& context, const std::string& expected);

}  // namespace telos::rpc
