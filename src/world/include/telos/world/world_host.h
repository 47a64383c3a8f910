// WorldHost: runs many zones in one process and routes between them.
//
// It starts and stops zones at runtime, keeps the roster (which zone hosts which player) and
// implements ZoneRouter: a player walking to another zone is frozen by the source zone and
// admitted by the destination as a message between the two actors; tells, channels and `who`
// cross zones through it. The gate (or serve wiring) logs players in with Login() and feeds
// their input with Submit().
//
// Fleet and drain hooks (explicit API, all non-blocking):
//   FreezePlayer(name, done)  -> the player leaves their zone; `done` gets a PlayerTransfer
//                                (state + sink) to ship elsewhere, and the roster forgets them.
//   Admit(transfer)           -> admits a transfer into the zone owning transfer.state.room.
//   StopZone(id, done)        -> tears a zone down; `done` gets its frozen players.
//   StartZone(id)             -> brings a zone (back) up.
//   Reload(pack, done)        -> content hot reload: every changed zone running here is rebuilt
//                                in place from the new pack, its players kept (see Reload).
//
// Threading: every public method is thread-safe. The roster is guarded by one small mutex (an
// adapter-level lock, never held while a zone runs game logic). Callbacks run on zone
// executors.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "telos/world/zone.h"

namespace telos::world {

// How a host that is one shard of a fleet reaches the rest of it. Set once, before any zone starts;
// every method is called on a zone's executor and must not block.
class FleetHooks {
 public:
  virtual ~FleetHooks() = default;
  // Whether `zone` is hosted by another shard right now (a cached view).
  virtual bool IsRemote(const std::string& zone) const = 0;
  // A player walked into a remote zone and has left this host: ship them there. On failure the
  // implementation admits them back at transfer.from_room itself.
  virtual void Depart(PlayerTransfer transfer) = 0;
  // The player became resident in `zone` here (login, resume, arrival, a walk between zones).
  virtual void Resident(const std::string& name_key, const std::string& zone) = 0;
  // The player quit from `zone`.
  virtual void Quit(const std::string& name_key, const std::string& zone) = 0;
};

// How a host that is one shard of a fleet reaches players on other shards. Set once, before any
// zone starts; called on zone executors, must not block.
class RemoteComms {
 public:
  virtual ~RemoteComms() = default;
  // A tell to `to`, who is not in this host. `answer` gets the one line the sender sees — sent,
  // refused, or why it could not go — exactly once, on any thread.
  virtual void Tell(const std::string& from, const std::string& to, const std::string& text,
                    std::function<void(std::string)> answer) = 0;
  // A channel line (already delivered in this host) for every other shard. False when it could
  // not be sent.
  virtual bool Channel(const std::string& channel, const std::string& from,
                       const std::string& text) = 0;
  // A staff order for a player who is not in this host (telos/world/staff.h). `done` gets the
  // outcome exactly once, on any thread: NotFound when no world has them.
  virtual void Staff(const StaffOrder& order, std::function<void(StaffOutcome)> done) {
    done({Status::NotFound("no fleet"), "Nobody called '" + order.target + "' is online.", {}, {}});
  }
  // A party message (EncodePartyMessage text) for `to`, who is not in this host. `failed` runs
  // once, on any thread, only when it could not be delivered, with why in one line ("There is
  // no player called 'Bob'.", "Bob is not online.").
  virtual void Party(const std::string& to, const std::string& /*message*/,
                     std::function<void(std::string)> failed) {
    failed("Nobody called '" + to + "' is online.");
  }
  // A line of guild chat for `members` (name keys) not hosted here; whoever hosts one shows it
  // to them. False when it could not be sent.
  virtual bool GuildLine(const std::string& /*guild*/, const std::string& /*from*/,
                         const std::string& /*text*/, const std::vector<std::string>& /*members*/) {
    return false;
  }
};

// How a host that is one shard of a fleet sends announcements to the other shards' players
// (shard::FleetComms over the bus). Set once, before any zone starts; called on any thread,
// must not block.
class RemoteBroadcasts {
 public:
  virtual ~RemoteBroadcasts() = default;
  // Sends the announcement (already delivered in this host) to every other shard, which hands
  // it to WorldHost::DeliverAnnouncement. False when it could not be sent.
  virtual bool Broadcast(const std::string& zone, const std::string& text) = 0;
};

// Makes the executor for a new zone (a strand in production; one shared ManualExecutor in tests).
using ExecutorFactory = std::function<std::shared_ptr<Executor>(const std::string& zone_id)>;

class WorldHost final : private ZoneRouter {
 public:
  // `deps.router` is ignored (the host routes). Zone seeds derive from `seed` and the zone id.
  WorldHost(std::shared_ptr<const Pack> pack, ZoneDeps deps, ExecutorFactory executors,
            uint64_t seed);
  ~WorldHost() override;

