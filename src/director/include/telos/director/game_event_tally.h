// GameEventTally: the leader director's consumer of game events. While it runs, every event on
// the game-event stream (telos/store/game_events.h) is applied once to the RecordsStore; the
// leader starts it on taking the lease and destroys it on stepping down, so only a leader
// applies, and a new leader resumes where the durable consumer left off.
//
// Each event arrives at least once, in stream order (telos/bus/durable.h); RecordsStore's
// per-source watermark turns that into exactly once. An event that cannot be decoded or is
// refused by the store as malformed (kInvalidArgument) is rejected (poisoned: dropped, logged,
// counted); on any other error (the store away, slow or failing) it is retried, and parked after
// the consumer's max_deliveries.
//
// Before an event reaches the store it must be its publisher's to make (SECURITY.md, "Game
// events"), else it is refused (rejected: dropped by the consumer, still in the stream for an
// operator to read), logged once per reason and counted in game_events_refused_total{reason}:
//   source_mismatch  the payload's source is not the one its subject names
//                    (store::GameEventSubjectMatches); the broker's permissions bind the
//                    subject's source token to one world, the payload is the publisher's word.
//   sequence_jump    the sequence is more than sequence_jump_max past the source's watermark:
//                    applying it would make every genuine event below it a duplicate.
//
// Ownership: borrows the streams, the store and the logger, which must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/bus/delivery_metrics.h"
#include "telos/bus/durable.h"
#include "telos/store/records_store.h"

namespace telos::director {

struct GameEventTallyOptions {
  std::string durable = "director-tally";  // one position for the whole fleet's leaders
  int64_t ack_wait_ms = bus::ConsumerSpec::kAckWaitMsDefault;
  int64_t retry_delay_ms = bus::ConsumerSpec::kRetryDelayMsDefault;
  uint32_t max_deliveries = bus::ConsumerSpec::kMaxDeliveriesDefault;
  // Called once per event applied (never for a duplicate), after its transaction committed, on
  // the consumer's thread: the visible effect beyond the records, such as the announcement to
  // every world. It may block briefly (it holds up only this consumer) and must not throw. An
  // effect here is at most once: a crash between the commit and the call skips it.
  std::function<void(const store::GameEvent&)> on_applied;
  // The largest step past a source's watermark an event may take (see above).
  int64_t sequence_jump_max = limits::kGameEventSequenceJumpMax;
  // Where the delivery instruments go (bus::DeliveryMetrics: live lag, the catch-up pair, the
  // poisoned count). Null: none.
  Metrics* metrics = nullptr;
};

// Creates (or updates) the game-event stream.
Status EnsureGameEventStream(bus::DurableStreams& streams);

class GameEventTally {
 public:
  static Result<std::unique_ptr<GameEventTally>> Start(bus::DurableStreams& streams,
                                                       store::RecordsStore& records, Logger& logger,
                                                       GameEventTallyOptions options = {});
  ~GameEventTally();

  uint64_t applied() const { return applied_.load(); }
  uint64_t duplicates() const { return duplicates_.load(); }
  uint64_t poisoned() const { return poisoned_.load(); }
  // Refused as not the publisher's to make (see above); each is also counted in poisoned().
  uint64_t source_mismatches() const { return source_mismatches_.load(); }
  uint64_t sequence_jumps() const { return sequence_jumps_.load(); }

 private:
  GameEventTally(store::RecordsStore& records, Logger& logger, std::string durable,
                 std::function<void(const store::GameEvent&)> on_applied, int64_t sequence_jump_max,
                 Metrics* metrics);
  bus::Disposition Handle(const bus::DurableEvent& event);
  // Counts and rejects an event refused for `reason`; logs only the first of each reason (a
  // hostile publisher must not be able to flood the director's log).
  bus::Disposition Refuse(const bus::DurableEvent& event, const store::GameEvent& decoded,
                          std::atomic<uint64_t>& count, prometheus::Counter* metric,
                          std::atomic<bool>& logged, const char* reason);

  store::RecordsStore& records_;
  Logger& logger_;
  const std::string durable_;
  const std::function<void(const store::GameEvent&)> on_applied_;
  const int64_t sequence_jump_max_;
  prometheus::Counter* source_mismatch_metric_ = nullptr;  // null without options.metrics
  prometheus::Counter* sequence_jump_metric_ = nullptr;
  std::unique_ptr<bus::DeliveryMetrics> delivery_metrics_;  // null without options.metrics
  std::atomic<uint64_t> applied_{0};
  std::atomic<uint64_t> duplicates_{0};
  std::atomic<uint64_t> poisoned_{0};
  std::atomic<uint64_t> source_mismatches_{0};
  std::atomic<uint64_t> sequence_jumps_{0};
  std::atomic<bool> source_mismatch_logged_{false};
  std::atomic<bool> sequence_jump_logged_{false};
  std::unique_ptr<bus::DurableConsumer> consumer_;  // last: stopped first
};

}  // namespace telos::director
