// FleetWorldLink: the gate's WorldLink in a fleet — sessions travel over one gRPC Play stream
// per world shard (DESIGN.md section 5).
//
// Routing (spec 001, "placement routes"): a session goes to the shard that owns the zone named
// in the player's placement record, resolved through the directory at the moment of entry, so a
// returning player lands where they left even if that zone has moved since. A player with no
// placement (new) or placed in the lobby — which every shard hosts — goes to a live shard picked
// by a hash of the name. When a shard answers that the character's zone is elsewhere, the
// session is routed again (bounded).
//
// Cross-shard movement: the source shard sends a Redirect; the link attaches the same session
// at the destination with the handoff token. The player's terminal never notices. If the
// destination no longer holds the arrival (the character moved on, or its zone did, before the
// attach came), the session is routed afresh through the placement record. Lines typed
// while a session is between shards are queued (bounded) and sent once it is attached.
//
// A shard's stream ending (crash, restart) does not end the sessions on it: each player is told,
// and the session is routed again with its assertion once the zone has an owner. If the zone
// has none within `route_wait_ms`, the character is placed in a lobby with a message.
//
// Redis unreachable (the degradation ladder): routing falls back on the last shard list and zone
// owners it read, and a character whose placement cannot be read goes to a lobby shard, which
// answers with the character's real zone if it is elsewhere. Sessions already attached never
// need the directory.
//
// Threading: every WorldLink method may be called from any thread and never blocks; directory
// lookups run on `blocking`, timers on `io`, stream callbacks on gRPC's threads. One mutex
// guards the session table (GUARDED_BY, checked by clang in the dev preset); it is never held
// while calling a sink, the directory or the blocking runner. Lock order: the gate's locks
// (gate.h), then this one, then a stream's own, which is a leaf: a stream asks whether it is
// alive under the link's lock, and calls the link only with its own lock released.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/mutex.h"
#include "telos/base/thread_annotations.h"
#include "telos/directory/directory.h"
#include "telos/gate/world_link.h"
#include "telos/rpc/in_process_play.h"

#include "telos/v1/fleet.grpc.pb.h"

namespace telos::gate {

struct FleetLinkOptions {
  std::string gate_id;
  // Presented on every gRPC Play stream (the worlds' TELOS_GATE_TOKEN); empty: none (insecure).
  std::string gate_token;
  std::string lobby_zone;
  // Waiting for a zone to get an owner; after that the character goes to a lobby, and after
  // twice that the session ends.
  int64_t route_wait_ms = 20'000;
  int64_t route_retry_ms = 250;  // between routing attempts
  // Input held while a session is between shards.
  size_t queued_lines_max = limits::kFleetLinkQueuedLinesMax;
  // "Your zone is elsewhere" answers followed in a row.
  int reroutes_max = limits::kFleetLinkReroutesMax;
};

class ShardStream;

class FleetWorldLink final : public WorldLink {
 public:
  FleetWorldLink(FleetLinkOptions options, directory::Directory& directory,
                 boost::asio::io_context& io, BlockingRunner blocking, const Clock& clock,
                 Logger& log, Metrics& metrics);
  ~FleetWorldLink() override;

  Status Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) override
      EXCLUDES(mu_);
  Status Input(const std::string& name_key, std::string line) override EXCLUDES(mu_);
  void Remove(const std::string& name_key, std::function<void()> done) override EXCLUDES(mu_);
  std::vector<world::WhoEntry> Who() const override EXCLUDES(mu_);
  size_t online_count() const override EXCLUDES(mu_);
  const std::string& gate_id() const override { return options_.gate_id; }
  void UpdateAssertion(const std::string& name_key, std::string assertion) override EXCLUDES(mu_);

  // Closes every stream and waits (bounded) until gRPC has finished them (shutdown). Sessions
  // are dropped without output.
  void Stop() EXCLUDES(mu_);
  // Shards with an open stream (endpoints).
  std::vector<std::string> ConnectedShards() const EXCLUDES(mu_);

