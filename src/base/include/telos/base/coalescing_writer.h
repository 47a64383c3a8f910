// CoalescingWriter<Key, Op>: a bounded write-behind queue with one operation per key, written
// by one worker thread, the shape shared by the placement writer, the checkpoint writer and the
// character saver.
//
// Coalescing: Enqueue() of a key already queued does not add an entry; the merge hook folds the
// new operation into the queued one (by default the newer simply replaces it). So a caller that
// changes a key every heartbeat costs one write per round trip to the backend, and the queue's
// memory is bounded by the number of keys, never by the number of changes.
//
// Order: oldest first. An entry keeps its place in line while it coalesces, so a key that
// changes constantly cannot starve the others.
//
// Bound (Options::keys_max): counts the distinct keys held, queued or being written. At the
// bound Enqueue() of a new key is refused (kFull, counted in refused()) and the caller decides
// what that costs it; a key already held still coalesces. There is no blocking back-pressure
// because the callers are zone executors and RPC handlers, which must never wait on a backend.
//
// Failures: the write hook says whether an attempt is done (written, or failed for good) or
// should be retried (the backend is down, or the outcome is unknown). A retried operation goes
// back to its place at the front of the line, unless a newer operation for its key arrived
// while it was being written: then the newer one supersedes it (merged over it) and takes over
// its place. Either way the worker pauses before the next write, the pause doubling from
// Options::retry_backoff_initial up to retry_backoff_max while attempts keep failing, and
// ending at the first attempt that is done. After Options::attempts_max attempts (when not 0)
// the operation is given up (the give-up hook hears of it).
//
// Time: every pause and deadline is read from the injected Clock. The worker sleeps on a
// condition variable for what the clock says is left; with a ManualClock, a test advances the
// clock and calls Wake(), or drives the writer without a worker through RunOnce().
//
// Lifecycle: construct, Enqueue from anywhere (before Start() too: the entries wait), Start(),
// Stop(deadline) writes what is queued until the deadline and returns what is left. Start()
// after Stop() starts afresh. The destructor stops at once, dropping what is left.
//
// Ownership: the hooks may capture their owner; they run on the worker thread (or the thread
// calling RunOnce). The write and give-up hooks run without the writer's lock held and may call
// Enqueue, queued() and IsQueued(); the merge hook runs with the lock held and must only combine
// its two arguments.
//
// Thread safety: every method may be called from any thread, except that Stop() must not be
// called from two threads at once nor from a hook, and RunOnce() only while no worker runs.
// Flush and Stop block: never call them on a zone executor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"

namespace telos {

// What one write attempt came to.
struct WriteOutcome {
  // Written, or failed in a way a retry cannot mend; `status` is what flushers of the key hear.
  static WriteOutcome Done(Status status = Status::Ok()) { return {std::move(status), false}; }
  // Nothing is known to be written: keep the operation (unless superseded) and try again.
  static WriteOutcome Retry(Status why) { return {std::move(why), true}; }

  Status status;
  bool retry = false;
};

enum class EnqueueResult {
  kQueued,     // a new entry
  kCoalesced,  // folded into the entry already queued for the key
  kFull,       // a new key at Options::keys_max: refused and counted
  kStopped,    // Stop() has begun: refused
};

struct CoalescingWriterOptions {
  size_t keys_max = 0;  // REQUIRES: > 0
  Millis retry_backoff_initial{100};
  Millis retry_backoff_max{100};  // REQUIRES: >= retry_backoff_initial
  int attempts_max = 0;           // per operation; 0: retried until Stop() gives up on it
  // When given, set to queued() at every change (a metric). Borrowed; must outlive the writer.
  prometheus::Gauge* depth = nullptr;
};

template <typename Key, typename Op>
class CoalescingWriter {
 public:
  using Options = CoalescingWriterOptions;
  struct Hooks {
    // Required. Writes one operation; runs unlocked.
    std::function<WriteOutcome(const Key&, const Op&)> write;
    // Optional. Returns the one operation that stands for `queued` followed by `incoming`;
    // without it `incoming` replaces `queued`. Runs under the writer's lock.
    std::function<Op(Op queued, Op incoming)> merge;
    // Optional. Hears of an operation given up after Options::attempts_max attempts, with the
    // last attempt's status; runs unlocked, before the key's flushers are released.
    std::function<void(const Key&, const Op&, const Status&)> give_up;
  };

