#include "telos/store/character_saver.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "telos/base/assert.h"

namespace telos::store {
namespace {

// Outcomes that say nothing about the row: keep the snapshot and try again later.
bool IsRetryable(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kUnknownResult: return true;
    default: return false;
  }
}

}  // namespace

CharacterSaver::CharacterSaver(CharacterStore& store, Metrics& metrics, Logger& logger,
                               ReportFn on_report)
    : CharacterSaver(store, metrics, logger, std::move(on_report), Options{}) {}

CharacterSaver::CharacterSaver(CharacterStore& store, Metrics& metrics, Logger& logger,
                               ReportFn on_report, Options options)
    : store_(store),
      logger_(logger),
      on_report_(std::move(on_report)),
      options_(options),
      saves_total_(metrics.Counter("saves_total", "Character snapshots written by the saver")),
      conflicts_total_(metrics.Counter("save_conflicts_total",
                                       "Character saves that lost a state_version race")),
      fenced_total_(
          metrics.Counter("save_fenced_total", "Character saves refused by the owner_epoch fence")),
      retries_total_(metrics.Counter("save_retries_total",
                                     "Character saves retried because the store was unavailable")),
      dropped_total_(metrics.Counter("save_dropped_total",
                                     "Character snapshots dropped on another error or at stop")),
      queue_depth_(metrics.Gauge("save_queue_depth", "Characters waiting to be saved")) {
  RELEASE_ASSERT(options_.pending_max > 0, "the saver needs room for one character");
  RELEASE_ASSERT(options_.retry_backoff_initial_ms > 0 &&
                     options_.retry_backoff_max_ms >= options_.retry_backoff_initial_ms,
                 "bad saver backoff");
}

CharacterSaver::~CharacterSaver() {
  Stop();
}

void CharacterSaver::Start() {
  std::lock_guard lock(mu_);
  RELEASE_ASSERT(!started_ && !stopping_, "CharacterSaver::Start called twice or after Stop");
  started_ = true;
  worker_ = std::thread([this] { Run(); });
}

void CharacterSaver::Stop() {
  std::vector<SaveReport> cancelled;
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_deadline_ = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(options_.stop_flush_deadline_ms);
      // Without a worker nothing can be written: give the queue up now.
      if (!started_) CancelAllLocked(cancelled);
    }
  }
  cv_.notify_all();
  for (const SaveReport& report : cancelled) on_report_(report);
  if (worker_.joinable()) worker_.join();
}

Status CharacterSaver::Submit(CharacterSnapshot snapshot) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(snapshot.record.name));
  std::string key = NameKey(snapshot.record.name);
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Cancelled("the character saver is stopping");
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      // Coalesce: the newer state replaces the older; the entry keeps its place in line and
      // the obligation of the oldest submission it stands for.
      it->second.snapshot = std::move(snapshot);
      it->second.seq = next_seq_++;
    } else {
      if (pending_.size() >= options_.pending_max) {
        return Status::ResourceExhausted("the character saver already holds " +
                                         std::to_string(pending_.size()) + " characters");
      }
      const uint64_t seq = next_seq_++;
      order_.emplace(seq, key);
      pending_.emplace(std::move(key),
                       Entry{.snapshot = std::move(snapshot), .seq = seq, .oldest_seq = seq});
      UpdateDepthLocked();
    }
  }
  cv_.notify_all();
  return Status::Ok();
}

Status CharacterSaver::Flush(std::string_view name, std::chrono::milliseconds timeout) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Waiter waiter{.key = NameKey(name)};
  std::unique_lock lock(mu_);
  if (auto it = pending_.find(waiter.key); it != pending_.end()) {
    waiter.target_seq = it->second.seq;
  } else if (in_flight_ && in_flight_->key == waiter.key) {
    waiter.target_seq = in_flight_->seq;
  } else {
    return Status::Ok();  // nothing of this character is waiting
  }
  retry_after_.reset();  // a quit or handoff is worth an early retry
  waiters_.push_back(&waiter);
  cv_.notify_all();
  cv_.wait_until(lock, deadline, [&] { return waiter.done; });
  waiters_.remove(&waiter);
  if (!waiter.done) {
    return Status::DeadlineExceeded("the snapshot of '" + std::string(name) +
                                    "' was not written within " + std::to_string(timeout.count()) +
                                    " ms");
  }
  return waiter.status;
}

