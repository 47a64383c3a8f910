// A minimal HTTP/1.1 GET for reading the server's /metrics (private to src/sim).
//
// Thread safety: a coroutine on the caller's executor; nothing shared.
#pragma once

#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/sim/swarm.h"

namespace telos::sim {

struct HttpUrl {
  Target target;
  std::string path;  // "/metrics"
};

// "http://host:port/path" (https is not supported).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// The body of a 200 reply, or kUnavailable. Gives up after `timeout`.
// REQUIRES: `url` and `executor` outlive the call (they are references into its caller's frame).
boost::asio::awaitable<Result<std::string>> HttpGet(const boost::asio::any_io_executor& executor,
                                                    const HttpUrl& url, Duration timeout);

}  // namespace telos::sim
