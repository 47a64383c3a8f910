#include "telos/directory/redis_directory.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <utility>

#include "redis/scripts.h"
#include "telos/redis/connection.h"
#include "validate.h"

namespace telos::directory {

using internal::CheckAmount;
using internal::CheckEpoch;
using internal::CheckId;
using internal::CheckOptionalId;
using internal::CheckTtl;
using redis::LuaScript;
using redis::Reply;

namespace {

// Key kinds. Every key is "<prefix><kind>" or "<prefix><kind>:<id>".
constexpr std::string_view kShards = "shards";       // zset id -> expiry
constexpr std::string_view kEndpoints = "shard_ep";  // hash id -> endpoint
constexpr std::string_view kDraining = "draining";   // zset id -> mark expiry
constexpr std::string_view kZone = "zone";           // hash per zone: owner, exp, epoch
constexpr std::string_view kLeader = "leader";       // hash per scope: owner, exp, epoch
constexpr std::string_view kPlacement = "pl";        // hash per player
constexpr std::string_view kPresence = "presence";   // zset player -> expiry
constexpr std::string_view kPresenceGate = "presence_gate";
constexpr std::string_view kPresenceShard = "presence_shard";
constexpr std::string_view kOccupancy = "occ";       // hash shard -> JSON pairs
constexpr std::string_view kOccupancyAt = "occ_at";  // hash shard -> ms
constexpr std::string_view kReservations = "resv";   // zset "target\x1fid" -> expiry
constexpr std::string_view kReservationAmounts = "resv_amt";
constexpr std::string_view kReservationSeq = "resv_seq";
constexpr std::string_view kReservationHolders = "resv_holder";  // hash member -> holder
constexpr std::string_view kDirectives = "dir";                  // zset zone -> expiry
constexpr std::string_view kDirectiveFrom = "dir_from";
constexpr std::string_view kDirectiveTo = "dir_to";
constexpr std::string_view kDirectiveScope = "dir_scope";  // hash zone -> issuing leader scope
constexpr std::string_view kDirectiveEpoch = "dir_epoch";  // hash zone -> that leader's term
constexpr std::string_view kCooldowns = "cool";            // zset zone -> expiry
constexpr std::string_view kPackVersion = "pack";          // hash: hash, previous

// The KEYS, in order, that every script of one family takes.
constexpr std::array kShardKinds = {kShards, kEndpoints, kDraining};
constexpr std::array kPresenceKinds = {kPresence, kPresenceGate, kPresenceShard};
constexpr std::array kOccupancyKinds = {kOccupancy, kOccupancyAt};
constexpr std::array kReservationKinds = {kReservations, kReservationAmounts, kReservationSeq,
                                          kReservationHolders};
constexpr std::array kDirectiveKinds = {kDirectives, kDirectiveFrom, kDirectiveTo, kDirectiveScope,
                                        kDirectiveEpoch};

std::string KeyIn(std::string_view prefix, std::string_view kind, std::string_view id = {}) {
  std::string key(prefix);
  key += kind;
  if (!id.empty()) {
    key += ':';
    key += id;
  }
  return key;
}

std::vector<std::string> Keys(std::string_view prefix, std::span<const std::string_view> kinds) {
  std::vector<std::string> keys;
  keys.reserve(kinds.size());
  for (std::string_view kind : kinds) keys.push_back(KeyIn(prefix, kind));
  return keys;
}

std::string Num(int64_t v) {
  return std::to_string(v);
}
std::string Num(uint64_t v) {
  return std::to_string(v);
}

Status Malformed(std::string_view what) {
  return Status::Internal("malformed answer from redis script " + std::string(what));
}

// Reads an integer element, which a script may send as an integer or as a decimal string.
bool ToInt(const Reply& r, int64_t* out) {
  if (r.type == Reply::Type::kInteger) {
    *out = r.integer;
    return true;
  }
  if (r.type != Reply::Type::kString) return false;
  const char* end = r.str.data() + r.str.size();
  auto [ptr, ec] = std::from_chars(r.str.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// The payload of a script answer ({word, ...}) after mapping the word onto a Status.
class Answer {
 public:
  static Result<Answer> From(Result<Reply> r, const LuaScript& script) {
    if (!r.ok()) return r.status();
    Reply& reply = r.value();
    if (reply.type != Reply::Type::kArray || reply.elements.empty() ||
        reply.elements[0].type != Reply::Type::kString) {
      return Malformed(script.name);
    }
    const std::string& word = reply.elements[0].str;
    if (word == "ok") return Answer(std::move(reply.elements), script.name);
    std::string message = reply.elements.size() > 1 ? reply.elements[1].str : word;
    if (word == "conflict") return Status::Conflict(std::move(message));
    if (word == "exists") return Status::AlreadyExists(std::move(message));
    if (word == "precondition") return Status::FailedPrecondition(std::move(message));
    if (word == "notfound") return Status::NotFound(std::move(message));
    return Malformed(script.name);
  }

  // Number of payload elements (after the word).
  size_t size() const { return elements_.size() - 1; }
  bool Str(size_t i, std::string* out) const {
    if (i + 1 >= elements_.size() || elements_[i + 1].type != Reply::Type::kString) return false;
    *out = elements_[i + 1].str;
    return true;
  }
  bool Int(size_t i, int64_t* out) const {
    return i + 1 < elements_.size() && ToInt(elements_[i + 1], out);
  }
  Status Bad() const { return Malformed(name_); }

 private:
  Answer(std::vector<Reply> elements, std::string_view name)
      : elements_(std::move(elements)), name_(name) {}
  std::vector<Reply> elements_;
  std::string_view name_;  // of the script; LuaScript names outlive every answer
};

// Whether a script writes: a reply lost in transit is then UnknownResult (it may have applied)
// rather than Unavailable. Scripts that prune expired entries count as writes.
enum class Access { kRead, kWrite };

// Runs `script` with KEYS `keys` and ARGV `args`, and maps its answer word onto a Status.
Result<Answer> Run(redis::Connection& conn, const LuaScript& script,
                   const std::vector<std::string>& keys, const std::vector<std::string>& args,
                   Access access = Access::kWrite) {
  return Answer::From(conn.Script(script, keys, args, access == Access::kWrite), script);
}

Status ToStatus(Result<Answer> a) {
  return a.ok() ? Status::Ok() : a.status();
}

// Parses the payload of a successful answer into `value` with `parse(answer, &value)`; a payload
// `parse` rejects is malformed.
template <typename T, typename Parse>
Result<T> ToValue(Result<Answer> a, T value, Parse parse) {
  if (!a.ok()) return a.status();
  if (!parse(*a, &value)) return a->Bad();
  return value;
}

// The first payload element as an integer.
Result<int64_t> ToFirstInt(Result<Answer> a) {
  return ToValue(std::move(a), int64_t{0},
                 [](const Answer& answer, int64_t* out) { return answer.Int(0, out); });
}

Result<LeaseGrant> ToGrant(Result<Answer> a) {
  return ToValue(std::move(a), LeaseGrant{}, [](const Answer& answer, LeaseGrant* grant) {
    int64_t epoch = 0;
    if (!answer.Int(0, &epoch) || !answer.Int(1, &grant->ttl_ms) || epoch <= 0) return false;
    grant->epoch = static_cast<uint64_t>(epoch);
    return true;
  });
}

// An empty payload is "absent"; any other is one record, parsed by `parse(answer, &record)`.
template <typename T, typename Parse>
Result<std::optional<T>> ToOptional(Result<Answer> a, Parse parse) {
  if (!a.ok()) return a.status();
  if (a->size() == 0) return std::optional<T>();
  T record;
  if (!parse(*a, &record)) return a->Bad();
  return std::optional<T>(std::move(record));
}

// Scripts list hashes in no particular order; listings are sorted by their id field.
template <typename T, typename Field>
void SortBy(std::vector<T>* records, Field T::*field) {
  std::sort(records->begin(), records->end(),
            [field](const T& x, const T& y) { return x.*field < y.*field; });
}

// A payload of records `width` elements each, record i parsed by `parse(answer, first, &record)`
// from element `first` = width * i, sorted by `field`.
template <typename T, typename Field, typename Parse>
Result<std::vector<T>> ToList(Result<Answer> a, size_t width, Field T::*field, Parse parse) {
  if (!a.ok()) return a.status();
  if (a->size() % width != 0) return a->Bad();
  std::vector<T> out(a->size() / width);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!parse(*a, width * i, &out[i])) return a->Bad();
  }
  SortBy(&out, field);
  return out;
}

// The ARGV of the placement handoff and register scripts.
std::vector<std::string> PlacementArgs(const Placement& placement) {
  return {placement.zone, Num(placement.epoch), placement.nonce, placement.shard};
}

// One presence record from element `first` on: player, gate, shard, ttl.
bool ParsePresence(const Answer& a, size_t first, Presence* p) {
  return a.Str(first, &p->player) && a.Str(first + 1, &p->gate) && a.Str(first + 2, &p->shard) &&
         a.Int(first + 3, &p->ttl_ms);
}

bool ValidNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > kIdBytesMax) return false;
  return std::none_of(ns.begin(), ns.end(), [](char c) {
    return c == '{' || c == '}' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

}  // namespace

Result<RedisOptions> RedisOptionsFromUrl(std::string_view url) {
  Result<redis::Address> address = redis::ParseUrl(url);
  if (!address.ok()) return address.status();
  RedisOptions options;
  options.host = std::move(address->host);
  options.port = address->port;
  options.username = std::move(address->username);
  options.password = std::move(address->password);
  return options;
}

RedisDirectory::RedisDirectory(RedisOptions options, const Clock& clock)
    : options_(std::move(options)) {
  RELEASE_ASSERT(ValidNamespace(options_.key_namespace), "bad redis key namespace");
  RELEASE_ASSERT(options_.connect_timeout_ms > 0 && options_.command_timeout_ms > 0,
                 "redis timeouts must be positive");
  RELEASE_ASSERT(options_.reconnect_backoff_min_ms > 0 &&
                     options_.reconnect_backoff_max_ms >= options_.reconnect_backoff_min_ms,
                 "bad redis reconnect backoff");
  prefix_ = "{" + options_.key_namespace + "}:";
  const redis::ConnectionOptions connection{
      .host = options_.host,
      .port = options_.port,
      .username = options_.username,
      .password = options_.password,
      .connect_timeout_ms = options_.connect_timeout_ms,
      .command_timeout_ms = options_.command_timeout_ms,
      .reconnect_backoff_min_ms = options_.reconnect_backoff_min_ms,
      .reconnect_backoff_max_ms = options_.reconnect_backoff_max_ms};
  conn_ = std::make_unique<redis::Connection>(connection, clock);
  lease_conn_ = std::make_unique<redis::Connection>(connection, clock);
}

RedisDirectory::~RedisDirectory() = default;

std::string RedisDirectory::Key(std::string_view kind, std::string_view id) const {
  return KeyIn(prefix_, kind, id);
}

Status RedisDirectory::Ping() {
  Result<Reply> r = conn_->Command({"PING"}, /*mutating=*/false);
  if (!r.ok()) return r.status();
  if (r->type != Reply::Type::kStatus || r->str != "PONG") {
    return Status::Unavailable("unexpected PING answer: " + r->str);
  }
  return Status::Ok();
}

// ------------------------------------------------------------------ shards

Status RedisDirectory::RegisterShard(std::string_view shard_id, std::string_view endpoint,
                                     int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToStatus(Run(*lease_conn_, internal::GetScripts().shard_register,
                      Keys(prefix_, kShardKinds),
                      {std::string(shard_id), std::string(endpoint), Num(ttl_ms), "register"}));
}

Status RedisDirectory::HeartbeatShard(std::string_view shard_id, std::string_view endpoint,
                                      int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToStatus(Run(*lease_conn_, internal::GetScripts().shard_register,
                      Keys(prefix_, kShardKinds),
                      {std::string(shard_id), std::string(endpoint), Num(ttl_ms), "heartbeat"}));
}

Status RedisDirectory::DeregisterShard(std::string_view shard_id, std::string_view endpoint) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  return ToStatus(
      Run(*lease_conn_, internal::GetScripts().shard_deregister,
          {Key(kShards), Key(kEndpoints), Key(kOccupancy), Key(kOccupancyAt), Key(kDraining)},
          {std::string(shard_id), std::string(endpoint)}));
}

Result<std::vector<ShardInfo>> RedisDirectory::ListShards() {
  return ToList(Run(*conn_, internal::GetScripts().shard_list, Keys(prefix_, kShardKinds), {}), 4,
                &ShardInfo::id, [](const Answer& a, size_t i, ShardInfo* s) {
                  int64_t draining = 0;
                  if (!a.Str(i, &s->id) || !a.Str(i + 1, &s->endpoint) ||
                      !a.Int(i + 2, &s->ttl_ms) || !a.Int(i + 3, &draining)) {
                    return false;
                  }
                  s->draining = draining == 1;
                  return true;
                });
}

Status RedisDirectory::MarkShardDraining(std::string_view shard_id, std::string_view endpoint,
                                         int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToStatus(Run(*lease_conn_, internal::GetScripts().shard_mark_draining,
                      Keys(prefix_, kShardKinds),
                      {std::string(shard_id), std::string(endpoint), Num(ttl_ms)}));
}

// ------------------------------------------------------------------ zone leases

Result<LeaseGrant> RedisDirectory::ClaimZone(std::string_view zone, std::string_view shard_id,
                                             int64_t ttl_ms, uint64_t min_epoch) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_claim, {Key(kZone, zone)},
                     {std::string(shard_id), Num(ttl_ms), Num(min_epoch)}));
}

