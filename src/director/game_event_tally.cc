#include "telos/director/game_event_tally.h"

#include <string>
#include <utility>

#include "telos/store/game_events.h"

namespace telos::director {

Status EnsureGameEventStream(bus::DurableStreams& streams) {
  bus::StreamSpec spec;
  spec.name = std::string(store::kGameEventStream);
  spec.subjects = std::string(store::kGameEventSubjects);
  return streams.EnsureStream(spec);
}

Result<std::unique_ptr<GameEventTally>> GameEventTally::Start(bus::DurableStreams& streams,
                                                              store::RecordsStore& records,
                                                              Logger& logger,
                                                              GameEventTallyOptions options) {
  std::unique_ptr<GameEventTally> tally(new GameEventTally(records, logger, options.durable));
  bus::ConsumerSpec spec;
  spec.stream = std::string(store::kGameEventStream);
  spec.durable = options.durable;
  spec.ack_wait_ms = options.ack_wait_ms;
  spec.retry_delay_ms = options.retry_delay_ms;
  spec.max_deliveries = options.max_deliveries;
  GameEventTally* raw = tally.get();
  auto consumer =
      streams.Consume(spec, [raw](const bus::DurableEvent& event) { return raw->Handle(event); });
  if (!consumer.ok()) return consumer.status();
  tally->consumer_ = std::move(consumer).value();
  return tally;
}

GameEventTally::GameEventTally(store::RecordsStore& records, Logger& logger, std::string durable)
    : records_(records), logger_(logger), durable_(std::move(durable)) {}

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
