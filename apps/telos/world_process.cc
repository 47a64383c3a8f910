#include "world_process.h"

#include <boost/json.hpp>
#include <random>
#include <set>

#include <condition_variable>

#include "role_common.h"
#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/bus/jetstream.h"
#include "telos/bus/nats_bus.h"
#include "telos/directory/cluster_view.h"
#include "telos/rpc/channels.h"
#include "telos/shard/drain_target_client.h"
#include "telos/world/asio_executor.h"
#include "telos/world/who_json.h"
#include "version.h"

namespace telos::app {
namespace {

constexpr std::chrono::milliseconds kStopTimeout{15000};
constexpr int64_t kDrainDeadlineMs = limits::kShardDrainDeadlineMs;
// How often Redis and PostgreSQL are probed for the degradation ladder.
constexpr std::chrono::milliseconds kProbeInterval{1000};

}  // namespace

// Without an account service, in-game password changes are refused.
class WorldProcess::NoPasswords final : public world::PasswordPort {
 public:
  void Change(std::string, std::string, std::string, std::function<void(Status)> done) override {
    done(Status::Unavailable("password changes are not available here"));
  }
};

Result<std::vector<std::string>> ResolveZonePool(const WorldRoleSettings& settings,
                                                 const world::Pack& pack) {
  const std::string& lobby = pack.start_room.zone;
  std::vector<std::string> pool = settings.zone_pool;
  if (pool.empty()) {
    for (const auto& zone : pack.zones) {
      if (zone.id != lobby) pool.push_back(zone.id);
    }
  }
  for (const auto& zone : pool) {
    if (pack.FindZone(zone) == nullptr || zone == lobby) {
      return Status::InvalidArgument("TELOS_ZONE_POOL: '" + zone +
                                     "' is not a leasable zone of pack " + pack.name);
    }
  }
  return pool;
}

namespace {

world::ZoneDeps MakeDeps(const Clock& clock, Logger& log, Metrics& metrics,
                         world::CharacterPersistence& persistence, world::MailPort& mail,
                         world::PasswordPort& passwords, world::SocialPort* social,
                         int64_t save_interval_ms, int64_t output_pulse_ms) {
  world::ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = &log;
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &mail;
  deps.passwords = &passwords;
  deps.social = social;
  deps.save_interval_ms = OrDefault(save_interval_ms, limits::kCharacterSaveIntervalMs);
  deps.output_pulse_ms = output_pulse_ms;
  return deps;
}

shard::WorldShardOptions ShardOptions(const WorldRoleSettings& settings, const world::Pack& pack) {
  shard::WorldShardOptions options;
  options.shard_id = settings.shard_id;
  options.endpoint = settings.advertise;
  options.lobby_zone = pack.start_room.zone;
  options.link_dead_ms = OrDefault(settings.link_dead_ms, limits::kLinkDeadMs);
  options.version = kVersion;
  options.zone_lease_ttl_ms = settings.lease_ttl_ms;
  return options;
}

shard::ZoneLeaseKeeperOptions KeeperOptions(const WorldRoleSettings& settings,
                                            std::vector<std::string> pool) {
  shard::ZoneLeaseKeeperOptions options;
  options.shard_id = settings.shard_id;
  options.endpoint = settings.advertise;
  options.pool = std::move(pool);
  options.lease_ttl_ms = settings.lease_ttl_ms;
  options.shard_ttl_ms = settings.lease_ttl_ms;
  return options;
}

uint64_t SeedOf(const WorldRoleSettings& settings) {
  return settings.seed != 0 ? static_cast<uint64_t>(settings.seed) : std::random_device{}();
}

}  // namespace

WorldProcess::WorldProcess(const WorldRoleSettings& settings,
                           std::shared_ptr<const world::Pack> pack, store::PostgresStore& db,
                           directory::Directory& directory, store::CheckpointStore* checkpoints,
                           const auth::KeyRing& assertion_keys, const auth::SigningKey& handoff_key,
                           world::PasswordPort* passwords, boost::asio::io_context& io,
                           boost::asio::io_context& zone_io, BlockingRunner blocking,
                           const Clock& clock, Logger& log, Metrics& metrics,
                           std::function<Status()> redis_ping)
    : WorldProcess(settings, std::move(pack),
                   WorldBackends{.characters = &db.characters(),
                                 .mail = &db.mail(),
                                 .directory = &directory,
                                 .checkpoints = checkpoints,
                                 .audit = &db.audit(),
                                 .social = &db.social(),
                                 .store_name = "postgres",
                                 .store_ping = [&db] { return db.Ping(); },
                                 .directory_name = "redis",
                                 .directory_ping = std::move(redis_ping),
                                 .records = &db.records()},
                   assertion_keys, handoff_key, passwords, io, zone_io, std::move(blocking), clock,
                   log, metrics) {}

WorldProcess::WorldProcess(const WorldRoleSettings& settings,
                           std::shared_ptr<const world::Pack> pack, WorldBackends backends,
                           const auth::KeyRing& assertion_keys, const auth::SigningKey& handoff_key,
                           world::PasswordPort* passwords, boost::asio::io_context& io,
                           boost::asio::io_context& zone_io, BlockingRunner blocking,
                           const Clock& clock, Logger& log, Metrics& metrics)
    : settings_(settings),
      backends_(std::move(backends)),
      pack_(std::move(pack)),
      directory_(*backends_.directory),
      log_(log),
      pool_(ResolveZonePool(settings, *pack_).value_or(std::vector<std::string>{})),
      no_passwords_(std::make_unique<NoPasswords>()),
      persistence_(*backends_.characters, metrics, log),
      store_mail_(*backends_.mail, blocking),
      mail_(store_mail_,
            [this](const std::string& to, const std::string& from) {
              if (comms_ != nullptr) {
                comms_->PingMail(to, from);
              } else {
                (void)host_.Notify(world::NameKey(to), world::PingingMail::PingLine(from));
              }
            }),
      social_(backends_.social != nullptr
                  ? std::make_unique<shard::StoreSocial>(*backends_.social, directory_, blocking)
                  : nullptr),
      host_(
          pack_,
          MakeDeps(clock, log, metrics, persistence_, mail_,
                   passwords != nullptr ? *passwords : *no_passwords_, social_.get(),
                   backends_.checkpoints != nullptr ? settings.checkpoint_interval_ms
                                                    : settings.save_interval_ms,
                   settings.output_pulse_ms),
          [&zone_io](const std::string&) { return world::MakeStrandExecutor(zone_io); },
          SeedOf(settings)),
      peers_(settings.world_token),
      shard_(ShardOptions(settings, *pack_), host_, directory_, *backends_.characters, persistence_,
             assertion_keys, handoff_key, peers_, io, blocking, clock, log, metrics),
      service_(shard_,
               shard::WorldServiceOptions{.gate_token = settings.gate_token,
                                          .world_token = settings.world_token},
               log),
      tenure_(shard::ZoneTenureDeps{.host = &host_,
                                    .persistence = &persistence_,
                                    .characters = backends_.characters,
                                    .log = &log,
                                    .shard_id = settings.shard_id,
                                    .store_up = [this] { return health_.up(backends_.store_name); },
                                    .evacuate =
                                        [this](std::vector<world::PlayerTransfer> players) {
                                          shard_.Evacuate(std::move(players));
                                        }}),
      keeper_(KeeperOptions(settings, pool_), directory_, tenure_, clock, log, metrics),
      drain_(shard::ShardDrainOptions{.shard_id = settings.shard_id,
                                      .lobby_zone = pack_->start_room.zone,
                                      .lease_ttl_ms = settings.lease_ttl_ms,
                                      .deadline_ms = kDrainDeadlineMs,
                                      .endpoint = settings.advertise},
             directory_, keeper_, host_, shard_, clock, log, metrics),
      directives_(shard::DirectiveExecutorOptions{.shard_id = settings.shard_id}, directory_,
                  keeper_, drain_, log, metrics),
      health_(log, metrics) {
  host_.SetFleetHooks(&shard_);
  persistence_.SetShard(settings.shard_id);
  persistence_.OnOwnerFenced([this](const std::string& name_key) { shard_.EvictStale(name_key); });
  health_.Declare(backends_.directory_name, "single-shard mode");
  health_.Declare(backends_.store_name, "new characters are ephemeral; saves wait");
  health_.AddProbe(backends_.directory_name, backends_.directory_ping);
  health_.AddProbe(backends_.store_name, backends_.store_ping);
  // Without the directory no handoff can move a placement: exits to other shards are sealed
  // meanwhile.
  health_.OnChange([this](const std::string& name, bool up) {
    if (name == backends_.directory_name) shard_.SetSealed(!up);
  });
  if (backends_.bus != nullptr) {
    StartComms(*backends_.bus, io, blocking, clock, log, metrics);
  } else if (!settings.nats_url.empty()) {
    health_.Declare("nats", "tells, channels and mail pings across shards disabled");
    auto connected =
        bus::NatsBus::Connect(bus::NatsBusOptions{.url = settings.nats_url,
                                                  .name = "telos-world " + settings.shard_id,
                                                  .credentials = settings.nats_credentials},
                              log);
    if (connected.ok()) {
      nats_ = std::move(*connected);
      nats_->OnConnectionChange([this](bool up) { health_.Report("nats", up); });
      StartComms(*nats_, io, blocking, clock, log, metrics);
    } else {
      connect_error_ = connected.status();
    }
  } else {
    log.Warn("TELOS_NATS unset: tells and channels reach players on this shard only");
  }
  if (backends_.audit != nullptr) {
    audit_ = std::make_unique<shard::StoreAuditPort>(*backends_.audit, blocking, log, metrics);
    host_.SetAuditPort(audit_.get(), settings.shard_id);
  } else {
    host_.SetAuditPort(nullptr, settings.shard_id);  // the log lines still name this world
  }
  StartGameEvents(io, blocking, clock, log, metrics);
  shard_.SetAdopter(
      [this](const std::string& zone, uint64_t epoch) { return keeper_.Adopt(zone, epoch); });
  if (backends_.checkpoints != nullptr) {
    // The durability ladder: checkpoints every checkpoint_interval_ms, rows every
    // save_interval_ms; a load plays the freshest of the two.
    persistence_.EnableCheckpoints(
        *backends_.checkpoints, clock,
        OrDefault(settings.save_interval_ms, limits::kCharacterSaveIntervalMs), metrics);
    shard_.SetCheckpoints(backends_.checkpoints);
  }
  keeper_.SetOccupancySource([this] {
    std::map<std::string, int64_t> counts;
    for (const auto& entry : host_.Who()) ++counts[entry.zone];
    std::vector<directory::ZoneCount> zones;
    for (const auto& [zone, players] : counts) zones.push_back({zone, players});
    return zones;
  });
}

void WorldProcess::StartComms(bus::Bus& bus, boost::asio::io_context& io, BlockingRunner blocking,
                              const Clock& clock, Logger& log, Metrics& metrics) {
  shard::FleetCommsOptions comms_options;
  comms_options.shard_id = settings_.shard_id;
  comms_options.subject_prefix = settings_.subject_prefix;
  comms_ = std::make_unique<shard::FleetComms>(comms_options, bus, directory_, host_, io, blocking,
                                               log, metrics);
  // A SIGTERM drain asks the leader director for targets over the same bus.
  drain_.SetTargetAsk(shard::MakeDrainTargetAsk(
      shard::DrainTargetClientOptions{.shard_id = settings_.shard_id,
                                      .subject_prefix = settings_.subject_prefix,
                                      .scope = settings_.director_scope},
      bus, log));
  // Staff orders to other worlds carry the issuer's assertion; orders from them are believed
  // only on one the account service signed.
  shard::StaffAuth staff_auth;
  staff_auth.assertion_of = [this](const std::string& name_key) {
    return shard_.AssertionOf(name_key);
  };
  staff_auth.verify_keys = shard_.assertion_keys();
  staff_auth.clock = &clock;
  comms_->SetStaffAuth(std::move(staff_auth));
  host_.SetRemoteComms(comms_.get());
  host_.SetRemoteBroadcasts(comms_.get());
  shard_.SetComms(comms_.get());
  bus_ = &bus;
  // The degradation ladder: rebuilding a zone saves everyone in it, so no reload while the
  // character store is down (the bus being down, the request never arrives).
  reload_agent_ = std::make_unique<shard::PackReloadAgent>(
      shard::PackReloadAgentOptions{.shard_id = settings_.shard_id,
                                    .subject_prefix = settings_.subject_prefix,
                                    .content_dir = settings_.content_dir},
      bus, host_, std::move(blocking),
      [this]() -> std::string {
        if (health_.up(backends_.store_name)) return "";
        const std::string store =
            backends_.store_name == "postgres" ? "PostgreSQL" : backends_.store_name;
        return store + " is down on " + settings_.shard_id +
               ": hot reload is disabled until it is back";
      },
      log);
}

shard::FleetReloadReport WorldProcess::ReloadFleet() {
  shard::FleetReloadReport report;
  std::vector<world::Problem> problems;
  auto pack = world::LoadPack(settings_.content_dir, &problems);
  if (!pack.ok()) {
    report.status = Status::InvalidArgument("hot reload refused: the pack in " +
                                            settings_.content_dir + " is invalid; nothing changed");
    for (const world::Problem& p : problems) report.lines.push_back(p.ToString());
    return report;
  }
  if (bus_ == nullptr) {
    report.status = Status::Unavailable(
        "hot reload refused: this world has no bus (TELOS_NATS is unset), and hot reload runs "
        "over it");
    return report;
  }
  return shard::ReloadFleet(*bus_, directory_, *pack, settings_.subject_prefix, log_);
}

void WorldProcess::StartGameEvents(boost::asio::io_context& io, const BlockingRunner& blocking,
                                   const Clock& clock, Logger& log, Metrics& metrics) {
  if (backends_.records == nullptr) return;
  records_port_ = std::make_unique<shard::StoreRecords>(*backends_.records, blocking);
  host_.SetRecords(records_port_.get());
  bus::DurableStreams* streams = backends_.streams;
  if (streams == nullptr && !settings_.nats_url.empty()) {
    // Its own connection: the durable stream's calls wait for answers that comms must not.
    auto connected = bus::JetStreamStreams::Connect(
        bus::JetStreamOptions{.connection = {.url = settings_.nats_url,
                                             .name = "telos-world-events " + settings_.shard_id,
                                             .credentials = settings_.nats_credentials}},
        log);
    if (connected.ok()) {
      jetstream_ = std::move(*connected);
      streams = jetstream_.get();
    } else if (connect_error_.ok()) {
      connect_error_ = connected.status();
    }
  }
  if (streams == nullptr) return;
  game_events_ = std::make_unique<shard::GameEventPublisher>(
      shard::GameEventPublisherOptions{.source = settings_.shard_id}, *streams, *backends_.records,
      io, blocking, clock, log, metrics);
  host_.SetGameEvents(game_events_.get());
}

WorldProcess::~WorldProcess() {
  Stop();
}

Status WorldProcess::Start() {
  if (!connect_error_.ok()) {
    return Status::InvalidArgument("TELOS_NATS: " + connect_error_.message());
  }
  persistence_.Start();
  started_ = true;
  if (nats_ != nullptr) health_.Report("nats", nats_->connected());
  health_.Start(kProbeInterval);
  if (comms_ != nullptr) {
    if (Status s = comms_->Start(); !s.ok()) return s;
  }
  if (reload_agent_ != nullptr) {
    if (Status s = reload_agent_->Start(); !s.ok()) return s;
  }
  if (Status s = host_.StartZone(pack_->start_room.zone); !s.ok()) return s;

  if (!settings_.listen_address.empty()) {
    grpc::ServerBuilder builder;
    rpc::ConfigureServer(builder);
    int bound_port = 0;
    builder.AddListeningPort(settings_.listen_address, grpc::InsecureServerCredentials(),
                             &bound_port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    if (!server_ || bound_port == 0) {
      return Status::Unavailable("cannot listen on TELOS_WORLD_LISTEN=" + settings_.listen_address);
    }
    grpc_port_ = static_cast<uint16_t>(bound_port);
  }

  // Worlds of one fleet must run the same content: a handoff between different packs would
  // put players in rooms that do not exist, or mean something else.
  if (auto divergence = shard_.FindPackDivergence()) {
    if (!settings_.allow_insecure) {
      log_.Error("refusing to start: content pack differs from the fleet's",
                 {{"ours", pack_->content_hash}, {"peer", *divergence}});
      return Status::FailedPrecondition("refusing to start: our content pack " +
                                        pack_->content_hash + " differs: " + *divergence +
                                        " (TELOS_ALLOW_INSECURE=1 starts anyway)");
    }
    log_.Warn("insecure: content pack differs from the fleet's (TELOS_ALLOW_INSECURE)",
              {{"ours", pack_->content_hash}, {"peer", *divergence}});
  }
  if (Status s = keeper_.Register(); !s.ok()) {
    log_.Error("refusing to start: shard registration failed", {{"error", s.ToString()}});
    return s;
  }
  shard_.Start();
  keeper_.Start();
  // Rebalancing moves zones between worlds that can reach each other: only with a listener.
  if (grpc_port_ != 0) directives_.Start();
  phase_ = Phase::kServing;
  return Status::Ok();
}

WorldProcess::StopReport WorldProcess::Stop() {
  StopReport report;
  if (stopped_ || !started_) return report;
  stopped_ = true;
  if (reload_agent_ != nullptr) reload_agent_->Stop();  // no reload starts while zones stop
  host_.RefuseReloads();  // nor from anywhere else; one already rebuilding, StopZone waits for
  // A load balancer or an operator watching /api/health sees the drain begin.
  phase_ = grpc_port_ != 0 ? Phase::kDraining : Phase::kStopping;
  directives_.Stop();  // a rebalance move in flight ends (bounded) before the drain starts
  if (grpc_port_ != 0) (void)drain_.Run();
  shard_.Stop();
  keeper_.Stop(false);
  std::atomic<size_t> frozen_players = 0;
  const size_t zones_left = host_.StopAllZones(
      kStopTimeout, [this, &frozen_players](std::vector<world::PlayerTransfer> frozen) {
        frozen_players += frozen.size();
        shard_.Evacuate(std::move(frozen));
      });
  report.zones_stopped = zones_left == 0;
  report.players_saved = frozen_players.load();
  if (zones_left != 0) {
    log_.Error("zones did not stop in time; their players may not be saved",
               {{"zones_left", static_cast<int64_t>(zones_left)}});
  }
  persistence_.SubmitHeld();  // single-shard mode's held saves: the zone fence judges them
  if (Status flushed = persistence_.FlushAll(kStopTimeout); !flushed.ok()) {
    report.flushed = false;
    log_.Error("saves not flushed at stop", {{"error", flushed.ToString()}});
  }
  if (comms_ != nullptr) comms_->Stop();
  // After the zones: a boss killed in their last moments is still queued, and tried once more.
  if (game_events_ != nullptr) game_events_->Stop();
  health_.Stop();
  keeper_.Stop(true);  // only now may a peer claim the zones
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  persistence_.Stop();
  return report;
}

void WorldProcess::AddRoutes(net::HttpServer& http) {
  http.Handle("/api/who", [this](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, world::WhoJson(host_.Who()));
  });
}

void WorldProcess::AddRecordsRoute(net::HttpServer& http, BlockingRunner blocking) {
  http.HandleBlocking(
      "/api/records",
      [this](const net::HttpRequest&) {
        if (backends_.records == nullptr) {
          return net::HttpResponse::Json(
              404, boost::json::serialize(boost::json::object{{"error", "no records here"}}));
        }
        auto tallies = backends_.records->Tallies();
        if (!tallies.ok()) {
          return net::HttpResponse::Json(
              503, boost::json::serialize(boost::json::object{{"error", "records unavailable"}}));
        }
        std::vector<world::RecordLine> lines;
        for (const store::Tally& t : *tallies) {
          lines.push_back({t.kind, t.subject, t.count, t.first_actor, t.first_at_ms, t.last_actor,
                           t.last_at_ms});
        }
        return net::HttpResponse::Json(200, world::RecordsJson(*pack_, lines));
      },
      std::move(blocking));
}

void WorldProcess::AddAdminRoutes(net::HttpServer& admin, BlockingRunner blocking) {
  std::vector<std::string> all_zones;
  for (const auto& zone : pack_->zones) all_zones.push_back(zone.id);
  admin.HandleBlocking(
      "/api/cluster",
      [this, all_zones](const net::HttpRequest&) {
        auto view = directory::ReadClusterView(directory_, all_zones, "world", settings_.shard_id);
        if (!view.ok()) {
          return net::HttpResponse::Json(
              503, boost::json::serialize(boost::json::object{{"error", "directory unavailable"}}));
        }
        return net::HttpResponse::Json(200, directory::ClusterViewJson(*view));
      },
      std::move(blocking));
}

net::HealthReport WorldProcess::Health() const {
  boost::json::object members{{"shard", SanitizeUtf8(settings_.shard_id)},
                              {"players", host_.online_count()},
                              {"zones", host_.RunningZones().size()},
                              {"standby", keeper_.standby()},
                              {"gates", shard_.streams()}};
  health_.AddHealthMembers(members);
  switch (phase_.load()) {
    case Phase::kStarting: return net::HealthReport::Unavailable("starting", std::move(members));
    case Phase::kDraining: return net::HealthReport::Unavailable("draining", std::move(members));
    case Phase::kStopping: return net::HealthReport::Unavailable("stopping", std::move(members));
    case Phase::kServing: break;
  }
  // Every world runs the lobby; none running means nowhere to put a player.
  if (host_.RunningZones().empty()) {
    return net::HealthReport::Unavailable("no zone running", std::move(members));
  }
  return net::HealthReport{true, std::move(members)};
}

}  // namespace telos::app