Result<LeaseGrant> RedisDirectory::RenewZone(std::string_view zone, std::string_view shard_id,
                                             uint64_t epoch, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_renew, {Key(kZone, zone)},
                     {std::string(shard_id), Num(epoch), Num(ttl_ms), "1"}));
}

Status RedisDirectory::ReleaseZone(std::string_view zone, std::string_view shard_id,
                                   uint64_t epoch) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  return ToStatus(Run(*lease_conn_, internal::GetScripts().lease_release, {Key(kZone, zone)},
                      {std::string(shard_id), Num(epoch)}));
}

Result<LeaseGrant> RedisDirectory::TransferZone(std::string_view zone, std::string_view from,
                                                uint64_t from_epoch, std::string_view to,
                                                int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  TELOS_RETURN_IF_ERROR(CheckEpoch(from_epoch));
  TELOS_RETURN_IF_ERROR(CheckId("to", to));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  if (from == to) return Status::InvalidArgument("transfer to the same shard");
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_transfer, {Key(kZone, zone)},
                     {std::string(from), Num(from_epoch), std::string(to), Num(ttl_ms)}));
}

Result<std::optional<ZoneOwner>> RedisDirectory::OwnerOfZone(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  return ToOptional<ZoneOwner>(
      Run(*conn_, internal::GetScripts().lease_get,
          {Key(kZone, zone), Key(kShards), Key(kEndpoints)}, {}, Access::kRead),
      [](const Answer& a, ZoneOwner* owner) {
        int64_t epoch = 0;
        if (!a.Str(0, &owner->shard_id) || !a.Int(1, &epoch) || !a.Int(2, &owner->ttl_ms) ||
            !a.Str(3, &owner->endpoint)) {
          return false;
        }
        owner->epoch = static_cast<uint64_t>(epoch);
        return true;
      });
}

