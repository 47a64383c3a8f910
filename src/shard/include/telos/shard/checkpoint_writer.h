// CheckpointWriter: puts characters' checkpoints (store::CheckpointStore) off the zone
// executors, coalesced per character: a newer checkpoint of a character replaces one still
// queued, so a slow or absent backend costs memory bounded by the number of characters, never
// a queue of stale snapshots. One worker thread (telos::CoalescingWriter); a failed Put (backend
// unavailable) is retried with a pause (limits::kCheckpointWriteRetryBackoffMs) while it is
// still the newest for that character, up to limits::kCheckpointWriteAttemptsMax attempts; a
// "stale" refusal (a newer owner wrote one) is dropped. At most
// limits::kCheckpointWriterCharactersMax characters are held; past that a new character's
// checkpoint is shed and counted (checkpoints_shed_total): the row save, or the character's
// next checkpoint, covers it.
//
// Time: pauses and deadlines are read from the clock given (a SystemClock of its own when none
// is).
//
// Thread safety: every method may be called from any thread; Put never blocks on the store.
#pragma once

#include <cstdint>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/coalescing_writer.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/store/checkpoint_store.h"

namespace telos::shard {

class CheckpointWriter {
 public:
  CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics);
  // `clock` is borrowed and must outlive the writer.
  CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics,
                   const Clock& clock);
  ~CheckpointWriter();

  void Start();
  // Writes what is queued (bounded by `flush_timeout_ms`), then stops the worker.
  void Stop(int64_t flush_timeout_ms = limits::kWriterStopFlushMsDefault);

  // REQUIRES: store::ValidateCheckpoint(checkpoint) is OK.
  void Put(store::Checkpoint checkpoint);
  // Blocks until every checkpoint put before this call has been written or given up (bounded);
  // false on timeout.
  bool Flush(int64_t timeout_ms);

 private:
  WriteOutcome Write(const store::Checkpoint& checkpoint);

  SystemClock system_clock_;  // used when no clock is given
  const Clock& clock_;
  store::CheckpointStore& store_;
  Logger& log_;
  prometheus::Counter& written_;
  prometheus::Counter& failed_;
  prometheus::Counter& shed_;
  // By name key. Last: its worker uses the members above.
  CoalescingWriter<std::string, store::Checkpoint> writer_;
};

}  // namespace telos::shard
