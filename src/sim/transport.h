// Transport: one bot's connection to a gate, as lines out and text in (private to src/sim).
//
// The telnet transport strips telnet commands and negotiation (it answers none: the gate
// works without them); the WebSocket transport speaks the web client's JSON frames
// (web/README.md) and hands back the text of "text" frames and the reason of "close" frames.
//
// Thread safety: one bot owns it, on the swarm's single thread. At most one Read() and one
// SendLine() may be in flight at a time (they may overlap each other).
#pragma once

#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "telos/base/status.h"

namespace telos::sim {

class Transport {
 public:
  virtual ~Transport() = default;
  // Connects (and for WebSocket upgrades the connection at /ws).
  virtual boost::asio::awaitable<Status> Connect(boost::asio::ip::tcp::endpoint endpoint) = 0;
  // The next text from the server; "" when a read held only protocol bytes. kUnavailable once
  // the connection is closed, by either side.
  virtual boost::asio::awaitable<Result<std::string>> Read() = 0;
  // Sends one line of player input. REQUIRES: `line` outlives the send (coroutine parameters
  // are references to the caller's member: GCC 12 mishandles by-value strings in coroutines).
  virtual boost::asio::awaitable<Status> SendLine(const std::string& line) = 0;
  // Whether Rest() works: a protocol read frame by frame cannot skip ahead, and its bot keeps a
  // Read() pending all the time instead.
  virtual bool can_rest() const = 0;
  // The bot will not read for a while (no Read() is started until EndRest()): what arrives
  // meanwhile waits in the kernel, which is asked not to wake the client for it. A pending
  // Read() ends at once with "" (or with what it had already read).
  virtual void Rest() = 0;
  // Ends a Rest(). With `drop_arrived` (only when no Read() is pending: the read and the drop
  // would share a buffer) it reads and drops whatever arrived meanwhile, without waiting;
  // kUnavailable once the connection is closed. A resting bot's chatter is bounded by the think
  // time: the server sheds a client whose unread output passes its per-session limit.
  virtual Status EndRest(bool drop_arrived) = 0;
  // Closes the socket at once; a pending Read() then fails.
  virtual void Close() = 0;
};

std::unique_ptr<Transport> MakeTelnetTransport(boost::asio::any_io_executor executor);
// `host` goes into the upgrade request's Host header.
std::unique_ptr<Transport> MakeWebSocketTransport(boost::asio::any_io_executor executor,
                                                  std::string host);

}  // namespace telos::sim
