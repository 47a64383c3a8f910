#include "telos/shard/world_service.h"

#include <chrono>
#include <utility>

#include "play_stream.h"
#include "telos/rpc/channels.h"
#include "telos/rpc/status_mapping.h"

namespace telos::shard {
namespace {

// ------------------------------------------------------------------ the gRPC Play wire

// One gate's Play stream over gRPC: the same StreamHandle as an in-process stream, its frames
// written by gRPC and its end (a telos Status from the core) mapped onto gRPC's here.
class PlayReactor final
    : public grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame>,
      public PlayWire {
 public:
  PlayReactor(WorldShard& shard, prometheus::Counter* dropped)
      : shard_(shard), handle_(std::make_shared<StreamHandle>(this, dropped)) {
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      handle_->ReadsEnded();
      return;
    }
    shard_.OnFrame(handle_, in_);
    in_.Clear();
    if (handle_->refused()) return;  // finished (or finishing): no read may start after it
    StartRead(&in_);
  }
  void OnWriteDone(bool ok) override { handle_->WriteDone(ok); }
  void OnDone() override {
    handle_->Done();
    shard_.OnStreamGone(handle_);
    delete this;
  }

  // PlayWire
  void WriteFrame(const telos::v1::ShardFrame* frame) override { StartWrite(frame); }
  void End(Status status) override { Finish(rpc::ToGrpc(status)); }

 private:
  WorldShard& shard_;
  std::shared_ptr<StreamHandle> handle_;
  telos::v1::GateFrame in_;
};

// A Play stream refused before it started (its caller token is missing or wrong): it finishes
// at once with the reason and reads nothing.
class RefusedPlay final
    : public grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame> {
 public:
  explicit RefusedPlay(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

// ------------------------------------------------------------------ WorldService

WorldService::WorldService(WorldShard& shard, WorldServiceOptions options, Logger& log)
    : shard_(shard), options_(std::move(options)), log_(log) {}

grpc::Status WorldService::Authorize(const grpc::CallbackServerContext& context, const char* method,
                                     const std::string& expected,
                                     const std::string& other_role) const {
  grpc::Status status = rpc::AuthorizeCaller(context, expected, {other_role});
  if (!status.ok()) {
    log_.Warn("security: caller refused",
              {{"method", method}, {"peer", context.peer()}, {"reason", status.error_message()}});
  }
  return status;
}

grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame>* WorldService::Play(
    grpc::CallbackServerContext* context) {
  if (grpc::Status refused = Authorize(*context, "Play", options_.gate_token, options_.world_token);
      !refused.ok()) {
    return new RefusedPlay(std::move(refused));
  }
  return new PlayReactor(shard_, shard_.play_outputs_dropped());
}

grpc::ServerUnaryReactor* WorldService::Handoff(grpc::CallbackServerContext* context,
                                                const telos::v1::SignedBlob* request,
                                                telos::v1::HandoffReply* reply) {
  auto* reactor = context->DefaultReactor();
  if (grpc::Status refused =
          Authorize(*context, "Handoff", options_.world_token, options_.gate_token);
      !refused.ok()) {
    reactor->Finish(refused);
    return reactor;
  }
  // The reply is gRPC's until Finish, which the core's answer calls exactly once.
  shard_.Handoff(*request, [reactor, reply](Result<telos::v1::HandoffReply> answer) {
    if (!answer.ok()) return reactor->Finish(rpc::ToGrpc(answer.status()));
    *reply = std::move(*answer);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* WorldService::Adopt(grpc::CallbackServerContext* context,
                                              const telos::v1::AdoptRequest* request,
                                              telos::v1::Empty*) {
  auto* reactor = context->DefaultReactor();
  if (grpc::Status refused =
          Authorize(*context, "Adopt", options_.world_token, options_.gate_token);
      !refused.ok()) {
    reactor->Finish(refused);
    return reactor;
  }
  shard_.Adopt(*request, [reactor](Status s) { reactor->Finish(rpc::ToGrpc(s)); });
  return reactor;
}

grpc::ServerUnaryReactor* WorldService::Describe(grpc::CallbackServerContext* context,
                                                 const telos::v1::Empty*,
                                                 telos::v1::ShardDescription* reply) {
  auto* reactor = context->DefaultReactor();
  if (grpc::Status refused =
          Authorize(*context, "Describe", options_.world_token, options_.gate_token);
      !refused.ok()) {
    reactor->Finish(refused);
    return reactor;
  }
  *reply = shard_.Describe();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

// ------------------------------------------------------------------ GrpcWorldPeers

GrpcWorldPeers::GrpcWorldPeers(std::string world_token) : world_token_(std::move(world_token)) {}

GrpcWorldPeers::~GrpcWorldPeers() = default;

telos::v1::World::Stub& GrpcWorldPeers::Stub(const std::string& endpoint) {
  std::lock_guard lock(mu_);
  auto& slot = stubs_[endpoint];
  if (!slot) slot = telos::v1::World::NewStub(rpc::MakeChannel(endpoint));
  return *slot;  // stubs are never removed, so the reference stays valid
}

Result<telos::v1::HandoffReply> GrpcWorldPeers::Handoff(const std::string& endpoint,
                                                        const telos::v1::SignedBlob& snapshot,
                                                        int64_t deadline_ms) {
  telos::v1::World::Stub& stub = Stub(endpoint);
  telos::v1::HandoffReply reply;
  grpc::ClientContext context;
  rpc::PrepareCall(context, std::chrono::milliseconds(deadline_ms), world_token_);
  if (Status s = rpc::FromGrpc(stub.Handoff(&context, snapshot, &reply)); !s.ok()) return s;
  return reply;
}

Status GrpcWorldPeers::Adopt(const std::string& endpoint, const telos::v1::AdoptRequest& request,
                             int64_t deadline_ms) {
  telos::v1::World::Stub& stub = Stub(endpoint);
  telos::v1::Empty reply;
  grpc::ClientContext context;
  rpc::PrepareCall(context, std::chrono::milliseconds(deadline_ms), world_token_);
  return rpc::FromGrpc(stub.Adopt(&context, request, &reply));
}

Result<telos::v1::ShardDescription> GrpcWorldPeers::Describe(const std::string& endpoint,
                                                             int64_t deadline_ms) {
  telos::v1::World::Stub& stub = Stub(endpoint);
  telos::v1::Empty request;
  telos::v1::ShardDescription reply;
  grpc::ClientContext context;
  rpc::PrepareCall(context, std::chrono::milliseconds(deadline_ms), world_token_);
  if (Status s = rpc::FromGrpc(stub.Describe(&context, request, &reply)); !s.ok()) return s;
  return reply;
}

}  // namespace telos::shard
