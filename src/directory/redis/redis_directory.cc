#include "telos/directory/redis_directory.h"

#include <algorithm>
#include <charconv>
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
constexpr std::string_view kDirectives = "dir";  // zset zone -> expiry
constexpr std::string_view kDirectiveFrom = "dir_from";
constexpr std::string_view kDirectiveTo = "dir_to";
constexpr std::string_view kCooldowns = "cool";  // zset zone -> expiry

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

Result<LeaseGrant> ToGrant(Result<Answer> a) {
  if (!a.ok()) return a.status();
  int64_t epoch = 0;
  int64_t ttl = 0;
  if (!a->Int(0, &epoch) || !a->Int(1, &ttl) || epoch <= 0) return a->Bad();
  return LeaseGrant{static_cast<uint64_t>(epoch), ttl};
}

Status ToStatus(Result<Answer> a) {
  return a.ok() ? Status::Ok() : a.status();
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
  conn_ = std::make_unique<redis::Connection>(
      redis::ConnectionOptions{.host = options_.host,
                               .port = options_.port,
                               .connect_timeout_ms = options_.connect_timeout_ms,
                               .command_timeout_ms = options_.command_timeout_ms,
                               .reconnect_backoff_min_ms = options_.reconnect_backoff_min_ms,
                               .reconnect_backoff_max_ms = options_.reconnect_backoff_max_ms},
      clock);
}

RedisDirectory::~RedisDirectory() = default;

std::string RedisDirectory::Key(std::string_view kind, std::string_view id) const {
  std::string key = prefix_;
  key += kind;
  if (!id.empty()) {
    key += ':';
    key += id;
  }
  return key;
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
  const LuaScript& script = internal::GetScripts().shard_register;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kShards), Key(kEndpoints)},
                    {std::string(shard_id), std::string(endpoint), Num(ttl_ms), "register"}, true),
      script));
}

Status RedisDirectory::HeartbeatShard(std::string_view shard_id, std::string_view endpoint,
                                      int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().shard_register;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kShards), Key(kEndpoints)},
                    {std::string(shard_id), std::string(endpoint), Num(ttl_ms), "heartbeat"}, true),
      script));
}

Status RedisDirectory::DeregisterShard(std::string_view shard_id, std::string_view endpoint) {
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckId("endpoint", endpoint));
  const LuaScript& script = internal::GetScripts().shard_deregister;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kShards), Key(kEndpoints), Key(kOccupancy), Key(kOccupancyAt)},
                    {std::string(shard_id), std::string(endpoint)}, true),
      script));
}

Result<std::vector<ShardInfo>> RedisDirectory::ListShards() {
  const LuaScript& script = internal::GetScripts().shard_list;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kShards), Key(kEndpoints)}, {}, true), script);
  if (!a.ok()) return a.status();
  if (a->size() % 3 != 0) return a->Bad();
  std::vector<ShardInfo> out(a->size() / 3);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!a->Str(3 * i, &out[i].id) || !a->Str(3 * i + 1, &out[i].endpoint) ||
        !a->Int(3 * i + 2, &out[i].ttl_ms)) {
      return a->Bad();
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ShardInfo& x, const ShardInfo& y) { return x.id < y.id; });
  return out;
}

// ------------------------------------------------------------------ zone leases

Result<LeaseGrant> RedisDirectory::ClaimZone(std::string_view zone, std::string_view shard_id,
                                             int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().lease_claim;
  return ToGrant(Answer::From(
      conn_->Script(script, {Key(kZone, zone)}, {std::string(shard_id), Num(ttl_ms)}, true),
      script));
}

Result<LeaseGrant> RedisDirectory::RenewZone(std::string_view zone, std::string_view shard_id,
                                             uint64_t epoch, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().lease_renew;
  return ToGrant(
      Answer::From(conn_->Script(script, {Key(kZone, zone)},
                                 {std::string(shard_id), Num(epoch), Num(ttl_ms), "1"}, true),
                   script));
}

Status RedisDirectory::ReleaseZone(std::string_view zone, std::string_view shard_id,
                                   uint64_t epoch) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("shard_id", shard_id));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  const LuaScript& script = internal::GetScripts().lease_release;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kZone, zone)}, {std::string(shard_id), Num(epoch)}, true),
      script));
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
  const LuaScript& script = internal::GetScripts().lease_transfer;
  return ToGrant(Answer::From(
      conn_->Script(script, {Key(kZone, zone)},
                    {std::string(from), Num(from_epoch), std::string(to), Num(ttl_ms)}, true),
      script));
}

