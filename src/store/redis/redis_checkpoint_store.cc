#include "telos/store/redis_checkpoint_store.h"

#include <array>
#include <charconv>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "backend_checks.h"
#include "telos/redis/connection.h"

namespace telos::store {
namespace {

using redis::Reply;

constexpr size_t kKeyNamespaceBytesMax = 64;

// The compare-and-set of Put, as data. KEYS[1] is the checkpoint hash; ARGV is owner_epoch,
// state_version, ttl_ms, then name, account_id, zone_id, room_id, state_json, written_at_ms.
// The fences are compared as decimal strings (the C++ side formats them without sign or
// leading zeros), because Lua 5.1 numbers are doubles and lose integers beyond 2^53.
// Answers {'ok'} or {'stale', stored_owner_epoch, stored_state_version}.
constexpr redis::LuaScript kPutScript{.name = "checkpoint_put", .source = R"lua(
local function cmp(a, b)
  if #a ~= #b then
    if #a < #b then return -1 else return 1 end
  end
  -- Byte by byte: Lua's '<' on strings follows the server's collation locale.
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      if x < y then return -1 else return 1 end
    end
  end
  return 0
end
local key = KEYS[1]
local epoch, version, ttl_ms = ARGV[1], ARGV[2], ARGV[3]
local stored = redis.call('HMGET', key, 'owner_epoch', 'state_version')
if stored[1] and stored[2] then
  local by_epoch = cmp(stored[1], epoch)
  if by_epoch > 0 or (by_epoch == 0 and cmp(stored[2], version) > 0) then
    return {'stale', stored[1], stored[2]}
  end
end
redis.call('HSET', key, 'owner_epoch', epoch, 'state_version', version, 'name', ARGV[4],
           'account_id', ARGV[5], 'zone_id', ARGV[6], 'room_id', ARGV[7],
           'state_json', ARGV[8], 'written_at_ms', ARGV[9])
if ttl_ms ~= '0' then
  redis.call('PEXPIRE', key, ttl_ms)
else
  redis.call('PERSIST', key)
end
return {'ok'}
)lua"};

// The hash fields Get reads, in the order it reads them.
constexpr std::array<std::string_view, 8> kGetFields = {
    "name",    "account_id", "state_version", "owner_epoch",
    "zone_id", "room_id",    "state_json",    "written_at_ms"};

bool ValidNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > kKeyNamespaceBytesMax) return false;
  for (char c : ns) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Parses a stored integer field; Internal (a corrupt hash) on anything else.
Result<int64_t> ParseInt(const Reply& reply, std::string_view field, std::string_view key) {
  int64_t value = 0;
  const std::string& text = reply.str;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (reply.type != Reply::Type::kString || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::Internal("corrupt checkpoint " + std::string(key) + ": field " +
                            std::string(field) + " is not an integer");
  }
  return value;
}

int64_t UnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
      .count();
}

}  // namespace

Result<RedisCheckpointStoreOptions> RedisCheckpointStoreOptionsFromUrl(std::string_view url) {
  Result<redis::Address> address = redis::ParseUrl(url);
  if (!address.ok()) return address.status();
  RedisCheckpointStoreOptions options;
  options.host = std::move(address->host);
  options.port = address->port;
  options.username = std::move(address->username);
  options.password = std::move(address->password);
  return options;
}

Result<std::unique_ptr<RedisCheckpointStore>> RedisCheckpointStore::Create(
    RedisCheckpointStoreOptions options, const Clock& clock) {
  if (!ValidNamespace(options.key_namespace)) {
    return Status::InvalidArgument("bad redis key namespace " + Quoted(options.key_namespace) +
                                   ": 1.." + std::to_string(kKeyNamespaceBytesMax) +
                                   " letters, digits, '-', '_' or '.'");
  }
  if (options.host.empty()) return Status::InvalidArgument("the redis host is empty");
  if (options.port <= 0 || options.port > 65535) {
    return Status::InvalidArgument("bad redis port " + std::to_string(options.port));
  }
  if (options.checkpoint_ttl_ms < 0) {
    return Status::InvalidArgument("checkpoint_ttl_ms is negative");
  }
  if (options.connect_timeout_ms <= 0 || options.command_timeout_ms <= 0) {
    return Status::InvalidArgument("redis timeouts must be positive");
  }
  if (options.reconnect_backoff_min_ms <= 0 ||
      options.reconnect_backoff_max_ms < options.reconnect_backoff_min_ms) {
    return Status::InvalidArgument("bad redis reconnect backoff");
  }
  return std::unique_ptr<RedisCheckpointStore>(new RedisCheckpointStore(std::move(options), clock));
}

