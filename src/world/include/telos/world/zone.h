// Zone: one area of the world as an actor. It owns its rooms, the characters and mobs in them
// and every item lying there or carried by its occupants.
//
// All state is touched only by tasks on the zone's Executor. The public methods below are the
// only ways in; they are thread-safe, never block, and enqueue a message into the zone's bounded
// inbox (limits::kZoneInboxDepthMax; ResourceExhausted when full). Messages apply in the order
// they were accepted. Output produced while applying a batch of messages or a heartbeat is
// collected per player. A player who acted in the batch (typed a command, arrived) gets theirs
// as soon as the batch ends; everyone else's waits for the next output pulse
// (ZoneDeps::output_pulse_ms) or heartbeat, so a listener in a busy room receives one write
// per pulse rather than one per line; when the heartbeat comes first, it flushes them instead.
// A crowded zone (its last flush wrote to output_pulse_crowd_players or more) skips the pulse:
// each player's waiting output goes out once per heartbeat, the players in
// limits::kCrowdFlushSlices slices (by actor id) spread evenly over the heartbeat period, until
// a whole period's slices reach fewer. Nobody waits longer than at the heartbeat alone, and a
// crowd's writes reach the sockets in small bursts rather than one large one.
// With output_pulse_ms 0 every player's output is flushed at the end of every batch.
//
// The heartbeat (limits::kZoneHeartbeatMs) is scheduled on the executor with PostAt; it drives
// combat rounds, affects, regeneration, mob behaviour, resets and periodic saves. Time comes
// only from the injected Clock and randomness only from the zone's own seeded Random, so the
// same messages, seed and clock readings always give the same output.
//
// Lifecycle: Create → Start() (first reset, heartbeat scheduled) → messages → Stop(done)
// (every player frozen and handed to `done`, heartbeat cancelled). A Zone is held by
// std::shared_ptr; queued tasks keep it alive until they have run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/party.h"
#include "telos/world/ports.h"
#include "telos/world/staff.h"

namespace telos::world {

// A player in flight between zones (or processes): their state and their output sink. Produced
// by freezing a player, consumed by admitting them somewhere. `arrival` is an optional line
// shown on arrival (e.g. "You flee!" is shown before, this after the room description).
struct PlayerTransfer {
  CharacterState state;
  std::shared_ptr<PlayerSink> sink;
  std::string reply_to;  // whom `reply` answers, carried across zones
  std::vector<std::string> arrival;
  // Where the player stood before a walk into another zone (to go back if that fails).
  Ref from_room;
};

// How a zone reaches the rest of the world. WorldHost implements it; called on the zone's
// executor, must not block and must never call back into the calling zone synchronously.
class ZoneRouter {
 public:
  virtual ~ZoneRouter() = default;
  // Hands a player who left this zone to the zone owning transfer.state.room. On failure (no
  // such zone running here) returns false and leaves `transfer` untouched.
  virtual bool Transfer(PlayerTransfer& transfer) = 0;
  // Delivers a tell; when `to` is not online, the sender's zone gets a "no such player" notice.
  virtual void Tell(const std::string& from, const std::string& to, const std::string& text) = 0;
  // Sends a channel message to every zone (the sender's included).
  virtual void Channel(const std::string& channel, const std::string& from,
                       const std::string& text) = 0;
  // Sends a party message (message.from is the sender's display name) to the player `to`,
  // wherever they are. When nobody can deliver it, the sender gets a kUnreachable message back
  // through DeliverParty, naming `to` and saying why in words.
  virtual void SendParty(const std::string& to, PartyMessage message) = 0;
  // Whether a zone is running here (checked before a player walks out of this zone).
  virtual bool IsRunning(const std::string& zone_id) const = 0;
  // Everyone online, sorted by name.
  virtual std::vector<WhoEntry> Who() const = 0;
  // A command reached a zone the player had just left: route it again (bounded by hops).
  virtual void Forward(const std::string& name_key, std::string line, int hops) = 0;
  // The player quit: drop them from routing.
  virtual void Departed(const std::string& name_key) = 0;
  // A staff order from a player in this zone for a player anywhere (telos/world/staff.h). The
  // outcome reaches the issuer as a notice. A router that reaches no one ignores it.
  virtual void Staff(StaffOrder order) { (void)order; }
  // A staff action taken in this zone alone (a mob's stat): written to the audit trail.
  virtual void Audit(AuditRecord record) { (void)record; }
  // An announcement for every player in `zone` on every world of the fleet, or for everyone
  // when `zone` is empty: at most once, nothing stored (a world the bus cannot reach misses
  // it). Players of this world always hear it; false when the other worlds could not be told.
  virtual bool Announce(const std::string& zone, const std::string& text) = 0;
  // A line of guild chat for the members of `guild` named in `members` (name keys), wherever
  // they play; the speaker is among them and hears it too.
  virtual void GuildLine(const std::string& guild, const std::string& from, const std::string& text,
                         const std::vector<std::string>& members) {
    (void)guild, (void)from, (void)text, (void)members;
  }
};

// Everything a zone needs from outside, passed by the host. All references must outlive it.
struct ZoneDeps {
  const Clock* clock = nullptr;
  Logger* logger = nullptr;
  Metrics* metrics = nullptr;
  CharacterPersistence* persistence = nullptr;
  MailPort* mail = nullptr;
  PasswordPort* passwords = nullptr;
  // Guilds, friends and locales; null where nothing keeps them (the commands say so).
  SocialPort* social = nullptr;
  ZoneRouter* router = nullptr;
  // Optional (null: boss kills are not published, `records` says the records are unavailable).
  GameEventPort* game_events = nullptr;
  RecordsPort* records = nullptr;
  // The arcade's wagers for the casino's commands; null where no arcade runs (they say so).
  ArcadePort* arcade = nullptr;
  // How often a player's state is saved while they play (quit, death, level and leaving a zone
  // save at once). What a crash can lose at most.
  int64_t save_interval_ms = limits::kCharacterSaveIntervalMs;
  // How long output for players who did not act may wait (see above); 0: not at all.
  int64_t output_pulse_ms = 0;
  // When the zone's last flush wrote to at least this many players, its deferred output waits
  // for the heartbeat instead of a pulse (limits::kOutputPulseCrowdPlayersDefault).
  size_t output_pulse_crowd_players = limits::kOutputPulseCrowdPlayersDefault;
};

class ZoneCore;  // the private game state and rules

class Zone : public std::enable_shared_from_this<Zone> {
 public:
  // REQUIRES: pack->FindZone(zone_id) != nullptr; every pointer in deps is set.
  static std::shared_ptr<Zone> Create(std::shared_ptr<const Pack> pack, std::string zone_id,
                                      uint64_t seed, ZoneDeps deps,
                                      std::shared_ptr<Executor> executor);
  ~Zone();
  // Zone objects alive in this process (running, or stopped with work still queued): a zone
  // torn down at runtime is freed once its executor lets go of it.
  static int64_t LiveCount();
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

