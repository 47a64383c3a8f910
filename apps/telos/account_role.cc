#include "account_role.h"

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "role_common.h"
#include "telos/account/account_desk.h"
#include "telos/account/account_server.h"
#include "telos/account/account_service.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/base/dependency_health.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/net/admin_routes.h"
#include "telos/net/http_server.h"
#include "telos/store/postgres_store.h"
#include "version.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
constexpr const char* kRole = "telos account";
// How often the probe thread pings PostgreSQL for /api/health.
constexpr std::chrono::milliseconds kDependencyProbeInterval{1000};

}  // namespace

Result<AccountRoleSettings> ReadAccountRoleSettings(const Config& config) {
  AccountRoleSettings s;
  TELOS_READ_SETTING(s.database_url, config.Secret("TELOS_DATABASE_URL", ""));
  TELOS_READ_SETTING(s.listen_address, config.String("TELOS_ACCOUNT_LISTEN", s.listen_address));
  TELOS_READ_SETTING(s.signing_key_file, config.String("TELOS_SIGNING_KEY_FILE", ""));
  TELOS_READ_SETTING(s.caller_token, config.Secret("TELOS_CALLER_TOKEN", ""));
  TELOS_READ_SETTING(s.allow_insecure, config.Bool("TELOS_ALLOW_INSECURE", false));
  TELOS_READ_SETTING(s.assertion_ttl_ms,
                     config.Int("TELOS_ASSERTION_TTL_MS", s.assertion_ttl_ms,
                                limits::kAssertionTtlMsMin, limits::kAssertionTtlMsMax));
  TELOS_READ_SETTING(s.bind_address, config.String("TELOS_BIND", s.bind_address));
  TELOS_READ_SETTING(s.http_port, config.Port("TELOS_HTTP_PORT", s.http_port));
  TELOS_READ_SETTING(s.admin, net::ReadAdminBind(config, s.admin.port, s.http_port));
  TELOS_READ_SETTING(s.blocking_threads,
                     config.Int("TELOS_BLOCKING_THREADS", s.blocking_threads, 1, 64));
  TELOS_READ_SETTING(s.password_memory_kib, config.Int("TELOS_PASSWORD_MEMORY_KIB",
                                                       s.password_memory_kib, 8, 4 * 1024 * 1024));
  TELOS_READ_SETTING(s.password_passes,
                     config.Int("TELOS_PASSWORD_PASSES", s.password_passes, 1, 10));
  TELOS_READ_SETTING(s.account_limits, ReadAccountLimits(config));
  if (s.database_url.empty()) {
    return Status::InvalidArgument(
        "TELOS_DATABASE_URL (or TELOS_DATABASE_URL_FILE): required for telos account");
  }
  if (s.signing_key_file.empty()) {
    return Status::InvalidArgument(
        "TELOS_SIGNING_KEY_FILE: required for telos account (make one with telos keygen)");
  }
  if (s.caller_token.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_CALLER_TOKEN (or TELOS_CALLER_TOKEN_FILE): required for telos account (or "
        "TELOS_ALLOW_INSECURE=1 to accept any caller)");
  }
  if (s.listen_address.empty()) {
    return Status::InvalidArgument("TELOS_ACCOUNT_LISTEN: must not be empty");
  }
  if (s.bind_address.empty()) return Status::InvalidArgument("TELOS_BIND: must not be empty");
  return s;
}