Result<std::optional<ZoneOwner>> RedisDirectory::OwnerOfZone(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  const LuaScript& script = internal::GetScripts().lease_get;
  Result<Answer> a = Answer::From(
      conn_->Script(script, {Key(kZone, zone), Key(kShards), Key(kEndpoints)}, {}, false), script);
  if (!a.ok()) return a.status();
  if (a->size() == 0) return std::optional<ZoneOwner>();
  ZoneOwner owner;
  int64_t epoch = 0;
  if (!a->Str(0, &owner.shard_id) || !a->Int(1, &epoch) || !a->Int(2, &owner.ttl_ms) ||
      !a->Str(3, &owner.endpoint)) {
    return a->Bad();
  }
  owner.epoch = static_cast<uint64_t>(epoch);
  return std::optional<ZoneOwner>(std::move(owner));
}

// ------------------------------------------------------------------ leader leases

Result<LeaseGrant> RedisDirectory::Campaign(std::string_view scope, std::string_view candidate,
                                            int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().lease_claim;
  return ToGrant(Answer::From(
      conn_->Script(script, {Key(kLeader, scope)}, {std::string(candidate), Num(ttl_ms)}, true),
      script));
}

Result<LeaseGrant> RedisDirectory::RenewLeadership(std::string_view scope,
                                                   std::string_view candidate, uint64_t term,
                                                   int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().lease_renew;
  return ToGrant(
      Answer::From(conn_->Script(script, {Key(kLeader, scope)},
                                 {std::string(candidate), Num(term), Num(ttl_ms), "1"}, true),
                   script));
}

Status RedisDirectory::Resign(std::string_view scope, std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  const LuaScript& script = internal::GetScripts().lease_release;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kLeader, scope)}, {std::string(candidate), Num(term)}, true),
      script));
}

Result<LeaseGrant> RedisDirectory::ConfirmLeadership(std::string_view scope,
                                                     std::string_view candidate, uint64_t term) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  TELOS_RETURN_IF_ERROR(CheckId("candidate", candidate));
  TELOS_RETURN_IF_ERROR(CheckEpoch(term));
  const LuaScript& script = internal::GetScripts().lease_renew;
  return ToGrant(Answer::From(conn_->Script(script, {Key(kLeader, scope)},
                                            {std::string(candidate), Num(term), "0", "0"}, false),
                              script));
}

Result<std::optional<Leader>> RedisDirectory::LeaderOf(std::string_view scope) {
  TELOS_RETURN_IF_ERROR(CheckId("scope", scope));
  const LuaScript& script = internal::GetScripts().lease_get;
  Result<Answer> a = Answer::From(
      conn_->Script(script, {Key(kLeader, scope), Key(kShards), Key(kEndpoints)}, {}, false),
      script);
  if (!a.ok()) return a.status();
  if (a->size() == 0) return std::optional<Leader>();
  Leader leader;
  int64_t term = 0;
  if (!a->Str(0, &leader.holder) || !a->Int(1, &term) || !a->Int(2, &leader.ttl_ms)) {
    return a->Bad();
  }
  leader.term = static_cast<uint64_t>(term);
  return std::optional<Leader>(std::move(leader));
}

// ------------------------------------------------------------------ placement records

Status RedisDirectory::HandoffPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  const LuaScript& script = internal::GetScripts().placement_handoff;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kPlacement, player)},
                    {placement.zone, Num(placement.epoch), placement.nonce, placement.shard}, true),
      script));
}

Status RedisDirectory::RegisterPlacement(std::string_view player, const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(internal::CheckPlacement(placement));
  const LuaScript& script = internal::GetScripts().placement_register;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kPlacement, player)},
                    {placement.zone, Num(placement.epoch), placement.nonce, placement.shard}, true),
      script));
}

Result<bool> RedisDirectory::TombstonePlacement(std::string_view player, std::string_view shard,
                                                uint64_t epoch, std::string_view nonce,
                                                std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("shard", shard));
  TELOS_RETURN_IF_ERROR(CheckEpoch(epoch));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("nonce", nonce));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("zone", zone));
  const LuaScript& script = internal::GetScripts().placement_tombstone;
  Result<Answer> a = Answer::From(
      conn_->Script(script, {Key(kPlacement, player)},
                    {std::string(shard), Num(epoch), std::string(nonce), std::string(zone)}, true),
      script);
  if (!a.ok()) return a.status();
  int64_t applied = 0;
  if (!a->Int(0, &applied)) return a->Bad();
  return applied == 1;
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
  const LuaScript& script = internal::GetScripts().presence_set;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kPresence), Key(kPresenceGate), Key(kPresenceShard)},
                    {std::string(player), std::string(gate), std::string(shard), Num(ttl_ms)},
                    true),
      script));
}

