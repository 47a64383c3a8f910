#include "director_role.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>

#include "telos/base/limits.h"
#include "telos/bus/jetstream.h"
#include "telos/bus/nats_bus.h"
#include "telos/director/director_service.h"
#include "telos/directory/cluster_view.h"
#include "telos/directory/redis_directory.h"
#include "telos/net/admin_routes.h"
#include "telos/net/http_server.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/records_announcer.h"
#include "telos/store/game_events.h"
#include "telos/store/postgres_store.h"
#include "version.h"

namespace telos::app {
namespace {

constexpr const char* kRole = "telos director";
// A lease shorter than this leaves no room for one renewal between TTL/3 and the step-down
// margin; the e2e tests shorten it this far and no further.
constexpr int64_t kDirectorLeaseTtlMsMin = 1'500;

std::string DefaultDirectorId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "host");
  return "director-" + std::string(host) + "-" + std::to_string(getpid());
}

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > limits::kDirectoryIdBytesMax) return false;
  for (const char c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
  }
  return true;
}

}  // namespace

std::vector<director::ColocationGroup> ColocationGroupsOf(const world::Pack& pack) {
  std::map<std::string, std::vector<std::string>> groups;
  for (const auto& zone : pack.zones) {
    if (!zone.colocation_group.empty()) groups[zone.colocation_group].push_back(zone.id);
  }
  std::vector<director::ColocationGroup> out;
  for (auto& [name, zones] : groups) {
    // A group bigger than the planner takes would be refused whole; it is split rather than
    // dropped, so its zones still stay together in runs.
    for (size_t i = 0; i < zones.size(); i += limits::kDirectorZonesPerColocationGroupMax) {
      const size_t end = std::min(zones.size(), i + limits::kDirectorZonesPerColocationGroupMax);
      out.push_back(director::ColocationGroup{
          i == 0 ? name : name + "#" + std::to_string(i),
          std::vector<std::string>(zones.begin() + static_cast<std::ptrdiff_t>(i),
                                   zones.begin() + static_cast<std::ptrdiff_t>(end))});
    }
  }
  return out;
}

Result<boost::json::object> DirectorViewJson(directory::Directory& directory,
                                             const std::string& scope,
                                             const director::Director* self) {
  auto section = director::ReadDirectorSection(directory, scope);
  if (!section.ok()) return section.status();
  boost::json::array directives;
  for (const auto& d : section->directives) {
    directives.push_back(boost::json::object{{"zone", d.zone},
                                             {"from", d.from},
                                             {"to", d.to},
                                             {"epoch", d.epoch},
                                             {"ttl_ms", d.ttl_ms}});
  }
  boost::json::object out{{"scope", scope}};
  if (section->leader) {
    out["leader"] = section->leader->holder;
    out["epoch"] = section->leader->term;
    out["lease_ttl_ms"] = section->leader->ttl_ms;  // time left, as the directory judged it
  } else {
    out["leader"] = nullptr;
    out["epoch"] = 0;
    out["lease_ttl_ms"] = 0;
  }
  out["pending_directives"] = directives.size();
  out["directives"] = std::move(directives);
  if (self != nullptr) {
    // What only the answering director knows: when it last planned and issued (null: never).
    const director::DirectorSnapshot snapshot = self->Snapshot();
    auto ago = [](int64_t ms) -> boost::json::value {
      if (ms < 0) return nullptr;
      return ms;
    };
    out["this_director"] =
        boost::json::object{{"id", self->options().leadership.candidate},
                            {"leading", snapshot.leading},
                            {"last_plan_ago_ms", ago(snapshot.last_plan_ago_ms)},
                            {"last_issued_ago_ms", ago(snapshot.last_issued_ago_ms)},
                            {"moves_issued", snapshot.moves_issued},
                            {"moves_completed", snapshot.moves_completed},
                            {"moves_expired", snapshot.moves_expired}};
  }
  return out;
}