  CoalescingWriter(const Clock& clock, Options options, Hooks hooks)
      : clock_(clock), options_(options), hooks_(std::move(hooks)) {
    RELEASE_ASSERT(options_.keys_max > 0, "a coalescing writer needs room for one key");
    RELEASE_ASSERT(options_.retry_backoff_initial.count() >= 0 &&
                       options_.retry_backoff_max >= options_.retry_backoff_initial,
                   "bad coalescing writer backoff");
    RELEASE_ASSERT(options_.attempts_max >= 0, "attempts_max is a count");
    RELEASE_ASSERT(static_cast<bool>(hooks_.write), "a coalescing writer needs a write hook");
  }
  ~CoalescingWriter() { (void)Stop(clock_.Now()); }

  CoalescingWriter(const CoalescingWriter&) = delete;
  CoalescingWriter& operator=(const CoalescingWriter&) = delete;

  // Starts the worker; a no-op while it runs.
  void Start() {
    std::lock_guard lock(mu_);
    if (running_) return;
    running_ = true;
    stopping_ = false;
    exit_ = false;
    worker_ = std::thread([this] { Run(); });
  }

  // Refuses further operations, lets the worker write what is queued until the clock reaches
  // `deadline` (retries keep their pauses), then stops it after the write in progress. Returns
  // the operations left unwritten, oldest first, and releases every flusher with kCancelled.
  // Without a worker nothing is written: everything queued is returned at once.
  std::vector<std::pair<Key, Op>> Stop(Instant deadline) {
    std::unique_lock lock(mu_);
    stopping_ = true;
    if (running_) {
      while ((!order_.empty() || in_flight_) && clock_.Now() < deadline) {
        WaitUntilLocked(lock, deadline);
      }
      exit_ = true;
      lock.unlock();
      cv_.notify_all();
      worker_.join();
      lock.lock();
      running_ = false;
    }
    std::vector<std::pair<Key, Op>> left;
    left.reserve(order_.size());
    for (auto& [seq, key] : order_) {
      auto it = entries_.find(key);
      left.emplace_back(key, std::move(it->second.op));
    }
    order_.clear();
    entries_.clear();
    UpdateDepthLocked();
    const Status cancelled = Status::Cancelled("the writer stopped before writing this");
    for (Waiter* waiter : waiters_) Release(*waiter, cancelled);
    lock.unlock();
    cv_.notify_all();
    return left;
  }

  // Queues `op` for `key`, folding it into an entry already queued for the key. Never blocks
  // on the backend.
  EnqueueResult Enqueue(Key key, Op op) {
    EnqueueResult result;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return EnqueueResult::kStopped;
      if (auto it = entries_.find(key); it != entries_.end()) {
        Entry& entry = it->second;
        entry.op = Merge(std::move(entry.op), std::move(op));
        entry.seq = next_seq_++;
        entry.attempts = 0;  // a fresh operation gets fresh chances
        result = EnqueueResult::kCoalesced;
      } else {
        const bool held_in_flight = in_flight_ && in_flight_->key == key;
        const size_t held = entries_.size() + (in_flight_ ? 1 : 0);
        if (!held_in_flight && held >= options_.keys_max) {
          ++refused_;
          return EnqueueResult::kFull;
        }
        const uint64_t seq = next_seq_++;
        order_.emplace(seq, key);
        entries_.emplace(std::move(key), Entry{std::move(op), seq, seq, 0});
        UpdateDepthLocked();
        result = EnqueueResult::kQueued;
      }
    }
    cv_.notify_all();
    return result;
  }

  // Blocks until every operation enqueued before this call has been written or given up (or
  // was dropped by Stop), or the clock reaches `deadline`; true when done. With `retry_now` a
  // retry pause in progress ends at once (someone is waiting).
  bool FlushAll(Instant deadline, bool retry_now) {
    std::unique_lock lock(mu_);
    const uint64_t target = next_seq_ - 1;
    if (retry_now) EndPauseLocked();
    while (OldestOutstandingLocked() <= target) {
      if (clock_.Now() >= deadline) return false;
      WaitUntilLocked(lock, deadline);
    }
    return true;
  }

