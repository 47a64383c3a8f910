#include "telos/shard/placement_writer.h"

#include <chrono>
#include <vector>

namespace telos::shard {
namespace {
constexpr int kAttemptsMax = 20;
constexpr std::chrono::milliseconds kRetryBackoff{250};
}  // namespace

PlacementWriter::PlacementWriter(directory::Directory& directory, Logger& log, Metrics& metrics)
    : directory_(directory),
      log_(log),
      written_(metrics.Counter("placement_writes_total", "Placement records written")),
      failed_(metrics.Counter("placement_write_failures_total",
                              "Placement writes that failed (retried while newest)")) {}

PlacementWriter::~PlacementWriter() {
  Stop(0);
}

void PlacementWriter::Start() {
  std::lock_guard lock(mu_);
  if (worker_.joinable()) return;
  stopping_ = false;
  worker_ = std::thread([this] { Run(); });
}

void PlacementWriter::Stop(int64_t flush_timeout_ms) {
  {
    std::unique_lock lock(mu_);
    if (!worker_.joinable()) return;
    cv_.wait_for(lock, std::chrono::milliseconds(flush_timeout_ms),
                 [&] { return queue_.empty() && in_flight_ == 0; });
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void PlacementWriter::Register(const std::string& player, directory::Placement placement) {
  {
    std::lock_guard lock(mu_);
    queue_[player] = Op{false, std::move(placement), 0};
  }
  cv_.notify_all();
}

void PlacementWriter::Tombstone(const std::string& player, std::string shard, uint64_t epoch,
                                std::string nonce, std::string zone) {
  {
    std::lock_guard lock(mu_);
    queue_[player] = Op{true, {std::move(zone), epoch, std::move(nonce), std::move(shard)}, 0};
  }
  cv_.notify_all();
}

size_t PlacementWriter::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size() + in_flight_;
}

void PlacementWriter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::map<std::string, Op> batch;
    batch.swap(queue_);
    in_flight_ = batch.size();
    lock.unlock();
    for (auto& [player, op] : batch) Apply(player, std::move(op));
    lock.lock();
    in_flight_ = 0;
    cv_.notify_all();
    if (!queue_.empty()) {
      // Retries wait a little so a down directory is not hammered.
      cv_.wait_for(lock, kRetryBackoff, [&] { return stopping_; });
    }
  }
}

void PlacementWriter::Apply(const std::string& player, Op op) {
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
    return;
  }
  failed_.Increment();
  if (++op.attempts >= kAttemptsMax) {
    log_.Warn("placement write given up",
              {{"player", player}, {"tombstone", op.tombstone}, {"error", status.ToString()}});
    return;
  }
  std::lock_guard lock(mu_);
  queue_.try_emplace(player, std::move(op));  // only if nothing newer was queued meanwhile
}

}  // namespace telos::shard
