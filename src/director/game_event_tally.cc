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
      new GameEventTally(records, logger, options.durable, std::move(options.on_applied),
                         options.sequence_jump_max, options.metrics));
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
                               std::function<void(const store::GameEvent&)> on_applied,
                               int64_t sequence_jump_max, Metrics* metrics)
    : records_(records),
      logger_(logger),
      durable_(std::move(durable)),
      on_applied_(std::move(on_applied)),
      sequence_jump_max_(sequence_jump_max) {
  if (metrics != nullptr) {
    const std::string help =
        "Game events the director refused as not their publisher's to make, by reason";
    source_mismatch_metric_ =
        &metrics->Counter("game_events_refused_total", help, {{"reason", "source_mismatch"}});
    sequence_jump_metric_ =
        &metrics->Counter("game_events_refused_total", help, {{"reason", "sequence_jump"}});
  }
}

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
  // The subject's source token is what the broker let this publisher use; the payload is only
  // its word.
  if (!store::GameEventSubjectMatches(event.subject, *decoded)) {
    return Refuse(event, *decoded, source_mismatches_, source_mismatch_metric_,
                  source_mismatch_logged_, "source_mismatch");
  }
  // The watermark only grows, and only this consumer moves it: read outside Apply's
  // transaction it can only be lower than the one Apply sees, so the bound is never looser.
  auto watermark = records_.Watermark(durable_, decoded->source);
  if (!watermark.ok()) return bus::Disposition::kRetry;  // the store's trouble, not the event's
  if (decoded->sequence > *watermark && decoded->sequence - *watermark > sequence_jump_max_) {
    return Refuse(event, *decoded, sequence_jumps_, sequence_jump_metric_, sequence_jump_logged_,
                  "sequence_jump");
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

bus::Disposition GameEventTally::Refuse(const bus::DurableEvent& event,
                                        const store::GameEvent& decoded,
                                        std::atomic<uint64_t>& count, prometheus::Counter* metric,
                                        std::atomic<bool>& logged, const char* reason) {
  ++count;
  ++poisoned_;
  if (metric != nullptr) metric->Increment();
  if (!logged.exchange(true)) {
    logger_.Warn(
        "game event refused: not its publisher's to make (later ones are only counted "
        "in game_events_refused_total)",
        {{"reason", reason},
         {"subject", event.subject},
         {"stream_sequence", event.stream_sequence},
         {"source", decoded.source},
         {"sequence", decoded.sequence}});
  }
  return bus::Disposition::kReject;
}

}  // namespace telos::director