Status RedisDirectory::ClearPresence(std::string_view player, std::string_view gate) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  TELOS_RETURN_IF_ERROR(CheckId("gate", gate));
  const LuaScript& script = internal::GetScripts().presence_clear;
  return ToStatus(
      Answer::From(conn_->Script(script, {Key(kPresence), Key(kPresenceGate), Key(kPresenceShard)},
                                 {std::string(player), std::string(gate)}, true),
                   script));
}

Result<std::optional<Presence>> RedisDirectory::GetPresence(std::string_view player) {
  TELOS_RETURN_IF_ERROR(CheckId("player", player));
  const LuaScript& script = internal::GetScripts().presence_get;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kPresence), Key(kPresenceGate), Key(kPresenceShard)},
                                 {std::string(player)}, false),
                   script);
  if (!a.ok()) return a.status();
  if (a->size() == 0) return std::optional<Presence>();
  Presence p;
  if (!a->Str(0, &p.player) || !a->Str(1, &p.gate) || !a->Str(2, &p.shard) ||
      !a->Int(3, &p.ttl_ms)) {
    return a->Bad();
  }
  return std::optional<Presence>(std::move(p));
}

Result<std::vector<Presence>> RedisDirectory::ListPresence() {
  const LuaScript& script = internal::GetScripts().presence_list;
  Result<Answer> a = Answer::From(
      conn_->Script(script, {Key(kPresence), Key(kPresenceGate), Key(kPresenceShard)}, {}, true),
      script);
  if (!a.ok()) return a.status();
  if (a->size() % 4 != 0) return a->Bad();
  std::vector<Presence> out(a->size() / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!a->Str(4 * i, &out[i].player) || !a->Str(4 * i + 1, &out[i].gate) ||
        !a->Str(4 * i + 2, &out[i].shard) || !a->Int(4 * i + 3, &out[i].ttl_ms)) {
      return a->Bad();
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Presence& x, const Presence& y) { return x.player < y.player; });
  return out;
}

// ------------------------------------------------------------------ occupancy

Status RedisDirectory::ReportOccupancy(std::string_view shard,
                                       const std::vector<ZoneCount>& zones) {
  TELOS_RETURN_IF_ERROR(internal::CheckOccupancy(shard, zones));
  std::vector<ZoneCount> sorted = zones;
  std::sort(sorted.begin(), sorted.end(),
            [](const ZoneCount& a, const ZoneCount& b) { return a.zone < b.zone; });
  std::vector<std::string> args;
  args.reserve(1 + 2 * sorted.size());
  args.emplace_back(shard);
  for (const ZoneCount& z : sorted) {
    args.push_back(z.zone);
    args.push_back(Num(z.players));
  }
  const LuaScript& script = internal::GetScripts().occupancy_report;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kOccupancy), Key(kOccupancyAt)}, args, true), script));
}

Result<std::vector<Occupancy>> RedisDirectory::ListOccupancy() {
  const LuaScript& script = internal::GetScripts().occupancy_list;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kOccupancy), Key(kOccupancyAt)}, {}, false), script);
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
  std::sort(out.begin(), out.end(),
            [](const Occupancy& x, const Occupancy& y) { return x.shard < y.shard; });
  return out;
}

// ------------------------------------------------------------------ reservations

Result<Reservation> RedisDirectory::Reserve(std::string_view target, int64_t amount,
                                            int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckAmount(amount, /*positive=*/true));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().reserve;
  Result<Answer> a = Answer::From(
      conn_->Script(script, {Key(kReservations), Key(kReservationAmounts), Key(kReservationSeq)},
                    {std::string(target), Num(amount), Num(ttl_ms)}, true),
      script);
  if (!a.ok()) return a.status();
  Reservation r{std::string(target), "", amount, 0};
  if (!a->Str(0, &r.id) || !a->Int(1, &r.ttl_ms)) return a->Bad();
  return r;
}

