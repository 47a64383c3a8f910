#include "world_role.h"

#include <grpcpp/grpcpp.h>

#include <boost/asio.hpp>
#include <condition_variable>
#include <cstdio>
#include <random>
#include <sstream>
#include <thread>

#include "role_common.h"
#include "telos/account/remote_account_desk.h"
#include "telos/auth/keys.h"
#include "telos/base/limits.h"
#include "telos/directory/cluster_view.h"
#include "telos/net/admin_routes.h"
#include "telos/rpc/channels.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/records_announcer.h"
#include "telos/shard/store_ports.h"
#include "telos/shard/world_shard.h"
#include "telos/shard/zone_lease_keeper.h"
#include "telos/world/asio_executor.h"
#include "version.h"
#include "world_process.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
constexpr const char* kRole = "telos world";

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
  }
  return out;
}

}  // namespace

Result<WorldRoleSettings> ReadWorldRoleSettings(const Config& config) {
  WorldRoleSettings s;
  std::string pool;
  TELOS_READ_SETTING(s.shard_id, config.RequiredString("TELOS_SHARD_ID"));
  TELOS_READ_SETTING(s.allow_insecure, config.Bool("TELOS_ALLOW_INSECURE", false));
  TELOS_READ_SETTING(s.listen_address, config.String("TELOS_WORLD_LISTEN", s.listen_address));
  TELOS_READ_SETTING(s.advertise, config.String("TELOS_ADVERTISE", ""));
  TELOS_READ_SETTING(pool, config.String("TELOS_ZONE_POOL", ""));
  TELOS_READ_SETTING(s.lease_ttl_ms,
                     config.Int("TELOS_LEASE_TTL_MS", s.lease_ttl_ms, 600, 600'000));
  TELOS_READ_SETTING(s.assertion_verify_key_file,
                     config.String("TELOS_ASSERTION_VERIFY_KEY_FILE", ""));
  TELOS_READ_SETTING(s.handoff_key_file, config.String("TELOS_HANDOFF_KEY_FILE", ""));
  TELOS_READ_SETTING(s.assertion_previous_verify_key,
                     auth::VerifyKeyFromConfig(config, "TELOS_ASSERTION_PREVIOUS_VERIFY_KEY"));
  TELOS_READ_SETTING(s.handoff_verify_key,
                     auth::VerifyKeyFromConfig(config, "TELOS_HANDOFF_VERIFY_KEY"));
  TELOS_READ_SETTING(s.handoff_previous_verify_key,
                     auth::VerifyKeyFromConfig(config, "TELOS_HANDOFF_PREVIOUS_VERIFY_KEY"));
  TELOS_READ_SETTING(s.account_target, config.String("TELOS_ACCOUNT", ""));
  TELOS_READ_SETTING(s.caller_token, config.Secret("TELOS_CALLER_TOKEN", ""));
  TELOS_READ_SETTING(s.gate_token, config.Secret("TELOS_GATE_TOKEN", ""));
  TELOS_READ_SETTING(s.world_token, config.Secret("TELOS_WORLD_TOKEN", ""));
  TELOS_READ_SETTING(s.bind_address, config.String("TELOS_BIND", s.bind_address));
  TELOS_READ_SETTING(s.http_port, config.Port("TELOS_HTTP_PORT", s.http_port));
  TELOS_READ_SETTING(s.admin, net::ReadAdminBind(config, s.admin.port, s.http_port));
  TELOS_READ_SETTING(s.content_dir, config.String("TELOS_CONTENT_DIR", s.content_dir));
  TELOS_READ_SETTING(s.director_scope, config.String("TELOS_DIRECTOR_SCOPE", s.director_scope));
  TELOS_READ_SETTING(s.io_threads, config.Int("TELOS_IO_THREADS", s.io_threads, 1, 64));
  TELOS_READ_SETTING(s.zone_threads, config.Int("TELOS_ZONE_THREADS", s.zone_threads, 1, 64));
  TELOS_READ_SETTING(s.blocking_threads,
                     config.Int("TELOS_BLOCKING_THREADS", s.blocking_threads, 1, 64));
  TELOS_READ_SETTING(s.link_dead_ms, config.Int("TELOS_LINK_DEAD_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ_SETTING(s.save_interval_ms, config.Int("TELOS_SAVE_INTERVAL_MS", 0, 0, 3600 * 1000));
  TELOS_READ_SETTING(s.output_pulse_ms, config.Int("TELOS_OUTPUT_PULSE_MS", s.output_pulse_ms, 0,
                                                   limits::kOutputPulseMsMax));
  TELOS_READ_SETTING(
      s.checkpoint_interval_ms,
      config.Int("TELOS_CHECKPOINT_INTERVAL_MS", s.checkpoint_interval_ms, 100, 3600 * 1000));
  TELOS_READ_SETTING(s.seed, config.Int("TELOS_SEED", 0, 0, INT64_MAX));
  s.zone_pool = SplitList(pool);
  if (s.shard_id.size() > 64) return Status::InvalidArgument("TELOS_SHARD_ID: at most 64 bytes");
  // The director announces on the bus as origin "director", and a world skips announcements
  // whose origin is its own id: a world of that name would drop every director announcement
  // and make its own look like the director's.
  if (s.shard_id == shard::kDirectorOrigin) {
    return Status::InvalidArgument("TELOS_SHARD_ID: \"" + std::string(shard::kDirectorOrigin) +
                                   "\" is the director's name on the bus; choose another");
  }
  if (s.assertion_verify_key_file.empty()) {
    return Status::InvalidArgument(
        "TELOS_ASSERTION_VERIFY_KEY_FILE: required for telos world (the account service's "
        "public key)");
  }
  if (s.handoff_key_file.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_HANDOFF_KEY_FILE: required for telos world (the fleet's handoff signing key; "
        "TELOS_ALLOW_INSECURE=1 runs with a key of its own, refusing every other world's)");
  }
  if (s.gate_token.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_GATE_TOKEN: required for telos world (the token gates present on Play streams; "
        "or TELOS_GATE_TOKEN_FILE; TELOS_ALLOW_INSECURE=1 accepts any gate)");
  }
  if (s.world_token.empty() && !s.allow_insecure) {
    return Status::InvalidArgument(
        "TELOS_WORLD_TOKEN: required for telos world (the token worlds present to each other on "
        "Handoff, Adopt and Describe; or TELOS_WORLD_TOKEN_FILE; TELOS_ALLOW_INSECURE=1 accepts "
        "any caller)");
  }
  if (!s.gate_token.empty() && s.gate_token == s.world_token) {
    return Status::InvalidArgument(
        "TELOS_WORLD_TOKEN: must differ from TELOS_GATE_TOKEN (a gate's token must not open "
        "the world-to-world calls)");
  }
  TELOS_READ_SETTING(s.advertise, AdvertisedAddress(s.listen_address, s.advertise));
  auto nats = NatsOptionsFromConfig(config);
  if (!nats.ok()) return nats.status();
  s.nats_url = nats->url;
  s.nats_credentials = nats->credentials;
  TELOS_READ_SETTING(s.record_zone_writes, config.Bool("TELOS_RECORD_ZONE_WRITES", false));
  auto redis = RedisOptionsFromConfig(config);
  if (!redis.ok()) return redis.status();
  s.subject_prefix = shard::SubjectPrefixFor(redis->key_namespace);
  if (auto p = PostgresOptionsFromConfig(config); !p.ok()) return p.status();
  return s;
}

int RunWorldRole(const WorldRoleSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("world", *level);
  SystemClock clock;
  Metrics metrics;
  auto telemetry = StartTelemetry(config, "world", metrics, log);
  if (!telemetry.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, telemetry.status().message().c_str());
    return kExitConfigError;
  }
  if (settings.gate_token.empty()) {
    log.Warn(
        "insecure: TELOS_GATE_TOKEN unset (TELOS_ALLOW_INSECURE): any caller may open a "
        "Play stream");
  }
  if (settings.world_token.empty()) {
    log.Warn(
        "insecure: TELOS_WORLD_TOKEN unset (TELOS_ALLOW_INSECURE): any caller may call "
        "Handoff, Adopt and Describe");
  }
  log.Info("starting", {{"version", kVersion},
                        {"shard", settings.shard_id},
                        {"listen", settings.listen_address},
                        {"advertise", settings.advertise}});

  // --- Content and keys: anything wrong here is a configuration error.
  auto shared_pack = LoadPackOrReport(settings.content_dir, kRole);
  if (!shared_pack) return kExitConfigError;
  if (auto pool = ResolveZonePool(settings, *shared_pack); !pool.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, pool.status().message().c_str());
    return kExitConfigError;
  }
  log.Info("content loaded", {{"pack", shared_pack->name}, {"hash", shared_pack->content_hash}});
  auto verify_key = auth::VerifyKey::LoadFile(settings.assertion_verify_key_file);
  if (!verify_key.ok()) {
    std::fprintf(stderr, "%s: TELOS_ASSERTION_VERIFY_KEY_FILE: %s\n", kRole,
                 verify_key.status().message().c_str());
    return kExitConfigError;
  }
  const auth::KeyRing assertion_keys(*verify_key, settings.assertion_previous_verify_key);
  auto handoff_key = settings.handoff_key_file.empty()
                         ? Result<auth::SigningKey>(auth::SigningKey::Generate())
                         : auth::SigningKey::LoadFile(settings.handoff_key_file);
  if (settings.handoff_key_file.empty()) {
    log.Warn(
        "insecure: TELOS_HANDOFF_KEY_FILE unset (TELOS_ALLOW_INSECURE): a handoff key of this "
        "process only; handoffs with other worlds will be refused");
  }
  if (!handoff_key.ok()) {
    std::fprintf(stderr, "%s: TELOS_HANDOFF_KEY_FILE: %s\n", kRole,
                 handoff_key.status().message().c_str());
    return kExitConfigError;
  }
  const auth::KeyRing handoff_keys(settings.handoff_verify_key.value_or(handoff_key->verify_key()),
                                   settings.handoff_previous_verify_key);
  // A world verifies its peers' snapshots with the ring and signs its own with the key: one
  // outside the ring would have every peer configured like it refuse this world's handoffs.
  if (handoff_keys.Find(handoff_key->id()) == nullptr) {
    std::fprintf(stderr,
                 "%s: TELOS_HANDOFF_KEY_FILE: key id %s is neither TELOS_HANDOFF_VERIFY_KEY nor "
                 "TELOS_HANDOFF_PREVIOUS_VERIFY_KEY (%s)\n",
                 kRole, handoff_key->id().c_str(), handoff_keys.Ids().c_str());
    return kExitConfigError;
  }
  // Which keys are in play, by id: how an operator follows a rotation through the fleet.
  log.Info("keys loaded", {{"assertion_verify", assertion_keys.Ids()},
                           {"handoff_signing", handoff_key->id()},
                           {"handoff_verify", handoff_keys.Ids()}});

  // --- Backends.
  auto store_options = PostgresOptionsFromConfig(config);
  store_options->application_name = "telos-world";
  store_options->record_zone_writes = settings.record_zone_writes;
  auto opened = store::PostgresStore::Open(*store_options, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s: cannot open PostgreSQL at TELOS_DATABASE_URL: %s\n", kRole,
                 opened.status().ToString().c_str());
    return opened.status().code() == StatusCode::kInvalidArgument ? kExitConfigError : 1;
  }
  std::unique_ptr<store::PostgresStore> db = std::move(*opened);
  const directory::RedisOptions redis = *RedisOptionsFromConfig(config);
  directory::RedisDirectory directory(redis, clock);
  auto checkpoints = OpenCheckpoints(redis, clock);
  if (!checkpoints.ok()) {
    std::fprintf(stderr, "%s: TELOS_REDIS_NAMESPACE: %s\n", kRole,
                 checkpoints.status().message().c_str());
    return kExitConfigError;
  }

  RoleThreads threads(settings.blocking_threads);
  asio::io_context& io = threads.io();
  const BlockingRunner blocking = threads.blocking();
  threads.Run(settings.io_threads, settings.zone_threads);
  std::unique_ptr<account::RemoteAccountDesk> account_desk;
  std::unique_ptr<shard::AccountPasswords> passwords;
  if (!settings.account_target.empty()) {
    account_desk = std::make_unique<account::RemoteAccountDesk>(
        account::RemoteAccountDeskOptions{settings.account_target, settings.caller_token});
    passwords = std::make_unique<shard::AccountPasswords>(*account_desk, blocking);
  }

  WorldProcess world(settings, shared_pack, *db, directory, checkpoints->get(), assertion_keys,
                     *handoff_key, passwords.get(), io, threads.zone_io(), blocking, clock, log,
                     metrics, [&directory] { return directory.Ping(); });
  world.SetHandoffVerifyKeys(handoff_keys);
  // --- HTTP: /api/health (and /api/who) on TELOS_BIND:TELOS_HTTP_PORT; the operator routes on
  // the admin listener. Both listen before the world starts, so health answers "starting"
  // meanwhile instead of refusing the connection.
  net::HttpServerOptions http_options;
  http_options.bind_address = settings.bind_address;
  http_options.port = settings.http_port;
  net::HttpServer http(io, http_options, log);
  net::HttpServer admin(io, net::AdminServerOptions(settings.admin), log);
  const auto health = [&world] {
    net::HealthReport report = world.Health();
    boost::json::object members{{"role", "world"}, {"version", kVersion}};
    for (auto& member : report.members) members.emplace(member.key(), std::move(member.value()));
    report.members = std::move(members);
    return report;
  };
  net::AddHealthRoute(http, health);
  net::AddAdminRoutes(admin, metrics, health);
  world.AddRoutes(http);
  world.AddRecordsRoute(http, blocking);
  world.AddAdminRoutes(admin, blocking);

  auto http_port = http.Start();
  auto admin_port = http_port.ok() ? admin.Start() : Result<uint16_t>(http_port.status());
  if (http_port.ok() && !admin_port.ok()) {
    admin_port =
        Status::Unavailable("TELOS_ADMIN_BIND/TELOS_ADMIN_PORT: " + admin_port.status().message());
  }
  Status started = admin_port.ok() ? world.Start() : admin_port.status();
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, started.message().c_str());
    http.Stop();
    admin.Stop();
    world.Stop();
    threads.Join();
    // A duplicate shard id and a diverging content pack are configuration errors.
    return started.code() == StatusCode::kAlreadyExists ||
                   started.code() == StatusCode::kFailedPrecondition
               ? kExitConfigError
               : 1;
  }

  StopSignal stop(io, log);
  // SIGHUP asks the whole fleet to reload, as `telos ctl reload` does.
  auto reload = std::make_unique<ReloadSignal>(
      io, log, [&world, &log] { LogFleetReload(world.ReloadFleet(), log); });
  log.Info("ready", {{"shard", settings.shard_id},
                     {"grpc_port", static_cast<int64_t>(world.grpc_port())},
                     {"http_port", static_cast<int64_t>(*http_port)},
                     {"admin_address", settings.admin.address},
                     {"admin_port", static_cast<int64_t>(*admin_port)}});
  stop.Wait();
  reload->Stop();  // a reload under way is not waited for: the drain goes first

  // The listeners outlive the drain: /api/health says "draining" while it runs.
  world.Stop();
  reload.reset();  // the reload thread, refused by the stopped world, ends (the bus still runs)
  http.Stop();
  admin.Stop();
  threads.Join();
  log.Info("stopped");
  return 0;
}

}  // namespace telos::app
