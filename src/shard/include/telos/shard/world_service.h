// The gRPC face of a WorldShard (schema/proto/telos/v1/fleet.proto), and nothing more:
//   - WorldService serves the World service. Each method checks its caller's token, then hands
//     the call to the shard's transport-free core (WorldShard::Handoff, Adopt, Describe; Play
//     streams through the same stream logic as in-process ones) and maps the core's Status onto
//     gRPC's (telos/rpc/status_mapping.h). No protocol decision is taken here.
//   - GrpcWorldPeers is WorldPeers over gRPC: one cached channel per peer endpoint, every call
//     presenting this world's token.
//
// Caller tokens, one per role, so that one role's token opens nothing of the other's: gates
// present `gate_token` on Play; worlds present `world_token` on Handoff, Adopt and Describe. A
// call without its method's token is refused (UNAUTHENTICATED; PERMISSION_DENIED when it carries
// the other role's) and logged ("security: caller refused"); it never reaches the core. An empty
// token accepts every caller of its methods (TELOS_ALLOW_INSECURE).
//
// Ownership: WorldService borrows the shard, which must outlive the gRPC server it is registered
// with (shut the server down first). Threading: gRPC's callback threads; the core's answers
// arrive on its blocking pool.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "telos/base/log.h"
#include "telos/shard/world_peers.h"
#include "telos/shard/world_shard.h"
#include "telos/v1/fleet.grpc.pb.h"

namespace telos::shard {

struct WorldServiceOptions {
  std::string gate_token;   // presented by gates on Play
  std::string world_token;  // presented by worlds on Handoff, Adopt and Describe
};

class WorldService final : public telos::v1::World::CallbackService {
 public:
  WorldService(WorldShard& shard, WorldServiceOptions options, Logger& log);

  grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame>* Play(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Handoff(grpc::CallbackServerContext* context,
                                    const telos::v1::SignedBlob* request,
                                    telos::v1::HandoffReply* reply) override;
  grpc::ServerUnaryReactor* Adopt(grpc::CallbackServerContext* context,
                                  const telos::v1::AdoptRequest* request,
                                  telos::v1::Empty* reply) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* context,
                                     const telos::v1::Empty* request,
                                     telos::v1::ShardDescription* reply) override;

 private:
  // OK, or why the caller of `method` is refused (logged); `expected` is the method's token.
  grpc::Status Authorize(const grpc::CallbackServerContext& context, const char* method,
                         const std::string& expected, const std::string& other_role) const;

  WorldShard& shard_;
  const WorldServiceOptions options_;
  Logger& log_;
};

class GrpcWorldPeers final : public WorldPeers {
 public:
  // `world_token` is presented on every call (WorldServiceOptions::world_token of the peers).
  explicit GrpcWorldPeers(std::string world_token);
  ~GrpcWorldPeers() override;

  Result<telos::v1::HandoffReply> Handoff(const std::string& endpoint,
                                          const telos::v1::SignedBlob& snapshot,
                                          int64_t deadline_ms) override;
  Status Adopt(const std::string& endpoint, const telos::v1::AdoptRequest& request,
               int64_t deadline_ms) override;
  Result<telos::v1::ShardDescription> Describe(const std::string& endpoint,
                                               int64_t deadline_ms) override;

 private:
  // The cached stub for `endpoint` (kept for this object's life, so the reference stays valid).
  telos::v1::World::Stub& Stub(const std::string& endpoint);

  const std::string world_token_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<telos::v1::World::Stub>> stubs_;  // guarded by mu_
};

}  // namespace telos::shard
