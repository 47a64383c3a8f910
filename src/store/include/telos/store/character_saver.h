// CharacterSaver: write-behind persistence of character snapshots.
//
// The world hands the saver a full snapshot of a character (record + the state_version it was
// based on + the writer's owner_epoch) from any thread; Submit never blocks on I/O. Snapshots
// coalesce per character: only the newest one waiting is kept, so a character that changes
// every heartbeat costs one write per round trip to the store, not one per change. One worker
// thread writes them with CharacterStore::Save and reports every outcome through a callback:
//   - OK: the report carries the new state_version; the owner advances its expected version.
//   - kConflict: somebody else wrote since the snapshot's base; the owner re-reads and rebases,
//     then submits again. The snapshot is dropped.
//   - kFailedPrecondition ("fenced"): a newer owner claimed the character; the snapshot is
//     dropped and this writer must stop saving it.
//   - kUnavailable / kDeadlineExceeded / kUnknownResult: the store is down or the outcome is
//     unknown; the snapshot is kept (unless a newer one replaced it) and retried with
//     exponential backoff. Nothing is reported until it is written or given up.
//   - any other error: reported and dropped.
//   - kCancelled: Stop() gave up on it after its deadline (the store stayed down).
//
// Chaining: the world's expected version only advances when a report reaches it, so snapshots
// submitted meanwhile still carry the older base. The saver remembers the versions it wrote
// itself (per character and owner_epoch) and moves such a snapshot's base onto its own latest
// write. This is safe because the saver's successive writes were each conditional on the
// previous one, and any snapshot still waiting is newer than every one already written.
//
// Lifecycle: construct, Start(), then Submit/Flush from anywhere; Stop() flushes what is queued
// (up to Options::stop_flush_deadline_ms) and joins the worker. The destructor calls Stop().
//
// The queue, its bound, the coalescing, the oldest-first order, the retries and the worker are
// a telos::CoalescingWriter; the saver adds what is its own: the chaining, the outcome of each
// write and the reports. The bound (Options::pending_max) counts the characters held, queued or
// being written.
//
// Ownership: the saver borrows the store, metrics and logger; they must outlive it.
//
// Thread safety: Submit, Flush, FlushAll, Forget and pending() may be called from any thread.
// The report callback runs on the worker thread without the saver's lock held: it should only
// post to the owner's executor. Flush and FlushAll block, so never call them on a zone executor
// or from the callback; Submit may be called from the callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "telos/base/clock.h"
#include "telos/base/coalescing_writer.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/store/character_record.h"
#include "telos/store/character_store.h"

namespace telos::store {

struct CharacterSnapshot {
  CharacterRecord record;              // the full state to write; record.name picks the row
  int64_t expected_state_version = 0;  // the version this state was based on
  int64_t writer_owner_epoch = 0;      // the epoch the writer's claim returned
};

struct SaveReport {
  std::string name;               // the record's display name
  Status status;                  // see the top of this file
  int64_t new_state_version = 0;  // the row's version after the write, when status.ok()
  int64_t writer_owner_epoch = 0;
};

class CharacterSaver {
 public:
  struct Options {
    size_t pending_max = limits::kSaverPendingCharactersMax;
    int64_t retry_backoff_initial_ms = limits::kSaverRetryBackoffInitialMs;
    int64_t retry_backoff_max_ms = limits::kSaverRetryBackoffMaxMs;
    int64_t stop_flush_deadline_ms = limits::kSaverStopFlushDeadlineMs;
  };
  using ReportFn = std::function<void(const SaveReport&)>;

  CharacterSaver(CharacterStore& store, Metrics& metrics, Logger& logger, ReportFn on_report);
  CharacterSaver(CharacterStore& store, Metrics& metrics, Logger& logger, ReportFn on_report,
                 Options options);
  ~CharacterSaver();

  CharacterSaver(const CharacterSaver&) = delete;
  CharacterSaver& operator=(const CharacterSaver&) = delete;

  // Starts the worker. REQUIRES: not started before.
  void Start();
  // Writes what is queued (giving up after Options::stop_flush_deadline_ms, reporting the rest
  // as kCancelled), then joins the worker. Idempotent, but call it from one thread (the
  // shutdown sequence in main), not from two at once, and never from the report callback.
  void Stop();

  // Queues a snapshot, replacing any older one for the same character that is not yet being
  // written. Never blocks on I/O. Snapshots submitted before Start() wait for it.
  // InvalidArgument for a bad name; ResourceExhausted when Options::pending_max other
  // characters are already waiting; Cancelled after Stop().
  Status Submit(CharacterSnapshot snapshot);

  // Blocks until the newest snapshot of `name` submitted before this call has been written or
  // dropped, and returns its outcome (OK when nothing was waiting). Skips any retry backoff.
  // DeadlineExceeded after `timeout`; the snapshot then stays queued.
  // For quit and handoff. REQUIRES: not on a zone executor, not from the report callback.
  Status Flush(std::string_view name, std::chrono::milliseconds timeout);

  // Blocks until every snapshot submitted before this call has been written or dropped
  // (outcomes go to the callback). DeadlineExceeded after `timeout`.
  // REQUIRES: not on a zone executor, not from the report callback.
  Status FlushAll(std::chrono::milliseconds timeout);

  // Forgets the versions this saver wrote for `name` (call after the character left this
  // process), so the chaining memory stays bounded.
  void Forget(std::string_view name);

  // Characters waiting to be written (not counting the one being written).
  size_t pending() const;

 private:
  // Versions [base, head] of one character were written by this saver, each write conditional
  // on the one before.
  struct Chain {
    int64_t owner_epoch = 0;
    int64_t base = 0;
    int64_t head = 0;
  };

  // The writer's write hook: one Save, its chaining and its report (worker thread).
  WriteOutcome Write(const std::string& key, const CharacterSnapshot& snapshot);

  SystemClock clock_;  // the saver's timeouts are real time; the writer reads them here
  CharacterStore& store_;
  Logger& logger_;
  ReportFn on_report_;
  const Options options_;

  prometheus::Counter& saves_total_;
  prometheus::Counter& conflicts_total_;
  prometheus::Counter& fenced_total_;
  prometheus::Counter& retries_total_;
  prometheus::Counter& dropped_total_;
  prometheus::Gauge& queue_depth_;

  // Guards the chaining memory and the lifecycle flags; held only for map updates, never across
  // a store call or the callback. Taken before the writer's own lock, never after it.
  mutable std::mutex mu_;
  std::unordered_map<std::string, Chain> chains_;  // by name key
  bool started_ = false;
  bool stopping_ = false;

  // By name key. Last: its worker uses the members above.
  CoalescingWriter<std::string, CharacterSnapshot> writer_;
};

}  // namespace telos::store
