// GameEventPublisher: a world's game events (a boss killed), published durably on the
// game-event stream (telos/store/game_events.h) for the leader director to apply once.
//
// The publisher's side of apply-once: each event gets the next sequence of this world (its
// source) from RecordsStore::ReserveSequence, stored before the event is published, so a world
// that restarts goes on past every sequence it ever used. Events go out strictly in the order
// they happened, one at a time: the head of the queue is retried (keeping its sequence, so its
// msg id "source:sequence" lets the stream drop a repeat, and the consumer's watermark anything
// later) until it is stored, and only then does the next one get its sequence.
//
// Publish() is what a zone calls: it stamps the time, queues the event and returns. The work
// (the sequence, the publish) runs on the blocking pool, never on a zone's executor; after a
// failure the head waits kGameEventRetryDelayMs on an io timer. While the stream or the store is
// down, events wait in a queue of at most queue_max; one past it is dropped, logged and counted
// (game_events_dropped_total). An event the stream can never take (the broker refuses it as
// malformed) is dropped the same way rather than stopping the queue for good. Stop() tries what
// is still queued once more, head first, and loses (logs) the rest from the first failure on:
// the queue is memory, the sequence is what survives. The publisher never creates the stream
// (the leading director does; a world's NATS user may not): until it exists events wait.
//
// Instruments: game_events_published_total, game_events_dropped_total, game_events_queued.
//
// Thread safety: every method may be called from any thread. Stop() before destruction (the
// destructor calls it); it waits for the publish in flight.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/durable.h"
#include "telos/store/records_store.h"
#include "telos/world/ports.h"

namespace telos::shard {

struct GameEventPublisherOptions {
  std::string source;  // this world's shard id: the events' source
  size_t queue_max = limits::kGameEventQueueMax;
  int64_t retry_delay_ms = limits::kGameEventRetryDelayMs;
};

class GameEventPublisher final : public world::GameEventPort {
 public:
  // Borrows everything; each must outlive the publisher.
  GameEventPublisher(GameEventPublisherOptions options, bus::DurableStreams& streams,
                     store::RecordsStore& sequences, boost::asio::io_context& io,
                     BlockingRunner blocking, const Clock& clock, Logger& log, Metrics& metrics);
  ~GameEventPublisher() override;

  // world::GameEventPort: queues the event (now, by the clock's wall time) and returns.
  void Publish(std::string kind, std::string subject, std::string actor) override;

  // Waits for a publish in flight, tries what is still queued once more (up to the first
  // failure) and publishes nothing after. Idempotent.
  void Stop();

  size_t queued() const;
  uint64_t published() const { return published_count_.load(); }
  uint64_t dropped() const { return dropped_count_.load(); }

 private:
  enum class Outcome { kStored, kRetry, kDrop };
  // On the blocking pool; at most one at a time: publishes the head until the queue is empty or
  // a failure (then a retry is scheduled).
  void Drain();
  Outcome PublishHead(store::GameEvent& event);
  void RetryLater();
  void Drop(const store::GameEvent& event, const std::string& why);

  const GameEventPublisherOptions options_;
  bus::DurableStreams& streams_;
  store::RecordsStore& sequences_;
  boost::asio::io_context& io_;
  const BlockingRunner blocking_;
  const Clock& clock_;
  Logger& log_;
  prometheus::Counter& published_;
  prometheus::Counter& dropped_;
  prometheus::Gauge& queued_gauge_;
  std::atomic<uint64_t> published_count_{0};
  std::atomic<uint64_t> dropped_count_{0};
  std::shared_ptr<InFlightGate> in_flight_ = InFlightGate::Make();

  mutable std::mutex mu_;
  // Oldest first. The head keeps the sequence reserved for it (0 until then) across retries.
  std::deque<store::GameEvent> queue_;  // guarded by mu_
  bool draining_ = false;               // guarded by mu_: a Drain is scheduled, running or waiting
  bool stopped_ = false;                // guarded by mu_
};

}  // namespace telos::shard
