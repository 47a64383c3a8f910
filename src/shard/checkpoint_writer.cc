#include "telos/shard/checkpoint_writer.h"

#include <chrono>

#include "telos/world/character_state.h"

namespace telos::shard {
namespace {
constexpr int kAttemptsMax = 20;
constexpr std::chrono::milliseconds kRetryBackoff{250};
}  // namespace

CheckpointWriter::CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics)
    : store_(store),
      log_(log),
      written_(metrics.Counter("checkpoints_written_total", "Character checkpoints written")),
      failed_(metrics.Counter("checkpoint_write_failures_total",
                              "Checkpoint writes that failed (retried while newest)")) {}

CheckpointWriter::~CheckpointWriter() {
  Stop(0);
}

void CheckpointWriter::Start() {
  std::lock_guard lock(mu_);
  if (worker_.joinable()) return;
  stopping_ = false;
  worker_ = std::thread([this] { Run(); });
}

void CheckpointWriter::Stop(int64_t flush_timeout_ms) {
  (void)Flush(flush_timeout_ms);
  {
    std::lock_guard lock(mu_);
    if (!worker_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void CheckpointWriter::Put(store::Checkpoint checkpoint) {
  const std::string key = world::NameKey(checkpoint.name);
  {
    std::lock_guard lock(mu_);
    queue_[key] = Pending{std::move(checkpoint), 0};
  }
  cv_.notify_all();
}

bool CheckpointWriter::Flush(int64_t timeout_ms) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return queue_.empty() && in_flight_ == 0; });
}

void CheckpointWriter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::map<std::string, Pending> batch;
    batch.swap(queue_);
    in_flight_ = batch.size();
    lock.unlock();
    for (auto& [key, pending] : batch) Write(key, std::move(pending));
    lock.lock();
    in_flight_ = 0;
    cv_.notify_all();
    if (!queue_.empty()) cv_.wait_for(lock, kRetryBackoff, [&] { return stopping_; });
  }
}

void CheckpointWriter::Write(const std::string& key, Pending pending) {
  const Status status = store_.Put(pending.checkpoint);
  if (status.ok()) {
    written_.Increment();
    return;
  }
  if (status.code() == StatusCode::kFailedPrecondition) return;  // a newer owner's is stored
  failed_.Increment();
  if (++pending.attempts >= kAttemptsMax) {
    log_.Warn("checkpoint given up", {{"character", key}, {"error", status.ToString()}});
    return;
  }
  std::lock_guard lock(mu_);
  queue_.try_emplace(key, std::move(pending));  // only if nothing newer was queued meanwhile
}

}  // namespace telos::shard
