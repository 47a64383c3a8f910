// `telos account`: the fleet's account service. It serves telos.v1.Accounts over gRPC
// (AccountServer) on TELOS_ACCOUNT_LISTEN for the gates, over PostgreSQL (TELOS_DATABASE_URL),
// and signs login assertions with the key in TELOS_SIGNING_KEY_FILE (`telos keygen`). Its HTTP
// port (TELOS_BIND:TELOS_HTTP_PORT) serves /api/health (503 while PostgreSQL does not answer);
// the admin listener (TELOS_ADMIN_BIND:TELOS_ADMIN_PORT, loopback) serves /metrics and
// /api/health.
#pragma once

#include <cstdint>
#include <string>

#include "role_common.h"
#include "telos/base/config.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::app {

struct AccountRoleSettings {
  std::string database_url;                       // TELOS_DATABASE_URL, required
  std::string listen_address = "127.0.0.1:7100";  // TELOS_ACCOUNT_LISTEN, gRPC "host:port"
  std::string signing_key_file;                   // TELOS_SIGNING_KEY_FILE, required
  // TELOS_CALLER_TOKEN: required unless allow_insecure, in which case empty accepts any caller.
  std::string caller_token;
  bool allow_insecure = false;  // TELOS_ALLOW_INSECURE
  // TELOS_ASSERTION_TTL_MS: how long a login assertion is good for; gates renew it at half that.
  int64_t assertion_ttl_ms = limits::kAssertionTtlMsDefault;
  std::string bind_address = "0.0.0.0";  // TELOS_BIND, for /api/health
  uint16_t http_port = 8090;
  // TELOS_ADMIN_BIND:TELOS_ADMIN_PORT: /metrics and /api/health for operators.
  net::AdminBind admin{.address = "127.0.0.1", .port = kAccountAdminPortDefault};
  int64_t blocking_threads = 4;
  int64_t password_memory_kib = 19 * 1024;
  int64_t password_passes = 2;
  AccountLimitSettings account_limits;  // ReadAccountLimits
};

// Reads every TELOS_* setting `account` uses; InvalidArgument names the bad or missing variable.
Result<AccountRoleSettings> ReadAccountRoleSettings(const Config& config);

// Runs until SIGINT/SIGTERM and returns the process exit code: 0 after a clean stop,
// kExitConfigError for a bad signing key file or database URL, 1 when PostgreSQL cannot be
// reached or a port cannot be bound.
int RunAccountRole(const AccountRoleSettings& settings, const Config& config);

}  // namespace telos::app
