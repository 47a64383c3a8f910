// WagerBatcher: the driver-side group commit of wagers (issue 27 item 5). Spec 002 measured
// ~230 bets/s with one PostgreSQL commit per bet; here many wagers share one commit.
//
// Submit checks a wager against the in-memory reservation (BalanceReservations: the debited
// accounts' balances, read from the ledger the first time an account is seen, minus what
// wagers in flight already hold), reserves its debits and queues it. A batch is committed when
// it is full (batch_max postings) or when its oldest wager has waited window_ms, as ONE
// Ledger::PostBatch. Only then is each wager answered (its `done` called with its own result):
// an acknowledged wager is durable. A commit that fails in a retryable way (Unavailable,
// UnknownResult, Conflict) is sent again with the same keys, up to kArcadeBatchCommitAttemptsMax
// times — the idempotency keys make that safe — and only then are its wagers answered with the
// error (UnknownResult when an attempt may have applied them: the client retries with its key).
//
// A wager repeating the key of one still queued joins it (no second reservation) and is
// answered with the same result. A wager is refused at once, without calling `done`: malformed
// (InvalidArgument), not covered by the reservation even after a fresh balance read
// (FailedPrecondition), pending_max wagers already queued (ResourceExhausted), or stopped
// (Cancelled).
//
// Time: batches fall due by the Clock. Tests on a ManualClock drive CommitDue() themselves and
// never Start(); Start() runs a worker thread that waits for the next due batch in real time
// (production wires SystemClock).
//
// Lifecycle: Start() once; Stop() commits and answers everything queued, then joins the worker.
// The Ledger and Clock outlive the batcher.
//
// Thread safety: Submit from any thread. It BLOCKS on a ledger read the first time it sees a
// debited account. `done` runs on the committing thread, without the batcher's lock held, and
// may Submit again. CommitDue is called by one thread at a time (the worker once started).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "telos/arcade/balance_reservations.h"
#include "telos/arcade/ledger.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"

namespace telos::arcade {

struct WagerBatcherOptions {
  // 0 < window_ms <= kArcadeBatchWindowMsMax; 1 <= batch_max <= kArcadeBatchPostingsMax;
  // 1 <= pending_max <= kArcadeWagersPendingMax.
  int64_t window_ms = limits::kArcadeBatchWindowMsDefault;
  size_t batch_max = limits::kArcadeBatchPostingsMax;
  size_t pending_max = limits::kArcadeWagersPendingMax;
};

using WagerDone = std::function<void(Result<PostingResult>)>;

class WagerBatcher {
 public:
  // REQUIRES: options within their bounds (else RELEASE_ASSERT: a wiring bug).
  WagerBatcher(Ledger& ledger, const Clock& clock, WagerBatcherOptions options = {});
  ~WagerBatcher();
  WagerBatcher(const WagerBatcher&) = delete;
  WagerBatcher& operator=(const WagerBatcher&) = delete;

  void Start();
  void Stop();

  // See the header comment.
  Status Submit(Posting posting, WagerDone done);

  // Commits the oldest batch if one is due at clock.Now() (or any queued wagers when `force`),
  // answers its wagers, and returns how many postings it committed (0: nothing was due).
  size_t CommitDue(bool force = false);

  // When the oldest queued wager's batch falls due; nothing queued: Instant::max().
  Instant NextDue() const;
  size_t queued() const;
  int64_t batches_committed() const;
  // The chips reserved on an account by queued wagers (tests).
  int64_t Reserved(std::string_view account) const;

 private:
  struct Pending {
    Posting posting;
    std::vector<WagerDone> done;
    Instant queued_at;
  };
  bool DueLocked(Instant now) const;
  void Run();

  Ledger& ledger_;
  const Clock& clock_;
  const WagerBatcherOptions options_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Pending>> queue_;        // guarded by mu_
  std::unordered_map<std::string, Pending*> by_key_;  // guarded by mu_: queued keys
  BalanceReservations reservations_;                  // guarded by mu_
  bool stopping_ = false;                             // guarded by mu_
  int64_t batches_ = 0;                               // guarded by mu_
  std::thread worker_;
};

}  // namespace telos::arcade
