// WorldShard: the fleet side of a `telos world` process (DESIGN.md sections 2 and 5), free of
// any transport: it speaks telos Status and the fleet.proto messages, never a gRPC type (its
// sources end with transport_free.h, which fails the build if gRPC creeps in). It answers the calls
// of the World service (schema/proto/telos/v1/fleet.proto) as plain calls; WorldService
// (world_service.h) is the thin gRPC adapter in front of them, and a gate or a peer in the same
// process calls them directly:
//   - Play: one bidirectional stream per gate. A gate attaches a session with the player's
//     signed assertion (verified offline with the account service's public key; the character is
//     then loaded, claimed — minting its owner_epoch from max(directory, row) — and admitted) or
//     with a handoff token (the arrival of a player another shard handed over). Input lines go to
//     the character; output returns coalesced: everything produced while one write is in flight
//     goes out in the next frame.
//   Each gate has one live stream here: a Hello naming a gate id that another live stream
//   already holds is refused (the stream ends AlreadyExists, a telos Status the gRPC adapter
//   maps to ALREADY_EXISTS; the gate retries once the shard has seen its old stream end), so no
//   stream can take over the sessions, or the handoff arrivals, of another gate's.
//   - Handoff: a signed snapshot of a player walking in from another shard. The placement
//     record moves with a strictly greater epoch (a stale or replayed snapshot is refused), the
//     character is claimed and admitted at once, and waits (buffering output) for its gate to
//     attach with the token.
//   - Adopt: a peer moved a zone's lease here; the zone starts now (SetAdopter). A shard that
//     is draining itself never hosts it (the move raced its draining mark): it passes the lease
//     on to a live, not draining shard other than the sender (TransferZone, then Adopt there)
//     and answers Conflict ("moved"), so the sender re-reads the zone's owner and hands the
//     players there; with no such shard it refuses (FailedPrecondition).
//   A handoff refused because the zone is not hosted there (it moved on) is retried once at
//   the zone's owner as the directory names it now.
//   - Describe: this shard's id, version and content pack.
// Its own calls to other shards (a handoff to the zone's owner, an adoption asked by a drain,
// Describe at boot) go through WorldPeers (world_peers.h), gRPC or in-process.
// It implements world::FleetHooks for the host: a player walking into a zone another shard owns
// is frozen, signed over to that shard, and their gate is told to re-attach there (Redirect) —
// the player's socket never closes. Every residency is registered in the directory (through
// PlacementWriter) and every quit writes the fenced tombstone.
//
// An assertion is admitted only on the stream of the gate it was issued for (its gate id is the
// stream's Hello), and only once per session: an assertion whose session is attached here on a
// live stream under another (stream, session) is a replay and is refused; the same session
// attaching again (after its stream was lost, or retrying) resumes. Assertions are short-lived;
// the gate renews them (same nonce) and presents the fresh one when it re-attaches.
//
// When a gate's stream ends, its characters stay in the world link-dead for `link_dead_ms`; the
// gate may re-attach them with a valid assertion in that time. A character is bound to one
// (stream, session) at a time: attaching it anywhere unbinds it from where it was, so input
// sent there no longer reaches it.
//
// Callers are authenticated by the transport (WorldService checks the caller tokens); a caller
// in the process is trusted.
//
// Threading: the calls come on any thread (gRPC's, a gate's strand, a peer's blocking thread);
// directory and store calls run on `blocking`; timers on `io`. Shared state is guarded by one
// mutex (never held across a call into the host or a store). Every task this shard hands to
// `blocking` or `io` is work in flight: Stop() waits for the ones already started and later ones
// are refused (InFlightGate), so once Stop() returns nothing of this shard runs.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "telos/auth/documents.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/directory.h"
#include "telos/rpc/in_process_play.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/placement_writer.h"
#include "telos/shard/shard_drain.h"
#include "telos/shard/store_ports.h"
#include "telos/shard/world_peers.h"
#include "telos/store/character_store.h"
#include "telos/store/checkpoint_store.h"
#include "telos/v1/fleet.pb.h"
#include "telos/world/world_host.h"