RedisCheckpointStore::RedisCheckpointStore(RedisCheckpointStoreOptions options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      prefix_("{" + options_.key_namespace + "}:checkpoint:"),
      conn_(std::make_unique<redis::Connection>(
          redis::ConnectionOptions{.host = options_.host,
                                   .port = options_.port,
                                   .username = options_.username,
                                   .password = options_.password,
                                   .connect_timeout_ms = options_.connect_timeout_ms,
                                   .command_timeout_ms = options_.command_timeout_ms,
                                   .reconnect_backoff_min_ms = options_.reconnect_backoff_min_ms,
                                   .reconnect_backoff_max_ms = options_.reconnect_backoff_max_ms},
          clock)) {}

RedisCheckpointStore::~RedisCheckpointStore() = default;

std::string RedisCheckpointStore::KeyOf(std::string_view name) const {
  return prefix_ + NameKey(name);
}

Status RedisCheckpointStore::Put(const Checkpoint& checkpoint) {
  TELOS_RETURN_IF_ERROR(ValidateCheckpoint(checkpoint));
  auto reply = conn_->Script(
      kPutScript, {KeyOf(checkpoint.name)},
      {std::to_string(checkpoint.owner_epoch), std::to_string(checkpoint.state_version),
       std::to_string(options_.checkpoint_ttl_ms), checkpoint.name,
       std::to_string(checkpoint.account_id), checkpoint.zone_id, checkpoint.room_id,
       checkpoint.state_json, std::to_string(UnixMs(clock_))},
      /*mutating=*/true);
  if (!reply.ok()) return reply.status();
  const std::vector<Reply>& answer = reply->elements;
  if (reply->type != Reply::Type::kArray || answer.empty()) {
    return Status::Internal(std::string(kPutScript.name) + ": unexpected answer");
  }
  if (answer[0].str == "ok") return Status::Ok();
  if (answer[0].str == "stale" && answer.size() == 3) {
    return Status::FailedPrecondition(
        "stale checkpoint of " + Quoted(checkpoint.name) + " at owner_epoch " +
        std::to_string(checkpoint.owner_epoch) + ", state_version " +
        std::to_string(checkpoint.state_version) + "; the stored one is at owner_epoch " +
        answer[1].str + ", state_version " + answer[2].str);
  }
  return Status::Internal(std::string(kPutScript.name) + ": unexpected answer " + answer[0].str);
}

Result<Checkpoint> RedisCheckpointStore::Get(std::string_view name) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  const std::string key = KeyOf(name);
  std::vector<std::string> argv = {"HMGET", key};
  for (std::string_view field : kGetFields) argv.emplace_back(field);
  auto reply = conn_->Command(argv, /*mutating=*/false);
  if (!reply.ok()) return reply.status();
  if (reply->type == Reply::Type::kError) {
    return Status::Internal("reading checkpoint " + key + ": " + reply->str);
  }
  const std::vector<Reply>& fields = reply->elements;
  if (reply->type != Reply::Type::kArray || fields.size() != kGetFields.size()) {
    return Status::Internal("reading checkpoint " + key + ": unexpected answer");
  }
  size_t present = 0;
  for (const Reply& field : fields) present += field.type == Reply::Type::kString ? 1 : 0;
  if (present == 0) return Status::NotFound("no checkpoint of " + Quoted(name));
  if (present != fields.size()) {
    return Status::Internal("corrupt checkpoint " + key + ": fields are missing");
  }
  Checkpoint out;
  out.name = fields[0].str;
  auto account_id = ParseInt(fields[1], kGetFields[1], key);
  auto state_version = ParseInt(fields[2], kGetFields[2], key);
  auto owner_epoch = ParseInt(fields[3], kGetFields[3], key);
  auto written_at_ms = ParseInt(fields[7], kGetFields[7], key);
  for (const auto* parsed : {&account_id, &state_version, &owner_epoch, &written_at_ms}) {
    if (!parsed->ok()) return parsed->status();
  }
  out.account_id = *account_id;
  out.state_version = *state_version;
  out.owner_epoch = *owner_epoch;
  out.zone_id = fields[4].str;
  out.room_id = fields[5].str;
  out.state_json = fields[6].str;
  out.written_at_ms = *written_at_ms;
  return out;
}

Status RedisCheckpointStore::Delete(std::string_view name) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  const std::string key = KeyOf(name);
  auto reply = conn_->Command({"DEL", key}, /*mutating=*/true);
  if (!reply.ok()) return reply.status();
  if (reply->type == Reply::Type::kError) {
    return Status::Internal("deleting checkpoint " + key + ": " + reply->str);
  }
  return Status::Ok();
}

}  // namespace telos::store
