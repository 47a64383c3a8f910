// `telos ctl`: the operator CLI. Each verb reads the fleet's shared state and prints it for
// people (a table) or for scripts (--json). It is a client only: it registers nothing and takes
// no lease.
//
//   telos ctl cluster [--json]   live shards, the owner of every zone in the content pack,
//                                players per shard and the standbys (directory/cluster_view.h)
//   telos ctl reload             content hot reload of every live world onto the pack in
//                                TELOS_CONTENT_DIR (shard/pack_reload.h); it takes a record in
//                                the directory (the pack version), not a lease
//   telos ctl directives [--json]
//                                the scope's leader director (TELOS_DIRECTOR_SCOPE) and the live
//                                rebalance directives of every live shard
//   telos ctl rebalance --dry-run [--json]
//                                the moves the planner would make now, with their explanations,
//                                computed from the live directory with the directors' own
//                                TELOS_DIRECTOR_* settings; issues nothing
//
// Settings: TELOS_REDIS (required), TELOS_REDIS_NAMESPACE (the fleet's key prefix, default
// "telos"), TELOS_CONTENT_DIR (default ./content; the zone list comes from the pack there);
// reload also TELOS_NATS (required) and its credentials, as the worlds read them.
#pragma once

#include "telos/base/config.h"

namespace telos::app {

struct CtlClusterFlags {
  bool json = false;  // print ClusterViewJson instead of the table
};

// Reads the directory once and prints the cluster view on stdout. Returns the process exit code:
// 0 on success, kExitConfigError (2) for a missing or bad setting or an invalid content pack, 1
// when the directory cannot be read (Redis down or unreachable), with one line on stderr.
int RunCtlCluster(const CtlClusterFlags& flags, const Config& config);

// Validates the pack in TELOS_CONTENT_DIR, then reloads the fleet onto it and prints a line per
// world. Returns 0 when every world runs it; kExitConfigError (2) for a missing or bad setting
// or an invalid pack (its file:line problems on stderr; nothing is asked); 1 when the reload
// was refused or failed (NATS or Redis down, a world refused: the reason on stderr).
int RunCtlReload(const Config& config);
struct CtlDirectorFlags {
  bool json = false;
  bool dry_run = false;  // rebalance: required; only the leader director issues moves
};
// Exit codes as RunCtlCluster's.
int RunCtlDirectives(const CtlDirectorFlags& flags, const Config& config);
int RunCtlRebalance(const CtlDirectorFlags& flags, const Config& config);

}  // namespace telos::app
