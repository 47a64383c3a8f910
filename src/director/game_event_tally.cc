#include "telos/director/game_event_tally.h"

#include <chrono>
#include <string>
#include <utility>

#include "telos/store/game_events.h"

namespace telos::director {
namespace {

// The clock the durable backends stamp published_unix_ms with.
int64_t WallUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status EnsureGameEventStream(bus::DurableStreams& streams) {
  return streams.EnsureStream(store::GameEventStreamSpec());
}

Result<std::unique_ptr<GameEventTally>> GameEventTally::Start(bus::DurableStreams& streams,
                                                              store::RecordsStore& records,
                                                              Logger& logger,
                                                              GameEventTallyOptions options) {
  std::unique_ptr<GameEventTally> tally(
      new GameEventTally(records, logger, options.durable, std::move(options.on_applied)));
  bus::ConsumerSpec spec;
  spec.stream = std::string(store::kGameEventStream);
  spec.durable = options.durable;
  spec.ack_wait_ms = options.ack_wait_ms;
  spec.retry_delay_ms = options.retry_delay_ms;
  spec.max_deliveries = options.max_deliveries;
  if (options.metrics != nullptr) {
    // Taken before the consumer starts: whatever the stream holds already is its backlog.
    tally->delivery_metrics_ =
        std::make_unique<bus::DeliveryMetrics>(spec.stream, WallUnixMs(), *options.metrics);
  }
  GameEventTally* raw = tally.get();
  auto consumer = streams.Consume(spec, [raw](const bus::DurableEvent& event) {
    const bus::Disposition answer = raw->Handle(event);
    if (raw->delivery_metrics_) raw->delivery_metrics_->Record(event, answer, WallUnixMs());
    return answer;
  });
  if (!consumer.ok()) return consumer.status();
  tally->consumer_ = std::move(consumer).value();
  return tally;
}

GameEventTally::GameEventTally(store::RecordsStore& records, Logger& logger, std::string durable,
                               std::function<void(const store::GameEvent&)> on_applied)
    : records_(records),
      logger_(logger),
      durable_(std::move(durable)),
      on_applied_(std::move(on_applied)) {}

GameEventTally::~GameEventTally() {
  consumer_.reset();
}

bus::Disposition GameEventTally::Handle(const bus::DurableEvent& event) {
  auto decoded = store::DecodeGameEvent(event.data);
  if (!decoded.ok()) {
    ++poisoned_;
    logger_.Warn("game event poisoned", {{"subject", event.subject},
                                         {"stream_sequence", event.stream_sequence},
                                         {"error", decoded.status().message()}});
    return bus::Disposition::kReject;
  }
  auto applied = records_.Apply(durable_, *decoded);
  if (applied.ok()) {
    ++(*applied == store::Applied::kApplied ? applied_ : duplicates_);
    if (*applied == store::Applied::kApplied && on_applied_) on_applied_(*decoded);
    return bus::Disposition::kAck;
  }
  // Only the event's own fault (the store refusing its fields) is poison. Anything else, the
  // store away (kUnavailable, kUnknownResult) or slow (a statement timeout is
  // kDeadlineExceeded) or failing for a reason of its own, says nothing about the event: it is
  // retried, and parked after max_deliveries, rather than dropped at the first try.
  if (applied.status().code() != StatusCode::kInvalidArgument) {
    return bus::Disposition::kRetry;
  }
  ++poisoned_;
  logger_.Warn("game event poisoned", {{"subject", event.subject},
                                       {"stream_sequence", event.stream_sequence},
                                       {"error", applied.status().message()}});
  return bus::Disposition::kReject;
}

}  // namespace telos::director
