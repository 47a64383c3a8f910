#include "world_process.h"

#include <random>
#include <set>

#include <condition_variable>

#include "role_common.h"
#include "telos/base/limits.h"
#include "telos/bus/nats_bus.h"
#include "telos/directory/cluster_view.h"
#include "telos/rpc/channels.h"
#include "telos/world/asio_executor.h"
#include "version.h"

namespace telos::app {
namespace {

constexpr std::chrono::milliseconds kStopTimeout{15000};
constexpr std::chrono::milliseconds kDrainDeadline{45000};
// How often Redis and PostgreSQL are probed for the degradation ladder.
constexpr std::chrono::milliseconds kProbeInterval{1000};

}  // namespace

// Hosts what the lease keeper wins; a lost lease stops the zone at once, drops its unwritten
// saves and sends its players back to their gates to be routed to the next owner, who loads
// them from their last write. A zone the keeper cannot confirm because
// Redis is unreachable keeps running, its saves held back until the lease is confirmed again
// (single-shard mode), and dropped if a peer won it meanwhile.
class WorldProcess::Hosting final : public shard::ZoneHosting {
 public:
  Hosting(world::WorldHost& host, shard::WorldShard& shard, shard::StorePersistence& persistence,
          store::CharacterStore& characters, const DependencyHealth& health, std::string shard_id,
          Logger& log)
      : host_(host),
        shard_(shard),
        persistence_(persistence),
        characters_(characters),
        health_(health),
        shard_id_(std::move(shard_id)),
        log_(log) {}

  Status StartZone(const std::string& zone, uint64_t epoch) override {
    TELOS_RETURN_IF_ERROR(RaiseFence(zone, epoch));
    persistence_.SetLeaseEpoch(zone, epoch);
    persistence_.ReleaseZone(zone);  // a new tenure writes again
    return host_.StartZone(zone);
  }
  void StopZone(const std::string& zone, const std::string& why) override {
    // The lease is lost or past its fence (or was suspended): what the zone did since is not
    // ours to write, and neither are its players' saves as they are frozen out (invariant 1).
    // They resume from their last write at the zone's next owner.
    persistence_.DropZone(zone);
    const Status s = host_.StopZone(zone, [this, zone](std::vector<world::PlayerTransfer> players) {
      log_.Warn("zone stopped",
                {{"zone", zone}, {"players", static_cast<int64_t>(players.size())}});
      shard_.Evacuate(std::move(players));
    });
    if (!s.ok()) log_.Warn("zone stop failed", {{"zone", zone}, {"why", why}});
  }
  void SuspendZone(const std::string& zone, const std::string&) override {
    persistence_.HoldZone(zone);
  }
  Status ResumeZone(const std::string& zone, uint64_t epoch) override {
    TELOS_RETURN_IF_ERROR(RaiseFence(zone, epoch));
    // Saves held meanwhile carry the old epoch: written if this is the same tenure, refused by
    // the store's zone fence if the lease was won anew (the next save carries the new one).
    persistence_.SetLeaseEpoch(zone, epoch);
    persistence_.ReleaseZone(zone);
    return Status::Ok();
  }
  uint64_t EpochFloor(const std::string& zone) override {
    std::lock_guard lock(mu_);
    auto it = floors_.find(zone);
    return it == floors_.end() ? 0 : it->second;
  }

 private:
  // The store's zone fence is raised to the new tenure before the zone writes, so every save
  // of an older tenure is refused from now on. A fence already above `epoch` means the
  // directory lost its epochs (an empty Redis): refuse, and claim again above the fence.
  // PostgreSQL unreachable: start anyway; the first save raises the fence itself.
  Status RaiseFence(const std::string& zone, uint64_t epoch) {
    // Known down: do not block the lease keeper's pass on a connect timeout.
    if (!health_.up("postgres")) {
      log_.Warn("zone fence not raised (PostgreSQL down): the first save will raise it",
                {{"zone", zone}, {"epoch", epoch}});
      return Status::Ok();
    }
    auto fence = characters_.RaiseZoneFence(zone, static_cast<int64_t>(epoch), shard_id_);
    if (!fence.ok()) {
      log_.Warn("zone fence not raised: the first save will raise it",
                {{"zone", zone}, {"epoch", epoch}, {"error", fence.status().ToString()}});
      return Status::Ok();
    }
    if (*fence > static_cast<int64_t>(epoch)) {
      {
        std::lock_guard lock(mu_);
        floors_[zone] = static_cast<uint64_t>(*fence) + 1;
      }
      log_.Warn("lease epoch below the zone's durable fence: claiming again above it",
                {{"zone", zone}, {"epoch", epoch}, {"fence", *fence}});
      return Status::FailedPrecondition("zone " + zone + " was written at lease epoch " +
                                        std::to_string(*fence) + ", above " +
                                        std::to_string(epoch));
    }
    return Status::Ok();
  }

