// Private to src/bus: the fence around one subscription's handler. A Subscription promises that
// once its destructor returns the handler is not running and never runs again, whatever the
// backend still has queued for it; both backends deliver on threads of their own, so both route
// every call to a handler through one of these.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>

#include "telos/bus/bus.h"

namespace telos::bus::internal {

// Close() stops further calls and waits for a call in flight on another thread. Thread-safe.
class HandlerGuard {
 public:
  // `handler` may be null for a caller that only uses Run().
  explicit HandlerGuard(std::function<void(const Message&)> handler = nullptr)
      : handler_(std::move(handler)) {}
  HandlerGuard(const HandlerGuard&) = delete;
  HandlerGuard& operator=(const HandlerGuard&) = delete;

  // Calls the handler with `message`, unless closed. REQUIRES: a handler.
  void Deliver(const Message& message) {
    Run([&] { handler_(message); });
  }

  // Calls f() unless closed; Close() waits for it as for the handler.
  template <typename F>
  void Run(F&& f) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      ++running_;
    }
    HandlerGuard* const outer = current_;
    current_ = this;
    std::forward<F>(f)();
    current_ = outer;
    std::lock_guard lock(mu_);
    if (--running_ == 0) idle_.notify_all();
  }

  // Idempotent, and may be called by several threads at once. From inside this guard's own
  // handler (a handler destroying its own subscription) it does not wait for itself. Then the
  // handler's captures are released, now rather than when the last owner of the guard lets go,
  // unless the handler is the one closing (it is still running).
  void Close();

 private:
  static thread_local HandlerGuard* current_;  // the guard whose call this thread is in

  std::mutex mu_;
  std::condition_variable idle_;
  bool closed_ = false;
  int running_ = 0;
  std::function<void(const Message&)> handler_;
};

}  // namespace telos::bus::internal