  // Blocks until the newest operation for `key` enqueued before this call has been written or
  // given up, and returns that attempt's status: OK at once when nothing of the key is held,
  // kCancelled when Stop() dropped it, nullopt when the clock reached `deadline` first (it then
  // stays queued). `retry_now` as for FlushAll.
  std::optional<Status> FlushKey(const Key& key, Instant deadline, bool retry_now) {
    std::unique_lock lock(mu_);
    Waiter waiter{.key = key};
    if (auto it = entries_.find(key); it != entries_.end()) {
      waiter.target_seq = it->second.seq;
    } else if (in_flight_ && in_flight_->key == key) {
      waiter.target_seq = in_flight_->seq;
    } else {
      return Status::Ok();
    }
    if (retry_now) EndPauseLocked();
    waiters_.push_back(&waiter);
    while (!waiter.done && clock_.Now() < deadline) WaitUntilLocked(lock, deadline);
    waiters_.remove(&waiter);
    if (!waiter.done) return std::nullopt;
    return waiter.status;
  }

  // Makes every wait look at the clock again (a ManualClock was advanced).
  void Wake() {
    { std::lock_guard lock(mu_); }  // a waiter between its check and its wait is now waiting
    cv_.notify_all();
  }

  // Without a worker (tests, or a caller with a thread of its own): writes the oldest entry if
  // one is queued and no retry pause is running at the clock's now. Returns whether it wrote.
  // REQUIRES: Start() not called, or Stop() since.
  bool RunOnce() {
    std::unique_lock lock(mu_);
    RELEASE_ASSERT(!running_, "RunOnce while the worker runs");
    if (order_.empty() || PausedLocked()) return false;
    WriteOldestLocked(lock);
    return true;
  }