Status CharacterSaver::FlushAll(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu_);
  const uint64_t target = next_seq_ - 1;
  retry_after_.reset();
  cv_.notify_all();
  const bool done =
      cv_.wait_until(lock, deadline, [&] { return OldestOutstandingLocked() > target; });
  if (!done) {
    return Status::DeadlineExceeded(std::to_string(pending_.size()) +
                                    " characters still waiting to be saved after " +
                                    std::to_string(timeout.count()) + " ms");
  }
  return Status::Ok();
}

void CharacterSaver::Forget(std::string_view name) {
  std::lock_guard lock(mu_);
  chains_.erase(NameKey(name));
}

size_t CharacterSaver::pending() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

uint64_t CharacterSaver::OldestOutstandingLocked() const {
  uint64_t oldest = std::numeric_limits<uint64_t>::max();
  if (!order_.empty()) oldest = order_.begin()->first;
  if (in_flight_) oldest = std::min(oldest, in_flight_->oldest_seq);
  return oldest;
}

void CharacterSaver::UpdateDepthLocked() {
  queue_depth_.Set(static_cast<double>(pending_.size()));
}

void CharacterSaver::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (stopping_ && (order_.empty() || now >= stop_deadline_)) break;
    if (order_.empty()) {
      cv_.wait(lock);
      continue;
    }
    if (retry_after_ && now < *retry_after_) {
      cv_.wait_until(lock, stopping_ ? std::min(*retry_after_, stop_deadline_) : *retry_after_);
      continue;
    }

    // Oldest first, so a character that changes constantly cannot starve the others.
    auto next = order_.begin();
    auto it = pending_.find(next->second);
    ASSERT(it != pending_.end(), "order_ and pending_ disagree");
    InFlight flight{.key = it->first, .seq = it->second.seq, .oldest_seq = it->second.oldest_seq};
    CharacterSnapshot snapshot = std::move(it->second.snapshot);
    order_.erase(next);
    pending_.erase(it);
    UpdateDepthLocked();
    in_flight_ = flight;

    int64_t expected = snapshot.expected_state_version;
    if (auto chain = chains_.find(flight.key); chain != chains_.end()) {
      const Chain& c = chain->second;
      if (c.owner_epoch == snapshot.writer_owner_epoch && expected >= c.base &&
          expected <= c.head) {
        expected = c.head;  // based on our own earlier write: move it onto our latest
      }
    }

    lock.unlock();
    Result<int64_t> result = store_.Save(snapshot.record, expected, snapshot.writer_owner_epoch);
    lock.lock();

    const Status status = result.ok() ? Status::Ok() : result.status();
    if (IsRetryable(status)) {
      retries_total_.Increment();
      backoff_ms_ = backoff_ms_ == 0 ? options_.retry_backoff_initial_ms
                                     : std::min(backoff_ms_ * 2, options_.retry_backoff_max_ms);
      retry_after_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms_);
      logger_.Warn("character save failed; will retry", {{"character", snapshot.record.name},
                                                         {"status", status.ToString()},
                                                         {"backoff_ms", backoff_ms_}});
      Requeue(Entry{
          .snapshot = std::move(snapshot), .seq = flight.seq, .oldest_seq = flight.oldest_seq});
      in_flight_.reset();
      cv_.notify_all();
      continue;
    }

    backoff_ms_ = 0;
    retry_after_.reset();
    SaveReport report{.name = snapshot.record.name,
                      .status = status,
                      .new_state_version = result.ok() ? *result : 0,
                      .writer_owner_epoch = snapshot.writer_owner_epoch};
    if (status.ok()) {
      saves_total_.Increment();
      auto chain = chains_.find(flight.key);
      if (chain != chains_.end() && chain->second.owner_epoch == snapshot.writer_owner_epoch &&
          snapshot.expected_state_version >= chain->second.base &&
          snapshot.expected_state_version <= chain->second.head) {
        chain->second.head = *result;
      } else {
        if (chain == chains_.end() && chains_.size() >= options_.pending_max) {
          // Bound the memory: forget characters with nothing queued. The cost is at most a
          // spurious conflict, which the owner answers by rebasing.
          std::erase_if(chains_, [&](const auto& kv) { return !pending_.contains(kv.first); });
        }
        chains_[flight.key] = Chain{.owner_epoch = snapshot.writer_owner_epoch,
                                    .base = snapshot.expected_state_version,
                                    .head = *result};
      }
    } else {
      // Our chain is broken: somebody else wrote, or a newer owner holds the character.
      chains_.erase(flight.key);
      if (status.code() == StatusCode::kConflict) {
        conflicts_total_.Increment();
      } else if (IsFenced(status)) {
        fenced_total_.Increment();
        logger_.Warn("character save fenced; a newer owner holds it",
                     {{"character", report.name}, {"status", status.ToString()}});
      } else {
        dropped_total_.Increment();
        logger_.Error("character save failed; snapshot dropped",
                      {{"character", report.name}, {"status", status.ToString()}});
      }
    }

    // The callback runs unlocked; waiters are released after it, so a Flush that returns OK
    // implies the owner has already been told the new version.
    lock.unlock();
    on_report_(report);
    lock.lock();
    FinishLocked(flight, status);
    in_flight_.reset();
    cv_.notify_all();
  }

  std::vector<SaveReport> cancelled;
  CancelAllLocked(cancelled);
  lock.unlock();
  cv_.notify_all();
  for (const SaveReport& report : cancelled) on_report_(report);
}