  const std::string& id() const { return id_; }

  // Runs the first reset (populating mobs and items) and schedules the heartbeat, whose first
  // beat comes `phase` (less than one heartbeat) early: zones given different phases do not
  // all beat, and flush, at the same instant.
  void Start(Duration phase = Duration::zero());
  // Stops the heartbeat, freezes every player (saving each) and hands them to `done` on the
  // zone's executor. Messages accepted afterwards are refused with Cancelled.
  void Stop(std::function<void(std::vector<PlayerTransfer>)> done);

  // A player arrives: placed in transfer.state.room (the pack's start room if that is empty or
  // not in this zone), shown the room, and from now on reached by Command().
  Status Admit(PlayerTransfer transfer);
  // As Admit, but when the zone refuses (inbox full, stopped) `transfer` is left intact so the
  // caller can put the player somewhere else instead of losing them.
  Status TryAdmit(PlayerTransfer& transfer);
  // One line of player input. Unknown names are forwarded through the router (hops counts how
  // often this line was re-routed already).
  Status Command(std::string name_key, std::string line, int hops = 0);
  // Removes the player and hands their transfer to `done` (on the zone's executor); NotFound
  // when they are not here. Their state is saved (SaveReason::kFreeze) before `done` runs.
  Status Freeze(std::string name_key, std::function<void(Result<PlayerTransfer>)> done);
  // Cross-zone messages delivered by the router.
  Status DeliverTell(std::string from, std::string to_key, std::string text);
  Status DeliverChannel(std::string channel, std::string from, std::string text);
  Status DeliverNotice(std::string to_key, std::string text);
  // Applies a staff order to the player `order.target` names, who plays here; `done` gets the
  // outcome on the zone's executor (NotFound when they are not here).
  Status ApplyStaff(StaffOrder order, std::function<void(StaffOutcome)> done);
  // Moves a player here to `room` (in this zone or any other), as staff's goto does.
  Status Teleport(std::string name_key, Ref room);
  // The player's roles from now on (ZoneCore::SetRoles).
  Status SetRoles(std::string name_key, Roles roles);
  // An announcement (WorldHost::Announce) for every player in the zone.
  Status DeliverAnnouncement(std::string text);
  // A line (may be empty) and an event (its name empty: none) for every player in the zone:
  // the arcade's round frames in the casino.
  Status DeliverBroadcast(std::string text, OutputEvent event);
  Status DeliverParty(std::string to_key, PartyMessage message);
  // Runs `probe` on the zone's executor with read access to the zone (tests, admin tools).
  Status Inspect(std::function<void(const ZoneCore&)> probe);

  // Thread-safe counters.
  size_t inbox_depth() const;

 private:
  Zone(std::shared_ptr<const Pack> pack, std::string zone_id, uint64_t seed, ZoneDeps deps,
       std::shared_ptr<Executor> executor);
  Status Enqueue(std::function<void(ZoneCore&)> message);
  void Drain();
  void ScheduleHeartbeat(Instant deadline);
  void Heartbeat(Instant deadline);
  // Ends a batch: flushes who acted, and schedules the pulse for everyone else's output.
  void FlushAfterBatch();
  void OutputPulse();
  // Flushes every player and judges from it whether the zone is crowded.
  void FlushEveryone();
  // The heartbeat's flush: everyone, or in a crowd the first slice, the rest following through
  // the period.
  void FlushAtHeartbeat(Instant deadline);
  void FlushCrowdSlice(uint64_t period, Instant deadline);
  void FlushNextCrowdSlice();

  const std::string id_;
  std::shared_ptr<Executor> executor_;
  ZoneDeps deps_;
  std::unique_ptr<ZoneCore> core_;  // touched only on executor_
  prometheus::Histogram* tick_lag_ms_ = nullptr;
  bool stopped_on_executor_ = false;  // executor only
  bool pulse_scheduled_ = false;      // executor only
  // Executor only. A crowded zone flushes in slices and sends no pulses; a period is one
  // heartbeat's slices, and the players they gave text to decide whether the crowd remains.
  bool crowded_ = false;
  uint64_t crowd_period_ = 0;
  size_t crowd_next_slice_ = limits::kCrowdFlushSlices;
  size_t crowd_period_players_ = 0;
  Instant next_heartbeat_{};  // executor only

  mutable std::mutex inbox_mu_;  // guards the inbox only; never held while running a message
  std::vector<std::function<void(ZoneCore&)>> inbox_;
  bool drain_posted_ = false;
  bool closed_ = false;
};

}  // namespace telos::world