Status RedisDirectory::ReleaseReservation(std::string_view target, std::string_view id) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  TELOS_RETURN_IF_ERROR(CheckId("id", id));
  const LuaScript& script = internal::GetScripts().reservation_release;
  return ToStatus(Answer::From(conn_->Script(script, {Key(kReservations), Key(kReservationAmounts)},
                                             {std::string(target), std::string(id)}, true),
                               script));
}

Result<int64_t> RedisDirectory::ReservedSum(std::string_view target) {
  TELOS_RETURN_IF_ERROR(CheckId("target", target));
  const LuaScript& script = internal::GetScripts().reserved_sum;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kReservations), Key(kReservationAmounts)},
                                 {std::string(target)}, true),
                   script);
  if (!a.ok()) return a.status();
  int64_t sum = 0;
  if (!a->Int(0, &sum)) return a->Bad();
  return sum;
}

Result<DrainTarget> RedisDirectory::SelectDrainTarget(const DrainTargetRequest& request) {
  TELOS_RETURN_IF_ERROR(internal::CheckDrainRequest(request));
  std::vector<std::string> args = {Num(request.amount), Num(request.ttl_ms), Num(request.ceiling)};
  args.insert(args.end(), request.exclude.begin(), request.exclude.end());
  const LuaScript& script = internal::GetScripts().select_drain_target;
  Result<Answer> a = Answer::From(conn_->Script(script,
                                                {Key(kShards), Key(kOccupancy), Key(kReservations),
                                                 Key(kReservationAmounts), Key(kReservationSeq)},
                                                args, true),
                                  script);
  if (!a.ok()) return a.status();
  DrainTarget out;
  out.reservation.amount = request.amount;
  int64_t over = 0;
  if (!a->Str(0, &out.reservation.target) || !a->Str(1, &out.reservation.id) ||
      !a->Int(2, &out.reservation.ttl_ms) || !a->Int(3, &out.load) || !a->Int(4, &over)) {
    return a->Bad();
  }
  out.over_ceiling = over == 1;
  return out;
}

// ------------------------------------------------------------------ directives and cooldowns

Status RedisDirectory::IssueDirective(std::string_view zone, std::string_view from,
                                      std::string_view to, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  TELOS_RETURN_IF_ERROR(CheckId("to", to));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().directive_issue;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kDirectives), Key(kDirectiveFrom), Key(kDirectiveTo)},
                    {std::string(zone), std::string(from), std::string(to), Num(ttl_ms)}, true),
      script));
}

Result<std::vector<Directive>> RedisDirectory::ListDirectives(std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  const LuaScript& script = internal::GetScripts().directive_list;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kDirectives), Key(kDirectiveFrom), Key(kDirectiveTo)},
                                 {std::string(from)}, true),
                   script);
  if (!a.ok()) return a.status();
  if (a->size() % 4 != 0) return a->Bad();
  std::vector<Directive> out(a->size() / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!a->Str(4 * i, &out[i].zone) || !a->Str(4 * i + 1, &out[i].from) ||
        !a->Str(4 * i + 2, &out[i].to) || !a->Int(4 * i + 3, &out[i].ttl_ms)) {
      return a->Bad();
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Directive& x, const Directive& y) { return x.zone < y.zone; });
  return out;
}

Status RedisDirectory::CompleteDirective(std::string_view zone, std::string_view from) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckId("from", from));
  const LuaScript& script = internal::GetScripts().directive_complete;
  return ToStatus(
      Answer::From(conn_->Script(script, {Key(kDirectives), Key(kDirectiveFrom), Key(kDirectiveTo)},
                                 {std::string(zone), std::string(from)}, true),
                   script));
}

Status RedisDirectory::StartCooldown(std::string_view zone, int64_t ttl_ms) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  TELOS_RETURN_IF_ERROR(CheckTtl(ttl_ms));
  const LuaScript& script = internal::GetScripts().cooldown_start;
  return ToStatus(Answer::From(
      conn_->Script(script, {Key(kCooldowns)}, {std::string(zone), Num(ttl_ms)}, true), script));
}

Result<int64_t> RedisDirectory::CooldownRemainingMs(std::string_view zone) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", zone));
  const LuaScript& script = internal::GetScripts().cooldown_remaining;
  Result<Answer> a =
      Answer::From(conn_->Script(script, {Key(kCooldowns)}, {std::string(zone)}, true), script);
  if (!a.ok()) return a.status();
  int64_t left = 0;
  if (!a->Int(0, &left)) return a->Bad();
  return left;
}

}  // namespace telos::directory