namespace telos::shard {

struct WorldShardOptions {
  std::string shard_id;
  std::string endpoint;  // host:port other processes dial
  std::string lobby_zone;
  std::string version;  // of the binary, for Describe
  int64_t link_dead_ms = 60'000;
  int64_t handoff_deadline_ms = 3'000;  // one Handoff RPC
  int64_t handoff_ttl_ms = 15'000;      // how long a signed snapshot is valid
  int64_t route_refresh_ms = 1'000;     // how often the zone -> owner cache is re-read
  // The lease a zone passed on by this shard while it drains is granted to the next owner for.
  int64_t zone_lease_ttl_ms = directory::kZoneLeaseTtlMsDefault;
};

class StreamHandle;
class SessionSink;

class WorldShard final : public world::FleetHooks, public DrainHandOver, public rpc::InProcessPlay {
 public:
  // `peers` carries this shard's calls to other shards; it must outlive this object.
  WorldShard(WorldShardOptions options, world::WorldHost& host, directory::Directory& directory,
             store::CharacterStore& characters, StorePersistence& persistence,
             const auth::KeyRing& assertion_keys, const auth::SigningKey& handoff_key,
             WorldPeers& peers, boost::asio::io_context& io, BlockingRunner blocking,
             const Clock& clock, Logger& log, Metrics& metrics);
  ~WorldShard() override;

  // Loads read checkpoints too and play the freshest of row and checkpoint (invariant 8).
  // REQUIRES: before Start(); `checkpoints` outlives this object (or null: rows only).
  void SetCheckpoints(store::CheckpointStore* checkpoints) { checkpoints_ = checkpoints; }

  // Tells and presence across the fleet: told of every arrival, attach, link-dead and departure.
  // REQUIRES: before Start(); `comms` outlives this object (or null: no fleet comms).
  void SetComms(FleetComms* comms) { comms_ = comms; }

  // The serialized assertion the resident character `name_key` was admitted (or last
  // re-attached) on; empty when they are not resident. What their staff orders to other worlds
  // carry (FleetComms StaffAuth). Thread-safe.
  std::string AssertionOf(const std::string& name_key) const;
  // The account service's keys this shard admits characters under.
  const auth::KeyRing& assertion_keys() const { return assertion_keys_; }

  // Single-shard mode: while the directory is unreachable no placement can move, so a walk into
  // a zone another shard owns is refused at once with a message instead of attempted.
  void SetSealed(bool sealed) { sealed_.store(sealed); }

  // The handoff keys this shard accepts snapshots under (default: the handoff signing key's own
  // public key alone). During a rotation, the new and the old key (auth::KeyRing).
  // REQUIRES: before Start().
  void SetHandoffVerifyKeys(auth::KeyRing keys) { handoff_verify_keys_ = std::move(keys); }

  // Starts the placement writer and the route refresher.
  void Start();
  // Stops taking new attaches and handoffs; stops the background work and waits for the work
  // in flight (a handoff or adoption being answered, an attach loading, a save on its way).
  // REQUIRES: not called from a task of this shard's.
  void Stop();

  // world::FleetHooks
  bool IsRemote(const std::string& zone) const override;
  void Depart(world::PlayerTransfer transfer) override;
  void Resident(const std::string& name_key, const std::string& zone) override;
  void Quit(const std::string& name_key, const std::string& zone) override;

  // ---- the World calls, transport-free
  // rpc::InProcessPlay: a Play stream from a gate in this process (telos serve). The same
  // stream logic as over gRPC (WorldService::Play), without a socket.
  std::shared_ptr<rpc::PlayShardEnd> OpenPlay(std::shared_ptr<rpc::PlayGateEnd> gate) override;
  // A player handed over by another shard (see the top of this file). `done` gets the reply
  // (naming this shard) or why the snapshot was refused, exactly once: on a blocking thread, or
  // at once, Unavailable, when the shard has stopped.
  void Handoff(const telos::v1::SignedBlob& snapshot,
               std::function<void(Result<telos::v1::HandoffReply>)> done);
  // A peer has moved a zone's lease to this shard: start hosting it now (the adopter). While
  // this shard drains itself it is giving its zones away: it passes the zone on (Conflict, the
  // message naming the new owner) or, with nowhere to pass it, refuses (FailedPrecondition).
  // `done` runs exactly once, as for Handoff.
  void Adopt(const telos::v1::AdoptRequest& request, std::function<void(Status)> done);
  // This shard's id, version and content pack. Does not block.
  telos::v1::ShardDescription Describe() const;
  // For a Play transport: counts output shed for a gate too far behind to take it.
  prometheus::Counter* play_outputs_dropped() { return &outputs_dropped_; }

