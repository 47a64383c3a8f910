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
// Ownership: borrows the streams, the store and the logger, which must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

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

 private:
  GameEventTally(store::RecordsStore& records, Logger& logger, std::string durable,
                 std::function<void(const store::GameEvent&)> on_applied);
  bus::Disposition Handle(const bus::DurableEvent& event);

  store::RecordsStore& records_;
  Logger& logger_;
  const std::string durable_;
  const std::function<void(const store::GameEvent&)> on_applied_;
  std::unique_ptr<bus::DeliveryMetrics> delivery_metrics_;  // null without options.metrics
  std::atomic<uint64_t> applied_{0};
  std::atomic<uint64_t> duplicates_{0};
  std::atomic<uint64_t> poisoned_{0};
  std::unique_ptr<bus::DurableConsumer> consumer_;  // last: stopped first
};

}  // namespace telos::director
