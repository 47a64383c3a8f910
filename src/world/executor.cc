// ManualExecutor: the test and benchmark executor.
#include "telos/world/executor.h"

namespace telos::world {

void ManualExecutor::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_.push_back(std::move(task));
}

void ManualExecutor::PostAt(Instant deadline, std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  timed_.emplace(deadline, std::move(task));
}

size_t ManualExecutor::RunReady() {
  size_t ran = 0;
  while (true) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ready_.empty()) return ran;
      task = std::move(ready_.front());
      ready_.pop_front();
    }
    task();
    ++ran;
  }
}

size_t ManualExecutor::RunDue() {
  size_t ran = RunReady();
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Instant now = clock_.Now();
      bool moved = false;
      while (!timed_.empty() && timed_.begin()->first <= now) {
        ready_.push_back(std::move(timed_.begin()->second));
        timed_.erase(timed_.begin());
        moved = true;
      }
      if (!moved) return ran;
    }
    ran += RunReady();
  }
}

size_t ManualExecutor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_.size() + timed_.size();
}

}  // namespace telos::world
