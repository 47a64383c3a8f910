// Channel and server settings every role shares: keepalives short enough that a dead peer is
// noticed within seconds (DESIGN.md section 5), bounded message sizes, and the caller tokens
// with which a process proves its role to a server: gates to the account service and to the
// worlds (Play), worlds to their peers (Handoff, Adopt, Describe).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

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
// Sets only the caller token (if any): for a stream, which has no deadline.
void AddCallerToken(grpc::ClientContext& context, const std::string& caller_token);

// True when the call carries `expected` as its bearer token (constant-time compare). An empty
// `expected` accepts every caller.
bool CallerTokenMatches(const grpc::ServerContextBase& context, const std::string& expected);

// Whether a call may use a method that requires the token `expected`, as the status to finish
// it with: OK when it carries `expected` (or `expected` is empty: every caller is accepted);
// PERMISSION_DENIED when it carries one of `other_roles` instead (a genuine caller of another
// method, e.g. a gate's token on a world-to-world call); UNAUTHENTICATED otherwise (no token,
// or one nobody was given). Every comparison is constant-time; empty `other_roles` are skipped.
// The status never contains a token.
grpc::Status AuthorizeCaller(const grpc::ServerContextBase& context, const std::string& expected,
                             std::initializer_list<std::string_view> other_roles);

}  // namespace telos::rpc