  // Keys queued, not counting the one being written.
  size_t queued() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }
  // 1 while an operation is being written, else 0.
  size_t in_flight() const {
    std::lock_guard lock(mu_);
    return in_flight_ ? 1 : 0;
  }
  bool IsQueued(const Key& key) const {
    std::lock_guard lock(mu_);
    return entries_.contains(key);
  }
  // FlushKey callers waiting now.
  size_t flushers() const {
    std::lock_guard lock(mu_);
    return waiters_.size();
  }
  // New keys refused at Options::keys_max since construction.
  uint64_t refused() const {
    std::lock_guard lock(mu_);
    return refused_;
  }
  // The end of the retry pause in progress, if one is.
  std::optional<Instant> paused_until() const {
    std::lock_guard lock(mu_);
    return paused_until_;
  }

 private:
  struct Entry {
    Op op;
    uint64_t seq = 0;         // of the newest enqueue this entry carries
    uint64_t oldest_seq = 0;  // of the oldest enqueue not yet done that it stands for
    int attempts = 0;         // made on this operation so far
  };
  struct InFlight {
    Key key;
    uint64_t seq = 0;
    uint64_t oldest_seq = 0;
  };
  // One blocked FlushKey.
  struct Waiter {
    Key key;
    uint64_t target_seq = 0;
    bool done = false;
    Status status;
  };

  void Run() {
    std::unique_lock lock(mu_);
    while (!exit_) {
      if (order_.empty()) {
        cv_.wait(lock);
      } else if (PausedLocked()) {
        WaitUntilLocked(lock, *paused_until_);
      } else {
        WriteOldestLocked(lock);
      }
    }
  }

  // Takes the oldest entry, writes it unlocked and settles the outcome. Called and returns
  // with `lock` held.
  void WriteOldestLocked(std::unique_lock<std::mutex>& lock) {
    auto next = order_.begin();
    auto it = entries_.find(next->second);
    ASSERT(it != entries_.end(), "order_ and entries_ disagree");
    InFlight flight{.key = it->first, .seq = it->second.seq, .oldest_seq = it->second.oldest_seq};
    Op op = std::move(it->second.op);
    const int attempts = it->second.attempts + 1;
    order_.erase(next);
    entries_.erase(it);
    UpdateDepthLocked();
    in_flight_ = flight;

    lock.unlock();
    WriteOutcome outcome = hooks_.write(flight.key, op);
    lock.lock();

    if (!outcome.retry) {
      backoff_ = Millis(0);
      paused_until_.reset();
    } else {
      // The backend is failing: the next write of anyone waits, longer each time in a row.
      backoff_ = backoff_.count() == 0 ? options_.retry_backoff_initial
                                       : std::min(backoff_ * 2, options_.retry_backoff_max);
      paused_until_ = clock_.Now() + backoff_;
      const bool give_up = options_.attempts_max > 0 && attempts >= options_.attempts_max;
      if (!give_up) {
        RequeueLocked(flight, std::move(op), attempts);
        in_flight_.reset();
        cv_.notify_all();
        return;
      }
      if (hooks_.give_up) {
        lock.unlock();
        hooks_.give_up(flight.key, op, outcome.status);
        lock.lock();
      }
    }
    // Flushers are released after the hooks, so one that returns knows the owner was told.
    for (Waiter* waiter : waiters_) {
      if (waiter->key == flight.key && waiter->target_seq <= flight.seq) {
        Release(*waiter, outcome.status);
      }
    }
    in_flight_.reset();
    cv_.notify_all();
  }

  // Puts a failed operation back: to its own place at the front of the line, or, when a newer
  // one for its key arrived meanwhile, merged under that one, which takes over the place (and
  // with it the flushers' obligation).
  void RequeueLocked(const InFlight& flight, Op op, int attempts) {
    if (auto it = entries_.find(flight.key); it != entries_.end()) {
      Entry& newer = it->second;
      newer.op = Merge(std::move(op), std::move(newer.op));
      order_.erase(newer.oldest_seq);
      newer.oldest_seq = flight.oldest_seq;
      order_.emplace(flight.oldest_seq, flight.key);
      return;
    }
    order_.emplace(flight.oldest_seq, flight.key);
    entries_.emplace(flight.key, Entry{std::move(op), flight.seq, flight.oldest_seq, attempts});
    UpdateDepthLocked();
  }

  Op Merge(Op queued, Op incoming) const {
    if (!hooks_.merge) return incoming;
    return hooks_.merge(std::move(queued), std::move(incoming));
  }

  bool PausedLocked() const { return paused_until_ && clock_.Now() < *paused_until_; }

  void EndPauseLocked() {
    if (!paused_until_) return;
    paused_until_.reset();
    cv_.notify_all();
  }

  // Waits until notified or until the clock may have reached `when`. The real wait is what the
  // clock says is left; a ManualClock that does not move leaves the caller looping, which is
  // why its tests Wake() the writer after advancing it.
  void WaitUntilLocked(std::unique_lock<std::mutex>& lock, Instant when) {
    const Duration left = when - clock_.Now();
    if (left <= Duration::zero()) return;
    cv_.wait_for(lock, left);
  }

  uint64_t OldestOutstandingLocked() const {
    uint64_t oldest = std::numeric_limits<uint64_t>::max();
    if (!order_.empty()) oldest = order_.begin()->first;
    if (in_flight_) oldest = std::min(oldest, in_flight_->oldest_seq);
    return oldest;
  }

  static void Release(Waiter& waiter, const Status& status) {
    if (waiter.done) return;
    waiter.done = true;
    waiter.status = status;
  }

  void UpdateDepthLocked() {
    if (options_.depth != nullptr) options_.depth->Set(static_cast<double>(entries_.size()));
  }

  const Clock& clock_;
  const Options options_;
  const Hooks hooks_;

  // Guards everything below. Held only for map updates, never across a hook but the merge.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Entry> entries_;
  std::map<uint64_t, Key> order_;  // oldest_seq -> key, oldest first
  std::optional<InFlight> in_flight_;
  std::list<Waiter*> waiters_;
  uint64_t next_seq_ = 1;
  uint64_t refused_ = 0;
  Millis backoff_{0};  // 0 while writes are done
  std::optional<Instant> paused_until_;
  bool running_ = false;   // a worker thread exists
  bool stopping_ = false;  // Stop() has begun: Enqueue refuses
  bool exit_ = false;      // the worker leaves at its next turn
  std::thread worker_;
};

}  // namespace telos
