// telos::redis::Connection: one blocking hiredis connection with lazy connect, reconnect backoff,
// timeouts and Lua script loading. Shared by every module that talks to Redis (the directory and
// the checkpoint store); each keeps its own keys, scripts and options, and owns its connections.
//
// Failure model. The connection is made lazily, on the first call. Nothing here throws or aborts
// on a Redis failure:
//   - any I/O error or timeout drops the connection (a late answer would otherwise be read as
//     the answer to the next command); the next call reconnects at once;
//   - a failed connect starts a backoff (doubling from reconnect_backoff_min_ms up to
//     reconnect_backoff_max_ms, judged on the injected Clock, reset on success) during which
//     calls return the failure's code (Unavailable, or PermissionDenied after a refused AUTH)
//     without touching the network;
//   - a request that was fully written but got no answer is UnknownResult when the caller marks
//     it as mutating, Unavailable when it only reads. A request that could not be written was
//     not applied (Redis runs a command only once all its bytes arrived): Unavailable.
//   - every (re)connect forgets the script SHAs: the server may be a new or restarted one.
//   - with a password, every (re)connect sends AUTH before anything else. A refusal (wrong
//     password, unknown or disabled ACL user) is PermissionDenied, naming the server and the
//     user but never the password, and starts the backoff like a failed connect: retrying
//     cannot help until an operator changes the password or the URL, so the server is not
//     hammered with failing AUTHs.
//
// Ownership: a Connection owns its hiredis context and borrows the Clock (used only to pace
// reconnect attempts), which must outlive it. Scripts are borrowed for the duration of a call.
//
// Thread safety: every method may be called from any thread; a mutex serializes them and is held
// for the whole round trip (one request at a time on the connection). Calls BLOCK for up to
// connect_timeout_ms + command_timeout_ms (a script call up to three round trips): run them on
// the blocking pool, never on a zone executor.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/status.h"

struct redisContext;

namespace telos::redis {

// An owned copy of a hiredis reply.
struct Reply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // kString, kStatus, kError
  std::vector<Reply> elements;
};

// A Lua script kept as data: a stable name (for errors and the SHA cache) and its source.
// REQUIRES: one name never stands for two sources on one Connection.
struct LuaScript {
  std::string_view name;
  std::string_view source;
};

struct ConnectionOptions {
  std::string host;
  int port = 0;
  // ACL credentials. An empty password sends no AUTH; a password without a username sends
  // "AUTH password" (Redis's "default" user, or requirepass before Redis 6).
  std::string username;
  std::string password;
  int64_t connect_timeout_ms = 0;        // REQUIRES: > 0
  int64_t command_timeout_ms = 0;        // REQUIRES: > 0
  int64_t reconnect_backoff_min_ms = 0;  // REQUIRES: > 0
  int64_t reconnect_backoff_max_ms = 0;  // REQUIRES: >= reconnect_backoff_min_ms
};

// What a Redis URL says: where the server is and, optionally, who to log in as.
struct Address {
  std::string host;  // a name or an IP address; an IPv6 one without its brackets
  int port = 0;
  std::string username;  // percent-decoded; empty: no ACL user named
  std::string password;  // percent-decoded; empty: no AUTH
};

// Parses "redis://[user[:password]@]host:port[/0]" with Boost.URL (RFC 3986): a user or
// password holding ':', '@', '/' or '%' must be percent-encoded ("p%40ss" for "p@ss");
// "redis://:password@host:port" names a password alone. InvalidArgument on anything else, with
// a message that never repeats the password:
//   - "rediss://" (TLS): hiredis 0.14, Debian 12's, has no TLS; the message points to
//     docs/operating.md, which shows how to put a TLS tunnel in front;
//   - a database other than 0: keys are kept apart by the key namespace instead, which is also
//     all that Redis Cluster offers;
//   - a missing host or port, a port outside 1..65535, a query or a fragment.
Result<Address> ParseUrl(std::string_view url);

class Connection {
 public:
  // Does not connect. The Clock must outlive the connection. Violating a REQUIRES of `options`
  // is a bug: RELEASE_ASSERT.
  Connection(ConnectionOptions options, const Clock& clock);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one command. An error reply from Redis comes back as an OK Result holding a kError
  // reply; only transport failures are a non-OK Status.
  Result<Reply> Command(const std::vector<std::string>& argv, bool mutating);

  // EVALSHA of `script`, loading it first if this connection has not yet, and again (then
  // retrying once) when the server answers NOSCRIPT. An error reply becomes Unavailable (server
  // busy, loading, failing over, read-only replica), PermissionDenied (NOAUTH: the server wants
  // a password the URL lacks; NOPERM: the ACL user may not run it) or Internal (anything else:
  // a script bug).
  Result<Reply> Script(const LuaScript& script, const std::vector<std::string>& keys,
                       const std::vector<std::string>& args, bool mutating);

  // "redis at host:port", for messages.
  std::string Where() const;

 private:
  Status ConnectLocked();
  // Starts (or doubles) the pause before the next connect attempt, which `failure` caused;
  // returns it.
  Status HoldBackLocked(Instant now, Status failure);
  // AUTH with the options' credentials on the fresh ctx_. REQUIRES: a password.
  Status AuthLocked();
  void DropLocked();
  Result<Reply> RoundTripLocked(const std::vector<std::string>& argv, bool mutating);
  Status LoadLocked(const LuaScript& script);

  const ConnectionOptions options_;
  const Clock& clock_;

  std::mutex mu_;
  // Everything below is guarded by mu_.
  redisContext* ctx_ = nullptr;
  Instant next_attempt_ = Instant::min();  // no attempt is held back until a failure
  int64_t backoff_ms_;
  Status held_back_;                                   // the failure that started the current pause
  std::unordered_map<std::string, std::string> shas_;  // script name -> SHA1 on the server
};

}  // namespace telos::redis
