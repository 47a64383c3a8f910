// WorldPeers: how one world shard reaches another for the world-to-world calls of the World
// service (schema/proto/telos/v1/fleet.proto): Handoff (a player walking over), Adopt (a
// draining shard giving a zone away) and Describe (which content a peer runs). WorldShard calls
// its peers only through this interface, so that the transport is chosen where the shard is
// wired: GrpcWorldPeers (world_service.h) between processes, InProcessWorldPeers (below) for
// shards in one process — `telos serve`, and tests that drive two shards without sockets.
//
// Every call blocks its caller for at most `deadline_ms` and reports the peer's Status, or a
// transport failure mapped to the nearest code. A DeadlineExceeded (or UnknownResult) means
// the call may have been applied all the same: the caller decides how to settle that
// (DESIGN.md invariant on ambiguity; STYLE.md 8).
//
// Thread safety: every method may be called from any thread, concurrently. Call them from a
// thread that may block (the blocking pool), never from a zone executor or an io thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "telos/base/status.h"
#include "telos/v1/fleet.pb.h"

namespace telos::shard {

class WorldShard;

class WorldPeers {
 public:
  virtual ~WorldPeers() = default;
  // Hands a signed snapshot to the world at `endpoint`; its reply names the shard that took it.
  virtual Result<telos::v1::HandoffReply> Handoff(const std::string& endpoint,
                                                  const telos::v1::SignedBlob& snapshot,
                                                  int64_t deadline_ms) = 0;
  // Asks the world at `endpoint` to adopt a zone whose lease was just moved to it.
  virtual Status Adopt(const std::string& endpoint, const telos::v1::AdoptRequest& request,
                       int64_t deadline_ms) = 0;
  virtual Result<telos::v1::ShardDescription> Describe(const std::string& endpoint,
                                                       int64_t deadline_ms) = 0;
};

// Peers in this process, reached by calling their WorldShard directly (no socket, no
// encoding). A call to an endpoint nobody added is Unavailable, as a dial to nowhere would be.
// A call that the peer does not finish within its deadline is DeadlineExceeded (and may still
// be applied later: the peer finishes it on its own threads).
//
// Ownership: borrows the shards; each must outlive its registration (Remove it before it is
// destroyed). Calls already waiting on a shard when it is removed still complete.
class InProcessWorldPeers final : public WorldPeers {
 public:
  void Add(const std::string& endpoint, WorldShard& shard);
  void Remove(const std::string& endpoint);

  Result<telos::v1::HandoffReply> Handoff(const std::string& endpoint,
                                          const telos::v1::SignedBlob& snapshot,
                                          int64_t deadline_ms) override;
  Status Adopt(const std::string& endpoint, const telos::v1::AdoptRequest& request,
               int64_t deadline_ms) override;
  Result<telos::v1::ShardDescription> Describe(const std::string& endpoint,
                                               int64_t deadline_ms) override;

 private:
  WorldShard* Find(const std::string& endpoint) const;

  mutable std::mutex mu_;
  std::map<std::string, WorldShard*> shards_;  // guarded by mu_; by endpoint
};

}  // namespace telos::shard