// ------------------------------------------------------------------ leader leases

Result<LeaseGrant> RedisDirectory::Campaign(std::string_view scope, std::string_view candidate,
                                            int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_claim, {Key(kLeader, scope)},
                     {std::string(candidate), Num(ttl_ms)}));
}

Result<LeaseGrant> RedisDirectory::RenewLeadership(std::string_view scope,
                                                   std::string_view candidate, uint64_t term,
                                                   int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_renew, {Key(kLeader, scope)},
                     {std::string(candidate), Num(term), Num(ttl_ms), "1"}));
}

Status RedisDirectory::Resign(std::string_view scope, std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  return ToStatus(Run(*lease_conn_, internal::GetScripts().lease_release, {Key(kLeader, scope)},
                      {std::string(candidate), Num(term)}));
}

Result<LeaseGrant> RedisDirectory::ConfirmLeadership(std::string_view scope,
                                                     std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  return ToGrant(Run(*lease_conn_, internal::GetScripts().lease_renew, {Key(kLeader, scope)},
                     {std::string(candidate), Num(term), "0", "0"}, Access::kRead));
}

Result<std::optional<Leader>> RedisDirectory::LeaderOf(std::string_view scope) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  return ToOptional<Leader>(
      Run(*conn_, internal::GetScripts().lease_get,
          {Key(kLeader, scope), Key(kShards), Key(kEndpoints)}, {}, Access::kRead),
      [](const Answer& a, Leader* leader) {
        int64_t term = 0;
        if (!a.Str(0, &leader->holder) || !a.Int(1, &term) || !a.Int(2, &leader->ttl_ms)) {
          return false;
        }
        leader->term = static_cast<uint64_t>(term);
        return true;
      });
}

