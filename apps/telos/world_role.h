// `telos world`: one world shard of a fleet. It registers in the Redis directory, claims free
// zones from its pool (a standby when it wins none), hosts the lobby unleased, serves gates over
// the gRPC Play stream and peers over Handoff, and keeps characters in PostgreSQL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "role_common.h"
#include "telos/auth/keys.h"
#include "telos/base/config.h"
#include "telos/base/limits.h"
#include "telos/base/status.h"
#include "telos/bus/nats_bus.h"

namespace telos::app {

struct WorldRoleSettings {
  std::string shard_id;
  std::string listen_address = "127.0.0.1:7200";  // gRPC
  std::string advertise;                          // empty: the listen address
  std::vector<std::string> zone_pool;             // empty: every zone but the lobby
  int64_t lease_ttl_ms = 15'000;
  std::string assertion_verify_key_file;
  std::string handoff_key_file;
  // The rest of the key rings (auth::KeyRing): during a rotation a world accepts documents of
  // the previous key too. TELOS_ASSERTION_PREVIOUS_VERIFY_KEY: the account service's retired
  // public key. TELOS_HANDOFF_VERIFY_KEY: the handoff public key accepted as current (default:
  // the handoff signing key's own; during the first pass of a rotation, the new key, while this
  // world still signs with the old one). TELOS_HANDOFF_PREVIOUS_VERIFY_KEY: the retired one.
  // Each also as NAME_FILE. The handoff signing key must be one of the two handoff keys.
  std::optional<auth::VerifyKey> assertion_previous_verify_key;
  std::optional<auth::VerifyKey> handoff_verify_key;
  std::optional<auth::VerifyKey> handoff_previous_verify_key;
  std::string account_target;  // for in-game password changes; empty disables them
  std::string caller_token;
  // TELOS_GATE_TOKEN: what gates present on Play. TELOS_WORLD_TOKEN: what worlds present on
  // Handoff, Adopt and Describe (this one on its calls to peers too). Two different tokens, so
  // a gate's cannot hand players over or move zones. Empty only with TELOS_ALLOW_INSECURE.
  std::string gate_token;
  std::string world_token;
  std::string bind_address = "127.0.0.1";  // TELOS_BIND: /api/health and /api/who
  uint16_t http_port = 8081;
  // TELOS_ADMIN_BIND:TELOS_ADMIN_PORT: /metrics, /api/cluster and /api/health for operators.
  net::AdminBind admin{.address = "127.0.0.1", .port = kWorldAdminPortDefault};
  std::string content_dir = "content";
  int64_t io_threads = 2;
  int64_t zone_threads = 2;  // the zones' own loop (RoleThreads::zone_io)
  int64_t blocking_threads = 4;
  int64_t link_dead_ms = 0;      // 0: the default from limits.h
  int64_t save_interval_ms = 0;  // 0: the default from limits.h; how often a row is written
  int64_t output_pulse_ms = limits::kOutputPulseMsDefault;  // 0: nobody's output waits
  int64_t checkpoint_interval_ms = 10'000;  // how often a playing character is checkpointed
  int64_t seed = 0;
  // TELOS_ALLOW_INSECURE: start despite a content-pack mismatch, or without the tokens.
  bool allow_insecure = false;
  std::string nats_url;  // TELOS_NATS; empty: tells and channels stay on this shard
  // TELOS_NATS_USER and _PASSWORD, _TOKEN, _CREDS_FILE, or _NKEY and _NKEY_SEED_FILE.
  bus::NatsCredentials nats_credentials;
  bool record_zone_writes = false;  // TELOS_RECORD_ZONE_WRITES: the write history for checkers
  std::string subject_prefix = "telos.telos";  // the bus subjects of this fleet (its namespace)
  // TELOS_DIRECTOR_SCOPE: the leader director a draining world asks for drain targets.
  std::string director_scope = "fleet";  // as telos director's default
};

Result<WorldRoleSettings> ReadWorldRoleSettings(const Config& config);
int RunWorldRole(const WorldRoleSettings& settings, const Config& config);

}  // namespace telos::app
