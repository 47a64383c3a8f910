#include "telos/shard/checkpoint_writer.h"

#include <utility>

#include "telos/world/character_state.h"

namespace telos::shard {

CheckpointWriter::CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics)
    : CheckpointWriter(store, log, metrics, system_clock_) {}

CheckpointWriter::CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics,
                                   const Clock& clock)
    : clock_(clock),
      store_(store),
      log_(log),
      written_(metrics.Counter("checkpoints_written_total", "Character checkpoints written")),
      failed_(metrics.Counter("checkpoint_write_failures_total",
                              "Checkpoint writes that failed (retried while newest)")),
      shed_(metrics.Counter("checkpoints_shed_total",
                            "Checkpoints shed because the writer held too many characters")),
      writer_(clock,
              {.keys_max = limits::kCheckpointWriterCharactersMax,
               .retry_backoff_initial = Millis(limits::kCheckpointWriteRetryBackoffMs),
               .retry_backoff_max = Millis(limits::kCheckpointWriteRetryBackoffMs),
               .attempts_max = limits::kCheckpointWriteAttemptsMax},
              {.write = [this](const std::string&,
                               const store::Checkpoint& checkpoint) { return Write(checkpoint); },
               .give_up =
                   [this](const std::string& key, const store::Checkpoint&, const Status& status) {
                     log_.Warn("checkpoint given up",
                               {{"character", key}, {"error", status.ToString()}});
                   }}) {}

CheckpointWriter::~CheckpointWriter() {
  Stop(0);
}

void CheckpointWriter::Start() {
  writer_.Start();
}

void CheckpointWriter::Stop(int64_t flush_timeout_ms) {
  // What is left is dropped: the rows hold the durable state, a checkpoint only a fresher copy.
  (void)writer_.Stop(clock_.Now() + Millis(flush_timeout_ms));
}

void CheckpointWriter::Put(store::Checkpoint checkpoint) {
  std::string key = world::NameKey(checkpoint.name);
  if (writer_.Enqueue(std::move(key), std::move(checkpoint)) == EnqueueResult::kFull) {
    shed_.Increment();
  }
}

bool CheckpointWriter::Flush(int64_t timeout_ms) {
  return writer_.FlushAll(clock_.Now() + Millis(timeout_ms), /*retry_now=*/false);
}

WriteOutcome CheckpointWriter::Write(const store::Checkpoint& checkpoint) {
  const Status status = store_.Put(checkpoint);
  if (status.ok()) {
    written_.Increment();
    return WriteOutcome::Done();
  }
  // A newer owner's checkpoint is stored: ours is stale, and a retry cannot change that.
  if (status.code() == StatusCode::kFailedPrecondition) return WriteOutcome::Done(status);
  failed_.Increment();
  return WriteOutcome::Retry(status);
}

}  // namespace telos::shard