// ------------------------------------------------------------------ placement records

Status RedisDirectory::HandoffPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  return ToStatus(Run(*conn_, internal::GetScripts().placement_handoff, {Key(kPlacement, player)},
                      PlacementArgs(placement)));
}

Status RedisDirectory::RegisterPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  return ToStatus(Run(*conn_, internal::GetScripts().placement_register, {Key(kPlacement, player)},
                      PlacementArgs(placement)));
}

Result<bool> RedisDirectory::TombstonePlacement(std::string_view player, std::string_view shard,
                                                uint64_t epoch, std::string_view nonce,
                                                std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("shard", shard));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("nonce", nonce));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("zone", zone));
  Result<int64_t> applied =
      ToFirstInt(Run(*conn_, internal::GetScripts().placement_tombstone, {Key(kPlacement, player)},
                     {std::string(shard), Num(epoch), std::string(nonce), std::string(zone)}));
  if (!applied.ok()) return applied.status();
  return *applied == 1;
}

Status RedisDirectory::DeletePlacement(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  Result<Reply> r = conn_->Command({"DEL", Key(kPlacement, player)}, /*mutating=*/true);
  if (!r.ok()) return r.status();
  if (r->type == Reply::Type::kError) return Status::Internal("DEL: " + r->str);
  return Status::Ok();
}