  // A world shard in this process, reached at `endpoint` in memory instead of over gRPC (the
  // endpoint it registers in the directory). REQUIRES: before the first Enter().
  void AddInProcessShard(const std::string& endpoint, rpc::InProcessPlay& shard) EXCLUDES(mu_);

  // Stream callbacks (gRPC threads, or the in-process shard's strand). The frame's strings may
  // be taken.
  void OnShardFrame(const std::shared_ptr<ShardStream>& stream, telos::v1::ShardFrame& frame)
      EXCLUDES(mu_);
  // `why`: OK, or why the shard ended the stream (logged; the sessions are routed again).
  void OnStreamDone(const std::shared_ptr<ShardStream>& stream, const Status& why) EXCLUDES(mu_);

 private:
  enum class State { kRouting, kAttaching, kAttached };
  struct Session {
    uint64_t id = 0;
    std::string name_key;
    std::string display_name;
    std::string assertion;
    std::shared_ptr<world::PlayerSink> sink;
    std::shared_ptr<ShardStream> stream;
    State state = State::kRouting;
    std::vector<std::string> queued;
    std::function<void()> remove_done;
    std::string zone_hint;        // where the last shard said the character is
    bool lobby_fallback = false;  // its zone had no owner for route_wait_ms: go to a lobby
    int reroutes = 0;
    // The attach in flight carries a handoff token: "no arrival" means the character moved
    // on (or its arrival timed out) before the session reached it, not that it does not exist.
    bool attaching_by_token = false;
    Instant routing_since;
    bool told_waiting = false;
  };

  // Runs `step(id)` on the blocking pool unless the link has stopped meanwhile.
  void OnBlocking(void (FleetWorldLink::*step)(uint64_t), uint64_t id);
  void Route(uint64_t id) EXCLUDES(mu_);
  void RetryRouteLater(uint64_t id) EXCLUDES(mu_);
  void Fail(uint64_t id, const std::string& message) EXCLUDES(mu_);
  std::shared_ptr<ShardStream> StreamTo(const std::string& endpoint) EXCLUDES(mu_);
  Result<std::string> PickLobbyShard(const std::string& name_key, const std::string& resident_shard)
      EXCLUDES(mu_);
  // The directory's answers, or while it cannot be read the last ones it gave.
  Result<std::vector<directory::ShardInfo>> LiveShards() EXCLUDES(mu_);
  Result<std::optional<directory::ZoneOwner>> OwnerOf(const std::string& zone) EXCLUDES(mu_);

  const FleetLinkOptions options_;
  directory::Directory& directory_;
  boost::asio::io_context& io_;
  const BlockingRunner blocking_;
  const Clock& clock_;
  Logger& log_;
  prometheus::Counter& redirects_;
  prometheus::Counter& reroutes_;
  prometheus::Counter& stream_losses_;

  mutable Mutex mu_{lock_rank::kWorldLink};
  uint64_t next_session_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Session> sessions_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> by_name_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<ShardStream>> streams_ GUARDED_BY(mu_);  // by endpoint
  std::map<std::string, std::unique_ptr<telos::v1::World::Stub>> stubs_ GUARDED_BY(mu_);
  // By endpoint; fixed before the first Enter.
  std::map<std::string, rpc::InProcessPlay*> in_process_ GUARDED_BY(mu_);
  size_t live_streams_ GUARDED_BY(mu_) = 0;
  std::vector<directory::ShardInfo> last_shards_ GUARDED_BY(mu_);
  std::map<std::string, directory::ZoneOwner> last_owners_ GUARDED_BY(mu_);  // by zone
  // The shard each character's placement named when last read (for routing without Redis);
  // forgotten wholesale past kLastResidentMax names.
  static constexpr size_t kLastResidentMax = limits::kFleetLinkLastResidentNamesMax;
  std::map<std::string, std::string> last_resident_ GUARDED_BY(mu_);  // by name key
  CondVar streams_done_;                                              // live_streams_ fell
  bool stopped_ GUARDED_BY(mu_) = false;
  // Stop() waits for the blocking steps and timers in flight; later ones do nothing.
  std::shared_ptr<InFlightGate> in_flight_;
};

}  // namespace telos::gate
