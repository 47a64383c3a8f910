#include "telos/rpc/channels.h"

#include <sodium.h>

#include <optional>

namespace telos::rpc {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Reconnect quickly after a peer restarts (the default backoff grows to two minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetMaxReceiveMessageSize(kMessageBytesMax);
  args.SetMaxSendMessageSize(kMessageBytesMax);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

void ConfigureServer(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kKeepaliveTimeMs / 2);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.SetMaxReceiveMessageSize(kMessageBytesMax);
  builder.SetMaxSendMessageSize(kMessageBytesMax);
}

void PrepareCall(grpc::ClientContext& context, std::chrono::milliseconds deadline,
                 const std::string& caller_token) {
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  AddCallerToken(context, caller_token);
}

void AddCallerToken(grpc::ClientContext& context, const std::string& caller_token) {
  if (!caller_token.empty()) context.AddMetadata(kAuthorizationHeader, "Bearer " + caller_token);
}

namespace {

// The bearer token a call carries, if any.
std::optional<std::string_view> BearerOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorizationHeader);
  if (it == metadata.end()) return std::nullopt;
  const std::string_view header(it->second.data(), it->second.size());
  constexpr std::string_view kBearer = "Bearer ";
  if (!header.starts_with(kBearer)) return std::nullopt;
  return header.substr(kBearer.size());
}

// Constant-time in the contents (the lengths of tokens are not secret).
bool SameToken(std::string_view got, std::string_view want) {
  if (got.size() != want.size()) return false;
  return sodium_memcmp(got.data(), want.data(), want.size()) == 0;
}

}  // namespace

bool CallerTokenMatches(const grpc::ServerContextBase& context, const std::string& expected) {
  if (expected.empty()) return true;
  const auto got = BearerOf(context);
  return got && SameToken(*got, expected);
}

grpc::Status AuthorizeCaller(const grpc::ServerContextBase& context, const std::string& expected,
                             std::initializer_list<std::string_view> other_roles) {
  if (expected.empty()) return grpc::Status::OK;
  const auto got = BearerOf(context);
  if (!got) return {grpc::StatusCode::UNAUTHENTICATED, "caller token missing"};
  if (SameToken(*got, expected)) return grpc::Status::OK;
  for (std::string_view other : other_roles) {
    if (!other.empty() && SameToken(*got, other)) {
      return {grpc::StatusCode::PERMISSION_DENIED, "caller token of another role"};
    }
  }
  return {grpc::StatusCode::UNAUTHENTICATED, "caller token wrong"};
}

}  // namespace telos::rpc
