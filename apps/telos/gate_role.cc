#include "gate_role.h"

#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdio>
#include <thread>

#include "gate_process.h"
#include "telos/account/remote_account_desk.h"
#include "version.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
constexpr const char* kRole = "telos gate";
constexpr const char* kShutdownMessage =
    "\nThis gateway is closing. Your character stays safe; please connect again.";

std::string DefaultGateId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "host");
  return "gate-" + std::string(host) + "-" + std::to_string(getpid());
}

}  // namespace

Result<GateRoleSettings> ReadGateRoleSettings(const Config& config) {
  GateRoleSettings s;
  TELOS_READ_SETTING(s.front, ReadFrontDoorSettings(config));
  TELOS_READ_SETTING(s.gate_id, config.String("TELOS_GATE_ID", ""));
  TELOS_READ_SETTING(s.account_target, config.String("TELOS_ACCOUNT", ""));
  TELOS_READ_SETTING(s.caller_token, config.Secret("TELOS_CALLER_TOKEN", ""));
  TELOS_READ_SETTING(s.gate_token, config.Secret("TELOS_GATE_TOKEN", ""));
  TELOS_READ_SETTING(s.content_dir, config.String("TELOS_CONTENT_DIR", s.content_dir));
  TELOS_READ_SETTING(s.io_threads, config.Int("TELOS_IO_THREADS", s.io_threads, 1, 64));
  TELOS_READ_SETTING(s.blocking_threads,
                     config.Int("TELOS_BLOCKING_THREADS", s.blocking_threads, 1, 64));
  TELOS_READ_SETTING(s.link_dead_ms, config.Int("TELOS_LINK_DEAD_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ_SETTING(s.login_timeout_ms, config.Int("TELOS_LOGIN_TIMEOUT_MS", 0, 0, 3600 * 1000));
  TELOS_READ_SETTING(s.route_wait_ms, config.Int("TELOS_ROUTE_WAIT_MS", 0, 0, 3600 * 1000));
  if (s.gate_id.empty()) s.gate_id = DefaultGateId();
  if (s.account_target.empty()) {
    return Status::InvalidArgument(
        "TELOS_ACCOUNT: required for telos gate (host:port of the "
        "account service)");
  }
  TELOS_READ_SETTING(s.allow_insecure, config.Bool("TELOS_ALLOW_INSECURE", false));
  if (s.caller_token.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_CALLER_TOKEN: required for telos gate (the account service's caller token; "
        "TELOS_ALLOW_INSECURE=1 calls without one)");
  }
  if (s.gate_token.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_GATE_TOKEN: required for telos gate (the token the worlds accept on Play "
        "streams; or TELOS_GATE_TOKEN_FILE; TELOS_ALLOW_INSECURE=1 calls without one)");
  }
  if (auto r = RedisOptionsFromConfig(config); !r.ok()) return r.status();
  return s;
}

int RunGateRole(const GateRoleSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("gate", *level);
  if (settings.caller_token.empty()) {
    log.Warn(
        "insecure: TELOS_CALLER_TOKEN unset (TELOS_ALLOW_INSECURE): calling the account "
        "service without a caller token");
  }
  if (settings.gate_token.empty()) {
    log.Warn(
        "insecure: TELOS_GATE_TOKEN unset (TELOS_ALLOW_INSECURE): opening Play streams without "
        "a gate token; only worlds that accept any caller will take them");
  }
  SystemClock clock;
  Metrics metrics;
  auto telemetry = StartTelemetry(config, "gate", metrics, log);
  if (!telemetry.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, telemetry.status().message().c_str());
    return kExitConfigError;
  }
  log.Info(
      "starting",
      {{"version", kVersion}, {"gate", settings.gate_id}, {"account", settings.account_target}});

  auto pack = LoadPackOrReport(settings.content_dir, kRole);
  if (!pack) return kExitConfigError;

  directory::RedisDirectory directory(*RedisOptionsFromConfig(config), clock);
  account::RemoteAccountDesk desk(
      account::RemoteAccountDeskOptions{settings.account_target, settings.caller_token});

  RoleThreads threads(settings.blocking_threads);
  asio::io_context& io = threads.io();
  threads.Run(settings.io_threads);

  GateProcessOptions options;
  options.front = settings.front;
  options.gate_id = settings.gate_id;
  options.gate_token = settings.gate_token;
  options.link_dead_ms = settings.link_dead_ms;
  options.login_timeout_ms = settings.login_timeout_ms;
  options.route_wait_ms = settings.route_wait_ms;
  GateProcess gate(options, *pack, desk, directory, io, threads.blocking(), clock, log, metrics);
  if (Status s = gate.Start(); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, s.message().c_str());
    gate.Stop("");
    threads.Join();
    return 1;
  }

  StopSignal stop(io, log);
  log.Info("ready", {{"gate", settings.gate_id},
                     {"telnet_port", static_cast<int64_t>(gate.telnet_port())},
                     {"http_port", static_cast<int64_t>(gate.http_port())},
                     {"admin_address", settings.front.admin.address},
                     {"admin_port", static_cast<int64_t>(gate.admin_port())}});
  stop.Wait();

  // The characters stay in the world (link-dead on their shards) until their owners reconnect
  // through any gate or the link-dead grace ends.
  gate.Stop(kShutdownMessage);
  threads.Join();
  log.Info("stopped");
  return 0;
}

}  // namespace telos::app
