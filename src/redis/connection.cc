#include "telos/redis/connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <utility>

#include "telos/base/assert.h"

namespace telos::redis {
namespace {

timeval ToTimeval(int64_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

Reply CopyReply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(CopyReply(r->element[i]));
      break;
    default: out.type = Reply::Type::kNil; break;
  }
  return out;
}

// NOAUTH: the server wants a password the URL lacks; NOPERM: the URL's ACL user may not do
// this. Either way the configuration is wrong, not the script.
bool IsAccessRefusal(std::string_view error) {
  return error.starts_with("NOAUTH") || error.starts_with("NOPERM");
}

// Lower-case ASCII, for the scheme (RFC 3986: case-insensitive).
std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The URL with everything between "://" and the last '@' (the user information) as "***".
std::string Redacted(std::string_view url) {
  const size_t scheme_end = url.find("://");
  const size_t at = url.rfind('@');
  if (scheme_end == std::string_view::npos || at == std::string_view::npos || at < scheme_end) {
    return std::string(url);
  }
  return std::string(url.substr(0, scheme_end + 3)) + "***" + std::string(url.substr(at));
}

}  // namespace

Result<Address> ParseUrl(std::string_view url) {
  // Messages show the URL with its user information hidden, whether or not it parsed.
  const auto bad = [shown = Redacted(url)](std::string_view why) {
    return Status::InvalidArgument(std::string(why) + ": " + shown);
  };
  const boost::system::result<boost::urls::url_view> parsed =
      boost::urls::parse_uri(std::string_view(url.data(), url.size()));
  if (!parsed) return bad("not a URL (expected redis://[user[:password]@]host:port)");
  const boost::urls::url_view& u = *parsed;
  const std::string scheme = LowerAscii(u.scheme());
  if (scheme == "rediss") {
    return bad(
        "rediss:// (TLS) is not supported: this build's hiredis 0.14 has no TLS; use redis:// "
        "to a local TLS tunnel (stunnel, spiped, ghostunnel) as docs/operating.md describes");
  }
  if (scheme != "redis") return bad("a redis url must start with redis://");
  if (u.has_query() || u.has_fragment()) return bad("a redis url takes no query or fragment");
  if (u.host_type() != boost::urls::host_type::name &&
      u.host_type() != boost::urls::host_type::ipv4 &&
      u.host_type() != boost::urls::host_type::ipv6) {
    return bad("redis url needs host:port");
  }
  Address address;
  address.host = u.host_address();
  if (address.host.empty() || !u.has_port() || u.port().empty()) {
    return bad("redis url needs host:port");
  }
  // port_number() is 0 for a port that does not fit 16 bits: both are refused.
  const std::string_view port_text = u.port();
  int port = 0;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port <= 0 ||
      port > 65535) {
    return bad("bad port in redis url");
  }
  address.port = port;
  if (const std::string_view path = u.encoded_path();
      !path.empty() && path != "/" && path != "/0") {
    return bad("only database 0 is supported (keep deployments apart with TELOS_REDIS_NAMESPACE)");
  }
  if (u.has_userinfo()) {
    address.username = u.user();
    address.password = u.password();
    if (address.password.empty() && !address.username.empty()) {
      // Clients disagree on "redis://name@host": a user without a password, or a password
      // alone. A user with no password cannot log in anyway, so ask for the explicit form.
      return bad("a redis url names a password as user:password@ or :password@, not name@");
    }
  }
  return address;
}

Connection::Connection(ConnectionOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), backoff_ms_(options_.reconnect_backoff_min_ms) {
  RELEASE_ASSERT(options_.connect_timeout_ms > 0 && options_.command_timeout_ms > 0,
                 "redis timeouts must be positive");
  RELEASE_ASSERT(options_.reconnect_backoff_min_ms > 0 &&
                     options_.reconnect_backoff_max_ms >= options_.reconnect_backoff_min_ms,
                 "bad redis reconnect backoff");
}

Connection::~Connection() {
  std::lock_guard lock(mu_);
  DropLocked();
}

std::string Connection::Where() const {
  return "redis at " + options_.host + ":" + std::to_string(options_.port);
}

void Connection::DropLocked() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
}

Status Connection::ConnectLocked() {
  if (ctx_ != nullptr) return Status::Ok();
  const Instant now = clock_.Now();
  if (now < next_attempt_) {
    // The last failure's code and words: a refused password must not read as an outage.
    return Status(held_back_.code(), held_back_.message() + "; next attempt in " +
                                         std::to_string(ElapsedMs(now, next_attempt_)) + " ms");
  }
  redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                            ToTimeval(options_.connect_timeout_ms));
  if (c == nullptr || c->err != 0) {
    const std::string why = c != nullptr ? c->errstr : "out of memory";
    if (c != nullptr) redisFree(c);
    return HoldBackLocked(now, Status::Unavailable("cannot connect to " + Where() + ": " + why));
  }
  if (redisSetTimeout(c, ToTimeval(options_.command_timeout_ms)) != REDIS_OK) {
    const std::string why = c->errstr;
    redisFree(c);
    return Status::Unavailable("cannot set timeouts on " + Where() + ": " + why);
  }
  (void)redisEnableKeepAlive(c);  // best effort: only shortens detection of a dead peer
  ctx_ = c;
  if (!options_.password.empty()) {
    if (Status auth = AuthLocked(); !auth.ok()) {
      DropLocked();
      return HoldBackLocked(now, std::move(auth));
    }
  }
  backoff_ms_ = options_.reconnect_backoff_min_ms;
  next_attempt_ = Instant::min();
  // A new server (or a restarted one) may not have our scripts; EVALSHA's NOSCRIPT path would
  // reload them anyway, but starting clean saves that round trip.
  shas_.clear();
  return Status::Ok();
}