Result<DirectorRoleSettings> ReadDirectorRoleSettings(const Config& config) {
  DirectorRoleSettings s;
  director::DirectorOptions& o = s.options;
  TELOS_READ_SETTING(s.scope, config.String("TELOS_DIRECTOR_SCOPE", s.scope));
  TELOS_READ_SETTING(s.director_id, config.String("TELOS_DIRECTOR_ID", ""));
  TELOS_READ_SETTING(s.content_dir, config.String("TELOS_CONTENT_DIR", s.content_dir));
  TELOS_READ_SETTING(s.admin, net::ReadAdminBind(config, s.admin.port, 0));
  int64_t ttl_ms = 0;
  TELOS_READ_SETTING(ttl_ms,
                     config.Int("TELOS_DIRECTOR_LEASE_TTL_MS", directory::kLeaderLeaseTtlMsDefault,
                                kDirectorLeaseTtlMsMin, 600'000));
  TELOS_READ_SETTING(o.plan_interval_ms,
                     config.Int("TELOS_DIRECTOR_PLAN_INTERVAL_MS", o.plan_interval_ms, 100,
                                limits::kFleetDurationMsMax));
  TELOS_READ_SETTING(o.directive_ttl_ms,
                     config.Int("TELOS_DIRECTOR_DIRECTIVE_TTL_MS", o.directive_ttl_ms, 1'000,
                                limits::kFleetDurationMsMax));
  TELOS_READ_SETTING(o.rebalance.margin_players,
                     config.Int("TELOS_DIRECTOR_MARGIN_PLAYERS", o.rebalance.margin_players, 0,
                                limits::kDirectorMarginPlayersMax));
  TELOS_READ_SETTING(
      o.rebalance.moves_in_flight_max,
      config.Int("TELOS_DIRECTOR_MOVES_IN_FLIGHT_MAX", o.rebalance.moves_in_flight_max, 1,
                 limits::kDirectorMovesInFlightMax));
  TELOS_READ_SETTING(o.rebalance.zone_cooldown_ms,
                     config.Int("TELOS_DIRECTOR_ZONE_COOLDOWN_MS", o.rebalance.zone_cooldown_ms, 0,
                                limits::kDirectorZoneCooldownMsMax));
  if (!ValidId(s.scope)) {
    return Status::InvalidArgument(
        "TELOS_DIRECTOR_SCOPE: want a non-empty name of at most 256 bytes without control "
        "characters");
  }
  if (s.director_id.empty()) s.director_id = DefaultDirectorId();
  if (!ValidId(s.director_id)) {
    return Status::InvalidArgument(
        "TELOS_DIRECTOR_ID: want a non-empty name of at most 256 bytes without control "
        "characters");
  }
  o.leadership.scope = s.scope;
  o.leadership.candidate = s.director_id;
  o.leadership.lease_ttl_ms = ttl_ms;
  o.leadership.renew_interval_ms = directory::RenewIntervalMs(ttl_ms);
  // The margin scales down with a shortened lease so renew + margin stays below the TTL.
  o.leadership.step_down_margin_ms =
      std::min<int64_t>(director::kLeaderStepDownMarginMsDefault, ttl_ms / 6);
  o.leadership.retry_ms = std::min<int64_t>(director::kLeaderRetryMsDefault, ttl_ms / 6);
  if (Status valid = director::ValidateDirectorOptions(o); !valid.ok()) {
    return Status::InvalidArgument("TELOS_DIRECTOR_*: " + valid.message());
  }
  if (auto redis = RedisOptionsFromConfig(config); !redis.ok()) return redis.status();
  auto nats = NatsOptionsFromConfig(config);
  if (!nats.ok()) return nats.status();
  auto database = config.Secret("TELOS_DATABASE_URL", "");
  if (!database.ok()) return database.status();
  s.tally = !nats->url.empty() && !database->empty();
  if (s.tally) {
    if (auto pg = PostgresOptionsFromConfig(config); !pg.ok()) return pg.status();
  }
  return s;
}

int RunDirectorRole(const DirectorRoleSettings& settings, const Config& config) {
  auto level = LogLevelFromConfig(config);
  if (!level.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, level.status().message().c_str());
    return kExitConfigError;
  }
  Logger log("director", *level);
  SystemClock clock;
  Metrics metrics;
  log.Info("starting",
           {{"version", kVersion}, {"scope", settings.scope}, {"director", settings.director_id}});

  auto pack = LoadPackOrReport(settings.content_dir, kRole);
  if (!pack) return kExitConfigError;
  director::DirectorOptions options = settings.options;
  options.colocation_groups = ColocationGroupsOf(*pack);

  const directory::RedisOptions redis = *RedisOptionsFromConfig(config);
  directory::RedisDirectory directory(redis, clock);
  const bus::NatsBusOptions nats = *NatsOptionsFromConfig(config);

  // The bus for drain targets; without NATS, draining shards choose their targets themselves.
  std::unique_ptr<bus::NatsBus> bus;
  std::unique_ptr<bus::JetStreamStreams> streams;
  std::unique_ptr<bus::Subscription> parked_watch;
  std::unique_ptr<store::PostgresStore> db;
  if (!nats.url.empty()) {
    bus::NatsBusOptions bus_options = nats;
    bus_options.name = "telos-director " + settings.director_id;
    auto connected = bus::NatsBus::Connect(bus_options, log);
    if (!connected.ok()) {
      std::fprintf(stderr, "%s: TELOS_NATS: %s\n", kRole, connected.status().message().c_str());
      return kExitConfigError;
    }
    bus = std::move(*connected);
  } else {
    log.Warn("TELOS_NATS unset: no drain-target answers and no game-event tally");
  }
  if (settings.tally) {
    auto pg = *PostgresOptionsFromConfig(config);
    pg.application_name = "telos-director";
    auto opened = store::PostgresStore::Open(pg, clock);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s: cannot open PostgreSQL at TELOS_DATABASE_URL: %s\n", kRole,
                   opened.status().ToString().c_str());
      return opened.status().code() == StatusCode::kInvalidArgument ? kExitConfigError : 1;
    }
    db = std::move(*opened);
    bus::JetStreamOptions js;
    js.connection = nats;
    js.connection.name = "telos-director-tally " + settings.director_id;
    auto connected = bus::JetStreamStreams::Connect(js, log);
    if (!connected.ok()) {
      std::fprintf(stderr, "%s: TELOS_NATS: %s\n", kRole, connected.status().message().c_str());
      return kExitConfigError;
    }
    streams = std::move(*connected);
    // Every director watches (leader or standby): the queue group has one of them count each
    // parked event, so the fleet's commbus_durable_parked_total is the true count.
    auto watch = streams->WatchParked(std::string(store::kGameEventStream), metrics);
    if (!watch.ok()) {
      std::fprintf(stderr, "%s: TELOS_NATS: %s\n", kRole, watch.status().message().c_str());
      return kExitConfigError;
    }
    parked_watch = std::move(*watch);
  } else if (!nats.url.empty()) {
    log.Warn("TELOS_DATABASE_URL unset: no game-event tally");
  }

  // Each event applied once is announced to every world's players (origin "director").
  std::unique_ptr<shard::RecordsAnnouncer> announcer;
  if (bus != nullptr && db != nullptr) {
    announcer = std::make_unique<shard::RecordsAnnouncer>(
        *bus, shard::SubjectPrefixFor(redis.key_namespace), pack, db->records(), log);
    options.tally.on_applied = [&announcer](const store::GameEvent& e) { announcer->OnApplied(e); };
  }
  options.tally.metrics = &metrics;
  director::Director director(directory, clock, log, metrics, options, streams.get(),
                              db ? &db->records() : nullptr);
  director::DirectorService service(director, bus.get(),
                                    shard::SubjectPrefixFor(redis.key_namespace), log);

  RoleThreads threads(2);
  boost::asio::io_context& io = threads.io();
  threads.Run(1);
  std::atomic<bool> stopping{false};
  const auto health = [&director, &stopping, &settings] {
    boost::json::object members{{"role", "director"},
                                {"version", kVersion},
                                {"scope", settings.scope},
                                {"director", settings.director_id},
                                {"leading", director.is_leader()},
                                {"epoch", director.epoch()}};
    if (stopping) return net::HealthReport::Unavailable("stopping", std::move(members));
    return net::HealthReport{true, std::move(members)};
  };
  net::HttpServer admin(io, net::AdminServerOptions(settings.admin), log);
  net::AddAdminRoutes(admin, metrics, health);
  std::vector<std::string> zones;
  for (const auto& zone : pack->zones) zones.push_back(zone.id);
  admin.HandleBlocking(
      "/api/cluster",
      [&directory, &settings, &director, zones](const net::HttpRequest&) {
        auto view = directory::ReadClusterView(directory, zones, "director", settings.director_id);
        auto director_view = DirectorViewJson(directory, settings.scope, &director);
        if (!view.ok() || !director_view.ok()) {
          return net::HttpResponse::Json(
              503, boost::json::serialize(boost::json::object{{"error", "directory unavailable"}}));
        }
        boost::system::error_code ec;
        boost::json::value body = boost::json::parse(directory::ClusterViewJson(*view), ec);
        if (ec || !body.is_object()) {
          return net::HttpResponse::Json(
              500, boost::json::serialize(boost::json::object{{"error", "cluster view"}}));
        }
        body.as_object()["director"] = std::move(*director_view);
        return net::HttpResponse::Json(200, boost::json::serialize(body));
      },
      threads.blocking());
  auto admin_port = admin.Start();
  if (!admin_port.ok()) {
    std::fprintf(stderr, "%s: TELOS_ADMIN_BIND/TELOS_ADMIN_PORT: %s\n", kRole,
                 admin_port.status().message().c_str());
    admin.Stop();
    threads.Join();
    return 1;
  }
  service.Start();

  StopSignal stop(io, log);
  log.Info("ready", {{"scope", settings.scope},
                     {"director", settings.director_id},
                     {"drain_targets_subject", service.subject()},
                     {"tally", streams != nullptr},
                     {"admin_address", settings.admin.address},
                     {"admin_port", static_cast<int64_t>(*admin_port)}});
  stop.Wait();

  // The lease is given up at once, so a standby leads without waiting out the TTL.
  stopping = true;
  service.Stop();
  admin.Stop();
  threads.Join();
  log.Info("stopped");
  return 0;
}

}  // namespace telos::app