int RunAccountRole(const AccountRoleSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("account", *level);
  SystemClock clock;
  Metrics metrics;
  auto telemetry = StartTelemetry(config, "account", metrics, log);
  if (!telemetry.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, telemetry.status().message().c_str());
    return kExitConfigError;
  }
  log.Info("starting", {{"version", kVersion}, {"listen", settings.listen_address}});
  if (settings.caller_token.empty()) {
    log.Warn("insecure: TELOS_CALLER_TOKEN unset, any caller is accepted");
  }

  // --- The assertion signing key: a bad file is a configuration error.
  auto key = auth::SigningKey::LoadFile(settings.signing_key_file);
  if (!key.ok()) {
    std::fprintf(stderr, "%s: TELOS_SIGNING_KEY_FILE: %s\n", kRole, key.status().message().c_str());
    return kExitConfigError;
  }
  log.Info("signing key loaded", {{"public_key", key->verify_key().Hex()}, {"key_id", key->id()}});

  // --- The store.
  auto from_config = PostgresOptionsFromConfig(config);
  if (!from_config.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, from_config.status().message().c_str());
    return kExitConfigError;
  }
  store::PostgresStoreOptions store_options = *from_config;
  store_options.application_name = "telos-account";
  auto opened = store::PostgresStore::Open(store_options, clock);
  if (!opened.ok()) {
    const Status& s = opened.status();
    log.Error("cannot open the database", {{"error", s.ToString()}});
    if (s.code() == StatusCode::kInvalidArgument) {
      std::fprintf(stderr, "%s: TELOS_DATABASE_URL: %s\n", kRole, s.message().c_str());
      return kExitConfigError;
    }
    std::fprintf(stderr, "%s: cannot open PostgreSQL at TELOS_DATABASE_URL: %s\n", kRole,
                 s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<store::PostgresStore> db = std::move(*opened);
  log.Info("database open", {{"schema_version", db->schema_version()}});

  // --- Threads: an event loop for the admin port, and a pool for hashing and the store.
  RoleThreads threads(settings.blocking_threads);
  asio::io_context& io = threads.io();
  threads.Run(1);

  // --- Accounts.
  AccountStack accounts(db->accounts(), db->characters(), settings.password_passes,
                        settings.password_memory_kib, clock, log, metrics, settings.account_limits);
  // The desk holds the login tickets and signs the assertions; the server only carries calls.
  account::LocalAccountDesk desk(accounts.service, *key, clock,
                                 account::LocalAccountDeskOptions{settings.assertion_ttl_ms});
  account::AccountServerOptions server_options;
  server_options.listen_address = settings.listen_address;
  server_options.caller_token = settings.caller_token;
  account::AccountServer server(server_options, desk, threads.blocking(), log, metrics);

  // --- HTTP: /api/health on TELOS_BIND:TELOS_HTTP_PORT, /metrics and /api/health on the admin
  // listener. Health never touches the database itself (an io thread must not wait on it): a
  // probe thread pings PostgreSQL and health reads the last answer.
  DependencyHealth dependencies(log, metrics);
  dependencies.Declare("postgres", "logins, new accounts and character claims fail");
  dependencies.AddProbe("postgres", [&db] { return db->Ping(); });
  std::atomic<bool> stopping{false};
  const auto health = [&dependencies, &stopping] {
    boost::json::object members{{"role", "account"}, {"version", kVersion}};
    dependencies.AddHealthMembers(members);
    if (stopping) return net::HealthReport::Unavailable("stopping", std::move(members));
    if (!dependencies.up("postgres")) {
      return net::HealthReport::Unavailable("postgres unavailable", std::move(members));
    }
    return net::HealthReport{true, std::move(members)};
  };
  net::HttpServerOptions http_options;
  http_options.bind_address = settings.bind_address;
  http_options.port = settings.http_port;
  net::HttpServer http(io, http_options, log);
  net::HttpServer admin(io, net::AdminServerOptions(settings.admin), log);
  net::AddHealthRoute(http, health);
  net::AddAdminRoutes(admin, metrics, health);
  dependencies.Start(kDependencyProbeInterval);

  auto grpc_port = server.Start();
  auto http_port = grpc_port.ok() ? http.Start() : Result<uint16_t>(grpc_port.status());
  auto admin_port = http_port.ok() ? admin.Start() : Result<uint16_t>(http_port.status());
  if (!admin_port.ok()) {
    const Status& s = admin_port.status();
    const bool admin_failed = grpc_port.ok() && http_port.ok();
    std::fprintf(stderr, "%s: %s%s\n", kRole,
                 admin_failed ? "TELOS_ADMIN_BIND/TELOS_ADMIN_PORT: " : "", s.message().c_str());
    log.Error("cannot listen", {{"error", s.ToString()}});
    server.Stop();
    dependencies.Stop();
    http.Stop();
    admin.Stop();
    threads.Join();
    return 1;
  }

  // --- Run until a signal.
  StopSignal stop(io, log);
  log.Info("ready", {{"listen", settings.listen_address},
                     {"port", static_cast<int64_t>(*grpc_port)},
                     {"http_port", static_cast<int64_t>(*http_port)},
                     {"admin_address", settings.admin.address},
                     {"admin_port", static_cast<int64_t>(*admin_port)}});
  stop.Wait();

  // --- Stop: finish the calls in flight (they need the blocking pool), then the HTTP ports.
  stopping = true;
  server.Stop();
  dependencies.Stop();
  http.Stop();
  admin.Stop();
  threads.Join();
  log.Info("stopped");
  return 0;
}

}  // namespace telos::app
