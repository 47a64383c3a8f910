// The shard's half of the drain-targets exchange (telos/director/drain_target_messages.h): a
// DrainTargetAsk for ShardDrain that asks the scope's leader director over the bus and waits at
// most `timeout_ms` for its answer. No responders (no director leads), no answer in time, an
// error reply or an answer that does not decode all come back as an error, and the drain then
// chooses alone: balancing is an optimizer, never a dependency. Targets naming this shard are
// dropped (the director must never send a zone back to its drainer).
//
// Ownership: the returned function borrows `bus`, which must outlive it. Thread safety: the
// function blocks its caller (the draining thread) and may be called from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/bus/bus.h"
#include "telos/shard/shard_drain.h"

namespace telos::shard {

struct DrainTargetClientOptions {
  std::string shard_id;
  std::string subject_prefix;  // the fleet's (FleetCommsOptions::subject_prefix)
  std::string scope;           // the director's TELOS_DIRECTOR_SCOPE
  int64_t timeout_ms = limits::kShardDrainDirectorAnswerMs;
};

DrainTargetAsk MakeDrainTargetAsk(DrainTargetClientOptions options, bus::Bus& bus, Logger& log);

}  // namespace telos::shard
