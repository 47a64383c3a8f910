// DispatchKeepingAlive (private to the net module): runs `task` on a connection's strand — at
// once when the caller is already on it — while holding `owner`, so the connection object lives
// until the task has run. Terminal methods use it to hop onto their connection's strand.
#pragma once

#include <boost/asio/dispatch.hpp>
#include <memory>
#include <utility>

namespace telos::net {

template <typename Executor, typename Owner, typename Task>
void DispatchKeepingAlive(const Executor& strand, std::shared_ptr<Owner> owner, Task&& task) {
  boost::asio::dispatch(strand,
                        [owner = std::move(owner), task = std::forward<Task>(task)]() mutable {
                          (void)owner;
                          task();
                        });
}

}  // namespace telos::net