  // NotFound for an id not in the pack, AlreadyExists when running.
  Status StartZone(const std::string& zone_id);
  Status StartAllZones();
  // Players still inside are frozen and handed to `done` (they stay in the roster as "in
  // transit" only if the caller admits them again). A zone a reload is rebuilding stops once
  // its players are back in the rebuilt zone, so `done` gets every one of them.
  Status StopZone(const std::string& zone_id,
                  std::function<void(std::vector<PlayerTransfer>)> done);
  std::vector<std::string> RunningZones() const;
  // Stops every running zone (refusing reloads from then on) and waits up to `timeout` for them;
  // each zone's frozen players go to `frozen` (may be null) on that zone's executor. Returns how
  // many zones did not finish in time (0: all stopped). Blocks: for shutdown paths, never on an
  // executor.
  size_t StopAllZones(std::chrono::milliseconds timeout,
                      std::function<void(std::vector<PlayerTransfer>)> frozen);
  // The pack the host runs now (a reload replaces it; hold the pointer while reading).
  std::shared_ptr<const Pack> pack() const;

  // ---- content hot reload
  struct ReloadReport {
    std::vector<std::string> rebuilt;  // changed zones that were running here, rebuilt
    size_t players = 0;                // players frozen and admitted back
    size_t relocated = 0;              // of them, sent to the zone's start room: their room is gone
  };
  // Runs `next` from now on. Each zone DiffPacks(pack(), next) calls changed that runs here is
  // rebuilt in place, through the zone's ordinary stop and start: its players are frozen (each
  // saved), a new zone is made from `next` (rooms, mobs, items, scripts in a new Lua VM, a
  // first reset) and the players are admitted back into the same room ids; a player whose room
  // is gone lands in the zone's start room and is told why. Their connections never notice:
  // the roster keeps them in the zone throughout, and lines they type meanwhile are held
  // (limits::kReloadHeldLinesMax each) and applied in order once they are back. Unchanged
  // zones keep running untouched (with the pack they started from); zones started later start
  // from `next`. `done` runs once with what was done: on a zone executor once the last rebuilt
  // zone has admitted its players, or inline when nothing runs here that changed.
  // While a zone is rebuilt, what reaches its players that the new zone cannot take yet — input
  // lines, tells, notices, freezes (so RemovePlayer) — is held and applied in order once they
  // are back; a StopZone waits for that too. The new zones are made outside the host's lock
  // (routing goes on meanwhile) and swapped in under it.
  // FailedPrecondition when DiffPacks refuses the pair (zones added or removed), Unavailable
  // while an earlier reload is still rebuilding or once RefuseReloads (or StopAllZones) was
  // called; nothing changes then and `done` is not called.
  Status Reload(std::shared_ptr<const Pack> next, std::function<void(ReloadReport)> done);
  // From now on Reload is refused: the host is stopping (a drain or a shutdown has begun).
  // A reload already rebuilding finishes (and StopZone waits for it). Idempotent.
  void RefuseReloads();

  // Puts a character into the world at state.room (or the start room). AlreadyExists when a
  // character of that name is already online.
  Status Login(CharacterState state, std::shared_ptr<PlayerSink> sink);
  // One line of input from a player. NotFound when they are not online.
  Status Submit(const std::string& name, std::string line);
  Status FreezePlayer(const std::string& name, std::function<void(Result<PlayerTransfer>)> done);
  Status Admit(PlayerTransfer transfer);
  // Takes a player out of the world for good (their connection is gone): frozen, which saves
  // them, then dropped. `done` runs once (any thread), also when they were not online.
  void RemovePlayer(const std::string& name, std::function<void()> done);
  // REQUIRES: called before the first zone starts; `hooks` outlives the host.
  void SetFleetHooks(FleetHooks* hooks) { fleet_ = hooks; }
  // REQUIRES: called before the first zone starts; `comms` outlives the host's zones.
  void SetRemoteComms(RemoteComms* comms) { comms_ = comms; }
  // Where staff actions taken here are recorded durably (each is also a JSON log line), and the
  // world id the records name. REQUIRES: called before the first zone starts; `audit`
  // outlives the host's zones. Without it the log line is the only record.
  void SetAuditPort(AuditPort* audit, std::string world_id) {
    audit_ = audit;
    world_id_ = std::move(world_id);
  }

