// DurableStreams: the fleet's stored event streams (NATS JetStream), or one process's (SQLite).
//
// Unlike Bus, what is published here is kept: Publish returns only once the event is stored,
// and every durable consumer receives it at least once, even if the consumer was away (or the
// process restarted) when it was published. A consumer is named by a stable `durable` id; one
// that comes back under the same id resumes after the last event it acknowledged.
//
// Delivery is strictly in stream order, one event at a time per consumer: the handler's answer
// for an event decides whether the next one comes. Nothing later is delivered while an event
// waits for a retry, so a consumer that applies events once by a per-source watermark (the
// sequence of the last applied event of each source, stored with the effect) never sees a
// source's events out of order. The handler answers:
//   kAck     applied (or known to be a duplicate): never delivered to this consumer again.
//   kRetry   not now (a dependency is down): delivered again after retry_delay_ms.
//   kReject  malformed or unroutable (poisoned): dropped for this consumer, counted.
// An event delivered max_deliveries times without an ack (the handler kept asking for a retry,
// or the process died inside it) is parked: dropped for this consumer and counted, so one bad
// event cannot stop a consumer for good. A delivery whose answer never comes (the process died
// inside the handler) is delivered again after ack_wait_ms, with its delivery count raised.
//
// Duplicates. A publish that carries a msg_id already stored within the stream's
// duplicate_window_ms is not stored again: Publish returns the first copy's sequence with
// `duplicate` set. (Consumers must still apply once: a publisher that crashed before it heard
// the answer may publish again after the window.)
//
// Two backends with the same observable rules, checked by one conformance suite
// (durable_conformance.h):
//   - JetStreamStreams (jetstream.h): a fleet, on NATS JetStream.
//   - store::SqliteEventLog (telos/store/sqlite_event_log.h): `telos serve`, in its SQLite file,
//     so the embedded game keeps its events across a restart.
//
// Threads. Every method may be called from any thread. Handlers run on a thread of their
// consumer's own, never inside the call that caused them; they may block briefly (a database
// write) but hold up only their own consumer.
//
// Errors: kInvalidArgument for a malformed name, subject or spec and for data over
// kMessageBytesMax; kUnavailable while the backend cannot store or deliver (nothing was stored);
// kNotFound (Consume) for a stream that does not exist; kFailedPrecondition when the broker
// refuses the request itself (a configuration it will not take): retrying cannot help.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::bus {

// A stored stream: every subject that `subjects` matches (wildcards as in Bus) is kept in it.
struct StreamSpec {
  static constexpr int64_t kDuplicateWindowMsDefault = 2 * 60 * 1000;

  std::string name;      // [A-Za-z0-9_-]+, at most 64 bytes
  std::string subjects;  // one subject pattern, e.g. "events.>"
  // Events older than this are dropped (JetStream on time; the SQLite log when the stream is
  // next published to, at most once a second); 0 keeps them forever.
  int64_t max_age_ms = 0;
  int64_t max_messages = 0;  // the oldest beyond this are dropped; 0 means no bound
  // > 0; a window longer than a non-zero max_age_ms is cut to it (no event outlives that).
  int64_t duplicate_window_ms = kDuplicateWindowMsDefault;
};

struct ConsumerSpec {
  static constexpr int64_t kAckWaitMsDefault = 30'000;
  static constexpr int64_t kRetryDelayMsDefault = 1'000;
  static constexpr uint32_t kMaxDeliveriesDefault = 10;

  std::string stream;
  std::string durable;         // [A-Za-z0-9_-]+, at most 64 bytes: the consumer's stable id
  std::string filter_subject;  // empty: every subject of the stream
  int64_t ack_wait_ms = kAckWaitMsDefault;          // > 0
  int64_t retry_delay_ms = kRetryDelayMsDefault;    // >= 0, < ack_wait_ms
  uint32_t max_deliveries = kMaxDeliveriesDefault;  // >= 1
};

struct DurableEvent {
  std::string subject;
  std::string data;
  uint64_t stream_sequence = 0;  // the event's position in its stream, from 1
  uint32_t deliveries = 0;       // 1 the first time this consumer sees it
  int64_t published_unix_ms = 0;
};

enum class Disposition { kAck, kRetry, kReject };

struct PublishAck {
  uint64_t stream_sequence = 0;
  bool duplicate = false;  // the msg_id was already stored: nothing new was stored
};

// What a consumer has seen; every counter only grows.
struct ConsumerCounts {
  uint64_t acked = 0;
  uint64_t rejected = 0;  // poisoned
  uint64_t parked = 0;    // max_deliveries reached
  uint64_t redelivered = 0;
};

// A running consumer. Destroying it stops delivery: the destructor waits for a handler call in
// flight (and honours its answer); once it returns the handler is not called again. Must not be
// destroyed from inside its own handler.
class DurableConsumer {
 public:
  virtual ~DurableConsumer() = default;
  virtual ConsumerCounts counts() const = 0;
};

class DurableStreams {
 public:
  virtual ~DurableStreams() = default;

  // Creates the stream, or updates its bounds if it exists with the same subjects.
  // kAlreadyExists when a stream of that name captures other subjects.
  virtual Status EnsureStream(const StreamSpec& spec) = 0;

  // Stores `data` on `subject` (no wildcards; some stream must capture it, else kNotFound) and
  // returns once it is stored. `msg_id` (may be empty, at most 128 bytes) deduplicates.
  virtual Result<PublishAck> Publish(std::string_view subject, std::string_view data,
                                     std::string_view msg_id) = 0;

  // Starts (or resumes) the durable consumer spec.durable on spec.stream. At most one running
  // consumer per (stream, durable) in one process: kAlreadyExists for a second.
  virtual Result<std::unique_ptr<DurableConsumer>> Consume(
      const ConsumerSpec& spec, std::function<Disposition(const DurableEvent&)> handler) = 0;
};

// Whether `name` is a valid stream or durable name (see above).
bool ValidStreamName(std::string_view name);
// The spec's own errors, shared by both backends (kInvalidArgument naming the field), or OK.
Status CheckStreamSpec(const StreamSpec& spec);
Status CheckConsumerSpec(const ConsumerSpec& spec);

}  // namespace telos::bus