  world::WorldHost& host_;
  shard::WorldShard& shard_;
  shard::StorePersistence& persistence_;
  store::CharacterStore& characters_;
  const DependencyHealth& health_;
  const std::string shard_id_;
  Logger& log_;
  std::mutex mu_;                           // StartZone also runs on gRPC threads (Adopt)
  std::map<std::string, uint64_t> floors_;  // guarded by mu_
};

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
                         world::PasswordPort& passwords, int64_t save_interval_ms,
                         int64_t output_pulse_ms) {
  world::ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = &log;
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &mail;
  deps.passwords = &passwords;
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
                           const auth::VerifyKey& assertion_key,
                           const auth::SigningKey& handoff_key, world::PasswordPort* passwords,
                           boost::asio::io_context& io, boost::asio::io_context& zone_io,
                           BlockingRunner blocking, const Clock& clock, Logger& log,
                           Metrics& metrics, std::function<Status()> redis_ping)
    : settings_(settings),
      pack_(std::move(pack)),
      directory_(directory),
      clock_(clock),
      log_(log),
      drain_redirected_(metrics.Counter("shard_drain_redirected_total",
                                        "Players handed to a peer during a graceful drain")),
      drain_reclaimed_(metrics.Counter(
          "shard_drain_reclaimed_total",
          "Players saved and routed again by their gates because a drain could not hand them")),
      pool_(ResolveZonePool(settings, *pack_).value_or(std::vector<std::string>{})),
      no_passwords_(std::make_unique<NoPasswords>()),
      persistence_(db.characters(), metrics, log),
      store_mail_(db.mail(), blocking),
      mail_(store_mail_,
            [this](const std::string& to, const std::string& from) {
              if (comms_ != nullptr) {
                comms_->PingMail(to, from);
              } else {
                (void)host_.Notify(world::NameKey(to), world::PingingMail::PingLine(from));
              }
            }),
      host_(
          pack_,
          MakeDeps(
              clock, log, metrics, persistence_, mail_,
              passwords != nullptr ? *passwords : *no_passwords_,
              checkpoints != nullptr ? settings.checkpoint_interval_ms : settings.save_interval_ms,
              settings.output_pulse_ms),
          [&zone_io](const std::string&) { return world::MakeStrandExecutor(zone_io); },
          SeedOf(settings)),
      shard_(ShardOptions(settings, *pack_), host_, directory, db.characters(), persistence_,
             assertion_key, handoff_key, io, blocking, clock, log, metrics),
      hosting_(std::make_unique<Hosting>(host_, shard_, persistence_, db.characters(), health_,
                                         settings.shard_id, log)),
      keeper_(KeeperOptions(settings, pool_), directory, *hosting_, clock, log, metrics),
      health_(log, metrics) {
  host_.SetFleetHooks(&shard_);
  persistence_.SetShard(settings.shard_id);
  persistence_.OnOwnerFenced([this](const std::string& name_key) { shard_.EvictStale(name_key); });
  health_.Declare("redis", "single-shard mode");
  health_.Declare("postgres", "new characters are ephemeral; saves wait");
  health_.AddProbe("redis", std::move(redis_ping));
  health_.AddProbe("postgres", [&db] { return db.Ping(); });
  // Without Redis no handoff can move a placement: exits to other shards are sealed meanwhile.
  health_.OnChange([this](const std::string& name, bool up) {
    if (name == "redis") shard_.SetSealed(!up);
  });
  if (!settings.nats_url.empty()) {
    health_.Declare("nats", "tells, channels and mail pings across shards disabled");
    auto connected = bus::NatsBus::Connect(
        bus::NatsBusOptions{.url = settings.nats_url, .name = "telos-world " + settings.shard_id},
        log);
    if (connected.ok()) {
      bus_ = std::move(*connected);
      bus_->OnConnectionChange([this](bool up) { health_.Report("nats", up); });
      shard::FleetCommsOptions comms_options;
      comms_options.shard_id = settings.shard_id;
      comms_options.subject_prefix = settings.subject_prefix;
      comms_ = std::make_unique<shard::FleetComms>(comms_options, *bus_, directory, host_, io,
                                                   blocking, log, metrics);
      host_.SetRemoteComms(comms_.get());
      shard_.SetComms(comms_.get());
    } else {
      connect_error_ = connected.status();
    }
  } else {
    log.Warn("TELOS_NATS unset: tells and channels reach players on this shard only");
  }
  shard_.SetAdopter(
      [this](const std::string& zone, uint64_t epoch) { return keeper_.Adopt(zone, epoch); });
  if (checkpoints != nullptr) {
    // The durability ladder: checkpoints every checkpoint_interval_ms, rows every
    // save_interval_ms; a load plays the freshest of the two.
    persistence_.EnableCheckpoints(
        *checkpoints, clock, OrDefault(settings.save_interval_ms, limits::kCharacterSaveIntervalMs),
        metrics);
    shard_.SetCheckpoints(checkpoints);
  }
  keeper_.SetOccupancySource([this] {
    std::map<std::string, int64_t> counts;
    for (const auto& entry : host_.Who()) ++counts[entry.zone];
    std::vector<directory::ZoneCount> zones;
    for (const auto& [zone, players] : counts) zones.push_back({zone, players});
    return zones;
  });
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
  if (bus_ != nullptr) health_.Report("nats", bus_->connected());
  health_.Start(kProbeInterval);
  if (comms_ != nullptr) {
    if (Status s = comms_->Start(); !s.ok()) return s;
  }
  if (Status s = host_.StartZone(pack_->start_room.zone); !s.ok()) return s;

  grpc::ServerBuilder builder;
  rpc::ConfigureServer(builder);
  int bound_port = 0;
  builder.AddListeningPort(settings_.listen_address, grpc::InsecureServerCredentials(),
                           &bound_port);
  builder.RegisterService(&shard_);
  server_ = builder.BuildAndStart();
  if (!server_ || bound_port == 0) {
    return Status::Unavailable("cannot listen on TELOS_WORLD_LISTEN=" + settings_.listen_address);
  }
  grpc_port_ = static_cast<uint16_t>(bound_port);

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
  return Status::Ok();
}