Result<std::optional<Placement>> RedisDirectory::LookupPlacement(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  Result<Reply> r = conn_->Command(
      {"HMGET", Key(kPlacement, player), "zone", "epoch", "nonce", "shard"}, /*mutating=*/false);
  if (!r.ok()) return r.status();
  if (r->type != Reply::Type::kArray || r->elements.size() != 4) return Malformed("HMGET");
  const std::vector<Reply>& e = r->elements;
  if (e[1].type == Reply::Type::kNil) return std::optional<Placement>();
  Placement p;
  int64_t epoch = 0;
  if (!ToInt(e[1], &epoch)) return Malformed("HMGET");
  p.epoch = static_cast<uint64_t>(epoch);
  p.zone = e[0].str;
  p.nonce = e[2].str;
  p.shard = e[3].str;
  return std::optional<Placement>(std::move(p));
}

// ------------------------------------------------------------------ presence

Status RedisDirectory::SetPresence(std::string_view player, std::string_view gate,
                                   std::string_view shard, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("gate", gate));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("shard", shard));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToStatus(Run(*conn_, internal::GetScripts().presence_set, Keys(prefix_, kPresenceKinds),
                      {std::string(player), std::string(gate), std::string(shard), Num(ttl_ms)}));
}

Status RedisDirectory::ClearPresence(std::string_view player, std::string_view gate) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("gate", gate));
  return ToStatus(Run(*conn_, internal::GetScripts().presence_clear, Keys(prefix_, kPresenceKinds),
                      {std::string(player), std::string(gate)}));
}

Result<std::optional<Presence>> RedisDirectory::GetPresence(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  return ToOptional<Presence>(
      Run(*conn_, internal::GetScripts().presence_get, Keys(prefix_, kPresenceKinds),
          {std::string(player)}, Access::kRead),
      [](const Answer& a, Presence* p) { return ParsePresence(a, 0, p); });
}

