// Wiring shared by the roles: the fleet backends from TELOS_* variables, the player-facing
// listeners (telnet + HTTP/WebSocket + web client) a serve or gate process runs, and waiting
// for SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "telos/account/account_service.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/config.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/nats_bus.h"
#include "telos/directory/redis_directory.h"
#include "telos/net/admin_routes.h"
#include "telos/net/http_server.h"
#include "telos/net/telnet_server.h"
#include "telos/shard/pack_reload.h"
#include "telos/store/postgres_store.h"
#include "telos/store/redis_checkpoint_store.h"
#include "telos/telemetry/process_metrics.h"
#include "telos/telemetry/telemetry.h"
#include "telos/world/content.h"
#include "telos/world/zone.h"

// Reads one setting with a Config accessor into `target`; on an error returns its status from
// the enclosing function (which returns a Status or a Result).
#define TELOS_READ_SETTING(target, expr)    \
  do {                                      \
    auto value = (expr);                    \
    if (!value.ok()) return value.status(); \
    target = *value;                        \
  } while (false)

namespace telos::app {

// A setting left at 0 (its variable unset) takes its built-in default.
template <typename T>
T OrDefault(T value, T fallback) {
  return value != T{} ? value : fallback;
}

// The content pack at `dir`; when it is invalid, every problem is printed to stderr after
// "<program>: content pack <dir> is invalid:" and the result is null.
std::shared_ptr<const world::Pack> LoadPackOrReport(const std::string& dir, const char* program);

// A role's threads: one event loop (sockets, zones, timers) run by Run(n) threads, and a pool
// for blocking work. Join() ends both; the destructor joins too.
class RoleThreads {
 public:
  explicit RoleThreads(int64_t blocking_threads);
  ~RoleThreads();
  // Sockets, RPC and timers.
  boost::asio::io_context& io() { return io_; }
  // The zones' own loop: game logic never queues behind socket writes, so a heartbeat is late
  // only when the zones themselves are busy. Runs only if Run() was given zone threads.
  boost::asio::io_context& zone_io() { return zone_io_; }
  const BlockingRunner& blocking() const { return blocking_; }
  void Run(int64_t io_threads, int64_t zone_threads = 0);
  // Stops both loops, joins their threads, then the pool's.
  void Join();

 private:
  boost::asio::io_context io_;
  boost::asio::io_context zone_io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> zone_work_;
  boost::asio::thread_pool pool_;
  BlockingRunner blocking_;
  std::vector<std::thread> threads_;
  bool joined_ = false;
};

// What a role may loosen of the login screens' throttles (ReadAccountLimits).
struct AccountLimitSettings {
  account::AccountServiceLimits service;
  size_t login_failures_per_address_max = limits::kLoginFailuresPerAddressMax;
};

// Password hashing, the login throttle and the AccountService over a role's stores. Warns once
// when the argon2id cost is below OWASP's minimum (load tests only).
struct AccountStack {
  AccountStack(store::AccountStore& accounts, store::CharacterStore& characters,
               int64_t password_passes, int64_t password_memory_kib, const Clock& clock,
               Logger& log, Metrics& metrics, const AccountLimitSettings& limits = {});
  account::PasswordHasher hasher;
  account::AddressThrottle throttle;
  account::AccountService service;
};

// TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX (an hour), TELOS_ACCOUNT_CREATIONS_MAX (a minute,
// every address together), TELOS_CREATION_HASH_WAITERS_MAX (creations waiting for a hashing
// slot before "busy") and TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX (failed logins and unknown names,
// in five minutes); 0 or unset: the defaults from limits.h. Load tests whose bots make thousands
// of accounts from one address raise them; a public server keeps the defaults.
Result<AccountLimitSettings> ReadAccountLimits(const Config& config);

// TELOS_REDIS (redis://[user[:password]@]host:port, required; or TELOS_REDIS_FILE) and
// TELOS_REDIS_NAMESPACE (key prefix, "telos").
Result<directory::RedisOptions> RedisOptionsFromConfig(const Config& config);
// The Redis checkpoint store of the durability ladder, on the directory's Redis and namespace.
Result<std::unique_ptr<store::RedisCheckpointStore>> OpenCheckpoints(
    const directory::RedisOptions& redis, const Clock& clock);
// The world's NATS (docs/operating.md): TELOS_NATS (empty: no bus; a secret, since the url may
// carry "user:password@" or "token@"), and at most one kind of credentials:
// TELOS_NATS_USER with TELOS_NATS_PASSWORD, TELOS_NATS_TOKEN, TELOS_NATS_CREDS_FILE, or
// TELOS_NATS_NKEY with TELOS_NATS_NKEY_SEED_FILE. Every secret has its _FILE form.
// InvalidArgument names the variables.
Result<bus::NatsBusOptions> NatsOptionsFromConfig(const Config& config);
// TELOS_DATABASE_URL (required; or TELOS_DATABASE_URL_FILE) and TELOS_DATABASE_SCHEMA (empty:
// the server's default).
Result<store::PostgresStoreOptions> PostgresOptionsFromConfig(const Config& config);

// The process metrics and build_info in a role's `metrics`, and their OpenTelemetry export with
// the rest of them (src/telemetry, docs/operating.md): null when
// no OTEL_EXPORTER_OTLP_* endpoint is set; InvalidArgument naming the variable for a bad OTEL_*
// value (the role prints it and exits with kExitConfigError). Keep it declared after the
// Metrics it reads, so it is destroyed (after one last export) first.
Result<std::unique_ptr<telemetry::Telemetry>> StartTelemetry(const Config& config,
                                                             std::string_view role,
                                                             Metrics& metrics, Logger& log);

// The default admin ports: each role's public HTTP port plus 1000, so the roles of one box
// (serve or gate 8080, world 8081, account 8090) never take each other's.
inline constexpr uint16_t kGateAdminPortDefault = 9080;  // gate and serve
inline constexpr uint16_t kWorldAdminPortDefault = 9081;
inline constexpr uint16_t kAccountAdminPortDefault = 9090;

// What the player-facing listeners need (serve and gate read the same variables).
struct FrontDoorSettings {
  std::string bind_address = "0.0.0.0";
  uint16_t telnet_port = 4000;
  uint16_t http_port = 8080;
  // TELOS_ADMIN_BIND:TELOS_ADMIN_PORT: /metrics, /api/cluster and /api/health for operators.
  net::AdminBind admin{.address = "127.0.0.1", .port = kGateAdminPortDefault};
  std::string web_dir = "web";
  int64_t idle_timeout_ms = 0;          // 0: the default from limits.h
  int64_t connections_per_address = 0;  // 0: the default from limits.h
  double input_lines_per_second = 0;    // 0: the default from limits.h
};
Result<FrontDoorSettings> ReadFrontDoorSettings(const Config& config);

// Telnet on telnet_port; the players' HTTP (/ws, the web client, and what the owner adds:
// /api/health, /api/who) on http_port; the admin listener (empty: the owner adds /metrics,
// /api/cluster, /api/health) on settings.admin, never on a port players are meant to reach.
class FrontDoor {
 public:
  using Mssp = std::function<std::vector<std::pair<std::string, std::string>>()>;
  FrontDoor(boost::asio::io_context& io, const FrontDoorSettings& settings,
            net::TerminalHandlerFactory terminals, Mssp mssp, const Clock& clock, Logger& log,
            Metrics& metrics);
  net::HttpServer& http() { return http_; }
  net::HttpServer& admin() { return admin_; }
  // Binds the three listeners; on failure nothing listens. REQUIRES: routes added first.
  Status Start();
  void Stop();
  uint16_t telnet_port() const { return telnet_port_; }
  uint16_t http_port() const { return http_port_; }
  uint16_t admin_port() const { return admin_port_; }

