// In-process Play streams: the gate <-> world link of DESIGN.md section 3 when the gate and the
// world shard run in one process (`telos serve`). The frames are the very GateFrame and
// ShardFrame messages of the gRPC World.Play stream (schema/proto/telos/v1/fleet.proto), handed
// over in memory: no socket, no encoding, and no gRPC type (a stream ends with a telos Status).
// The shard and the gate run the same stream logic on both transports; only these ends differ.
//
// A stream has two ends. The gate opens one with InProcessPlay::OpenPlay, giving its own end
// (PlayGateEnd) and receiving the shard's (PlayShardEnd). Each side calls the other's end:
//   gate  -> shard : OnGateFrame (hello first, then attaches, input, detaches), OnGateGone once
//   shard -> gate  : OnShardFrame (outputs, attached, redirects, removed), OnShardGone once, with
//                    why (OK, or the refusal a gRPC stream would have finished with)
// A caller calls one end's methods one at a time and in order (a strand of its own), never
// while holding a lock of its own, and never again after the Gone call. Neither end blocks.
// After OnShardGone the gate's end drops the shard's (and the reverse), which breaks the
// reference cycle between them.
#pragma once

#include <memory>

#include "telos/base/status.h"
#include "telos/v1/fleet.pb.h"

namespace telos::rpc {

// The gate's end, called by the shard.
class PlayGateEnd {
 public:
  virtual ~PlayGateEnd() = default;
  // One frame from the shard. The gate may take its strings (the frame is not read again).
  virtual void OnShardFrame(telos::v1::ShardFrame& frame) = 0;
  // The shard ended the stream: OK when it stopped or the gate ended it, else why it refused the
  // gate (AlreadyExists: the gate id has a live stream there). Nothing more comes.
  virtual void OnShardGone(const Status& why) = 0;
};

// The shard's end, called by the gate.
class PlayShardEnd {
 public:
  virtual ~PlayShardEnd() = default;
  virtual void OnGateFrame(const telos::v1::GateFrame& frame) = 0;
  // The gate ended the stream. The shard ends its side in turn (OnShardGone follows).
  virtual void OnGateGone() = 0;
};

// A world shard that gates in the same process can reach without a socket.
class InProcessPlay {
 public:
  virtual ~InProcessPlay() = default;
  virtual std::shared_ptr<PlayShardEnd> OpenPlay(std::shared_ptr<PlayGateEnd> gate) = 0;
};

}  // namespace telos::rpc