Result<std::vector<Presence>> RedisDirectory::ListPresence() {
  return ToList(
      Run(*conn_, internal::GetScripts().presence_list, Keys(prefix_, kPresenceKinds), {}), 4,
      &Presence::player, ParsePresence);
}

// ------------------------------------------------------------------ occupancy

Status RedisDirectory::ReportOccupancy(std::string_view shard,
                                       const std::vector<ZoneCount>& zones) {
  TELOS_RETURN_IF_ERROR(internal::CheckOccupancy(shard, zones));
  std::vector<ZoneCount> sorted = zones;
  SortBy(&sorted, &ZoneCount::zone);
  std::vector<std::string> args;
  args.reserve(1 + 2 * sorted.size());
  args.emplace_back(shard);
  for (const ZoneCount& z : sorted) {
    args.push_back(z.zone);
    args.push_back(Num(z.players));
  }
  return ToStatus(
      Run(*conn_, internal::GetScripts().occupancy_report, Keys(prefix_, kOccupancyKinds), args));
}

Result<std::vector<Occupancy>> RedisDirectory::ListOccupancy() {
  Result<Answer> a = Run(*conn_, internal::GetScripts().occupancy_list,
                         Keys(prefix_, kOccupancyKinds), {}, Access::kRead);
  if (!a.ok()) return a.status();
  int64_t now = 0;
  if (!a->Int(0, &now)) return a->Bad();
  std::vector<Occupancy> out;
  size_t i = 1;
  while (i < a->size()) {
    Occupancy occ;
    int64_t n = 0;
    if (!a->Str(i, &occ.shard) || !a->Int(i + 1, &occ.reported_at_ms) || !a->Int(i + 2, &n) ||
        n < 0 || n % 2 != 0) {
      return a->Bad();
    }
    i += 3;
    for (int64_t j = 0; j < n; j += 2, i += 2) {
      ZoneCount z;
      if (!a->Str(i, &z.zone) || !a->Int(i + 1, &z.players)) return a->Bad();
      occ.zones.push_back(std::move(z));
    }
    occ.age_ms = now - occ.reported_at_ms;
    out.push_back(std::move(occ));
  }
  SortBy(&out, &Occupancy::shard);
  return out;
}

// ------------------------------------------------------------------ reservations

Result<Reservation> RedisDirectory::Reserve(std::string_view target, int64_t amount,
                                            int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckAmount(amount, /*positive=*/true));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToValue(
      Run(*conn_, internal::GetScripts().reserve, Keys(prefix_, kReservationKinds),
          {std::string(target), Num(amount), Num(ttl_ms)}),
      Reservation{std::string(target), "", amount, 0},
      [](const Answer& a, Reservation* r) { return a.Str(0, &r->id) && a.Int(1, &r->ttl_ms); });
}

Status RedisDirectory::ReleaseReservation(std::string_view target, std::string_view id) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckId("id", id));
  return ToStatus(Run(*conn_, internal::GetScripts().reservation_release,
                      {Key(kReservations), Key(kReservationAmounts), Key(kReservationHolders)},
                      {std::string(target), std::string(id)}));
}

Result<int64_t> RedisDirectory::ReservedSum(std::string_view target) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  return ToFirstInt(Run(*conn_, internal::GetScripts().reserved_sum,
                        {Key(kReservations), Key(kReservationAmounts), Key(kReservationHolders)},
                        {std::string(target)}));
}

