#include "telos/store/character_saver.h"

#include <optional>
#include <string>
#include <utility>

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
      queue_depth_(metrics.Gauge("save_queue_depth", "Characters waiting to be saved")),
      writer_(clock_,
              {.keys_max = options_.pending_max,
               .retry_backoff_initial = Millis(options_.retry_backoff_initial_ms),
               .retry_backoff_max = Millis(options_.retry_backoff_max_ms),
               .attempts_max = 0,  // the store comes back, or Stop() gives up at its deadline
               .depth = &queue_depth_},
              {.write = [this](const std::string& key, const CharacterSnapshot& snapshot) {
                return Write(key, snapshot);
              }}) {
  RELEASE_ASSERT(options_.pending_max > 0, "the saver needs room for one character");
  RELEASE_ASSERT(options_.retry_backoff_initial_ms > 0 &&
                     options_.retry_backoff_max_ms >= options_.retry_backoff_initial_ms,
                 "bad saver backoff");
}

CharacterSaver::~CharacterSaver() {
  Stop();
}

void CharacterSaver::Start() {
  {
    std::lock_guard lock(mu_);
    RELEASE_ASSERT(!started_ && !stopping_, "CharacterSaver::Start called twice or after Stop");
    started_ = true;
  }
  writer_.Start();
}

void CharacterSaver::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  // Without a worker the writer writes nothing and hands the queue back at once.
  const auto left =
      writer_.Stop(clock_.Now() + std::chrono::milliseconds(options_.stop_flush_deadline_ms));
  if (left.empty()) return;
  logger_.Error("character saver stopped with unsaved snapshots",
                {{"characters", static_cast<uint64_t>(left.size())}});
  const Status cancelled = Status::Cancelled("the character saver stopped before saving this");
  for (const auto& [key, snapshot] : left) {
    dropped_total_.Increment();
    on_report_(SaveReport{.name = snapshot.record.name,
                          .status = cancelled,
                          .writer_owner_epoch = snapshot.writer_owner_epoch});
  }
}

Status CharacterSaver::Submit(CharacterSnapshot snapshot) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(snapshot.record.name));
  std::string key = NameKey(snapshot.record.name);
  // Coalesces: the newer state replaces the older; the entry keeps its place in line and the
  // obligation of the oldest submission it stands for.
  switch (writer_.Enqueue(std::move(key), std::move(snapshot))) {
    case EnqueueResult::kQueued:
    case EnqueueResult::kCoalesced: return Status::Ok();
    case EnqueueResult::kStopped: return Status::Cancelled("the character saver is stopping");
    case EnqueueResult::kFull: break;
  }
  return Status::ResourceExhausted("the character saver already holds " +
                                   std::to_string(writer_.queued() + writer_.in_flight()) +
                                   " characters");
}

Status CharacterSaver::Flush(std::string_view name, std::chrono::milliseconds timeout) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  // A quit or handoff is worth an early retry.
  const std::optional<Status> outcome =
      writer_.FlushKey(NameKey(name), clock_.Now() + timeout, /*retry_now=*/true);
  if (!outcome) {
    return Status::DeadlineExceeded("the snapshot of '" + std::string(name) +
                                    "' was not written within " + std::to_string(timeout.count()) +
                                    " ms");
  }
  return *outcome;
}

Status CharacterSaver::FlushAll(std::chrono::milliseconds timeout) {
  if (!writer_.FlushAll(clock_.Now() + timeout, /*retry_now=*/true)) {
    return Status::DeadlineExceeded(std::to_string(writer_.queued()) +
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
  return writer_.queued();
}

WriteOutcome CharacterSaver::Write(const std::string& key, const CharacterSnapshot& snapshot) {
  int64_t expected = snapshot.expected_state_version;
  {
    std::lock_guard lock(mu_);
    if (auto chain = chains_.find(key); chain != chains_.end()) {
      const Chain& c = chain->second;
      if (c.owner_epoch == snapshot.writer_owner_epoch && expected >= c.base &&
          expected <= c.head) {
        expected = c.head;  // based on our own earlier write: move it onto our latest
      }
    }
  }

  Result<int64_t> result = store_.Save(snapshot.record, expected, snapshot.writer_owner_epoch);

  const Status status = result.ok() ? Status::Ok() : result.status();
  if (IsRetryable(status)) {
    retries_total_.Increment();
    logger_.Warn("character save failed; will retry",
                 {{"character", snapshot.record.name}, {"status", status.ToString()}});
    return WriteOutcome::Retry(status);  // nothing is reported until it is written or given up
  }

  SaveReport report{.name = snapshot.record.name,
                    .status = status,
                    .new_state_version = result.ok() ? *result : 0,
                    .writer_owner_epoch = snapshot.writer_owner_epoch};
  {
    std::lock_guard lock(mu_);
    if (status.ok()) {
      saves_total_.Increment();
      auto chain = chains_.find(key);
      if (chain != chains_.end() && chain->second.owner_epoch == snapshot.writer_owner_epoch &&
          snapshot.expected_state_version >= chain->second.base &&
          snapshot.expected_state_version <= chain->second.head) {
        chain->second.head = *result;
      } else {
        if (chain == chains_.end() && chains_.size() >= options_.pending_max) {
          // Bound the memory: forget characters with nothing queued. The cost is at most a
          // spurious conflict, which the owner answers by rebasing.
          std::erase_if(chains_, [&](const auto& kv) { return !writer_.IsQueued(kv.first); });
        }
        chains_[key] = Chain{.owner_epoch = snapshot.writer_owner_epoch,
                             .base = snapshot.expected_state_version,
                             .head = *result};
      }
    } else {
      // Our chain is broken: somebody else wrote, or a newer owner holds the character.
      chains_.erase(key);
    }
  }
  if (!status.ok()) {
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

  // The callback runs unlocked; the writer releases this character's flushers after this
  // returns, so a Flush that returns OK implies the owner has already been told the new version.
  on_report_(report);
  return WriteOutcome::Done(status);
}

}  // namespace telos::store
