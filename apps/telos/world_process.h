// The parts of a world shard, wired together: the world host, persistence on PostgreSQL, the
// WorldShard and its gRPC service, and the lease keeper. `telos world` runs one; `telos serve` runs
// one beside its gate when it joins a fleet.
//
// Lifecycle: construct (nothing listens), Start() (lobby, gRPC listener, shard registration —
// a duplicate live id is refused — then leases), ..., Stop() (no new arrivals; every zone
// stops and its players are saved and sent back to their gates; writes land; the leases are
// given up last so a peer can claim them at once).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "telos/auth/keys.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/dependency_health.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/bus.h"
#include "telos/bus/durable.h"
#include "telos/directory/directory.h"
#include "telos/net/admin_routes.h"
#include "telos/net/http_server.h"
#include "telos/shard/directive_executor.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/game_event_publisher.h"
#include "telos/shard/pack_reload.h"
#include "telos/shard/shard_drain.h"
#include "telos/shard/social_port.h"
#include "telos/shard/store_audit_port.h"
#include "telos/shard/store_ports.h"
#include "telos/shard/world_service.h"
#include "telos/shard/world_shard.h"
#include "telos/shard/zone_lease_keeper.h"
#include "telos/shard/zone_tenure.h"
#include "telos/store/postgres_store.h"
#include "telos/world/mail_ping.h"
#include "telos/world/world_host.h"
#include "world_role.h"

namespace telos::app {

// What a world shard runs on: PostgreSQL, Redis and NATS in a fleet; SQLite, the in-memory
// directory and the in-process bus in `telos serve`. The shard's code is the same on both.
struct WorldBackends {
  store::CharacterStore* characters = nullptr;
  store::MailStore* mail = nullptr;
  directory::Directory* directory = nullptr;
  store::CheckpointStore* checkpoints = nullptr;  // null: rows only (every save writes the row)
  // The staff audit trail (issue 30); null: the "audit" log lines are the only record.
  store::AuditStore* audit = nullptr;
  // Guilds, friends and locales; null: those commands say they are not kept here.
  store::SocialStore* social = nullptr;
  // The degradation ladder's names and probes for the store and the directory ("postgres",
  // "redis" in a fleet; "sqlite", "memory" embedded).
  std::string store_name = "postgres";
  std::function<Status()> store_ping;
  std::string directory_name = "redis";
  std::function<Status()> directory_ping;
  // The bus for comms across shards. Null: NATS at settings.nats_url, or none when unset.
  bus::Bus* bus = nullptr;
  // The fleet-wide records (the `records` command, /api/records) and this world's game-event
  // sequence. Null: no records here and no game events published.
  store::RecordsStore* records = nullptr;
  // Where game events are published (a boss killed). Null: NATS JetStream at
  // settings.nats_url, or none when unset.
  bus::DurableStreams* streams = nullptr;
};

class WorldProcess {
 public:
  // `passwords` may be null (in-game password changes refused). Every reference and pointer
  // must outlive this object. An empty settings.listen_address serves no gRPC: gates reach the
  // shard in process only (shard()), at the endpoint settings.advertise names.
  WorldProcess(const WorldRoleSettings& settings, std::shared_ptr<const world::Pack> pack,
               WorldBackends backends, const auth::KeyRing& assertion_keys,
               const auth::SigningKey& handoff_key, world::PasswordPort* passwords,
               boost::asio::io_context& io, boost::asio::io_context& zone_io,
               BlockingRunner blocking, const Clock& clock, Logger& log, Metrics& metrics);
  // A fleet world on PostgreSQL and Redis (`redis_ping` probes the directory's server).
  WorldProcess(const WorldRoleSettings& settings, std::shared_ptr<const world::Pack> pack,
               store::PostgresStore& db, directory::Directory& directory,
               store::CheckpointStore* checkpoints, const auth::KeyRing& assertion_keys,
               const auth::SigningKey& handoff_key, world::PasswordPort* passwords,
               boost::asio::io_context& io, boost::asio::io_context& zone_io,
               BlockingRunner blocking, const Clock& clock, Logger& log, Metrics& metrics,
               std::function<Status()> redis_ping);
  ~WorldProcess();

  // AlreadyExists: the shard id is live elsewhere; Unavailable: cannot listen or reach Redis.
  Status Start();
  // The handoff keys accepted on incoming snapshots, when they are more than the handoff
  // signing key's own (a rotation: WorldShard::SetHandoffVerifyKeys). REQUIRES: before Start().
  void SetHandoffVerifyKeys(auth::KeyRing keys) { shard_.SetHandoffVerifyKeys(std::move(keys)); }
  // What a stop did: players frozen (each one saved on the way out), whether every zone
  // stopped in time and every save was written.
  struct StopReport {
    size_t players_saved = 0;
    bool zones_stopped = true;
    bool flushed = true;
  };
  StopReport Stop();