Result<DrainTarget> RedisDirectory::SelectDrainTarget(const DrainTargetRequest& request) {
  TELOS_RETURN_IF_ERROR(internal::CheckDrainRequest(request));
  std::vector<std::string> args = {Num(request.amount), Num(request.ttl_ms), Num(request.ceiling),
                                   request.holder, Num(kReservationAmountMax)};
  args.insert(args.end(), request.exclude.begin(), request.exclude.end());
  DrainTarget out;
  out.reservation.amount = request.amount;
  return ToValue(Run(*conn_, internal::GetScripts().select_drain_target,
                     {Key(kShards), Key(kOccupancy), Key(kReservations), Key(kReservationAmounts),
                      Key(kReservationSeq), Key(kReservationHolders), Key(kDraining)},
                     args),
                 std::move(out), [](const Answer& a, DrainTarget* t) {
                   int64_t over = 0;
                   if (!a.Str(0, &t->reservation.target) || !a.Str(1, &t->reservation.id) ||
                       !a.Int(2, &t->reservation.ttl_ms) || !a.Int(3, &t->load) ||
                       !a.Int(4, &over) || !a.Int(5, &t->reservation.amount)) {
                     return false;
                   }
                   t->over_ceiling = over == 1;
                   return true;
                 });
}

// ------------------------------------------------------------------ directives and cooldowns

Status RedisDirectory::IssueDirective(std::string_view scope, uint64_t epoch, std::string_view zone,
                                      std::string_view from, std::string_view to, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  TELOS_RETURN_IF_ERROR(CheckId("to", to));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  // The script reads the scope's leader lease itself, so the fence and the write are one step.
  std::vector<std::string> keys = Keys(prefix_, kDirectiveKinds);
  keys.push_back(Key(kLeader, scope));
  return ToStatus(Run(*conn_, internal::GetScripts().directive_issue, keys,
                      {std::string(zone), std::string(from), std::string(to), Num(ttl_ms),
                       std::string(scope), Num(epoch)}));
}

Result<std::vector<Directive>> RedisDirectory::ListDirectives(std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  return ToList(Run(*conn_, internal::GetScripts().directive_list, Keys(prefix_, kDirectiveKinds),
                    {std::string(from)}),
                6, &Directive::zone, [](const Answer& a, size_t i, Directive* d) {
                  int64_t epoch = 0;
                  if (!a.Str(i, &d->zone) || !a.Str(i + 1, &d->from) || !a.Str(i + 2, &d->to) ||
                      !a.Int(i + 3, &d->ttl_ms) || !a.Str(i + 4, &d->scope) ||
                      !a.Int(i + 5, &epoch)) {
                    return false;
                  }
                  d->epoch = static_cast<uint64_t>(epoch);
                  return true;
                });
}

Status RedisDirectory::CompleteDirective(std::string_view zone, std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  return ToStatus(Run(*conn_, internal::GetScripts().directive_complete,
                      Keys(prefix_, kDirectiveKinds), {std::string(zone), std::string(from)}));
}

Status RedisDirectory::StartCooldown(std::string_view zone, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  return ToStatus(Run(*conn_, internal::GetScripts().cooldown_start, {Key(kCooldowns)},
                      {std::string(zone), Num(ttl_ms)}));
}

Result<int64_t> RedisDirectory::CooldownRemainingMs(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  return ToFirstInt(Run(*conn_, internal::GetScripts().cooldown_remaining, {Key(kCooldowns)},
                        {std::string(zone)}));
}

// ------------------------------------------------------------------ content pack version

Result<std::optional<PackVersion>> RedisDirectory::ReadPackVersion() {
  auto answer =
      Run(*conn_, internal::GetScripts().pack_version_get, {Key(kPackVersion)}, {}, Access::kRead);
  if (!answer.ok()) return answer.status();
  PackVersion version;
  if (!answer->Str(0, &version.hash) || !answer->Str(1, &version.previous_hash)) {
    return answer->Bad();
  }
  if (version.hash.empty()) return std::optional<PackVersion>();
  return std::optional<PackVersion>(std::move(version));
}

Status RedisDirectory::SwapPackVersion(std::string_view expected_hash, const PackVersion& next) {
  TELOS_RETURN_IF_ERROR(CheckId("pack hash", next.hash));
  TELOS_RETURN_IF_ERROR(internal::CheckOptionalId("previous pack hash", next.previous_hash));
  TELOS_RETURN_IF_ERROR(internal::CheckOptionalId("expected pack hash", expected_hash));
  return ToStatus(Run(*conn_, internal::GetScripts().pack_version_swap, {Key(kPackVersion)},
                      {std::string(expected_hash), next.hash, next.previous_hash}));
}

}  // namespace telos::directory
