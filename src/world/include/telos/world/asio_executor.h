// The production Executor: an asio strand over an io_context, with steady timers for PostAt.
// Kept in its own header so that code using the world never includes Asio.
//
// Thread safety: the returned executor may be used from any thread; the io_context must outlive
// it and every task posted through it.
#pragma once

#include <memory>

#include "telos/world/executor.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace telos::world {

// REQUIRES: the Clock used by the zones is SystemClock (PostAt deadlines are steady_clock).
std::shared_ptr<Executor> MakeStrandExecutor(boost::asio::io_context& io);

}  // namespace telos::world
