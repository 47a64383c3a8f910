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
#include "telos/net/telnet_server.h"
#include "telos/shard/store_ports.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/asio_executor.h"
#include "telos/world/world_host.h"
#include "version.h"
#include "web_files.h"

namespace telos::app {
namespace {

namespace asio = boost::asio;
constexpr std::chrono::milliseconds kShutdownFlushTimeout{15000};
constexpr const char* kShutdownMessage =
    "\nThe world is pausing for maintenance. Your progress is saved; please come back soon.";

// Keep a setting at its built-in default when its variable is unset.
template <typename T>
T OrDefault(T value, T fallback) {
  return value != T{} ? value : fallback;
}

std::string WhoJson(const std::vector<world::WhoEntry>& who) {
  std::string out = "{\"count\":" + std::to_string(who.size()) + ",\"players\":[";
  for (size_t i = 0; i < who.size(); ++i) {
    if (i != 0) out += ',';
    out += "{\"name\":\"";
    AppendJsonEscaped(out, who[i].name);
    out += "\",\"level\":" + std::to_string(who[i].level) + ",\"zone\":\"";
    AppendJsonEscaped(out, who[i].zone);
    out += "\"}";
  }
  return out + "]}";
}

}  // namespace

Result<ServeSettings> ReadServeSettings(const Config& config) {
  ServeSettings s;
#define TELOS_READ(field, expr)             \
  do {                                      \
    auto value = (expr);                    \
    if (!value.ok()) return value.status(); \
    s.field = *value;                       \
  } while (false)
  TELOS_READ(bind_address, config.String("TELOS_BIND", s.bind_address));
  TELOS_READ(telnet_port, config.Port("TELOS_TELNET_PORT", s.telnet_port));
  TELOS_READ(http_port, config.Port("TELOS_HTTP_PORT", s.http_port));
  TELOS_READ(data_dir, config.String("TELOS_DATA_DIR", s.data_dir));
  TELOS_READ(content_dir, config.String("TELOS_CONTENT_DIR", s.content_dir));
  TELOS_READ(web_dir, config.String("TELOS_WEB_DIR", s.web_dir));
  TELOS_READ(io_threads, config.Int("TELOS_IO_THREADS", s.io_threads, 1, 64));
  TELOS_READ(blocking_threads, config.Int("TELOS_BLOCKING_THREADS", s.blocking_threads, 1, 64));
  TELOS_READ(link_dead_ms, config.Int("TELOS_LINK_DEAD_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ(login_timeout_ms, config.Int("TELOS_LOGIN_TIMEOUT_MS", 0, 0, 3600 * 1000));
  TELOS_READ(save_interval_ms, config.Int("TELOS_SAVE_INTERVAL_MS", 0, 0, 3600 * 1000));
  TELOS_READ(idle_timeout_ms, config.Int("TELOS_IDLE_TIMEOUT_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ(connections_per_address,
             config.Int("TELOS_CONNECTIONS_PER_ADDRESS_MAX", 0, 0, 1'000'000));
  int64_t lines_per_second = 0;
  {
    auto v = config.Int("TELOS_INPUT_LINES_PER_SECOND", 0, 0, 10'000);
    if (!v.ok()) return v.status();
    lines_per_second = *v;
  }
  s.input_lines_per_second = static_cast<double>(lines_per_second);
  TELOS_READ(password_memory_kib,
             config.Int("TELOS_PASSWORD_MEMORY_KIB", s.password_memory_kib, 8, 4 * 1024 * 1024));
  TELOS_READ(password_passes, config.Int("TELOS_PASSWORD_PASSES", s.password_passes, 1, 10));
  TELOS_READ(seed, config.Int("TELOS_SEED", 0, 0, INT64_MAX));
#undef TELOS_READ
  if (s.bind_address.empty()) return Status::InvalidArgument("TELOS_BIND: must not be empty");
  return s;
}

int RunServe(const ServeSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "telos serve: %s\n", level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("serve", *level);
  SystemClock clock;
  Metrics metrics;
  log.Info("starting", {{"version", kVersion},
                        {"data_dir", settings.data_dir},
                        {"content_dir", settings.content_dir}});

  // --- Content: an invalid pack never starts.
  std::vector<world::Problem> problems;
  auto pack = world::LoadPack(settings.content_dir, &problems);
  if (!pack.ok()) {
    std::fprintf(stderr, "telos serve: content pack %s is invalid:\n",
                 settings.content_dir.c_str());
    for (const auto& p : problems) std::fprintf(stderr, "  %s\n", p.ToString().c_str());
    if (problems.empty()) std::fprintf(stderr, "  %s\n", pack.status().message().c_str());
    return kExitConfigError;
  }
  auto shared_pack = std::make_shared<const world::Pack>(std::move(*pack));
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
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  asio::thread_pool blocking_pool(static_cast<size_t>(settings.blocking_threads));
  const BlockingRunner blocking = [&blocking_pool](std::function<void()> task) {
    asio::post(blocking_pool, std::move(task));
  };

  // --- Accounts, persistence and the world.
  account::PasswordCost cost{static_cast<uint64_t>(settings.password_passes),
                             static_cast<size_t>(settings.password_memory_kib) * 1024};
  if (cost.memory_bytes < account::PasswordCost{}.memory_bytes ||
      cost.passes < account::PasswordCost{}.passes) {
    log.Warn(
        "password hashing is below OWASP's argon2id minimum (TELOS_PASSWORD_*): "
        "insecure, for load tests only");
  }
  account::PasswordHasher hasher(cost);
  account::AddressThrottle throttle(clock, limits::kLoginFailuresPerAddressMax,
                                    std::chrono::milliseconds(limits::kLoginFailureWindowMs));
  account::AccountService accounts(db->accounts(), db->characters(), hasher, throttle, clock, log,
                                   metrics);
  shard::StorePersistence persistence(db->characters(), metrics, log);
  persistence.Start();
  shard::StoreMail mail(db->mail(), blocking);
  shard::AccountPasswords passwords(accounts, blocking);

  world::ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = &log;
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &mail;
  deps.passwords = &passwords;
  deps.save_interval_ms = OrDefault(settings.save_interval_ms, limits::kCharacterSaveIntervalMs);
  const uint64_t seed =
      settings.seed != 0 ? static_cast<uint64_t>(settings.seed) : std::random_device{}();
  world::WorldHost host(
      shared_pack, deps, [&io](const std::string&) { return world::MakeStrandExecutor(io); }, seed);
  if (Status s = host.StartAllZones(); !s.ok()) {
    log.Error("zones did not start", {{"error", s.ToString()}});
    return 1;
  }

  // --- The gate and the two listeners.
  gate::InProcessWorldLink link(host);
  gate::GateOptions gate_options;
  gate_options.start_room = shared_pack->start_room;
  gate_options.link_dead_ms = OrDefault(settings.link_dead_ms, limits::kLinkDeadMs);
  gate_options.login_timeout_ms = OrDefault(settings.login_timeout_ms, limits::kLoginTimeoutMs);
  gate::Gate gate(gate_options, io, blocking, accounts, link, persistence, clock, log, metrics);

  net::TelnetServerOptions telnet_options;
  telnet_options.bind_address = settings.bind_address;
  telnet_options.port = settings.telnet_port;
  telnet_options.idle_timeout_ms =
      OrDefault(settings.idle_timeout_ms, limits::kSessionIdleTimeoutMs);
  telnet_options.connections_per_address_max = static_cast<size_t>(
      OrDefault<int64_t>(settings.connections_per_address,
                         static_cast<int64_t>(limits::kTelnetConnectionsPerAddressMax)));
  telnet_options.input_lines_per_second =
      OrDefault(settings.input_lines_per_second, limits::kInputLinesPerSecond);
  telnet_options.mssp = [&host, &shared_pack] {
    return std::vector<std::pair<std::string, std::string>>{
        {"NAME", "TelosMUD"},
        {"PLAYERS", std::to_string(host.online_count())},
        {"CODEBASE", std::string("TelosMUD ") + kVersion},
        {"ROOMS", std::to_string(shared_pack->RoomCount())},
        {"ANSI", "1"},
        {"GMCP", "1"},
        {"MCCP", "1"},
        {"UTF-8", "1"}};
  };
  net::TelnetServer telnet(io, telnet_options, gate.TerminalFactory(), clock, log, metrics);

  net::HttpServerOptions http_options;
  http_options.bind_address = settings.bind_address;
  http_options.port = settings.http_port;
  http_options.connections_per_address_max = telnet_options.connections_per_address_max;
  net::HttpServer http(io, http_options, log);
  net::AddAdminRoutes(http, metrics, [&host, &gate] {
    return net::HealthReport{true, "\"role\":\"serve\",\"version\":\"" + std::string(kVersion) +
                                       "\",\"players\":" + std::to_string(host.online_count()) +
                                       ",\"sessions\":" + std::to_string(gate.sessions()) +
                                       ",\"zones\":" + std::to_string(host.RunningZones().size())};
  });
  http.Handle("/api/who", [&host](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, WhoJson(host.Who()));
  });
  net::WebSocketOptions ws_options;
  ws_options.idle_timeout_ms = telnet_options.idle_timeout_ms;
  ws_options.input_lines_per_second = telnet_options.input_lines_per_second;
  http.HandleWebSocket("/ws", gate.TerminalFactory(), clock, ws_options);
  if (auto files = ServeWebFiles(http, settings.web_dir); files.ok()) {
    log.Info("web client", {{"dir", settings.web_dir}, {"files", static_cast<int64_t>(*files)}});
  } else {
    log.Warn("web client not served", {{"error", files.status().ToString()}});
  }

  auto telnet_port = telnet.Start();
  auto http_port = telnet_port.ok() ? http.Start() : Result<uint16_t>(telnet_port.status());
  if (!telnet_port.ok() || !http_port.ok()) {
    const Status& s = telnet_port.ok() ? http_port.status() : telnet_port.status();
    std::fprintf(stderr, "telos serve: %s\n", s.message().c_str());
    log.Error("cannot listen", {{"error", s.ToString()}});
    // Nothing runs the event loop yet: stop it so the listeners' Stop() does not wait on it.
    work.reset();
    io.stop();
    telnet.Stop();
    http.Stop();
    persistence.Stop();
    return 1;
  }

  // --- Run until a signal.
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop_requested = false;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& error, int signal_number) {
    if (error) return;
    log.Info("signal received: shutting down", {{"signal", signal_number}});
    std::lock_guard lock(stop_mu);
    stop_requested = true;
    stop_cv.notify_all();
  });
  std::vector<std::thread> io_threads;
  for (int64_t i = 0; i < settings.io_threads; ++i) io_threads.emplace_back([&io] { io.run(); });
  log.Info("ready", {{"telnet_port", static_cast<int64_t>(*telnet_port)},
                     {"http_port", static_cast<int64_t>(*http_port)}});
  {
    std::unique_lock lock(stop_mu);
    stop_cv.wait(lock, [&] { return stop_requested; });
  }

  // --- Graceful stop: tell everyone, save everyone, close every socket.
  gate.BeginShutdown(kShutdownMessage);
  std::mutex zones_mu;
  std::condition_variable zones_cv;
  size_t zones_left = 0;
  size_t players_saved = 0;
  for (const auto& zone_id : host.RunningZones()) {
    std::lock_guard lock(zones_mu);
    const Status s = host.StopZone(zone_id, [&](std::vector<world::PlayerTransfer> frozen) {
      std::lock_guard inner(zones_mu);
      players_saved += frozen.size();
      --zones_left;
      zones_cv.notify_all();
    });
    if (s.ok()) ++zones_left;
  }
  bool zones_stopped;
  {
    std::unique_lock lock(zones_mu);
    zones_stopped = zones_cv.wait_for(lock, kShutdownFlushTimeout, [&] { return zones_left == 0; });
  }
  if (!zones_stopped) {
    log.Error(
        "graceful stop incomplete: zones did not stop in time; their players may not be saved",
        {{"zones_left", static_cast<int64_t>(zones_left)}});
  }
  const Status flushed = persistence.FlushAll(kShutdownFlushTimeout);
  persistence.Stop();
  telnet.Stop();
  http.Stop();
  work.reset();
  io.stop();
  for (auto& t : io_threads) t.join();
  blocking_pool.join();
  log.Info("stopped",
           {{"players_saved", static_cast<int64_t>(players_saved)}, {"flushed", flushed.ok()}});
  return flushed.ok() && zones_stopped ? 0 : 1;
}

}  // namespace telos::app
