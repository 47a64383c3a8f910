#include "redis/redis_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace telos::directory {

using internal::Reply;
using internal::ScriptId;

namespace {

timeval ToTimeval(int64_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

Reply Copy(const redisReply* r) {
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
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Copy(r->element[i]));
      break;
    default: out.type = Reply::Type::kNil; break;
  }
  return out;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

RedisDirectory::Connection::Connection(const RedisOptions& options, const Clock& clock)
    : options_(options), clock_(clock), backoff_ms_(options.reconnect_backoff_min_ms) {}

RedisDirectory::Connection::~Connection() {
  std::lock_guard lock(mu_);
  DropLocked();
}

std::string RedisDirectory::Connection::Where() const {
  return "redis at " + options_.host + ":" + std::to_string(options_.port);
}

void RedisDirectory::Connection::DropLocked() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
}

Status RedisDirectory::Connection::ConnectLocked() {
  if (ctx_ != nullptr) return Status::Ok();
  const Instant now = clock_.Now();
  if (now < next_attempt_) {
    return Status::Unavailable(Where() + " is unreachable; next attempt in " +
                               std::to_string(ElapsedMs(now, next_attempt_)) + " ms");
  }
  redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                            ToTimeval(options_.connect_timeout_ms));
  if (c == nullptr || c->err != 0) {
    std::string why = c != nullptr ? c->errstr : "out of memory";
    if (c != nullptr) redisFree(c);
    next_attempt_ = now + Millis(backoff_ms_);
    backoff_ms_ = std::min(backoff_ms_ * 2, options_.reconnect_backoff_max_ms);
    return Status::Unavailable("cannot connect to " + Where() + ": " + why);
  }
  if (redisSetTimeout(c, ToTimeval(options_.command_timeout_ms)) != REDIS_OK) {
    std::string why = c->errstr;
    redisFree(c);
    return Status::Unavailable("cannot set timeouts on " + Where() + ": " + why);
  }
  (void)redisEnableKeepAlive(c);  // best effort: only shortens detection of a dead peer
  ctx_ = c;
  backoff_ms_ = options_.reconnect_backoff_min_ms;
  next_attempt_ = Instant::min();
  return Status::Ok();
}

Result<Reply> RedisDirectory::Connection::RoundTripLocked(const std::vector<std::string>& argv,
                                                          bool mutating) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()) !=
      REDIS_OK) {
    std::string why = ctx_->errstr;
    DropLocked();
    return Status::Unavailable("cannot queue a command for " + Where() + ": " + why);
  }
  // Write the request ourselves, so that a failure here is known to have applied nothing: Redis
  // only runs a command once all of its bytes have arrived.
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
      std::string why = ctx_->errstr;
      DropLocked();
      return Status::Unavailable("cannot send to " + Where() + ": " + why);
    }
  }
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
    std::string why = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)
                          ? std::string("timed out")
                          : std::string(ctx_->errstr);
    DropLocked();
    std::string message = "no answer from " + Where() + " (" + why + ")";
    if (mutating) return Status::UnknownResult(message + "; the command may have been applied");
    return Status::Unavailable(message);
  }
  Reply reply = Copy(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

Result<Reply> RedisDirectory::Connection::Command(const std::vector<std::string>& argv,
                                                  bool mutating) {
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(ConnectLocked());
  return RoundTripLocked(argv, mutating);
}

Status RedisDirectory::Connection::LoadLocked(ScriptId id) {
  Result<Reply> r = RoundTripLocked({"SCRIPT", "LOAD", std::string(internal::ScriptSource(id))},
                                    /*mutating=*/false);
  if (!r.ok()) return r.status();
  if (r->type != Reply::Type::kString) {
    return Status::Internal("loading script " + std::string(internal::ScriptName(id)) +
                            " failed: " + r->str);
  }
  shas_[static_cast<size_t>(id)] = std::move(r->str);
  return Status::Ok();
}

Result<Reply> RedisDirectory::Connection::Script(ScriptId id, const std::vector<std::string>& keys,
                                                 const std::vector<std::string>& args,
                                                 bool mutating) {
  std::lock_guard lock(mu_);
  TELOS_RETURN_IF_ERROR(ConnectLocked());
  std::string& sha = shas_[static_cast<size_t>(id)];
  if (sha.empty()) TELOS_RETURN_IF_ERROR(LoadLocked(id));

  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVALSHA");
  argv.push_back(sha);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());

  Result<Reply> r = RoundTripLocked(argv, mutating);
  if (r.ok() && r->type == Reply::Type::kError && StartsWith(r->str, "NOSCRIPT")) {
    // The server forgot the script (restart or SCRIPT FLUSH); it ran nothing, so retry once.
    TELOS_RETURN_IF_ERROR(LoadLocked(id));
    argv[1] = sha;
    r = RoundTripLocked(argv, mutating);
  }
  if (!r.ok()) return r;
  if (r->type == Reply::Type::kError) {
    const std::string what = std::string(internal::ScriptName(id)) + ": " + r->str;
    if (StartsWith(r->str, "LOADING") || StartsWith(r->str, "BUSY") ||
        StartsWith(r->str, "MASTERDOWN") || StartsWith(r->str, "TRYAGAIN")) {
      return Status::Unavailable(Where() + " cannot serve " + what);
    }
    return Status::Internal(what);
  }
  return r;
}

}  // namespace telos::directory