 private:
  net::TelnetServer telnet_;
  net::HttpServer http_;
  net::HttpServer admin_;
  uint16_t telnet_port_ = 0;
  uint16_t http_port_ = 0;
  uint16_t admin_port_ = 0;
};

// The address other processes dial for a gRPC listener: `advertise` when set; the listen
// address when it names a host; for a wildcard listen (0.0.0.0:P, [::]:P), this host's first
// non-loopback IPv4 address with port P. InvalidArgument names the variable to set.
Result<std::string> AdvertisedAddress(const std::string& listen, const std::string& advertise);

// Waits for SIGINT or SIGTERM delivered through `io`. Construct before the io threads run.
class StopSignal {
 public:
  StopSignal(boost::asio::io_context& io, Logger& log);
  void Wait();

 private:
  boost::asio::signal_set signals_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// SIGHUP: content hot reload (docs/operating.md "Reloading content"). Each signal runs `reload`
// once on a thread of its own (it waits for every world's answer, and must not take a blocking
// pool thread that the answers themselves need); a signal while one runs is logged and
// otherwise ignored. Until this is constructed SIGHUP has its default effect (the process
// ends): make it before "ready".
// Stopping: Stop() first (it returns at once, whatever reload runs: a drain must not wait up to
// the reload's timeouts behind it), then stop the world (whose reload agent then refuses what
// the reload still asks of it), then destroy this, which waits for the reload thread. `reload`
// must stay callable until then.
class ReloadSignal {
 public:
  ReloadSignal(boost::asio::io_context& io, Logger& log, std::function<void()> reload);
  // Stop(), then waits for a reload thread still running.
  ~ReloadSignal();
  // No SIGHUP starts a reload from now on; waits only for a signal handler already running
  // (which starts no reload once this began). Idempotent. Not on the io_context's thread.
  void Stop();

 private:
  void Arm();

  boost::asio::signal_set signals_;
  Logger& log_;
  std::function<void()> reload_;
  std::atomic<bool> running_{false};
  // Held by each signal handler while it runs: Stop() waits for one in flight.
  std::shared_ptr<InFlightGate> handlers_ = InFlightGate::Make();
  std::mutex mu_;         // guards worker_ and stopped_
  bool stopped_ = false;  // Stop() began: no new worker
  std::thread worker_;    // the reload in flight, or the last one
};

// Runs one fleet reload for SIGHUP and logs what it did: a line per world, then the verdict
// ("reload applied", or "reload refused" with the reason and the pack's file:line problems).
void LogFleetReload(const shard::FleetReloadReport& report, Logger& log);

}  // namespace telos::app
