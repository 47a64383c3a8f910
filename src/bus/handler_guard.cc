#include "handler_guard.h"

namespace telos::bus::internal {

thread_local HandlerGuard* HandlerGuard::current_ = nullptr;

void HandlerGuard::Close() {
  std::function<void(const Message&)> released;  // destroyed after the lock is let go
  std::unique_lock lock(mu_);
  closed_ = true;
  const int self = current_ == this ? 1 : 0;
  idle_.wait(lock, [&] { return running_ <= self; });
  if (self == 0) released = std::move(handler_);
}

}  // namespace telos::bus::internal
