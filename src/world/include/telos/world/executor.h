// Executor: where a zone's work runs. A zone touches its state only inside tasks posted here,
// so one executor serialises everything a zone does (the actor model of DESIGN.md section 5).
//
// Production uses an asio strand (asio_executor.h); tests and benchmarks use ManualExecutor,
// which runs nothing until told to and reads deadlines from a (manual) Clock, so a whole world
// can be driven step by step on the test's thread.
//
// Thread safety: Post and PostAt may be called from any thread.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "telos/base/clock.h"

namespace telos::world {

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs `task` soon, after every task posted before it.
  virtual void Post(std::function<void()> task) = 0;
  // Runs `task` once the clock reaches `deadline` (as Clock::Now() measures it).
  virtual void PostAt(Instant deadline, std::function<void()> task) = 0;
};

// Runs tasks only inside RunReady()/RunDue(), on the calling thread. Timed tasks with equal
// deadlines run in posting order, so a run is reproducible.
class ManualExecutor final : public Executor {
 public:
  explicit ManualExecutor(const Clock& clock) : clock_(clock) {}

  void Post(std::function<void()> task) override;
  void PostAt(Instant deadline, std::function<void()> task) override;

  // Runs ready tasks (and those they post) until none is left. Returns how many ran.
  size_t RunReady();
  // Moves every timed task whose deadline has passed to the ready queue and runs them, then
  // repeats until nothing is due. Returns how many ran.
  size_t RunDue();
  size_t pending() const;

 private:
  const Clock& clock_;
  mutable std::mutex mu_;  // guards the two queues; tasks run without it held
  std::deque<std::function<void()>> ready_;
  std::multimap<Instant, std::function<void()>> timed_;
};

}  // namespace telos::world
