// NatsBus: the fleet's Bus, on NATS core (nats.c), one connection per instance.
//
// Availability. A process must start and run while NATS is down, so Connect never waits for
// the server: if it cannot connect at once it returns a bus that is not connected yet, and the
// library keeps retrying every reconnect_wait_ms, forever, as it does after losing an
// established connection. connected() and OnConnectionChange follow the connection;
// "nats unavailable" is logged (warn) once per outage, "nats connected" / "nats reconnected"
// (info) when it comes back. Connect first makes one attempt that does not retry: a server
// that refuses the login then makes Connect fail with kPermissionDenied and the server's words.
// A refusal later (the password changed on the server alone) makes nats.c give the connection
// up for good, which is logged as an error. Errors the server reports on a live connection
// (a permissions violation on publish or subscribe) are logged at warn, once per distinct text
// in a row. While down, Publish, Reply and Request fail at once with
// kUnavailable (nothing is buffered for later), requests waiting for an answer fail with
// kUnavailable, and Subscribe still works: the library registers every subscription again on
// each (re)connect.
//
// Threads. All subscriptions of all connections share the library's message delivery pool
// (one thread by default), so many subscriptions do not mean many threads; a handler that
// blocks stalls every other subscription of the process. Request completions run on that pool
// or on this bus's timer thread; connection callbacks run on the library's callback thread.
//
// Requests use one wildcard subscription on a private inbox ("_INBOX.<nuid>.*") with a token
// per request; the timer thread fails those not answered in time. A NATS server (2.2+) answers
// a request nobody subscribes to with a "no responders" status at once: that is kNotFound.
// The timer thread also frees the handles of destroyed subscriptions, one round trip later, to
// steer around a use-after-free in nats.c 3.4 (see nats_bus.cc).
//
// Subscribe on a connected bus waits (up to subscribe_flush_timeout_ms) until the server has
// the subscription, so a message published after Subscribe returns reaches it.
//
// Ownership: borrows `logger`, which must outlive the bus. The destructor closes the
// connection, waits for handlers in flight, fails waiting requests with kCancelled (each exactly
// once, on the timer thread) and joins the timer thread; it must not run on a bus thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/bus/bus.h"

namespace telos::bus {

// How a NatsBus logs in to servers that ask (the server's authorization block decides; see
// deploy/nats/permissions.conf and docs/operating.md). At most one kind may be given; all empty
// means anonymous, or whatever the url carries ("nats://user:password@host:port" or
// "nats://token@host:port"). Unlike credentials in the url, these reach every server the bus
// learns of from the cluster, too.
struct NatsCredentials {
  std::string user;      // REQUIRES: with password
  std::string password;  // REQUIRES: with user
  std::string token;
  // A .creds file (the user's JWT and nkey seed, as `nsc` writes it): decentralized auth.
  std::string creds_file;
  // A user's public nkey ("U...") and the file holding its seed ("SU..."). REQUIRES: both.
  std::string nkey;
  std::string nkey_seed_file;
};

struct NatsBusOptions {
  static constexpr int64_t kReconnectWaitMsDefault = 250;
  static constexpr int64_t kConnectTimeoutMsDefault = 2'000;
  static constexpr int64_t kPingIntervalMsDefault = 5'000;
  static constexpr int64_t kSubscribeFlushTimeoutMsDefault = 2'000;

  // "nats://host:port", or several separated by commas (a cluster). Credentials may be given
  // as "nats://user:password@host:port".
  std::string url;
  // The connection name the server shows (e.g. "telos-world-3"); may be empty.
  std::string name;
  NatsCredentials credentials;
  // Pause between connection attempts to one server. REQUIRES: > 0.
  int64_t reconnect_wait_ms = kReconnectWaitMsDefault;
  // One TCP connect and handshake. REQUIRES: > 0.
  int64_t connect_timeout_ms = kConnectTimeoutMsDefault;
  // A silent server is declared lost after two unanswered pings. REQUIRES: > 0.
  int64_t ping_interval_ms = kPingIntervalMsDefault;
  // How long Subscribe waits for the server to confirm. REQUIRES: > 0.
  int64_t subscribe_flush_timeout_ms = kSubscribeFlushTimeoutMsDefault;
};

class NatsBus final : public Bus {
 public:
  // kInvalidArgument for a malformed url or option, credentials of two kinds, half a pair, or
  // a creds or seed file that cannot be opened; kPermissionDenied when a server refuses the
  // credentials; otherwise a bus, connected or not yet (see above). Blocks for at most twice
  // connect_timeout_ms per server (the attempt above, then the real one).
  static Result<std::unique_ptr<NatsBus>> Connect(NatsBusOptions options, Logger& logger);
  ~NatsBus() override;

  NatsBus(const NatsBus&) = delete;
  NatsBus& operator=(const NatsBus&) = delete;

  Status Publish(std::string_view subject, std::string_view data) override;
  void Request(std::string subject, std::string data, std::chrono::milliseconds timeout,
               std::function<void(Result<std::string>)> done) override;
  Status Reply(const Message& request, std::string_view data) override;
  Result<std::unique_ptr<Subscription>> Subscribe(
      std::string subject, std::function<void(const Message&)> handler) override;
  bool connected() const override;
  void OnConnectionChange(std::function<void(bool connected)> callback) override;

 private:
  struct Core;  // the connection and everything nats.c's callbacks reach (nats_bus.cc)

  friend class JetStreamStreams;  // runs JetStream over a bus of its own (jetstream.h)

  explicit NatsBus(std::shared_ptr<Core> core);
  Status Send(std::string_view subject, std::string_view data);
  // The nats.c connection (a natsConnection*), valid until the bus is destroyed.
  void* raw_connection() const;

  std::shared_ptr<Core> core_;
};

}  // namespace telos::bus
