// PlacementWriter: writes players' placement records to the directory off the zone executors,
// coalesced per player (spec 001: "every residency writes a placement"; the hand-off to the
// background writer coalesces per player rather than dropping a full queue).
//
// Register() queues a residency registration (equal epoch accepted); Tombstone() queues the
// logout compare-and-delete. A later operation for the same player replaces a queued one, except
// that a tombstone queued after a registration still carries the registration's zone when it
// names none itself. One worker thread applies them (telos::CoalescingWriter); a failed write
// (directory unavailable) is retried with a pause (limits::kPlacementWriteRetryBackoffMs) while
// it is still the newest operation for that player, up to limits::kPlacementWriteAttemptsMax
// attempts. At most limits::kPlacementWriterPlayersMax players are held; past that a new
// player's operation is shed, counted (placement_writes_shed_total) and logged.
//
// Time: pauses and the stop deadline are read from the clock given (a SystemClock of its own
// when none is).
//
// Thread safety: every method may be called from any thread; none blocks on the directory.
#pragma once

#include <cstdint>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/coalescing_writer.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/directory.h"

namespace telos::shard {

class PlacementWriter {
 public:
  PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics);
  // `clock` is borrowed and must outlive the writer.
  PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics,
                  const Clock& clock);
  ~PlacementWriter();

  void Start();
  // Writes what is queued (bounded by `flush_timeout_ms`), then stops the worker.
  void Stop(int64_t flush_timeout_ms = limits::kWriterStopFlushMsDefault);

  void Register(const std::string& player, directory::Placement placement);
  void Tombstone(const std::string& player, std::string shard, uint64_t epoch, std::string nonce,
                 std::string zone);

  // Operations queued or being retried (tests, metrics).
  size_t pending() const;

 private:
  struct Op {
    bool tombstone = false;
    directory::Placement placement;  // for a tombstone: shard, epoch, nonce and zone
  };
  WriteOutcome Apply(const std::string& player, const Op& op);
  void Queue(const std::string& player, Op op);

  SystemClock system_clock_;  // used when no clock is given
  const Clock& clock_;
  directory::Directory& directory_;
  Logger& log_;
  prometheus::Counter& written_;
  prometheus::Counter& failed_;
  prometheus::Counter& shed_;
  CoalescingWriter<std::string, Op> writer_;  // last: its worker uses the members above
};

}  // namespace telos::shard
