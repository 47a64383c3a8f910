// TelnetServer: accepts telnet players and runs each connection as a Terminal.
//
// Each connection lives on its own strand: a read loop feeds TelnetConnection (protocol) and
// hands lines to the connection's TerminalHandler; output queues in a bounded outbox written
// by one writer at a time. Limits (all in TelnetServerOptions, defaults from limits.h): total
// connections, connections per address, input lines per second (a token bucket; excess lines
// are dropped with a notice), idle time, and pending output bytes (a client that stops reading
// is shed). Nothing one client sends can crash the server or slow another client.
//
// Lifecycle: construct, Start(), ..., Stop(). Stop() closes every connection (after flushing
// what was queued, bounded by the write timeout) and waits for them; it must not be called
// from a thread running the io_context.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/net/mssp.h"
#include "telos/net/telnet_connection.h"
#include "telos/net/terminal.h"

namespace boost::asio {
class io_context;
}

namespace telos::net {

struct TelnetServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;  // 0: the kernel picks; Start() returns the port
  size_t connections_max = limits::kTelnetConnectionsMax;
  size_t connections_per_address_max = limits::kTelnetConnectionsPerAddressMax;
  size_t line_bytes_max = limits::kInputLineBytesMax;
  double input_lines_per_second = limits::kInputLinesPerSecond;
  double input_lines_burst = limits::kInputLinesBurst;
  int64_t idle_timeout_ms = limits::kSessionIdleTimeoutMs;
  int64_t write_timeout_ms = limits::kSessionWriteTimeoutMs;
  size_t pending_write_bytes_max = limits::kSessionPendingWriteBytesMax;
  MsspProvider mssp;  // answers MUD listing crawlers; may be empty (then no MSSP at all)
  // Operator-set MSSP values; with UPTIME and PORT they complete `mssp`'s list (mssp.h).
  MsspSettings mssp_settings;
};

class TelnetServer {
 public:
  TelnetServer(boost::asio::io_context& io, TelnetServerOptions options,
               TerminalHandlerFactory factory, const Clock& clock, Logger& log, Metrics& metrics);
  ~TelnetServer();
  TelnetServer(const TelnetServer&) = delete;
  TelnetServer& operator=(const TelnetServer&) = delete;

  Result<uint16_t> Start();
  void Stop();

  size_t connections() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace telos::net