  // ---- staff (telos/world/staff.h)
  // Applies an order to the player it names when they play in this host: `done` gets the
  // outcome on their zone's executor. NotFound (and `done` not called) when they are not here.
  Status ApplyStaff(const StaffOrder& order, std::function<void(StaffOutcome)> done);
  // Checks an order another world sent against this world's own bounds, before it is applied:
  // the issuer checked them too, but the sender may be hostile. An overlong reason is cut at a
  // character boundary; InvalidArgument for a mute longer than kStaffMuteMinutesMax (allowing
  // kStaffClockSkewMsMax between the worlds' clocks) or a transfer to a room this pack lacks.
  Status CheckReceivedStaff(StaffOrder* order) const;
  // The target world's own audit row for an order another world sent: what it applied (or
  // refused, `result` saying why).
  void AuditReceivedStaff(const StaffOrder& order, const std::string& target, const Status& result);
  // A player here holds `roles` from now on: a re-attach presents a newer assertion, whose
  // signed roles (granted or revoked meanwhile) replace those of the first. Nothing when they
  // are not here.
  void SetRoles(const std::string& name_key, Roles roles);
  // REQUIRES: called before the first zone starts; `broadcasts` outlives the host's zones.
  void SetRemoteBroadcasts(RemoteBroadcasts* broadcasts) { broadcasts_ = broadcasts; }
  // Where zones publish game events (a boss killed) and read the records. REQUIRES: called
  // before the first zone starts; each outlives the host's zones. Null: not published / no
  // records.
  void SetGameEvents(GameEventPort* events) { deps_.game_events = events; }
  void SetRecords(RecordsPort* records) { deps_.records = records; }
  // The arcade behind the casino's commands. REQUIRES: as SetRecords.
  void SetArcade(ArcadePort* arcade) { deps_.arcade = arcade; }
  // A line (may be empty) and an event (name empty: none) for every player of each running
  // zone whose kind is `kind` here (the arcade's frames for the casino). Thread-safe,
  // non-blocking; a zone whose inbox is full misses it (frames are transient).
  void DeliverToZonesOfKind(ZoneKind kind, const std::string& text, const OutputEvent& event);

  // Scoped transient down-broadcast (ZoneRouter::Announce): for the players of `zone` (empty:
  // everyone) here and, through the RemoteBroadcasts, on every other shard. Thread-safe and
  // non-blocking, for game code and staff commands alike. False when only this host heard it.
  bool Announce(const std::string& zone, const std::string& text) override;

  // ---- messages from other shards (RemoteComms' far end)
  // Delivers a tell to a player in this host; `*display_name` gets their name. NotFound when
  // they are not here.
  Status DeliverTell(const std::string& from, const std::string& to_key, const std::string& text,
                     std::string* display_name);
  // A channel line for every zone here.
  void DeliverChannel(const std::string& channel, const std::string& from, const std::string& text);
  // An announcement from another shard (or the director) for the players of `zone` here, or
  // for every player here when `zone` is empty. A zone not running here hears nothing.
  void DeliverAnnouncement(const std::string& zone, const std::string& text);
  // One line for a player here (a mail ping, the answer to their tell). NotFound when not here.
  Status Notify(const std::string& name_key, const std::string& text);
  // A party message for a player here. NotFound when they are not here, Unavailable while
  // they are between zones.
  Status DeliverParty(const std::string& to_key, PartyMessage message);
  // A line of guild chat for whichever of `members` (name keys) are here.
  void DeliverGuildLine(const std::string& guild, const std::string& from, const std::string& text,
                        const std::vector<std::string>& members);

  // Everyone online, sorted by name (also the router's answer to `who`).
  std::vector<WhoEntry> Who() const override;

  // The zone a character with this state enters: their room's, or the start room's.
  std::string TargetZone(const CharacterState& state) const;
  // Where a player is (zone id), if online.
  std::optional<std::string> ZoneOf(const std::string& name) const;
  size_t online_count() const;
  // The running zone, for Inspect() in tests. Null when not running.
  std::shared_ptr<Zone> FindZone(const std::string& zone_id) const;

  // The heartbeat phase (Zone::Start) of the zone started after `zones_started_before` others:
  // however many zones run, their beats stay spread over the heartbeat period.
  static Duration HeartbeatPhase(int64_t zones_started_before);

  // Process-wide counts of zone objects and Lua VMs alive (every host of the process): a zone
  // torn down at runtime — stopped, drained away — gives both back once its executor lets go of
  // it. For the tests and the gauges that prove emptied zones are reclaimed.
  static int64_t LiveZones();
  static int64_t LiveLuaVms();

