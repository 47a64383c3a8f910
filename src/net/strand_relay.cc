#include "strand_relay.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace telos::net {
namespace {

namespace asio = boost::asio;
using Strand = asio::strand<asio::io_context::executor_type>;

bool RunningOn(const asio::any_io_executor& executor) {
  const Strand* strand = executor.target<Strand>();
  return strand != nullptr && strand->running_in_this_thread();
}

}  // namespace

// The handler a drain is posted as. If the io_context is torn down before it runs, the lane's
// tasks are dropped, as the strands' own queued work is; that also lets go of the connections
// they hold, which hold the relay.
class StrandRelay::PostedDrain {
 public:
  PostedDrain(std::shared_ptr<StrandRelay> relay, size_t lane)
      : relay_(std::move(relay)), lane_(lane) {}
  PostedDrain(PostedDrain&&) = default;
  PostedDrain& operator=(PostedDrain&&) = delete;
  ~PostedDrain() {
    if (relay_) relay_->Abandon(lane_);
  }
  void operator()() {
    std::shared_ptr<StrandRelay> relay = std::move(relay_);
    relay->Drain(lane_);
  }

 private:
  std::shared_ptr<StrandRelay> relay_;  // empty once run, or moved from
  size_t lane_;
};

std::shared_ptr<StrandRelay> StrandRelay::Create(asio::io_context& io) {
  return std::shared_ptr<StrandRelay>(new StrandRelay(io));
}

size_t StrandRelay::AssignLane() {
  return next_lane_.fetch_add(1, std::memory_order_relaxed) % kLanes;
}

void StrandRelay::Run(size_t lane, const asio::any_io_executor& strand,
                      std::function<void()> task) {
  if (RunningOn(strand)) {
    task();
    return;
  }
  Lane& l = lanes_[lane % kLanes];
  {
    std::lock_guard lock(l.mu);
    l.pending.push_back({strand, std::move(task)});
    if (l.draining) return;  // the drain under way takes it
    l.draining = true;
  }
  PostDrain(lane);
}

void StrandRelay::PostDrain(size_t lane) {
  asio::post(io_, PostedDrain(shared_from_this(), lane));
}

void StrandRelay::Drain(size_t lane) {
  Lane& l = lanes_[lane % kLanes];
  std::vector<Task> batch;
  {
    std::lock_guard lock(l.mu);
    batch.swap(l.pending);
  }
  // From an io thread, dispatch runs the task right here unless another thread holds its strand.
  for (Task& task : batch) asio::dispatch(task.strand, std::move(task.run));
  batch.clear();
  {
    std::lock_guard lock(l.mu);
    // Only one drain per lane at a time, or a later task could overtake an earlier one. What came
    // in meanwhile goes in a fresh post, behind whatever else the io threads have to do.
    if (l.pending.empty()) {
      l.pending.swap(batch);  // keeps the capacity for the next burst
      l.draining = false;
      return;
    }
  }
  PostDrain(lane);
}

void StrandRelay::Abandon(size_t lane) {
  Lane& l = lanes_[lane % kLanes];
  std::vector<Task> dropped;  // destroyed after the lock: it may hold the last of a connection
  {
    std::lock_guard lock(l.mu);
    dropped.swap(l.pending);
    l.draining = false;
  }
}

}  // namespace telos::net
