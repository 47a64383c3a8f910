#include "telos/arcade/wager_batcher.h"

#include <utility>

#include "telos/base/assert.h"

namespace telos::arcade {
namespace {

bool Retryable(const Status& status) {
  return status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kUnknownResult ||
         status.code() == StatusCode::kConflict;
}

}  // namespace

WagerBatcher::WagerBatcher(Ledger& ledger, const Clock& clock, WagerBatcherOptions options)
    : ledger_(ledger), clock_(clock), options_(options) {
  RELEASE_ASSERT(options_.window_ms > 0 && options_.window_ms <= limits::kArcadeBatchWindowMsMax,
                 "WagerBatcherOptions::window_ms out of bounds");
  RELEASE_ASSERT(options_.batch_max >= 1 && options_.batch_max <= limits::kArcadeBatchPostingsMax,
                 "WagerBatcherOptions::batch_max out of bounds");
  RELEASE_ASSERT(
      options_.pending_max >= 1 && options_.pending_max <= limits::kArcadeWagersPendingMax,
      "WagerBatcherOptions::pending_max out of bounds");
}

WagerBatcher::~WagerBatcher() {
  Stop();
}

void WagerBatcher::Start() {
  RELEASE_ASSERT(!worker_.joinable(), "WagerBatcher started twice");
  worker_ = std::thread([this] { Run(); });
}

void WagerBatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  // Without a worker (tests), or after it left: nothing queued may stay unanswered.
  while (CommitDue(/*force=*/true) > 0) {
  }
}

Status WagerBatcher::Submit(Posting posting, WagerDone done) {
  TELOS_RETURN_IF_ERROR(ValidatePosting(posting));
  std::vector<std::string> unknown;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Cancelled("the wager batcher is stopping");
    unknown = reservations_.Unknown(posting);
  }
  // Read unknown balances without the lock: a ledger read may wait on the database.
  std::vector<std::pair<std::string, int64_t>> loaded;
  for (const std::string& account : unknown) {
    auto balance = ledger_.Balance(account);
    if (!balance.ok()) return balance.status();
    loaded.emplace_back(account, *balance);
  }
  bool refreshed = !unknown.empty();
  while (true) {
    std::string short_account;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return Status::Cancelled("the wager batcher is stopping");
      for (const auto& [account, balance] : loaded) reservations_.Load(account, balance);
      loaded.clear();
      if (auto it = by_key_.find(posting.key); it != by_key_.end()) {
        if (it->second->posting != posting) {
          return Status::AlreadyExists("the idempotency key " + posting.key +
                                       " is queued for a different posting");
        }
        it->second->done.push_back(std::move(done));
        return Status::Ok();
      }
      if (queue_.size() >= options_.pending_max) {
        return Status::ResourceExhausted("the wager batcher holds " +
                                         std::to_string(queue_.size()) +
                                         " wagers (kArcadeWagersPendingMax)");
      }
      const std::vector<std::string> still_unknown = reservations_.Unknown(posting);
      if (still_unknown.empty() && reservations_.TryReserve(posting, &short_account)) {
        auto pending = std::make_unique<Pending>();
        pending->posting = std::move(posting);
        pending->done.push_back(std::move(done));
        pending->queued_at = clock_.Now();
        by_key_.emplace(pending->posting.key, pending.get());
        const bool full = queue_.size() + 1 >= options_.batch_max;
        queue_.push_back(std::move(pending));
        if (full || queue_.size() == 1) wake_.notify_all();
        return Status::Ok();
      }
      if (refreshed && still_unknown.empty()) {
        int64_t available = 0;
        (void)reservations_.Available(short_account, &available);
        return Status::FailedPrecondition(short_account + " has " + std::to_string(available) +
                                          " chips not already wagered");
      }
      // The known balance may be stale (chips credited by another instance): read it afresh
      // once before refusing.
      for (const std::string& account : still_unknown) reservations_.Forget(account);
      if (!short_account.empty()) reservations_.Forget(short_account);
      unknown = reservations_.Unknown(posting);
    }
    for (const std::string& account : unknown) {
      auto balance = ledger_.Balance(account);
      if (!balance.ok()) return balance.status();
      loaded.emplace_back(account, *balance);
    }
    refreshed = true;
  }
}

bool WagerBatcher::DueLocked(Instant now) const {
  if (queue_.empty()) return false;
  if (queue_.size() >= options_.batch_max || stopping_) return true;
  return now - queue_.front()->queued_at >= std::chrono::milliseconds(options_.window_ms);
}

size_t WagerBatcher::CommitDue(bool force) {
  std::vector<std::unique_ptr<Pending>> batch;
  {
    std::lock_guard lock(mu_);
    if (queue_.empty() || !(force || DueLocked(clock_.Now()))) return 0;
    while (!queue_.empty() && batch.size() < options_.batch_max) {
      by_key_.erase(queue_.front()->posting.key);
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
  }
  std::vector<Posting> postings;
  postings.reserve(batch.size());
  for (const auto& pending : batch) postings.push_back(pending->posting);

  Result<std::vector<Result<PostingResult>>> answers = Status::Internal("not committed");
  bool maybe_applied = false;
  for (int attempt = 0; attempt < limits::kArcadeBatchCommitAttemptsMax; ++attempt) {
    answers = ledger_.PostBatch(postings);
    if (answers.ok() || !Retryable(answers.status())) break;
    if (answers.status().code() == StatusCode::kUnknownResult) maybe_applied = true;
  }
  if (!answers.ok() && maybe_applied && answers.status().code() != StatusCode::kUnknownResult) {
    answers =
        Status::UnknownResult("the batch may have been applied: " + answers.status().message());
  }
  {
    std::lock_guard lock(mu_);
    ++batches_;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Posting& posting = batch[i]->posting;
      const bool applied = answers.ok() && (*answers)[i].ok() && !(*answers)[i]->replayed;
      if (applied) {
        reservations_.Applied(posting);
      } else {
        reservations_.Released(posting);
      }
      // A refusal, a replay or a failed commit means the known balances may not match the
      // ledger's (another instance spent, or this posting had been applied before we read).
      if (!applied) {
        for (const Leg& leg : posting.legs) reservations_.Forget(leg.account);
      }
    }
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    for (WagerDone& done : batch[i]->done) {
      done(answers.ok() ? (*answers)[i] : Result<PostingResult>(answers.status()));
    }
  }
  return batch.size();
}

Instant WagerBatcher::NextDue() const {
  std::lock_guard lock(mu_);
  if (queue_.empty()) return Instant::max();
  if (queue_.size() >= options_.batch_max) return queue_.front()->queued_at;
  return queue_.front()->queued_at + std::chrono::milliseconds(options_.window_ms);
}

size_t WagerBatcher::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

int64_t WagerBatcher::batches_committed() const {
  std::lock_guard lock(mu_);
  return batches_;
}

int64_t WagerBatcher::Reserved(std::string_view account) const {
  std::lock_guard lock(mu_);
  return reservations_.Reserved(account);
}

void WagerBatcher::Run() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      while (!DueLocked(clock_.Now())) {
        if (stopping_ && queue_.empty()) return;
        if (queue_.empty()) {
          wake_.wait(lock);
        } else {
          const Instant due =
              queue_.front()->queued_at + std::chrono::milliseconds(options_.window_ms);
          wake_.wait_for(lock, due - clock_.Now());
        }
      }
    }
    CommitDue();
  }
}

}  // namespace telos::arcade
