#include "serve.h"

#include <boost/asio.hpp>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <random>
#include <thread>

#include "telos/account/account_service.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/gate/gate.h"
#include "telos/net/admin_routes.h"
#include "telos/net/http_server.h"
#include "telos/shard/store_ports.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/asio_executor.h"
#include "telos/world/mail_ping.h"
#include "telos/world/world_host.h"
#include "version.h"
#include "web_files.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
constexpr std::chrono::milliseconds kShutdownFlushTimeout{15000};
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
  TELOS_READ_SETTING(s.output_pulse_ms, config.Int("TELOS_OUTPUT_PULSE_MS", s.output_pulse_ms, 0,
                                                   limits::kOutputPulseMsMax));
  TELOS_READ_SETTING(s.password_memory_kib, config.Int("TELOS_PASSWORD_MEMORY_KIB",
                                                       s.password_memory_kib, 8, 4 * 1024 * 1024));
  TELOS_READ_SETTING(s.password_passes,
                     config.Int("TELOS_PASSWORD_PASSES", s.password_passes, 1, 10));
  TELOS_READ_SETTING(s.account_limits, ReadAccountLimits(config));
  TELOS_READ_SETTING(s.seed, config.Int("TELOS_SEED", 0, 0, INT64_MAX));
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

  // --- Stores.
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

  // --- Threads: the event loop for sockets and zones, and a pool for blocking work.
  RoleThreads threads(settings.blocking_threads);
  asio::io_context& io = threads.io();
  const BlockingRunner blocking = threads.blocking();
  threads.Run(settings.io_threads, settings.zone_threads);

  // --- Accounts, persistence and the world.
  AccountStack accounts(db->accounts(), db->characters(), settings.password_passes,
                        settings.password_memory_kib, clock, log, metrics, settings.account_limits);
  shard::StorePersistence persistence(db->characters(), metrics, log);
  persistence.Start();
  shard::StoreMail store_mail(db->mail(), blocking);
  world::WorldHost* pinged_host = nullptr;  // set once the host exists, before any zone runs
  world::PingingMail mail(
      store_mail, [&pinged_host](const std::string& to, const std::string& from) {
        (void)pinged_host->Notify(world::NameKey(to), world::PingingMail::PingLine(from));
      });
  account::LocalAccountDesk desk(accounts.service);
  shard::AccountPasswords passwords(desk, blocking);

  world::ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = &log;
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &mail;
  deps.passwords = &passwords;
  deps.save_interval_ms = OrDefault(settings.save_interval_ms, limits::kCharacterSaveIntervalMs);
  deps.output_pulse_ms = settings.output_pulse_ms;
  const uint64_t seed =
      settings.seed != 0 ? static_cast<uint64_t>(settings.seed) : std::random_device{}();
  world::WorldHost host(
      shared_pack, deps,
      [&threads](const std::string&) { return world::MakeStrandExecutor(threads.zone_io()); },
      seed);
  pinged_host = &host;
  if (Status s = host.StartAllZones(); !s.ok()) {
    log.Error("zones did not start", {{"error", s.ToString()}});
    persistence.Stop();
    return 1;
  }

  // --- The gate and the two listeners.
  gate::InProcessWorldLink link(host);
  gate::GateOptions gate_options;
  gate_options.start_room = shared_pack->start_room;
  gate_options.link_dead_ms = OrDefault(settings.link_dead_ms, limits::kLinkDeadMs);
  gate_options.login_timeout_ms = OrDefault(settings.login_timeout_ms, limits::kLoginTimeoutMs);
  gate::Gate gate(gate_options, io, blocking, desk, link, &persistence, clock, log, metrics);

  FrontDoor front(
      io, settings.front, gate.TerminalFactory(),
      [&host, &shared_pack] {
        return std::vector<std::pair<std::string, std::string>>{
            {"NAME", "TelosMUD"},
            {"PLAYERS", std::to_string(host.online_count())},
            {"CODEBASE", std::string("TelosMUD ") + kVersion},
            {"ROOMS", std::to_string(shared_pack->RoomCount())},
            {"ANSI", "1"},
            {"GMCP", "1"},
            {"MCCP", "1"},
            {"UTF-8", "1"}};
      },
      clock, log, metrics);
  net::AddAdminRoutes(front.http(), metrics, [&host, &gate] {
    return net::HealthReport{true, "\"role\":\"serve\",\"version\":\"" + std::string(kVersion) +
                                       "\",\"players\":" + std::to_string(host.online_count()) +
                                       ",\"sessions\":" + std::to_string(gate.sessions()) +
                                       ",\"zones\":" + std::to_string(host.RunningZones().size())};
  });
  front.http().Handle("/api/who", [&host](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, WhoJson(host.Who()));
  });

  if (Status s = front.Start(); !s.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", s.message().c_str());
    log.Error("cannot listen", {{"error", s.ToString()}});
    front.Stop();
    (void)host.StopAllZones(kShutdownFlushTimeout, nullptr);
    persistence.Stop();
    return 1;
  }

  // --- Run until a signal.
  StopSignal stop(io, log);
  log.Info("ready", {{"telnet_port", static_cast<int64_t>(front.telnet_port())},
                     {"http_port", static_cast<int64_t>(front.http_port())}});
  stop.Wait();

  // --- Graceful stop: tell everyone, save everyone, close every socket.
  gate.BeginShutdown(kShutdownMessage);
  std::atomic<size_t> players_saved = 0;
  const size_t zones_left = host.StopAllZones(
      kShutdownFlushTimeout,
      [&](std::vector<world::PlayerTransfer> frozen) { players_saved += frozen.size(); });
  const bool zones_stopped = zones_left == 0;
  if (!zones_stopped) {
    log.Error(
        "graceful stop incomplete: zones did not stop in time; their players may not be saved",
        {{"zones_left", static_cast<int64_t>(zones_left)}});
  }
  const Status flushed = persistence.FlushAll(kShutdownFlushTimeout);
  persistence.Stop();
  front.Stop();
  threads.Join();
  log.Info("stopped", {{"players_saved", static_cast<int64_t>(players_saved.load())},
                       {"flushed", flushed.ok()}});
  return flushed.ok() && zones_stopped ? 0 : 1;
}

}  // namespace telos::app
