// RedisCheckpointStore: the fleet backend of CheckpointStore (checkpoint_store.h).
//
// Layout: one hash per character at "{<key_namespace>}:checkpoint:<NameKey(name)>" with the
// fields name, account_id, state_version, owner_epoch, zone_id, room_id, state_json and
// written_at_ms. Put is ONE Lua script (EVALSHA, reloaded on NOSCRIPT) that compares the stored
// (owner_epoch, state_version) with the new one and writes the hash in the same atomic step, so
// no interleaving of two writers can let the staler one win. Every Put sets the key's TTL
// (checkpoint_ttl_ms; 0 keeps it forever): a checkpoint only has to outlive the next row save,
// and the TTL bounds what a crashed or deleted character leaves behind.
//
// Failure model: the connection is made lazily and re-made after any I/O error or timeout,
// with a backoff (judged on the injected Clock) during which calls return Unavailable without
// touching the network. A Put that was sent but got no answer returns UnknownResult; a Get that
// got no answer returns Unavailable.
//
// Ownership: owns its connection. The Clock must outlive the store.
//
// Thread safety: every method may be called from any thread; calls are serialized on the one
// connection. Calls BLOCK on the network (bounded by the timeouts below): run them on the
// blocking pool, never on a zone executor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/store/checkpoint_store.h"

namespace telos::redis {
class Connection;  // telos/redis/connection.h
}  // namespace telos::redis

namespace telos::store {

struct RedisCheckpointStoreOptions {
  static constexpr int64_t kCheckpointTtlMsDefault = 24 * 60 * 60 * 1000;  // 24 h
  static constexpr int64_t kConnectTimeoutMsDefault = 500;
  static constexpr int64_t kCommandTimeoutMsDefault = 2'000;
  static constexpr int64_t kReconnectBackoffMinMsDefault = 50;
  static constexpr int64_t kReconnectBackoffMaxMsDefault = 2'000;

  std::string host = "127.0.0.1";
  int port = 6379;
  // ACL credentials sent with AUTH on every (re)connect; empty password: no AUTH.
  std::string username;
  std::string password;
  // REQUIRES: 1..64 bytes of letters, digits, '-', '_' or '.'.
  std::string key_namespace = "telos";
  int64_t checkpoint_ttl_ms = kCheckpointTtlMsDefault;  // 0: no expiry
  int64_t connect_timeout_ms = kConnectTimeoutMsDefault;
  int64_t command_timeout_ms = kCommandTimeoutMsDefault;
  int64_t reconnect_backoff_min_ms = kReconnectBackoffMinMsDefault;
  int64_t reconnect_backoff_max_ms = kReconnectBackoffMaxMsDefault;
};

// Parses "redis://[user[:password]@]host:port" (a trailing "/" or "/0" is accepted) into host,
// port and credentials, leaving every other field at its default. InvalidArgument on anything
// else (redis::ParseUrl).
Result<RedisCheckpointStoreOptions> RedisCheckpointStoreOptionsFromUrl(std::string_view url);

class RedisCheckpointStore final : public CheckpointStore {
 public:
  // Validates the options; does not connect (the first call does). InvalidArgument on a bad
  // namespace, a negative TTL or timeout, or backoff_min > backoff_max.
  static Result<std::unique_ptr<RedisCheckpointStore>> Create(RedisCheckpointStoreOptions options,
                                                              const Clock& clock);
  ~RedisCheckpointStore() override;

  RedisCheckpointStore(const RedisCheckpointStore&) = delete;
  RedisCheckpointStore& operator=(const RedisCheckpointStore&) = delete;

  const RedisCheckpointStoreOptions& options() const { return options_; }

  // The key holding the checkpoint of `name` (any letter case).
  std::string KeyOf(std::string_view name) const;

  Status Put(const Checkpoint& checkpoint) override;
  Result<Checkpoint> Get(std::string_view name) override;
  Status Delete(std::string_view name) override;

 private:
  RedisCheckpointStore(RedisCheckpointStoreOptions options, const Clock& clock);

  const RedisCheckpointStoreOptions options_;
  const Clock& clock_;
  const std::string prefix_;  // "{<key_namespace>}:checkpoint:"
  std::unique_ptr<redis::Connection> conn_;
};

}  // namespace telos::store
