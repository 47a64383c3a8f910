// DirectiveExecutor: a world shard's side of automatic rebalancing (spec 000, "Automatic
// rebalancing"; issue 24 item 3). The leader director writes rebalance-drain directives into the
// directory (zone, from, to, leader scope and term, TTL); this polls the ones addressed to its
// shard and carries each out:
//   - a directive that is expired, addressed to another shard, names a zone this shard does not
//     hold, names this shard as the target, or was written by a leader that no longer leads its
//     scope at that term (fenced) is ignored, and retired from the directory (pruned) so nobody
//     reads it again;
//   - otherwise it logs "placement: rebalance drain recommended" and moves exactly that one zone
//     to the target through the zero-drop path of the SIGTERM drain (ShardDrain::DrainZone: one
//     fenced lease flip, players handed over in place with their sockets open), which tears the
//     emptied zone down here (heartbeat, resets, Lua VM; the keeper stops renewing it), then
//     completes the directive and starts the zone's cooldown.
// A directive whose move fails is completed too: the director plans again from what it sees.
//
// Directory calls block, so Poll() runs on the executor's own thread (Start), never on a zone
// executor; tests call Poll() directly with a ManualClock.
//
// Ownership: borrows everything; all outlive it. Thread safety: Poll() is not reentrant; Start
// and Stop belong to the owner, and Poll must not be called by hand while the thread runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/directory.h"
#include "telos/shard/shard_drain.h"
#include "telos/shard/zone_lease_keeper.h"

namespace telos::shard {

struct DirectiveExecutorOptions {
  std::string shard_id;
  int64_t poll_ms = limits::kDirectivePollMs;  // REQUIRES: > 0
  // Started on a zone this shard moved away, so the planner leaves it be while weights settle.
  int64_t cooldown_ms = directory::kZoneCooldownMsDefault;
};

class DirectiveExecutor {
 public:
  DirectiveExecutor(DirectiveExecutorOptions options, directory::Directory& directory,
                    ZoneLeaseKeeper& keeper, ShardDrain& drain, Logger& log, Metrics& metrics);
  ~DirectiveExecutor();  // Stop()

  DirectiveExecutor(const DirectiveExecutor&) = delete;
  DirectiveExecutor& operator=(const DirectiveExecutor&) = delete;

  // One pass over this shard's directives. Returns how many zones it moved.
  size_t Poll();

  // Polls every poll_ms (real time) on its own thread until Stop(). REQUIRES: not running.
  void Start();
  // Waits for a move in flight to end (it is bounded by the zone drain deadline). Idempotent.
  void Stop();

 private:
  // Retires a directive that is not to be acted on, saying why.
  void Prune(const directory::Directive& directive, const char* why);

  const DirectiveExecutorOptions options_;
  directory::Directory& directory_;
  ZoneLeaseKeeper& keeper_;
  ShardDrain& drain_;
  Logger& log_;
  prometheus::Counter& moved_;
  prometheus::Counter& ignored_;
  prometheus::Counter& failed_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // owner only
};

}  // namespace telos::shard
