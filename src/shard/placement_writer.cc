#include "telos/shard/placement_writer.h"

#include <chrono>
#include <utility>

namespace telos::shard {

PlacementWriter::PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics)
    : PlacementWriter(directory, log, metrics, system_clock_) {}

PlacementWriter::PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics,
                                 const Clock& clock)
    : clock_(clock),
      directory_(directory),
      log_(log),
      written_(metrics.Counter("placement_writes_total", "Placement records written")),
      failed_(metrics.Counter("placement_write_failures_total",
                              "Placement writes that failed (retried while newest)")),
      shed_(metrics.Counter("placement_writes_shed_total",
                            "Placement writes shed because the writer held too many players")),
      writer_(
          clock,
          {.keys_max = limits::kPlacementWriterPlayersMax,
           .retry_backoff_initial = Millis(limits::kPlacementWriteRetryBackoffMs),
           .retry_backoff_max = Millis(limits::kPlacementWriteRetryBackoffMs),
           .attempts_max = limits::kPlacementWriteAttemptsMax},
          {.write = [this](const std::string& player, const Op& op) { return Apply(player, op); },
           .merge =
               [](Op queued, Op incoming) {
                 // A logout that names no zone still records where the player was.
                 if (incoming.tombstone && !queued.tombstone && incoming.placement.zone.empty()) {
                   incoming.placement.zone = std::move(queued.placement.zone);
                 }
                 return incoming;
               },
           .give_up =
               [this](const std::string& player, const Op& op, const Status& status) {
                 log_.Warn("placement write given up", {{"player", player},
                                                        {"tombstone", op.tombstone},
                                                        {"error", status.ToString()}});
               }}) {}

PlacementWriter::~PlacementWriter() {
  Stop(0);
}

void PlacementWriter::Start() {
  writer_.Start();
}

void PlacementWriter::Stop(int64_t flush_timeout_ms) {
  const auto left = writer_.Stop(clock_.Now() + Millis(flush_timeout_ms));
  if (!left.empty()) {
    log_.Warn("placement writes dropped at stop",
              {{"players", static_cast<uint64_t>(left.size())}});
  }
}

void PlacementWriter::Register(const std::string& player, directory::Placement placement) {
  Queue(player, Op{false, std::move(placement)});
}

void PlacementWriter::Tombstone(const std::string& player, std::string shard, uint64_t epoch,
                                std::string nonce, std::string zone) {
  Queue(player, Op{true, {std::move(zone), epoch, std::move(nonce), std::move(shard)}});
}

void PlacementWriter::Queue(const std::string& player, Op op) {
  const bool tombstone = op.tombstone;
  if (writer_.Enqueue(player, std::move(op)) == EnqueueResult::kFull) {
    shed_.Increment();
    log_.Warn("placement write shed: the writer holds too many players",
              {{"player", player}, {"tombstone", tombstone}});
  }
}

size_t PlacementWriter::pending() const {
  return writer_.queued() + writer_.in_flight();
}

WriteOutcome PlacementWriter::Apply(const std::string& player, const Op& op) {
  Status status;
  if (op.tombstone) {
    const auto& p = op.placement;
    auto applied = directory_.TombstonePlacement(player, p.shard, p.epoch, p.nonce, p.zone);
    status = applied.status();
  } else {
    status = directory_.RegisterPlacement(player, op.placement);
  }
  if (status.ok() || status.code() == StatusCode::kFailedPrecondition) {
    // FailedPrecondition: a newer epoch is stored (the player moved on); nothing to do.
    written_.Increment();
    return WriteOutcome::Done();
  }
  failed_.Increment();
  return WriteOutcome::Retry(status);
}

}  // namespace telos::shard
