// `telos serve`: the whole game in one process on the embedded backends — telnet, the web
// client and HTTP API, accounts and the world, with SQLite under TELOS_DATA_DIR.
#pragma once

#include <cstdint>
#include <string>

#include "arcade_wiring.h"
#include "role_common.h"
#include "telos/auth/keys.h"
#include "telos/base/config.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/bus/durable.h"
#include "telos/store/records_store.h"
#include "world_process.h"

namespace telos::app {

struct ServeSettings {
  FrontDoorSettings front;  // telnet, HTTP, web client
  std::string data_dir = "telos-data";
  std::string content_dir = "content";
  int64_t io_threads = 2;
  int64_t zone_threads = 2;  // the zones' own loop (RoleThreads::zone_io)
  int64_t blocking_threads = 4;
  int64_t link_dead_ms = 0;      // 0: the default from limits.h
  int64_t login_timeout_ms = 0;  // 0: the default from limits.h
  int64_t save_interval_ms = 0;  // 0: the default from limits.h
  // A playing character's checkpoint (what a crash can lose). 0: embedded, the save interval
  // (a checkpoint in the same SQLite file would only add writes); in a fleet, the world's 10 s.
  int64_t checkpoint_interval_ms = 0;
  int64_t output_pulse_ms = limits::kOutputPulseMsDefault;  // 0: nobody's output waits
  int64_t password_memory_kib = 19 * 1024;
  int64_t password_passes = 2;
  AccountLimitSettings account_limits;  // ReadAccountLimits
  int64_t seed = 0;                     // 0: from the system's entropy
  // TELOS_ASSERTION_TTL_MS: a login assertion's life; the gate renews it at half that.
  int64_t assertion_ttl_ms = limits::kAssertionTtlMsDefault;
  ArcadeSettings arcade;  // TELOS_ARCADE, TELOS_ARCADE_SEED
};

// Reads every TELOS_* setting `serve` uses; InvalidArgument names the bad variable.
Result<ServeSettings> ReadServeSettings(const Config& config);

// Runs until SIGINT/SIGTERM, then saves everyone and returns the process exit code. With
// TELOS_REDIS set, joins a fleet instead (RunServeInFleet).
int RunServe(const ServeSettings& settings, const Config& config);

// `serve` as one member of a fleet: a world shard, a gate and in-process accounts on Redis and
// PostgreSQL (serve_fleet.cc).
int RunServeInFleet(const ServeSettings& settings, const Config& config, Logger& log);

// What a serve runs on. Embedded and in a fleet, the rest is one composition (RunServeParts).
struct ServeParts {
  WorldRoleSettings world;  // id, listen address (empty: in process only), advertise, tokens
  std::shared_ptr<const world::Pack> pack;
  store::AccountStore* accounts = nullptr;
  WorldBackends backends;
  const auth::SigningKey* assertion_key = nullptr;  // signs logins; the world verifies them
  const auth::SigningKey* handoff_key = nullptr;
  std::string mode;  // "embedded" or "fleet", in /api/health
  // Embedded only: the in-process director's game-event stream and records (a fleet runs
  // `telos director` processes instead). Null: no in-process director.
  bus::DurableStreams* events = nullptr;
  store::RecordsStore* records = nullptr;
  // Embedded only: the arcade (arcade_wiring.h) on the SQLite file at arcade_db_path, with its
  // house secret in data_dir. Empty: no arcade (a fleet serve, for now).
  std::string arcade_db_path;
};

// The whole game in this process on `parts`: threads, the account screens, the world shard and
// the gate that reaches it in memory, until SIGINT/SIGTERM; then the graceful stop. Returns the
// exit code. Every pointer in `parts` outlives the call.
int RunServeParts(const ServeSettings& settings, ServeParts parts, const Clock& clock, Logger& log,
                  Metrics& metrics);

}  // namespace telos::app
