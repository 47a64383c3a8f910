// InFlightGate: lets a component's Stop() wait for the work it already started on other threads
// (blocking-pool tasks, timer callbacks, bus replies) and refuse the work that arrives after it.
// Seastar's `gate` is the model.
//
// A task that may outlive its component's Stop() captures the gate (a shared_ptr, so the gate
// outlives the component) and runs only while it holds a Pass:
//
//   blocking_(in_flight_->Wrap([this] { Route(); }));   // or, by hand:
//   if (auto pass = gate->TryEnter()) { ... use this ... }
//
// Close() refuses new passes and blocks until every pass already handed out is released, so
// once it returns no task is inside the component and none will enter: the component can be
// destroyed. A flag checked before the work (the pattern this replaces) leaves a window between
// the check and the use, and when the flag is a plain bool it is also a data race.
//
// Thread safety: every method may be called from any thread.
// REQUIRES: Close() is never called by a thread that holds a Pass of the same gate (it would
// wait for itself); tasks holding a pass never wait on the component's Stop().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>

namespace telos {

class InFlightGate : public std::enable_shared_from_this<InFlightGate> {
 public:
  static std::shared_ptr<InFlightGate> Make() {
    return std::shared_ptr<InFlightGate>(new InFlightGate());
  }
  InFlightGate(const InFlightGate&) = delete;
  InFlightGate& operator=(const InFlightGate&) = delete;

  // Held while a task runs inside the component. Empty (false) when the gate was closed.
  class Pass {
   public:
    Pass() = default;
    Pass(Pass&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    Pass& operator=(Pass&& other) noexcept {
      if (this != &other) {
        Release();
        gate_ = std::exchange(other.gate_, nullptr);
      }
      return *this;
    }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass() { Release(); }
    explicit operator bool() const { return gate_ != nullptr; }

   private:
    friend class InFlightGate;
    explicit Pass(InFlightGate* gate) : gate_(gate) {}
    void Release() {
      if (gate_ != nullptr) std::exchange(gate_, nullptr)->Leave();
    }
    InFlightGate* gate_ = nullptr;
  };

  [[nodiscard]] Pass TryEnter() {
    std::lock_guard lock(mu_);
    if (closed_) return Pass();
    ++inside_;
    return Pass(this);
  }

  // `task` wrapped so that it runs only while the gate is open, holding a pass. The wrapper
  // keeps the gate alive, so it may run (and do nothing) after the component is gone.
  template <typename F>
  auto Wrap(F task) {
    return [gate = shared_from_this(), task = std::move(task)](auto&&... args) mutable {
      if (Pass pass = gate->TryEnter()) task(std::forward<decltype(args)>(args)...);
    };
  }

  // Refuses new passes, then waits until every pass is released. Idempotent.
  void Close() {
    std::unique_lock lock(mu_);
    closed_ = true;
    left_.wait(lock, [this] { return inside_ == 0; });
  }

  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  size_t inside() const {
    std::lock_guard lock(mu_);
    return inside_;
  }

 private:
  InFlightGate() = default;
  void Leave() {
    std::lock_guard lock(mu_);
    if (--inside_ == 0) left_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable left_;
  size_t inside_ = 0;    // guarded by mu_
  bool closed_ = false;  // guarded by mu_
};

}  // namespace telos