  // Asks every live peer in the directory (bounded per peer) which content pack it runs, and
  // reads the pack version content hot reload records there (pack_reload.h, PackRefusal): why
  // this world's pack may not join — a peer on another pack, unless the directory says the
  // fleet is reloading between the two, or a pack other than the one the fleet's last reload
  // recorded — or nullopt. Unreachable peers are skipped, and an unreadable directory refuses
  // nothing (the lease keeper's registration will fail first). A world with no registered peer
  // is the whole fleet: a stale record is rewritten to its pack (a fleet restarted on new
  // content). Blocks: call before Start() or on the blocking pool.
  std::optional<std::string> FindPackDivergence();

  // Players frozen out of a zone this shard stopped hosting (lease lost, shutdown): each is
  // forgotten here (their freeze saved them; the placement keeps its zone) and their gate is told
  // to route them again, to whichever shard owns the zone next.
  void Evacuate(std::vector<world::PlayerTransfer> players);

  // ---- drain (the owner wires these)
  // How an Adopt is carried out: renew the moved lease and start the zone (the lease keeper).
  void SetAdopter(std::function<Status(const std::string& zone, uint64_t epoch)> adopter) {
    adopter_ = std::move(adopter);
  }
  // Asks `to` to adopt `zone`, whose lease this shard has just moved to it at `epoch`.
  Status CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                   uint64_t epoch) override;
  // Hands players frozen out of a zone now owned by `to` over to it, sockets kept open; any
  // that cannot be handed over are saved and routed again by their gates. `done(redirected,
  // reclaimed)` runs once every player is settled (on a blocking thread).
  void HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                std::function<void(size_t, size_t)> done) override;
  // From now on, logins of characters not already here are refused (they are routed again).
  void BeginDrain() override;

  // Another shard has claimed this character since this one did (its save was fenced): the
  // copy here is stale and is taken out of the world, unsaved and without a tombstone.
  void EvictStale(const std::string& name_key);

  // Re-reads which shard owns each zone (normally done every route_refresh_ms).
  void RefreshRoutes();

  // Called by the streams (see play_stream.h).
  void OnFrame(const std::shared_ptr<StreamHandle>& stream, const telos::v1::GateFrame& frame);
  void OnStreamGone(const std::shared_ptr<StreamHandle>& stream);

  size_t residents() const;
  size_t streams() const;

 private:
  struct ResidentEntry {
    std::string display_name;
    int64_t account_id = 0;
    std::string nonce;  // the placement record's (the session that first made it resident)
    // The session bound now (its assertion's nonce): an attach presenting it from another
    // (stream, session) while that one is live is a replay and is refused.
    std::string session_nonce;
    uint64_t placement_epoch = 0;
    std::string assertion;
    std::string zone;
    std::shared_ptr<SessionSink> sink;
    std::string arrival_token;  // set until the gate attaches after a handoff arrival
    bool ephemeral = false;     // entered while PostgreSQL was unreachable: never saved
  };

  // `lobby_fallback`: when the character's zone is not here, place it in the lobby instead of
  // refusing (the gate found no owner for the zone in time).
  void AttachLogin(std::shared_ptr<StreamHandle> stream, uint64_t session, std::string assertion,
                   bool lobby_fallback);
  void AttachArrival(const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                     const std::string& token);
  // PostgreSQL cannot be read: the character plays from its checkpoint (or as new), unsaved.
  void AttachEphemeral(std::shared_ptr<StreamHandle> stream, uint64_t session,
                       const auth::Assertion& claim, std::string assertion);
  // Makes `entry` resident under `key` (AlreadyExists if someone got there first), binds the
  // session, shows `notices` and logs the character in. `register_persistence` runs once the
  // entry is ours. False (and the gate told) when it did not enter.
  bool EnterWorld(const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                  const std::string& key, ResidentEntry entry, world::CharacterState state,
                  std::vector<std::string> notices,
                  const std::function<void()>& register_persistence);
  void SendAttached(const std::shared_ptr<StreamHandle>& stream, uint64_t session, const Status& s,
                    const std::string& zone);
  // A Play stream's first frame: names its gate, unless that gate already has a live stream.
  void OnHello(const std::shared_ptr<StreamHandle>& stream, const telos::v1::Hello& hello);
  // The character `name_key` was bound to `previous` before its sink was bound to (stream,
  // session): the old session no longer carries its input.
  static void UnbindPrevious(const std::pair<std::shared_ptr<StreamHandle>, uint64_t>& previous,
                             const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                             const std::string& name_key);
  // Runs `task` on the blocking pool as work in flight (Stop() waits for it). False, and
  // nothing runs, once Stop() has begun: the caller settles what the task would have.
  [[nodiscard]] bool Spawn(std::function<void()> task);
  Status AcceptHandoff(const std::string& blob);
  Status AdoptZone(const telos::v1::AdoptRequest& request);
  // While draining: moves the zone's lease (held here at `epoch`) on to a live, not draining
  // shard other than this one and `from`, and asks it to adopt. Conflict naming the new owner
  // when the lease moved; the reason otherwise (the lease then stays here until it lapses).
  Status PassOn(const std::string& zone, uint64_t epoch, const std::string& from);
  std::string FreshestState(const store::CharacterRecord& row);
  // A live Play stream from the gate `gate_id`, or null.
  std::shared_ptr<StreamHandle> GateStream(const std::string& gate_id);
  void ShipPlayer(world::PlayerTransfer transfer);
  // The zone's owner now, if `answer` (from `asked`) says the zone is not hosted there or
  // moved, and the directory names another live shard than `asked` and this one.
  std::optional<directory::ZoneOwner> MovedOwner(const std::string& zone,
                                                 const directory::ZoneOwner& asked,
                                                 const Status& answer);
  // The handoff itself: snapshot, Handoff RPC, Redirect. The transfer is untouched on failure.
  Status SendPlayer(const world::PlayerTransfer& transfer, const directory::ZoneOwner& owner);
  // Puts a player whose walk to another shard failed back where they came from, telling `why`.
  void Bounce(world::PlayerTransfer transfer,
              std::string why = "The way is closed; you stay where you are.");
  // Takes a character out (link-dead expiry, gate's Detach): freeze, save, tombstone.
  void Remove(const std::string& name_key, std::function<void()> done);
  void Forget(const std::string& name_key, const std::string& zone, bool tombstone);
  void StartLinkDeadTimer(const std::string& name_key, std::shared_ptr<SessionSink> sink);
  Status CallHandoff(const std::string& endpoint, const std::string& blob);
  void ScheduleRefresh();

  const WorldShardOptions options_;
  world::WorldHost& host_;
  directory::Directory& directory_;
  store::CharacterStore& characters_;
  StorePersistence& persistence_;
  // A copy: a ring is two small keys, and a caller passing a lone VerifyKey makes a temporary.
  const auth::KeyRing assertion_keys_;
  const auth::SigningKey& handoff_key_;
  auth::KeyRing handoff_verify_keys_;
  WorldPeers& peers_;
  boost::asio::io_context& io_;
  const BlockingRunner blocking_;
  const Clock& clock_;
  Logger& log_;
  PlacementWriter placements_;
  store::CheckpointStore* checkpoints_ = nullptr;
  FleetComms* comms_ = nullptr;
  std::atomic<bool> sealed_{false};
  std::function<Status(const std::string&, uint64_t)> adopter_;
  prometheus::Counter& handoffs_out_;
  prometheus::Counter& handoffs_in_;
  prometheus::Counter& handoffs_refused_;
  prometheus::Counter& attaches_refused_;
  prometheus::Counter& outputs_dropped_;
  prometheus::Histogram& handoff_ms_;

  mutable std::mutex mu_;
  std::map<std::string, ResidentEntry> residents_;  // guarded by mu_; by name key
  std::set<std::string> entering_;  // guarded by mu_; name keys an AttachLogin is loading
  std::map<std::string, directory::ZoneOwner> remote_owners_;  // guarded by mu_; by zone
  std::vector<std::weak_ptr<StreamHandle>> streams_;           // guarded by mu_
  bool draining_ = false;                                      // guarded by mu_
  bool stopping_ = false;                                      // guarded by mu_
  // Stop() waits for the blocking tasks, route refreshes and timers in flight; later ones are
  // refused (Spawn) or do nothing (Wrap).
  std::shared_ptr<InFlightGate> in_flight_;
};

}  // namespace telos::shard
