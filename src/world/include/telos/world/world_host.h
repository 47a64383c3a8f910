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
//
// Threading: every public method is thread-safe. The roster is guarded by one small mutex (an
// adapter-level lock, never held while a zone runs game logic). Callbacks run on zone
// executors.
#pragma once

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
  // transit" only if the caller admits them again).
  Status StopZone(const std::string& zone_id,
                  std::function<void(std::vector<PlayerTransfer>)> done);
  std::vector<std::string> RunningZones() const;

  // Puts a character into the world at state.room (or the start room). AlreadyExists when a
  // character of that name is already online.
  Status Login(CharacterState state, std::shared_ptr<PlayerSink> sink);
  // One line of input from a player. NotFound when they are not online.
  Status Submit(const std::string& name, std::string line);
  Status FreezePlayer(const std::string& name, std::function<void(Result<PlayerTransfer>)> done);
  Status Admit(PlayerTransfer transfer);

  // Everyone online, sorted by name (also the router's answer to `who`).
  std::vector<WhoEntry> Who() const override;

  // Where a player is (zone id), if online.
  std::optional<std::string> ZoneOf(const std::string& name) const;
  size_t online_count() const;
  // The running zone, for Inspect() in tests. Null when not running.
  std::shared_ptr<Zone> FindZone(const std::string& zone_id) const;

 private:
  // ZoneRouter
  bool Transfer(PlayerTransfer& transfer) override;
  void Tell(const std::string& from, const std::string& to, const std::string& text) override;
  void Channel(const std::string& channel, const std::string& from,
               const std::string& text) override;
  bool IsRunning(const std::string& zone_id) const override;
  void Forward(const std::string& name_key, std::string line, int hops) override;
  void Departed(const std::string& name_key) override;

  std::string TargetZone(const CharacterState& state) const;
  Status AdmitLocked(PlayerTransfer transfer);

  std::shared_ptr<const Pack> pack_;
  ZoneDeps deps_;
  ExecutorFactory executors_;
  uint64_t seed_;

  struct RosterEntry {
    std::string name;
    std::string zone;
    int level = 1;
  };
  mutable std::mutex mu_;  // guards zones_ and roster_
  std::map<std::string, std::shared_ptr<Zone>> zones_;
  std::map<std::string, RosterEntry> roster_;  // by name key
};

}  // namespace telos::world
