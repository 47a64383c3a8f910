// ClusterView: one snapshot of the fleet as the directory sees it, for operators.
//
// It answers "which shards are alive, which zone does each one own, how many players does it
// report, and who is standing by" by reading the directory (ListShards, OwnerOfZone for every
// zone asked about, ListOccupancy) and joining the answers. `telos ctl cluster` prints it and
// every role's `/api/cluster` serves its JSON form.
//
// It is a read made of several directory calls, not a transaction: a lease that changes hands
// between two of them can show a zone whose owner is not (or no longer) in the shard list. Such
// an owner still appears under `zones`, with the endpoint the directory gave (empty once the
// owner's registration has lapsed).
//
// Threads: ReadClusterView blocks on the directory (a Redis round trip per call), so never call
// it on a zone executor; the formatting functions are pure and may run anywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "telos/base/status.h"
#include "telos/directory/directory.h"

namespace telos::directory {

struct ClusterZone {
  std::string zone;
  std::optional<ZoneOwner> owner;  // nullopt: no live lease
};

struct ClusterShard {
  ShardInfo info;
  std::vector<std::string> zones;  // zones asked about that this shard owns, sorted
  bool standby = false;            // owns none of them
  int64_t players = 0;             // its occupancy report's total; 0 when it has none
};

struct ClusterView {
  // Which instance answered (e.g. "world" / "world-0", "ctl" / a host name).
  std::string answered_by_role;
  std::string answered_by_id;
  std::vector<ClusterShard> shards;   // live shards, sorted by id
  std::vector<ClusterZone> zones;     // every zone asked about (once each), sorted
  std::vector<std::string> standbys;  // ids of live shards owning none of those zones, sorted
};

// Reads the shard registry, the owner of each zone in `zones` and the occupancy reports, and
// joins them. Duplicate zones are asked about once. Errors: the first failing directory call's
// status, unchanged (kUnavailable when Redis is down, kInvalidArgument for a malformed zone id).
Result<ClusterView> ReadClusterView(Directory& directory, const std::vector<std::string>& zones,
                                    std::string role, std::string id);

// {"answered_by":{"role":..,"id":..},
//  "shards":[{"id","endpoint","ttl_ms","zones":[..],"standby":bool,"players":n}],
//  "zones":[{"zone","owner":null|{"shard","endpoint","epoch","ttl_ms"}}],
//  "standbys":[..]}
// One line, no trailing newline; every string JSON-escaped.
std::string ClusterViewJson(const ClusterView& view);

// A fixed-width table for people: a header naming who answered, one row per shard, one row per
// zone, and the standby list. Ends with a newline. Not a stable format: scripts use the JSON.
std::string ClusterViewText(const ClusterView& view);

}  // namespace telos::directory
