#include "telos/shard/game_event_publisher.h"

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <utility>

#include "telos/store/game_events.h"

namespace telos::shard {
namespace asio = boost::asio;

GameEventPublisher::GameEventPublisher(GameEventPublisherOptions options,
                                       bus::DurableStreams& streams, store::RecordsStore& sequences,
                                       asio::io_context& io, BlockingRunner blocking,
                                       const Clock& clock, Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      streams_(streams),
      sequences_(sequences),
      io_(io),
      blocking_(std::move(blocking)),
      clock_(clock),
      log_(log),
      published_(metrics.Counter("game_events_published_total",
                                 "Game events this world stored on the durable stream")),
      dropped_(metrics.Counter("game_events_dropped_total",
                               "Game events this world lost: its queue was full, or the stream "
                               "refused them as malformed")),
      queued_gauge_(metrics.Gauge("game_events_queued",
                                  "Game events waiting for the durable stream in this world")) {}

GameEventPublisher::~GameEventPublisher() {
  Stop();
}

void GameEventPublisher::Stop() {
  in_flight_->Close();  // waits for a drainer in flight; a retry timer or a late Drain is refused
  std::deque<store::GameEvent> left;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;  // a zone's Publish from now on is ignored
    left.swap(queue_);
  }
  queued_gauge_.Set(0);
  // What is still queued (a boss killed in a zone's last moments, or events held by an outage)
  // is tried once more, head first, on this thread. The first failure ends it: the rest would
  // only wait behind the head, and a stop must not wait out an outage.
  while (!left.empty()) {
    const Outcome outcome = PublishHead(left.front());
    if (outcome == Outcome::kRetry) break;
    if (outcome == Outcome::kStored) {
      ++published_count_;
      published_.Increment();
    } else {
      ++dropped_count_;
      dropped_.Increment();
    }
    left.pop_front();
  }
  if (!left.empty()) {
    log_.Warn("game events still queued at shutdown are lost",
              {{"events", static_cast<int64_t>(left.size())}});
  }
}

size_t GameEventPublisher::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void GameEventPublisher::Publish(std::string kind, std::string subject, std::string actor) {
  const int64_t at_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  store::GameEvent event{options_.source,  0,    std::move(kind), std::move(subject),
                         std::move(actor), at_ms};
  bool start = false;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    if (queue_.size() >= options_.queue_max) {
      // Keeps the older events: they happened first and their order is what apply-once needs.
      ++dropped_count_;
      dropped_.Increment();
      log_.Warn("game event dropped: the publish queue is full",
                {{"kind", event.kind},
                 {"subject", event.subject},
                 {"queued", static_cast<int64_t>(queue_.size())}});
      return;
    }
    queue_.push_back(std::move(event));
    queued_gauge_.Set(static_cast<double>(queue_.size()));
    if (!draining_) start = draining_ = true;
  }
  if (start) blocking_(in_flight_->Wrap([this] { Drain(); }));
}

void GameEventPublisher::Drain() {
  while (true) {
    store::GameEvent head;
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      if (queue_.empty()) {
        draining_ = false;
        return;
      }
      // Only the drainer removes from the front, so the head stays put while it is published.
      head = queue_.front();
    }
    const Outcome outcome = PublishHead(head);
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      if (outcome == Outcome::kRetry) {
        queue_.front().sequence = head.sequence;  // reserved: the retry reuses it
      } else {
        queue_.pop_front();
      }
      queued_gauge_.Set(static_cast<double>(queue_.size()));
    }
    if (outcome == Outcome::kRetry) return RetryLater();
    if (outcome == Outcome::kStored) {
      ++published_count_;
      published_.Increment();
    } else {
      ++dropped_count_;
      dropped_.Increment();
    }
  }
}

GameEventPublisher::Outcome GameEventPublisher::PublishHead(store::GameEvent& event) {
  if (event.sequence == 0) {
    auto sequence = sequences_.ReserveSequence(event.source);
    if (!sequence.ok()) {
      if (sequence.status().code() == StatusCode::kInvalidArgument) {
        Drop(event, sequence.status().ToString());
        return Outcome::kDrop;
      }
      log_.Warn("game event waits: cannot reserve its sequence",
                {{"kind", event.kind}, {"error", sequence.status().ToString()}});
      return Outcome::kRetry;
    }
    event.sequence = *sequence;
  }
  // The stream is the director's to create (EnsureGameEventStream when it leads): a world's
  // NATS user may not manage streams. Until it exists the publish is NotFound, and retried.
  auto ack = streams_.Publish(store::GameEventSubject(event.kind, event.source),
                              store::EncodeGameEvent(event), store::GameEventMsgId(event));
  if (ack.ok()) return Outcome::kStored;
  switch (ack.status().code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      // Retrying cannot help (durable.h): the broker refuses this event itself.
      Drop(event, ack.status().ToString());
      return Outcome::kDrop;
    case StatusCode::kNotFound:
      log_.Warn("game event waits: no game-event stream yet (the leading director creates it)",
                {{"kind", event.kind}, {"sequence", event.sequence}});
      return Outcome::kRetry;
    default: break;
  }
  log_.Warn(
      "game event waits: the durable stream is unavailable",
      {{"kind", event.kind}, {"sequence", event.sequence}, {"error", ack.status().ToString()}});
  return Outcome::kRetry;
}

void GameEventPublisher::RetryLater() {
  auto timer =
      std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(options_.retry_delay_ms));
  timer->async_wait(in_flight_->Wrap([this, timer](boost::system::error_code ec) {
    if (ec) return;
    blocking_(in_flight_->Wrap([this] { Drain(); }));
  }));
}

void GameEventPublisher::Drop(const store::GameEvent& event, const std::string& why) {
  log_.Error("game event dropped: it can never be published", {{"kind", event.kind},
                                                               {"subject", event.subject},
                                                               {"sequence", event.sequence},
                                                               {"error", why}});
}

}  // namespace telos::shard