Status Connection::HoldBackLocked(Instant now, Status failure) {
  next_attempt_ = now + Millis(backoff_ms_);
  backoff_ms_ = std::min(backoff_ms_ * 2, options_.reconnect_backoff_max_ms);
  held_back_ = failure;
  return failure;
}

Status Connection::AuthLocked() {
  std::vector<std::string> argv = {"AUTH"};
  if (!options_.username.empty()) argv.push_back(options_.username);
  argv.push_back(options_.password);
  Result<Reply> r = RoundTripLocked(argv, /*mutating=*/false);
  if (!r.ok()) return r.status();
  if (r->type == Reply::Type::kError) {
    // The server's words (WRONGPASS, or "ERR AUTH <password> called without any password
    // configured") never contain the password.
    const std::string who =
        options_.username.empty() ? "the password" : "user " + options_.username + "'s password";
    return Status::PermissionDenied(Where() + " refused " + who + ": " + r->str);
  }
  return Status::Ok();
}

Result<Reply> Connection::RoundTripLocked(const std::vector<std::string>& argv, bool mutating) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& arg : argv) {
    ptrs.push_back(arg.data());
    lens.push_back(arg.size());
  }
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()) !=
      REDIS_OK) {
    const std::string why = ctx_->errstr;
    DropLocked();
    return Status::Unavailable("cannot queue a command for " + Where() + ": " + why);
  }
  // Write the request ourselves, so that a failure here is known to have applied nothing: Redis
  // only runs a command once all of its bytes have arrived.
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
      const std::string why = ctx_->errstr;
      DropLocked();
      return Status::Unavailable("cannot send to " + Where() + ": " + why);
    }
  }
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
    const std::string why = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)
                                ? std::string("timed out")
                                : std::string(ctx_->errstr);
    DropLocked();
    const std::string message = "no answer from " + Where() + " (" + why + ")";
    if (mutating) return Status::UnknownResult(message + "; the command may have been applied");
    return Status::Unavailable(message);
  }
  Reply reply = CopyReply(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

Result<Reply> Connection::Command(const std::vector<std::string>& argv, bool mutating) {
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(ConnectLocked());
  return RoundTripLocked(argv, mutating);
}

Status Connection::LoadLocked(const LuaScript& script) {
  Result<Reply> r =
      RoundTripLocked({"SCRIPT", "LOAD", std::string(script.source)}, /*mutating=*/false);
  if (!r.ok()) return r.status();
  if (r->type != Reply::Type::kString) {
    const std::string what = "loading script " + std::string(script.name) + " failed: " + r->str;
    if (IsAccessRefusal(r->str)) return Status::PermissionDenied(Where() + ": " + what);
    return Status::Internal(what);
  }
  shas_[std::string(script.name)] = std::move(r->str);
  return Status::Ok();
}

Result<Reply> Connection::Script(const LuaScript& script, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args, bool mutating) {
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(ConnectLocked());
  const std::string name(script.name);
  if (!shas_.contains(name)) TELOS_RETURN_IF_ERROR(LoadLocked(script));

  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVALSHA");
  argv.push_back(shas_[name]);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());

  Result<Reply> r = RoundTripLocked(argv, mutating);
  if (r.ok() && r->type == Reply::Type::kError && r->str.starts_with("NOSCRIPT")) {
    // The server forgot the script (restart, failover or SCRIPT FLUSH); it ran nothing, so
    // load it again and retry once.
    TELOS_RETURN_IF_ERROR(LoadLocked(script));
    argv[1] = shas_[name];
    r = RoundTripLocked(argv, mutating);
  }
  if (!r.ok()) return r;
  if (r->type == Reply::Type::kError) {
    const std::string what = name + ": " + r->str;
    if (IsAccessRefusal(r->str)) return Status::PermissionDenied(Where() + " refused " + what);
    if (r->str.starts_with("LOADING") || r->str.starts_with("BUSY") ||
        r->str.starts_with("MASTERDOWN") || r->str.starts_with("TRYAGAIN") ||
        r->str.starts_with("READONLY")) {
      return Status::Unavailable(Where() + " cannot serve " + what);
    }
    return Status::Internal(what);
  }
  return r;
}

}  // namespace telos::redis
