// PlacementWriter: writes players' placement records to the directory off the zone executors,
// coalesced per player (spec 001: "every residency writes a placement"; the hand-off to the
// background writer coalesces per player rather than dropping a full queue).
//
// Register() queues a residency registration (equal epoch accepted); Tombstone() queues the
// logout compare-and-delete. A later operation for the same player replaces a queued one, except
// that a tombstone queued after a registration still carries the registration's zone. One worker
// thread applies them; a failed write (directory unavailable) is retried with backoff while it
// is still the newest operation for that player.
//
// Thread safety: every method may be called from any thread; none blocks on the directory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/directory.h"

namespace telos::shard {

class PlacementWriter {
 public:
  PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics);
  ~PlacementWriter();

  void Start();
  // Writes what is queued (bounded by `flush_timeout_ms`), then stops the worker.
  void Stop(int64_t flush_timeout_ms = 2000);

  void Register(const std::string& player, directory::Placement placement);
  void Tombstone(const std::string& player, std::string shard, uint64_t epoch, std::string nonce,
                 std::string zone);

  // Operations queued or being retried (tests, metrics).
  size_t pending() const;

 private:
  struct Op {
    bool tombstone = false;
    directory::Placement placement;  // for a tombstone: shard, epoch, nonce and zone
    int attempts = 0;
  };
  void Run();
  void Apply(const std::string& player, Op op);

  directory::Directory& directory_;
  Logger& log_;
  prometheus::Counter& written_;
  prometheus::Counter& failed_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Op> queue_;  // guarded by mu_
  bool stopping_ = false;            // guarded by mu_
  size_t in_flight_ = 0;             // guarded by mu_
  std::thread worker_;
};

}  // namespace telos::shard
