// JetStreamStreams: the fleet's DurableStreams (durable.h), on NATS JetStream (nats.c).
//
// It runs over a NatsBus of its own (so it connects, logs in and rides out outages exactly as
// the bus does; see nats_bus.h), and keeps durable traffic off the connection that carries chat.
//
// Streams use file storage, so they survive a restart of the server. A consumer is a durable
// JetStream pull consumer created (or updated) explicitly and then bound, so stopping one never
// deletes it on the server; it is configured with explicit acks, MaxAckPending 1 (strict order,
// one event at a time), AckWait and MaxDeliver from the spec. Its thread fetches one event at a
// time and answers it: kAck waits for the server to confirm the ack, kRetry is a NAK with the
// spec's delay, kReject a TERM; on the delivery that reaches max_deliveries a retry is answered
// with a NAK without delay (and counted as parked by the consumer), so the server drops it at
// once and publishes its MAX_DELIVERIES advisory. A delivery left unanswered by a dead process
// comes back after AckWait, and the server's MAX_DELIVERIES advisory reports one that ran out
// that way too. WatchParked counts those advisories once fleet-wide.
//
// While NATS is down: Publish, EnsureStream and Consume fail with kUnavailable (Consume looks
// the stream up first); running consumers wait, bind again after every reconnect, and resume.
// A server killed hard (SIGKILL, power loss) syncs its store on a timer and may have lost its
// latest acks, or a consumer created just before: events already answered then come again, in
// stream order — at least once, which is all the contract promises.
//
// Ownership: borrows `logger`, which must outlive it. Consumers must be destroyed before it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/bus/bus.h"
#include "telos/bus/durable.h"
#include "telos/bus/nats_bus.h"

namespace telos::bus {

struct JetStreamOptions {
  NatsBusOptions connection;
  // How long a publish or an API call waits for the server. REQUIRES: > 0 and at most
  // kDurableCallTimeoutMsMax.
  int64_t call_timeout_ms = limits::kDurableCallTimeoutMsMax;
  int replicas = 1;  // copies of each stream in a NATS cluster (1 for a single server)
};

class JetStreamStreams final : public DurableStreams {
 public:
  // Errors as NatsBus::Connect. The server need not be up.
  static Result<std::unique_ptr<JetStreamStreams>> Connect(JetStreamOptions options,
                                                           Logger& logger);
  ~JetStreamStreams() override;

  Status EnsureStream(const StreamSpec& spec) override;
  Result<PublishAck> Publish(std::string_view subject, std::string_view data,
                             std::string_view msg_id) override;
  Result<std::unique_ptr<DurableConsumer>> Consume(
      const ConsumerSpec& spec, std::function<Disposition(const DurableEvent&)> handler) override;

  bool connected() const;

  // Counts commbus_durable_parked_total{stream} in `metrics` off the server's MAX_DELIVERIES
  // advisories for any consumer of `stream`, received in the queue group
  // "telos-parked-<stream>": of every process in the fleet that watches a stream, exactly one
  // hears each advisory, so the sum over the fleet is the number of events parked (however many
  // directors run). Resubscribes by itself after a reconnect, like every NATS subscription;
  // an advisory published while this process was away is not counted. Watching stops when the
  // returned subscription is destroyed. `metrics` must outlive the returned subscription.
  // kInvalidArgument for a malformed stream name.
  Result<std::unique_ptr<Subscription>> WatchParked(const std::string& stream, Metrics& metrics);

  struct Core;  // the JetStream context and the running consumers (jetstream.cc)

 private:
  explicit JetStreamStreams(std::shared_ptr<Core> core);
  std::shared_ptr<Core> core_;
};

}  // namespace telos::bus
