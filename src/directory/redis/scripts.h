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

#include "telos/redis/connection.h"

namespace telos::directory::internal {

// Every script of the directory, each a redis::LuaScript whose source is the prelude followed by
// its body and whose name ("lease_claim", ...) names it in error messages.
struct Scripts {
  redis::LuaScript shard_register;
  redis::LuaScript shard_deregister;
  redis::LuaScript shard_list;
  redis::LuaScript shard_mark_draining;
  redis::LuaScript lease_claim;
  redis::LuaScript lease_renew;
  redis::LuaScript lease_release;
  redis::LuaScript lease_transfer;
  redis::LuaScript lease_get;
  redis::LuaScript placement_handoff;
  redis::LuaScript placement_register;
  redis::LuaScript placement_tombstone;
  redis::LuaScript presence_set;
  redis::LuaScript presence_clear;
  redis::LuaScript presence_get;
  redis::LuaScript presence_list;
  redis::LuaScript occupancy_report;
  redis::LuaScript occupancy_list;
  redis::LuaScript reserve;
  redis::LuaScript reservation_release;
  redis::LuaScript reserved_sum;
  redis::LuaScript select_drain_target;
  redis::LuaScript directive_issue;
  redis::LuaScript directive_list;
  redis::LuaScript directive_complete;
  redis::LuaScript cooldown_start;
  redis::LuaScript cooldown_remaining;
  redis::LuaScript pack_version_get;
  redis::LuaScript pack_version_swap;
};

// Built once, on the first call (thread-safe), and immutable after: the sources live as long as
// the program.
const Scripts& GetScripts();

}  // namespace telos::directory::internal
