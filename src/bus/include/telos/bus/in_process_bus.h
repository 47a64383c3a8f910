// InProcessBus: the embedded Bus, with no server and no network.
//
// A Hub stands in for the NATS server: it holds the subscription table of every client attached
// to it and routes each message to the clients whose subscriptions match. Each InProcessBus is
// one client (one "connection") with its own delivery thread and queue, so handlers never run
// inside Publish, Request or Reply, and a handler of one client never delays another client.
// `telos serve` uses one bus with a private hub; tests attach two buses to one hub to play two
// processes.
//
// Requests use a private reply subject per client ("_INBOX.<client>.<n>"), like NATS. A request
// that matches no subscription of a connected client fails with kNotFound at once; its deadline
// is watched by the requester's delivery thread.
//
// Outages are simulated with SetConnected(false): the client then cannot publish, receives
// nothing, does not count as a responder, and its waiting requests fail with kUnavailable. Its
// subscriptions stay registered and receive again after SetConnected(true).
//
// Bounds: a client's delivery queue holds at most delivery_queue_depth_max messages; a message
// for a full queue is dropped for that client (a slow consumer, as NATS does) and counted in
// dropped_messages(). Completions and connection notices are never dropped.
//
// Time is the real steady clock: request timeouts are real durations, as they are on NATS.
//
// Threads: every method may be called from any thread. The destructor joins the delivery
// thread, so it must not run on that thread (from a handler or completion of this bus).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "telos/bus/bus.h"

namespace telos::bus {

struct InProcessBusOptions {
  static constexpr size_t kDeliveryQueueDepthMaxDefault =
      limits::kInProcessBusDeliveryQueueDepthMaxDefault;
  size_t delivery_queue_depth_max = kDeliveryQueueDepthMaxDefault;  // REQUIRES: > 0
};

class InProcessBus final : public Bus {
 public:
  // The shared routing table of several clients. Opaque; make one with NewHub().
  class Hub;
  static std::shared_ptr<Hub> NewHub();

  // A client of a private hub of its own.
  InProcessBus();
  // A client of `hub`, which may be shared with other InProcessBus instances.
  // REQUIRES: hub != nullptr.
  explicit InProcessBus(std::shared_ptr<Hub> hub, InProcessBusOptions options = {});
  // Detaches from the hub, fails waiting requests with kCancelled (each exactly once, on the
  // delivery thread), drops queued messages and joins the delivery thread.
  ~InProcessBus() override;

  InProcessBus(const InProcessBus&) = delete;
  InProcessBus& operator=(const InProcessBus&) = delete;

  Status Publish(std::string_view subject, std::string_view data) override;
  void Request(std::string subject, std::string data, std::chrono::milliseconds timeout,
               std::function<void(Result<std::string>)> done) override;
  Status Reply(const Message& request, std::string_view data) override;
  Result<std::unique_ptr<Subscription>> Subscribe(
      std::string subject, std::function<void(const Message&)> handler) override;
  bool connected() const override;
  void OnConnectionChange(std::function<void(bool connected)> callback) override;

  // Test and operations hook: simulates losing (false) or regaining (true) the connection.
  // Connected by default. Fires the connection callback when the value changes.
  void SetConnected(bool connected);

  // Messages dropped because this client's delivery queue was full.
  uint64_t dropped_messages() const;

 private:
  class Client;  // one client's queue, waiting requests and delivery thread

  Status Send(std::string_view subject, std::string_view data, std::string_view reply_to);

  std::shared_ptr<Hub> hub_;
  std::shared_ptr<Client> client_;
  std::unique_ptr<Subscription> inbox_;  // this client's reply subjects
};

}  // namespace telos::bus
