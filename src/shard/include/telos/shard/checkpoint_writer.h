// CheckpointWriter: puts characters' checkpoints (store::CheckpointStore) off the zone
// executors, coalesced per character: a newer checkpoint of a character replaces one still
// queued, so a slow or absent backend costs memory bounded by the number of characters, never
// a queue of stale snapshots. One worker thread; a failed Put (backend unavailable) is retried
// with backoff while it is still the newest for that character; a "stale" refusal (a newer
// owner wrote one) is dropped.
//
// Thread safety: every method may be called from any thread; Put never blocks on the store.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/store/checkpoint_store.h"

namespace telos::shard {

class CheckpointWriter {
 public:
  CheckpointWriter(store::CheckpointStore& store, Logger& log, Metrics& metrics);
  ~CheckpointWriter();

  void Start();
  // Writes what is queued (bounded by `flush_timeout_ms`), then stops the worker.
  void Stop(int64_t flush_timeout_ms = 2000);

  // REQUIRES: store::ValidateCheckpoint(checkpoint) is OK.
  void Put(store::Checkpoint checkpoint);
  // Blocks until nothing is queued or in flight for anyone (bounded); false on timeout.
  bool Flush(int64_t timeout_ms);

 private:
  struct Pending {
    store::Checkpoint checkpoint;
    int attempts = 0;
  };
  void Run();
  void Write(const std::string& key, Pending pending);

  store::CheckpointStore& store_;
  Logger& log_;
  prometheus::Counter& written_;
  prometheus::Counter& failed_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Pending> queue_;  // guarded by mu_; by name key
  size_t in_flight_ = 0;                  // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  std::thread worker_;
};

}  // namespace telos::shard