 private:
  // ZoneRouter
  bool Transfer(PlayerTransfer& transfer) override;
  void Tell(const std::string& from, const std::string& to, const std::string& text) override;
  void Channel(const std::string& channel, const std::string& from,
               const std::string& text) override;
  void SendParty(const std::string& to, PartyMessage message) override;
  void GuildLine(const std::string& guild, const std::string& from, const std::string& text,
                 const std::vector<std::string>& members) override;
  bool IsRunning(const std::string& zone_id) const override;
  void Forward(const std::string& name_key, std::string line, int hops) override;
  void Departed(const std::string& name_key) override;
  void Staff(StaffOrder order) override;
  void Audit(AuditRecord record) override;
  // The issuer hears the outcome (and goto moves them); the action is audited.
  void FinishStaff(const StaffOrder& order, StaffOutcome outcome);
  void Teleport(const std::string& name_key, const Ref& room);

  Status AdmitLocked(PlayerTransfer transfer);
  // A rebuilt zone's players, frozen by the old zone, go into the new one (then their held
  // lines). Runs on the old zone's executor.
  void ReadmitAfterReload(const std::string& zone_id, const std::shared_ptr<Zone>& zone,
                          std::vector<PlayerTransfer> players, ReloadReport* report);
  // Something for a player whose zone is being rebuilt and who may not be back in it yet.
  struct HeldOp {
    enum class Kind { kLine, kTell, kNotice, kFreeze, kParty };
    Kind kind = Kind::kLine;
    std::string from;                                         // kTell: the sender's display name
    std::string text;                                         // the line, the tell or the notice
    PartyMessage party;                                       // kParty
    std::function<void(Result<PlayerTransfer>)> freeze_done;  // kFreeze: FreezePlayer's wrapper
  };
  // REQUIRES: mu_ held. When `name_key`'s roster zone is being rebuilt, keeps `op` for after
  // the readmission and returns true (Ok in *status), or returns true with ResourceExhausted
  // when the player already has too much held. False: the zone is not being rebuilt.
  bool HoldDuringReloadLocked(const std::string& name_key, HeldOp& op, Status* status);
  // Wraps a freeze's `done`: a frozen player leaves the roster.
  std::function<void(Result<PlayerTransfer>)> ForgetOnFreeze(
      const std::string& name_key, std::function<void(Result<PlayerTransfer>)> done);
  // Stops `zone` (already out of zones_); its frozen players leave the roster, then `done`.
  void StopRemoved(const std::shared_ptr<Zone>& zone,
                   std::function<void(std::vector<PlayerTransfer>)> done);
  // A player who logged in with a party in their state checks it with the party (party.h).
  void ReconcileParty(const CharacterState& state);
  // Tells a player who just logged in how many unread letters wait for them.
  void AnnounceUnreadMail(const std::string& name_key);

  void RemoveAttempt(const std::string& name_key, std::shared_ptr<std::function<void()>> done,
                     int attempt);

  std::shared_ptr<const Pack> pack_;
  FleetHooks* fleet_ = nullptr;
  RemoteComms* comms_ = nullptr;
  AuditPort* audit_ = nullptr;
  std::string world_id_;
  RemoteBroadcasts* broadcasts_ = nullptr;
  ZoneDeps deps_;
  ExecutorFactory executors_;
  uint64_t seed_;

  struct RosterEntry {
    std::string name;
    std::string zone;
    int level = 1;
    std::string race;  // display names, see WhoEntry
    std::string char_class;
  };
  RosterEntry MakeRosterEntry(const CharacterState& state, const std::string& zone) const;
  mutable std::mutex mu_;  // guards zones_ and roster_
  std::map<std::string, std::shared_ptr<Zone>> zones_;
  int64_t zones_started_ = 0;  // guarded by mu_; gives each new zone its heartbeat phase
  std::map<std::string, RosterEntry> roster_;  // by name key
  // A zone being rebuilt by a reload: what reached its players meanwhile, and a stop asked for
  // meanwhile (it runs once they are back in the rebuilt zone).
  struct Rebuild {
    std::map<std::string, std::vector<HeldOp>> held;  // by name key, in arrival order
    std::function<void(std::vector<PlayerTransfer>)> stop;
  };
  std::map<std::string, Rebuild> reloading_;  // by zone id; guarded by mu_
  bool reloads_refused_ = false;              // guarded by mu_
  bool building_ = false;  // guarded by mu_; a reload is making its zones (outside mu_)
};

}  // namespace telos::world