  // /api/who on the public listener. REQUIRES: before the server starts.
  void AddRoutes(net::HttpServer& http);
  // /api/records on a public listener (the world's own, or serve's gate's): the fleet-wide
  // tallies as JSON, read on `blocking`. 503 while the store cannot be read; 404 when this
  // world keeps no records. REQUIRES: before the server starts.
  void AddRecordsRoute(net::HttpServer& http, BlockingRunner blocking);
  // /api/cluster on the admin listener: it names every shard's endpoint, and its directory
  // read runs on `blocking`, never on an io thread. REQUIRES: before the server starts.
  void AddAdminRoutes(net::HttpServer& admin, BlockingRunner blocking);
  // The world's part of /api/health: its members, and unavailable ("starting", "draining",
  // "stopping", "no zone running") while it cannot take players. A dependency that is down is
  // a degraded mode the world still serves in (listed in "degraded"), not a 503. Never blocks.
  net::HealthReport Health() const;
  uint16_t grpc_port() const { return grpc_port_; }
  // The shard, for gates in this process (FleetWorldLink::AddInProcessShard).
  rpc::InProcessPlay& shard() { return shard_; }
  size_t online_count() const { return host_.online_count(); }

  // Content hot reload of the whole fleet onto the pack in settings.content_dir, which this
  // world reads and validates first (a bad pack: InvalidArgument with its file:line problems in
  // the lines, nothing asked); then shard::ReloadFleet over this world's bus and directory.
  // Without a bus (a fleet world with no TELOS_NATS) it is refused. Blocks for up to the
  // reload's timeouts: call it on the blocking pool (SIGHUP does).
  shard::FleetReloadReport ReloadFleet();
  std::vector<world::WhoEntry> Who() const { return host_.Who(); }
  // The arcade behind the casino's commands. REQUIRES: before Start(); `arcade` outlives it.
  void SetArcade(world::ArcadePort* arcade) { host_.SetArcade(arcade); }
  // A line (may be empty) and a GMCP event for every player in the casino zones here.
  void ToCasino(const std::string& text, const world::OutputEvent& event) {
    host_.DeliverToZonesOfKind(world::ZoneKind::kCasino, text, event);
  }

 private:
  class NoPasswords;
  // Tells, channels and mail pings across shards over `bus`.
  void StartComms(bus::Bus& bus, boost::asio::io_context& io, BlockingRunner blocking,
                  const Clock& clock, Logger& log, Metrics& metrics);
  // The records port and, with a durable stream, the game-event publisher (a boss killed).
  void StartGameEvents(boost::asio::io_context& io, const BlockingRunner& blocking,
                       const Clock& clock, Logger& log, Metrics& metrics);

  const WorldRoleSettings settings_;
  const WorldBackends backends_;
  std::shared_ptr<const world::Pack> pack_;
  directory::Directory& directory_;
  Logger& log_;
  std::vector<std::string> pool_;
  std::unique_ptr<world::PasswordPort> no_passwords_;
  shard::StorePersistence persistence_;
  shard::StoreMail store_mail_;
  world::PingingMail mail_;                     // pings through comms_ (set before any zone runs)
  std::unique_ptr<shard::StoreSocial> social_;  // null without backends_.social
  // The staff audit trail's rows (null without backends_.audit); outlives host_'s zones.
  std::unique_ptr<shard::StoreAuditPort> audit_;
  world::WorldHost host_;
  // Calls to other worlds go over gRPC (a peer in this process too: it listens like any other).
  shard::GrpcWorldPeers peers_;
  shard::WorldShard shard_;
  // The gRPC face of shard_ (registered with server_, which stops before shard_ goes).
  shard::WorldService service_;
  // What a won, lost, suspended or resumed lease does here (the zone fence in the store).
  shard::ZoneTenure tenure_;
  shard::ZoneLeaseKeeper keeper_;
  // SIGTERM: each zone's lease moves to a live peer in one fenced step and its players follow
  // with their sockets open.
  shard::ShardDrain drain_;
  // Rebalance directives addressed to this shard: each moves one zone through drain_ and tears
  // it down here. Stopped before the SIGTERM drain runs.
  shard::DirectiveExecutor directives_;
  // Which of Redis, PostgreSQL and NATS answer, and the degraded mode while one does not.
  DependencyHealth health_;
  std::unique_ptr<bus::Bus> nats_;  // null without TELOS_NATS (or with backends_.bus)
  std::unique_ptr<shard::FleetComms> comms_;
  // Answers the fleet's content reload requests; there whenever comms_ is (the same bus).
  std::unique_ptr<shard::PackReloadAgent> reload_agent_;
  bus::Bus* bus_ = nullptr;                            // the bus comms_ and reload_agent_ use
  std::unique_ptr<bus::DurableStreams> jetstream_;     // null without TELOS_NATS (or with .streams)
  std::unique_ptr<shard::StoreRecords> records_port_;  // null without backends_.records
  std::unique_ptr<shard::GameEventPublisher> game_events_;  // null without records or streams
  std::unique_ptr<grpc::Server> server_;
  uint16_t grpc_port_ = 0;
  Status connect_error_;  // a malformed TELOS_NATS, reported by Start()
  bool started_ = false;
  bool stopped_ = false;
  // What /api/health says of the lifecycle; written by Start() and Stop(), read on io threads.
  enum class Phase { kStarting, kServing, kDraining, kStopping };
  std::atomic<Phase> phase_{Phase::kStarting};
};

// The pool a world claims: TELOS_ZONE_POOL, or every zone but the lobby. InvalidArgument
// names a zone that is not leasable.
Result<std::vector<std::string>> ResolveZonePool(const WorldRoleSettings& settings,
                                                 const world::Pack& pack);

}  // namespace telos::app
