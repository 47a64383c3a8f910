#include "serve.h"

#include <boost/asio.hpp>
#include <cstdio>
#include <filesystem>

#include "arcade_http.h"
#include "arcade_wiring.h"
#include "director_role.h"
#include "gate_process.h"
#include "telos/account/account_desk.h"
#include "telos/account/account_service.h"
#include "telos/auth/keys.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/in_process_bus.h"
#include "telos/director/director_service.h"
#include "telos/directory/memory_directory.h"
#include "telos/shard/records_announcer.h"
#include "telos/shard/store_ports.h"
#include "telos/store/sqlite_event_log.h"
#include "telos/store/sqlite_store.h"
#include "version.h"
#include "world_process.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
// The embedded world's shard id and the endpoint its in-process gate reaches it at.
constexpr const char* kServeShardId = "serve";
constexpr const char* kServeEndpoint = "inproc:serve";
constexpr const char* kShutdownMessage =
    "\nThe world is pausing for maintenance. Your progress is saved; please come back soon.";

}  // namespace

Result<ServeSettings> ReadServeSettings(const Config& config) {
  ServeSettings s;
  TELOS_READ_SETTING(s.front, ReadFrontDoorSettings(config));
  TELOS_READ_SETTING(s.data_dir, config.String("TELOS_DATA_DIR", s.data_dir));
  TELOS_READ_SETTING(s.content_dir, config.String("TELOS_CONTENT_DIR", s.content_dir));
  TELOS_READ_SETTING(s.io_threads, config.Int("TELOS_IO_THREADS", s.io_threads, 1, 64));
  TELOS_READ_SETTING(s.zone_threads, config.Int("TELOS_ZONE_THREADS", s.zone_threads, 1, 64));
  TELOS_READ_SETTING(s.blocking_threads,
                     config.Int("TELOS_BLOCKING_THREADS", s.blocking_threads, 1, 64));
  TELOS_READ_SETTING(s.link_dead_ms, config.Int("TELOS_LINK_DEAD_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ_SETTING(s.login_timeout_ms, config.Int("TELOS_LOGIN_TIMEOUT_MS", 0, 0, 3600 * 1000));
  TELOS_READ_SETTING(s.save_interval_ms, config.Int("TELOS_SAVE_INTERVAL_MS", 0, 0, 3600 * 1000));
  TELOS_READ_SETTING(
      s.checkpoint_interval_ms,
      config.Int("TELOS_CHECKPOINT_INTERVAL_MS", s.checkpoint_interval_ms, 0, 3600 * 1000));
  TELOS_READ_SETTING(s.output_pulse_ms, config.Int("TELOS_OUTPUT_PULSE_MS", s.output_pulse_ms, 0,
                                                   limits::kOutputPulseMsMax));
  TELOS_READ_SETTING(s.password_memory_kib, config.Int("TELOS_PASSWORD_MEMORY_KIB",
                                                       s.password_memory_kib, 8, 4 * 1024 * 1024));
  TELOS_READ_SETTING(s.password_passes,
                     config.Int("TELOS_PASSWORD_PASSES", s.password_passes, 1, 10));
  TELOS_READ_SETTING(s.account_limits, ReadAccountLimits(config));
  TELOS_READ_SETTING(s.seed, config.Int("TELOS_SEED", 0, 0, INT64_MAX));
  TELOS_READ_SETTING(s.arcade, ReadArcadeSettings(config));
  TELOS_READ_SETTING(s.assertion_ttl_ms,
                     config.Int("TELOS_ASSERTION_TTL_MS", s.assertion_ttl_ms,
                                limits::kAssertionTtlMsMin, limits::kAssertionTtlMsMax));
  return s;
}

int RunServe(const ServeSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("serve", *level);
  if (auto fleet = config.Secret("TELOS_REDIS", ""); !fleet.ok() || !fleet->empty()) {
    return RunServeInFleet(settings, config, log);
  }
  SystemClock clock;
  Metrics metrics;
  auto telemetry = StartTelemetry(config, "serve", metrics, log);
  if (!telemetry.ok()) {
    std::fprintf(stderr, "%s: %s\n", "telos serve", telemetry.status().message().c_str());
    return kExitConfigError;
  }
  log.Info("starting", {{"version", kVersion},
                        {"data_dir", settings.data_dir},
                        {"content_dir", settings.content_dir}});

  // --- Content: an invalid pack never starts.
  auto shared_pack = LoadPackOrReport(settings.content_dir, "telos serve");
  if (!shared_pack) return kExitConfigError;
  log.Info("content loaded", {{"pack", shared_pack->name},
                              {"zones", static_cast<int64_t>(shared_pack->zones.size())},
                              {"rooms", static_cast<int64_t>(shared_pack->RoomCount())},
                              {"hash", shared_pack->content_hash}});

  // --- The embedded backends: SQLite (accounts, characters, mail, checkpoints), the in-memory
  // directory and the in-process bus. The world and the gate are the fleet's own code on them.
  std::error_code ec;
  std::filesystem::create_directories(settings.data_dir, ec);
  if (ec) {
    std::fprintf(stderr, "telos serve: TELOS_DATA_DIR='%s': cannot create it: %s\n",
                 settings.data_dir.c_str(), ec.message().c_str());
    return kExitConfigError;
  }
  store::SqliteStoreOptions store_options;
  store_options.path = (std::filesystem::path(settings.data_dir) / "telos.db").string();
  auto opened = store::SqliteStore::Open(store_options, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<store::SqliteStore> db = std::move(*opened);
  // The durable game events (a boss killed) in the same file, kept across restarts as the
  // fleet's JetStream keeps them; the director tallies them into the records.
  auto events = store::SqliteEventLog::Open({.path = store_options.path}, clock);
  if (!events.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", events.status().ToString().c_str());
    return 1;
  }
  directory::MemoryDirectory directory(clock);
  bus::InProcessBus bus(bus::InProcessBus::NewHub());
  // Nothing outside this process verifies what these sign: a key per run is enough.
  const auth::SigningKey assertion_key = auth::SigningKey::Generate();
  const auth::SigningKey handoff_key = auth::SigningKey::Generate();

  WorldRoleSettings world_settings;
  world_settings.shard_id = kServeShardId;
  world_settings.listen_address.clear();  // gates reach it in process only
  world_settings.advertise = kServeEndpoint;
  world_settings.checkpoint_interval_ms =
      OrDefault(settings.checkpoint_interval_ms,
                OrDefault(settings.save_interval_ms, limits::kCharacterSaveIntervalMs));
  return RunServeParts(
      settings,
      ServeParts{.world = std::move(world_settings),
                 .pack = shared_pack,
                 .accounts = &db->accounts(),
                 .backends = WorldBackends{.characters = &db->characters(),
                                           .mail = &db->mail(),
                                           .directory = &directory,
                                           .checkpoints = &db->checkpoints(),
                                           .audit = &db->audit(),
                                           .social = &db->social(),
                                           .store_name = "sqlite",
                                           .store_ping = [] { return Status::Ok(); },
                                           .directory_name = "directory",
                                           .directory_ping = [] { return Status::Ok(); },
                                           .bus = &bus,
                                           .records = &db->records(),
                                           .streams = events->get()},
                 .assertion_key = &assertion_key,
                 .handoff_key = &handoff_key,
                 .mode = "embedded",
                 .events = events->get(),
                 .records = &db->records(),
                 .arcade_db_path = settings.arcade.enabled ? store_options.path : ""},
      clock, log, metrics);
}

int RunServeParts(const ServeSettings& settings, ServeParts parts, const Clock& clock, Logger& log,
                  Metrics& metrics) {
  WorldRoleSettings& world_settings = parts.world;
  world_settings.content_dir = settings.content_dir;
  world_settings.link_dead_ms = settings.link_dead_ms;
  world_settings.save_interval_ms = settings.save_interval_ms;
  if (settings.checkpoint_interval_ms != 0) {
    world_settings.checkpoint_interval_ms = settings.checkpoint_interval_ms;
  }
  world_settings.output_pulse_ms = settings.output_pulse_ms;
  world_settings.seed = settings.seed;

  // --- Threads: the event loop for sockets and zones, and a pool for blocking work.
  RoleThreads threads(settings.blocking_threads);
  asio::io_context& io = threads.io();
  const BlockingRunner blocking = threads.blocking();
  threads.Run(settings.io_threads, settings.zone_threads);

  // --- Accounts: the login screens in process; a claim is an assertion the world verifies.
  AccountStack accounts(*parts.accounts, *parts.backends.characters, settings.password_passes,
                        settings.password_memory_kib, clock, log, metrics, settings.account_limits);
  // The same desk the account service serves: login tickets, gate-bound short-lived assertions.
  account::LocalAccountDesk desk(accounts.service, *parts.assertion_key, clock,
                                 account::LocalAccountDeskOptions{settings.assertion_ttl_ms});
  shard::AccountPasswords passwords(desk, blocking);

  // --- The world shard, and the gate that reaches it in memory (other shards of a fleet over
  // gRPC), with the two listeners.
  WorldProcess world(world_settings, parts.pack, parts.backends, parts.assertion_key->verify_key(),
                     *parts.handoff_key, &passwords, io, threads.zone_io(), blocking, clock, log,
                     metrics);
  GateProcessOptions gate_options;
  gate_options.front = settings.front;
  gate_options.gate_id = world_settings.shard_id;
  gate_options.gate_token = world_settings.gate_token;
  gate_options.role = "serve";
  gate_options.link_dead_ms = settings.link_dead_ms;
  gate_options.login_timeout_ms = settings.login_timeout_ms;
  GateProcess gate(gate_options, *parts.pack, desk, *parts.backends.directory, io, blocking, clock,
                   log, metrics, [&world, mode = parts.mode] {
                     net::HealthReport report = world.Health();
                     boost::json::object members{{"mode", mode}};
                     for (auto& member : report.members) {
                       members.emplace(member.key(), std::move(member.value()));
                     }
                     report.members = std::move(members);
                     return report;
                   });
  gate.AddInProcessShard(world_settings.advertise, world.shard());
  // --- The arcade: its games on the SQLite ledger, the casino's commands, its HTTP API.
  std::unique_ptr<ArcadeWiring> arcade;
  if (!parts.arcade_db_path.empty()) {
    auto opened = ArcadeWiring::Open(settings.arcade, parts.arcade_db_path, settings.data_dir,
                                     blocking, clock, log);
    if (!opened.ok()) {
      std::fprintf(stderr, "telos serve: the arcade: %s\n", opened.status().ToString().c_str());
      threads.Join();
      return 1;
    }
    arcade = std::move(*opened);
    world.SetArcade(&arcade->port());
    AddArcadeRoutes(gate.http(), arcade->casino(), desk, blocking);
  }
  world.AddRecordsRoute(gate.http(), blocking);
  // Alone, the world's roster is everyone online, with levels and zones.
  if (world_settings.listen_address.empty()) gate.SetWho([&world] { return world.Who(); });

  Status started = world.Start();
  if (started.ok()) started = gate.Start();
  if (started.ok() && arcade) {
    arcade->Start([&world](const std::string& text, const world::OutputEvent& event) {
      world.ToCasino(text, event);
    });
  }
  if (!started.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", started.message().c_str());
    log.Error("cannot start", {{"error", started.ToString()}});
    gate.Stop("");
    world.Stop();
    threads.Join();
    // A duplicate shard id and a diverging content pack are configuration errors.
    return started.code() == StatusCode::kAlreadyExists ||
                   started.code() == StatusCode::kFailedPrecondition
               ? kExitConfigError
               : 1;
  }

  // --- The director, in process on the same backends: it leads its scope alone and tallies the
  // game events; a fleet runs `telos director` processes instead.
  std::unique_ptr<shard::RecordsAnnouncer> announcer;
  std::unique_ptr<director::Director> director;
  std::unique_ptr<director::DirectorService> director_service;
  if (parts.events != nullptr) {
    director::DirectorOptions director_options;
    director_options.leadership.scope = "fleet";
    director_options.leadership.candidate = world_settings.shard_id + "-director";
    director_options.colocation_groups = ColocationGroupsOf(*parts.pack);
    // Each event applied once is announced to every player (the fleet's director does the same).
    if (parts.backends.bus != nullptr && parts.records != nullptr) {
      announcer = std::make_unique<shard::RecordsAnnouncer>(
          *parts.backends.bus, world_settings.subject_prefix, parts.pack, *parts.records, log);
      director_options.tally.on_applied = [&announcer](const store::GameEvent& e) {
        announcer->OnApplied(e);
      };
    }
    director_options.tally.metrics = &metrics;
    director = std::make_unique<director::Director>(*parts.backends.directory, clock, log, metrics,
                                                    director_options, parts.events, parts.records);
    director_service = std::make_unique<director::DirectorService>(
        *director, parts.backends.bus, world_settings.subject_prefix, log);
    director_service->Start();
  }

  // --- Run until a signal.
  StopSignal stop(io, log);
  // The same fleet-wide reload `telos ctl reload` runs, on this process's own backends.
  auto reload = std::make_unique<ReloadSignal>(
      io, log, [&world, &log] { LogFleetReload(world.ReloadFleet(), log); });
  log.Info("ready", {{"telnet_port", static_cast<int64_t>(gate.telnet_port())},
                     {"http_port", static_cast<int64_t>(gate.http_port())},
                     {"admin_address", settings.front.admin.address},
                     {"admin_port", static_cast<int64_t>(gate.admin_port())},
                     {"grpc_port", static_cast<int64_t>(world.grpc_port())},
                     {"shard", world_settings.shard_id}});
  stop.Wait();
  reload->Stop();  // a reload under way is not waited for: the drain goes first

  // --- Graceful stop: tell everyone and close the streams (characters stay in the world), then
  // drain to a peer if there is one, stop every zone (each player is frozen and saved), flush
  // the saves and close the sockets.
  gate.Stop(kShutdownMessage);
  if (arcade) arcade->Stop();  // the round under way is refunded
  if (director_service) director_service->Stop();
  const WorldProcess::StopReport report = world.Stop();
  reload.reset();  // the reload thread, refused by the stopped world, ends (the bus still runs)
  threads.Join();
  log.Info("stopped", {{"players_saved", static_cast<int64_t>(report.players_saved)},
                       {"flushed", report.flushed}});
  return report.flushed && report.zones_stopped ? 0 : 1;
}

}  // namespace telos::app
