#include "telos/shard/world_peers.h"

#include <chrono>
#include <future>
#include <memory>

#include "telos/shard/world_shard.h"

namespace telos::shard {
namespace {

// Waits for the peer's answer up to `deadline_ms`. The promise is shared with the peer's
// callback, which may run after this caller gave up.
template <typename T>
T Await(std::future<T> answer, int64_t deadline_ms, T timed_out) {
  if (answer.wait_for(std::chrono::milliseconds(deadline_ms)) != std::future_status::ready) {
    return timed_out;
  }
  return answer.get();
}

}  // namespace

void InProcessWorldPeers::Add(const std::string& endpoint, WorldShard& shard) {
  std::lock_guard lock(mu_);
  shards_[endpoint] = &shard;
}

void InProcessWorldPeers::Remove(const std::string& endpoint) {
  std::lock_guard lock(mu_);
  shards_.erase(endpoint);
}

WorldShard* InProcessWorldPeers::Find(const std::string& endpoint) const {
  // REQUIRES: mu_ held.
  auto it = shards_.find(endpoint);
  return it == shards_.end() ? nullptr : it->second;
}

Result<telos::v1::HandoffReply> InProcessWorldPeers::Handoff(const std::string& endpoint,
                                                             const telos::v1::SignedBlob& snapshot,
                                                             int64_t deadline_ms) {
  using Answer = Result<telos::v1::HandoffReply>;
  auto promise = std::make_shared<std::promise<Answer>>();
  std::future<Answer> answer = promise->get_future();
  {
    // Held while the call is handed over (it does not block), so that a shard removed is
    // never called again; from there the shard's own Stop() waits for the call.
    std::lock_guard lock(mu_);
    WorldShard* shard = Find(endpoint);
    if (shard == nullptr) return Status::Unavailable("no world at " + endpoint);
    shard->Handoff(snapshot, [promise](Answer a) { promise->set_value(std::move(a)); });
  }
  return Await<Answer>(std::move(answer), deadline_ms,
                       Status::DeadlineExceeded("handoff to " + endpoint + ": no answer in time"));
}

Status InProcessWorldPeers::Adopt(const std::string& endpoint,
                                  const telos::v1::AdoptRequest& request, int64_t deadline_ms) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = promise->get_future();
  {
    std::lock_guard lock(mu_);
    WorldShard* shard = Find(endpoint);
    if (shard == nullptr) return Status::Unavailable("no world at " + endpoint);
    shard->Adopt(request, [promise](Status s) { promise->set_value(std::move(s)); });
  }
  return Await<Status>(std::move(answer), deadline_ms,
                       Status::DeadlineExceeded("adopt at " + endpoint + ": no answer in time"));
}

Result<telos::v1::ShardDescription> InProcessWorldPeers::Describe(const std::string& endpoint,
                                                                  int64_t) {
  std::lock_guard lock(mu_);
  WorldShard* shard = Find(endpoint);
  if (shard == nullptr) return Status::Unavailable("no world at " + endpoint);
  return shard->Describe();
}

}  // namespace telos::shard
