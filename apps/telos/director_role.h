// `telos director`: one director of a fleet's scope (src/director). It campaigns for the scope's
// leader lease in the fleet's Redis directory; the leader plans rebalance moves, issues them as
// directives, answers draining shards' drain-target requests on NATS, and runs the game-event
// tally (NATS JetStream into PostgreSQL). The others stand by warm. Only an admin listener:
// /metrics, /api/health and /api/cluster (with the scope's leader and live directives).
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "role_common.h"
#include "telos/base/config.h"
#include "telos/base/status.h"
#include "telos/director/director.h"

namespace telos::app {

inline constexpr uint16_t kDirectorAdminPortDefault = 9095;

struct DirectorRoleSettings {
  std::string scope = "fleet";  // TELOS_DIRECTOR_SCOPE
  std::string director_id;      // TELOS_DIRECTOR_ID; empty: director-<hostname>-<pid>
  std::string content_dir = "content";
  net::AdminBind admin{.address = "127.0.0.1", .port = kDirectorAdminPortDefault};
  director::DirectorOptions options;  // scope and id filled in
  bool tally = false;                 // TELOS_NATS and TELOS_DATABASE_URL both set
};

// Reads TELOS_DIRECTOR_* (docs/operating.md) and checks TELOS_REDIS, TELOS_NATS and
// TELOS_DATABASE_URL; InvalidArgument names the bad variable.
Result<DirectorRoleSettings> ReadDirectorRoleSettings(const Config& config);
int RunDirectorRole(const DirectorRoleSettings& settings, const Config& config);

// The colocation groups a content pack declares ([zone] colocation_group), sorted by name.
std::vector<director::ColocationGroup> ColocationGroupsOf(const world::Pack& pack);

// {"scope","leader","epoch","lease_ttl_ms","pending_directives",
//  "directives":[{"zone","from","to","epoch","ttl_ms"}]} read from the directory: the leader
// lease (with the time left on it) and the live directives of every live shard. With `self`
// (the director answering), also "this_director":{"id","leading","last_plan_ago_ms",
// "last_issued_ago_ms","moves_issued","moves_completed","moves_expired"}, the ago fields null
// when it never planned or issued.
Result<boost::json::object> DirectorViewJson(directory::Directory& directory,
                                             const std::string& scope,
                                             const director::Director* self = nullptr);

}  // namespace telos::app
