// RedisDirectory::Connection: one blocking hiredis connection with reconnect, backoff, timeouts
// and script loading. Private to the directory module.
//
// Failure model. The connection is made lazily. Any I/O error or timeout drops it (a late answer
// would otherwise be read as the answer to the next command); the next call reconnects at once,
// and if that fails further calls return kUnavailable without touching the network until the
// backoff has passed. A request that was fully written but got no answer returns kUnknownResult
// when the caller marks it as mutating, kUnavailable when it only reads.
//
// Threads: every method may be called from any thread; mu_ serialises them, and is held for the
// whole round trip (the connection carries one request at a time).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "redis/scripts.h"
#include "telos/base/clock.h"
#include "telos/base/status.h"
#include "telos/directory/redis_directory.h"

struct redisContext;

namespace telos::directory {

namespace internal {

// An owned copy of a hiredis reply.
struct Reply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // kString, kStatus, kError
  std::vector<Reply> elements;
};

}  // namespace internal

class RedisDirectory::Connection {
 public:
  Connection(const RedisOptions& options, const Clock& clock);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one command. An error reply from Redis comes back as an OK Result holding a kError
  // reply; only transport failures are a non-OK Status.
  Result<internal::Reply> Command(const std::vector<std::string>& argv, bool mutating);

  // EVALSHA of a script, loading it first if this connection has not yet, and again when the
  // server answers NOSCRIPT. An error reply becomes kUnavailable (server busy or loading) or
  // kInternal (anything else: a script bug).
  Result<internal::Reply> Script(internal::ScriptId id, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args, bool mutating);

 private:
  Status ConnectLocked();
  void DropLocked();
  Result<internal::Reply> RoundTripLocked(const std::vector<std::string>& argv, bool mutating);
  Status LoadLocked(internal::ScriptId id);
  std::string Where() const;

  const RedisOptions options_;
  const Clock& clock_;

  std::mutex mu_;
  // Everything below is guarded by mu_.
  redisContext* ctx_ = nullptr;
  Instant next_attempt_ = Instant::min();  // no attempt is held back until a failure
  int64_t backoff_ms_;
  std::array<std::string, internal::kScriptCount> shas_;
};

}  // namespace telos::directory