void CharacterSaver::Requeue(Entry entry) {
  std::string key = NameKey(entry.snapshot.record.name);
  auto it = pending_.find(key);
  if (it != pending_.end()) {
    // A newer snapshot arrived while this one was being written: it supersedes this one and
    // takes over its place in line (and the obligation to Flush/FlushAll callers).
    order_.erase(it->second.oldest_seq);
    it->second.oldest_seq = entry.oldest_seq;
    order_.emplace(entry.oldest_seq, it->first);
    return;
  }
  order_.emplace(entry.oldest_seq, key);
  pending_.emplace(std::move(key), std::move(entry));
  UpdateDepthLocked();
}

void CharacterSaver::FinishLocked(const InFlight& flight, const Status& status) {
  for (Waiter* waiter : waiters_) {
    if (!waiter->done && waiter->key == flight.key && waiter->target_seq <= flight.seq) {
      waiter->done = true;
      waiter->status = status;
    }
  }
}

void CharacterSaver::CancelAllLocked(std::vector<SaveReport>& reports) {
  if (!pending_.empty()) {
    logger_.Error("character saver stopped with unsaved snapshots",
                  {{"characters", static_cast<uint64_t>(pending_.size())}});
  }
  const Status cancelled = Status::Cancelled("the character saver stopped before saving this");
  for (auto& [key, entry] : pending_) {
    dropped_total_.Increment();
    reports.push_back(SaveReport{.name = entry.snapshot.record.name,
                                 .status = cancelled,
                                 .writer_owner_epoch = entry.snapshot.writer_owner_epoch});
  }
  for (Waiter* waiter : waiters_) {
    if (!waiter->done) {
      waiter->done = true;
      waiter->status = cancelled;
    }
  }
  pending_.clear();
  order_.clear();
  UpdateDepthLocked();
}

}  // namespace telos::store
