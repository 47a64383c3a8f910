// The server end of one gate's Play stream, and the PlayerSink that binds a character to one
// session on such a stream. Private to the shard module, and transport-free: a stream ends with
// a telos Status, and only the gRPC wire (world_service.cc) maps it onto gRPC's.
//
// StreamHandle outlives the wire that carries it (a gRPC reactor, or an in-process wire; sinks
// hold the handle weakly); once the wire is done the handle drops further output. Output is
// coalesced: frames added while a write is in flight are merged into the next write. The pending
// frame is bounded (kPendingOutputsMax); a gate that cannot keep up loses output beyond it,
// counted, rather than growing the shard's memory.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "telos/base/limits.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/rpc/in_process_play.h"
#include "telos/shard/world_shard.h"
#include "telos/v1/fleet.pb.h"
#include "telos/world/ports.h"

namespace telos::shard {

inline constexpr size_t kPendingOutputsMax = limits::kPlayStreamPendingOutputsMax;
inline constexpr size_t kPendingBytesMax = limits::kPlayStreamPendingBytesMax;
inline constexpr size_t kBufferedOutputsMax = limits::kPlayStreamBufferedOutputsMax;

// What carries one stream's frames: the gRPC reactor (world_service.cc), or an in-process wire.
// StreamHandle calls WriteFrame with at most one frame outstanding (the wire answers with
// StreamHandle::WriteDone) and End once, with OK or why the stream was refused (the wire answers
// with Done, after which the shard hears OnStreamGone).
class PlayWire {
 public:
  virtual ~PlayWire() = default;
  virtual void WriteFrame(const telos::v1::ShardFrame* frame) = 0;
  virtual void End(Status status) = 0;
};

// How much one stream's pending frame may hold before output is shed.
struct StreamBounds {
  size_t outputs_max = 0;
  size_t bytes_max = 0;
};

class StreamHandle : public std::enable_shared_from_this<StreamHandle> {
 public:
  // `dropped` (may be null) counts output shed for a gate that is too far behind.
  StreamHandle(PlayWire* wire, prometheus::Counter* dropped,
               StreamBounds bounds = StreamBounds{kPendingOutputsMax, kPendingBytesMax})
      : wire_(wire), dropped_(dropped), bounds_(bounds) {}

  // Adds to the next frame (about `approx_bytes` of it) and starts a write if none is in
  // flight. False once the stream ended, or when the frame is full (the output is shed).
  bool Send(size_t approx_bytes, const std::function<void(telos::v1::ShardFrame&)>& add);

  void set_gate_id(std::string id);
  std::string gate_id() const;
  void BindSession(uint64_t session, const std::string& name_key);
  void UnbindSession(uint64_t session);
  // Only while `session` is still bound to `name_key` (not since rebound to someone else).
  void UnbindSession(uint64_t session, const std::string& name_key);
  std::optional<std::string> SessionCharacter(uint64_t session) const;
  std::map<uint64_t, std::string> sessions() const;
  bool alive() const;

  // Ends the stream with `status` (a refused Hello): nothing more is read or sent, and the
  // reactor finishes as soon as no write is in flight. Call from the reactor's read callback,
  // and without the shard's lock held (finishing may run the reactor's OnDone at once).
  void Refuse(Status status);
  // Whether Refuse() was called: the reactor must not start another read.
  bool refused() const;

  // Wire side.
  void WriteDone(bool ok);
  void ReadsEnded();
  void Done();

 private:
  void StartWriteLocked(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mu_;
  PlayWire* wire_;  // null once done
  prometheus::Counter* const dropped_;
  const StreamBounds bounds_;
  std::string gate_id_;
  std::map<uint64_t, std::string> sessions_;  // session -> character name key
  telos::v1::ShardFrame pending_;
  size_t pending_outputs_ = 0;
  size_t pending_bytes_ = 0;
  telos::v1::ShardFrame writing_frame_;
  bool writing_ = false;
  bool reads_ended_ = false;
  bool finished_ = false;
  bool refused_ = false;
  Status finish_status_;  // what End reports: OK, or why the stream was refused
};

// The shard's end of an in-process Play stream (telos/rpc/in_process_play.h): the same
// StreamHandle as over gRPC, with frames handed to the gate's end on a strand instead of written
// to a socket. The gate's frames arrive through OnGateFrame in the gate's order.
class InProcessPlayWire final : public PlayWire,
                                public rpc::PlayShardEnd,
                                public std::enable_shared_from_this<InProcessPlayWire> {
 public:
  InProcessPlayWire(WorldShard& shard, std::shared_ptr<rpc::PlayGateEnd> gate,
                    boost::asio::io_context& io, prometheus::Counter* dropped);
  // Creates the handle (the wire and the handle refer to each other until Done).
  void Open();

  // PlayWire
  void WriteFrame(const telos::v1::ShardFrame* frame) override;
  void End(Status status) override;
  // rpc::PlayShardEnd
  void OnGateFrame(const telos::v1::GateFrame& frame) override;
  void OnGateGone() override;

 private:
  WorldShard& shard_;
  prometheus::Counter* const dropped_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  std::shared_ptr<StreamHandle> handle_;    // set by Open, before either side calls in
  std::shared_ptr<rpc::PlayGateEnd> gate_;  // touched on strand_ only; dropped at End
};

// A character's output channel on this shard: bound to (stream, session) while a gate holds
// it, buffering otherwise (link-dead, or just arrived by handoff).
class SessionSink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput output) override;

  // Binds to a session and sends what was buffered. Returns the previous binding, if any.
  std::pair<std::shared_ptr<StreamHandle>, uint64_t> Bind(std::shared_ptr<StreamHandle> stream,
                                                          uint64_t session);
  void Unbind();
  bool bound() const;
  // The current binding (null stream when unbound).
  std::pair<std::shared_ptr<StreamHandle>, uint64_t> binding() const;
  // Incremented by every Bind/Unbind, so a timer can tell whether the binding changed.
  uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  std::weak_ptr<StreamHandle> stream_;
  uint64_t session_ = 0;
  uint64_t generation_ = 0;
  std::deque<world::PlayerOutput> buffer_;
};

// About how many bytes an output adds to a frame.
size_t ApproxBytes(const world::PlayerOutput& output);

// Fills one Output message.
void AppendOutput(telos::v1::ShardFrame& frame, uint64_t session,
                  const world::PlayerOutput& output);

}  // namespace telos::shard
