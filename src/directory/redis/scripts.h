// The Lua scripts of the Redis directory, one per read-then-write operation. They are data: the
// sources live in scripts.cc, and every one starts with a shared prelude (now_ms, prune).
//
// Conventions every script follows:
//   - "now" is redis.call('TIME') in milliseconds, read inside the script; callers pass only
//     durations (ttl in ms), so a caller's clock never judges anything.
//   - the answer is an array whose first element is a word: "ok" followed by the payload, or one
//     of "conflict", "exists", "precondition", "notfound" followed by a message. The C++ side maps
//     the word onto a StatusCode.
//   - no element of an answer is nil (Lua would cut the array there): absent values are "".
//
// Private to the directory module. Thread safety: immutable data.
#pragma once

#include <cstddef>
#include <string_view>

namespace telos::directory::internal {

enum class ScriptId : size_t {
  kShardRegister,
  kShardDeregister,
  kShardList,
  kLeaseClaim,
  kLeaseRenew,
  kLeaseRelease,
  kLeaseTransfer,
  kLeaseGet,
  kPlacementHandoff,
  kPlacementRegister,
  kPlacementTombstone,
  kPresenceSet,
  kPresenceClear,
  kPresenceGet,
  kPresenceList,
  kOccupancyReport,
  kOccupancyList,
  kReserve,
  kReservationRelease,
  kReservedSum,
  kSelectDrainTarget,
  kDirectiveIssue,
  kDirectiveList,
  kDirectiveComplete,
  kCooldownStart,
  kCooldownRemaining,
  kCount,
};

inline constexpr size_t kScriptCount = static_cast<size_t>(ScriptId::kCount);

// The full source (prelude + body) of a script. REQUIRES: id != kCount.
std::string_view ScriptSource(ScriptId id);
// A short name for logs and error messages.
std::string_view ScriptName(ScriptId id);

}  // namespace telos::directory::internal