void WorldProcess::Stop() {
  if (stopped_ || !started_) return;
  stopped_ = true;
  if (grpc_port_ != 0) Drain();
  shard_.Stop();
  keeper_.Stop(false);
  const size_t zones_left = host_.StopAllZones(
      kStopTimeout,
      [this](std::vector<world::PlayerTransfer> frozen) { shard_.Evacuate(std::move(frozen)); });
  if (zones_left != 0) {
    log_.Error("zones did not stop in time; their players may not be saved",
               {{"zones_left", static_cast<int64_t>(zones_left)}});
  }
  persistence_.SubmitHeld();  // single-shard mode's held saves: the zone fence judges them
  if (Status flushed = persistence_.FlushAll(kStopTimeout); !flushed.ok()) {
    log_.Error("saves not flushed at stop", {{"error", flushed.ToString()}});
  }
  if (comms_ != nullptr) comms_->Stop();
  health_.Stop();
  keeper_.Stop(true);  // only now may a peer claim the zones
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  persistence_.Stop();
}

void WorldProcess::Drain() {
  const Instant started = clock_.Now();
  shard_.BeginDrain();
  auto shards = directory_.ListShards();
  std::vector<directory::ShardInfo> peers;
  if (shards.ok()) {
    for (const auto& shard : *shards) {
      if (shard.id != settings_.shard_id && !shard.endpoint.empty()) peers.push_back(shard);
    }
  }
  log_.Info("signal received: draining before shutdown",
            {{"zones", static_cast<int64_t>(keeper_.held().size())},
             {"peers", static_cast<int64_t>(peers.size())}});
  if (peers.empty()) {
    log_.Warn("drain: no live peer; players are saved and wait for a new owner");
    return;
  }
  auto endpoint_of = [&peers](const std::string& id) {
    for (const auto& peer : peers) {
      if (peer.id == id) return peer.endpoint;
    }
    return std::string();
  };
  struct Progress {
    std::mutex mu;
    std::condition_variable cv;
    size_t zones_left = 0, redirected = 0, reclaimed = 0;
  };
  auto progress = std::make_shared<Progress>();
  std::map<std::string, int64_t> occupancy;
  for (const auto& entry : host_.Who()) ++occupancy[entry.zone];
  std::vector<directory::Reservation> reservations;

  // Hands the zone's players to `to` once it hosts the zone (or, for the lobby, at once).
  auto hand_over = [&](const std::string& zone, const directory::ZoneOwner& to) {
    {
      std::lock_guard lock(progress->mu);
      ++progress->zones_left;
    }
    const Status stopping =
        host_.StopZone(zone, [this, progress, to](std::vector<world::PlayerTransfer> frozen) {
          shard_.HandOver(std::move(frozen), to, [progress](size_t redirected, size_t reclaimed) {
            std::lock_guard lock(progress->mu);
            progress->redirected += redirected;
            progress->reclaimed += reclaimed;
            --progress->zones_left;
            progress->cv.notify_all();
          });
        });
    if (!stopping.ok()) {
      std::lock_guard lock(progress->mu);
      --progress->zones_left;
    }
  };

  for (const auto& [zone, epoch] : keeper_.held()) {
    directory::DrainTargetRequest request;
    request.exclude = {settings_.shard_id};
    request.amount = std::max<int64_t>(1, occupancy[zone]);  // a reservation holds at least one
    auto target = directory_.SelectDrainTarget(request);
    if (!target.ok()) {
      log_.Warn("drain: no target for a zone",
                {{"zone", zone}, {"error", target.status().ToString()}});
      continue;
    }
    reservations.push_back(target->reservation);
    const std::string peer = target->reservation.target;
    // One fenced step: the lease is never ownerless.
    auto moved =
        directory_.TransferZone(zone, settings_.shard_id, epoch, peer, settings_.lease_ttl_ms);
    if (!moved.ok()) {
      log_.Warn("drain: lease transfer failed",
                {{"zone", zone}, {"error", moved.status().ToString()}});
      continue;
    }
    keeper_.Forget(zone);
    const directory::ZoneOwner to{peer, endpoint_of(peer), moved->epoch, moved->ttl_ms};
    if (Status adopted = shard_.CallAdopt(to, zone, moved->epoch); !adopted.ok()) {
      log_.Warn("drain: peer did not adopt the zone; its players will be routed again",
                {{"zone", zone}, {"peer", peer}, {"error", adopted.ToString()}});
    }
    log_.Info("drain: zone moved", {{"zone", zone}, {"to", peer}, {"epoch", moved->epoch}});
    hand_over(zone, to);
  }
  // The lobby runs on every shard: its players go to the least loaded peer's.
  directory::DrainTargetRequest lobby_request;
  lobby_request.exclude = {settings_.shard_id};
  lobby_request.amount = std::max<int64_t>(1, occupancy[pack_->start_room.zone]);
  if (auto target = directory_.SelectDrainTarget(lobby_request); target.ok()) {
    reservations.push_back(target->reservation);
    const std::string peer = target->reservation.target;
    hand_over(pack_->start_room.zone, directory::ZoneOwner{peer, endpoint_of(peer), 0, 0});
  }

  bool complete = false;
  {
    std::unique_lock lock(progress->mu);
    complete =
        progress->cv.wait_for(lock, kDrainDeadline, [&] { return progress->zones_left == 0; });
  }
  for (const auto& reservation : reservations) {
    (void)directory_.ReleaseReservation(reservation.target, reservation.id);
  }
  std::lock_guard lock(progress->mu);
  drain_redirected_.Increment(static_cast<double>(progress->redirected));
  drain_reclaimed_.Increment(static_cast<double>(progress->reclaimed));
  const int64_t took_ms = ElapsedMs(started, clock_.Now());
  if (complete) {
    log_.Info("drain complete", {{"redirected", static_cast<int64_t>(progress->redirected)},
                                 {"reclaimed", static_cast<int64_t>(progress->reclaimed)},
                                 {"took_ms", took_ms}});
  } else {
    log_.Error("graceful drain incomplete",
               {{"zones_left", static_cast<int64_t>(progress->zones_left)},
                {"redirected", static_cast<int64_t>(progress->redirected)},
                {"reclaimed", static_cast<int64_t>(progress->reclaimed)},
                {"took_ms", took_ms}});
  }
}

void WorldProcess::AddRoutes(net::HttpServer& http) {
  std::vector<std::string> all_zones;
  for (const auto& zone : pack_->zones) all_zones.push_back(zone.id);
  http.Handle("/api/cluster", [this, all_zones](const net::HttpRequest&) {
    auto view = directory::ReadClusterView(directory_, all_zones, "world", settings_.shard_id);
    if (!view.ok()) return net::HttpResponse::Json(503, "{\"error\":\"directory unavailable\"}");
    return net::HttpResponse::Json(200, directory::ClusterViewJson(*view));
  });
  http.Handle("/api/who", [this](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, WhoJson(host_.Who()));
  });
}

std::string WorldProcess::HealthMembers() const {
  return "\"shard\":\"" + settings_.shard_id +
         "\",\"players\":" + std::to_string(host_.online_count()) +
         ",\"zones\":" + std::to_string(host_.RunningZones().size()) +
         ",\"standby\":" + (keeper_.standby() ? "true" : "false") +
         ",\"gates\":" + std::to_string(shard_.streams()) + "," + health_.JsonMembers();
}

}  // namespace telos::app
