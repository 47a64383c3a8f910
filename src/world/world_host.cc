// WorldHost: zones in one process, the roster, and routing between zones.
//
// Lock order: mu_ (host) may be held while enqueueing into a zone's inbox (which takes the
// zone's inbox lock); zones never call the host while holding their inbox lock, so the order is
// always host -> zone.
#include "telos/world/world_host.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>

#include "lua_vm.h"
#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/world/pack_diff.h"

namespace telos::world {
namespace {

uint64_t MixSeed(uint64_t seed, std::string_view zone_id) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : zone_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return seed ^ hash;
}

}  // namespace

WorldHost::WorldHost(std::shared_ptr<const Pack> pack, ZoneDeps deps, ExecutorFactory executors,
                     uint64_t seed)
    : pack_(std::move(pack)), deps_(deps), executors_(std::move(executors)), seed_(seed) {
  deps_.router = this;
}

WorldHost::~WorldHost() = default;

Duration WorldHost::HeartbeatPhase(int64_t zones_started_before) {
  // Multiples of the golden ratio, modulo one, stay evenly spread however many there are.
  constexpr double kGoldenRatioFraction = 0.6180339887498949;
  const double turn =
      std::fmod(static_cast<double>(zones_started_before) * kGoldenRatioFraction, 1.0);
  const auto phase = std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(
      turn * static_cast<double>(limits::kZoneHeartbeatMs)));
  return std::min(phase, Millis(limits::kZoneHeartbeatMs) - Duration(1));
}

int64_t WorldHost::LiveZones() {
  return Zone::LiveCount();
}

int64_t WorldHost::LiveLuaVms() {
  return LuaVm::LiveCount();
}

Status WorldHost::StartZone(const std::string& zone_id) {
  std::shared_ptr<Zone> zone;
  int64_t started_before = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pack_->FindZone(zone_id) == nullptr) {
      return Status::NotFound("no zone '" + zone_id + "' in pack " + pack_->name);
    }
    if (zones_.count(zone_id) != 0) return Status::AlreadyExists("zone running: " + zone_id);
    zone = Zone::Create(pack_, zone_id, MixSeed(seed_, zone_id), deps_, executors_(zone_id));
    zones_[zone_id] = zone;
    started_before = zones_started_++;
  }
  zone->Start(HeartbeatPhase(started_before));
  return Status::Ok();
}

Status WorldHost::StartAllZones() {
  const std::shared_ptr<const Pack> pack = this->pack();
  for (const ZoneDef& zone : pack->zones) {
    Status status = StartZone(zone.id);
    if (!status.ok() && status.code() != StatusCode::kAlreadyExists) return status;
  }
  return Status::Ok();
}

Status WorldHost::StopZone(const std::string& zone_id,
                           std::function<void(std::vector<PlayerTransfer>)> done) {
  std::shared_ptr<Zone> zone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = zones_.find(zone_id);
    if (it == zones_.end()) return Status::NotFound("zone not running: " + zone_id);
    if (auto rebuild = reloading_.find(zone_id); rebuild != reloading_.end()) {
      // The old zone still holds the players and the rebuilt one does not yet: stopping either
      // now would lose them (the old zone's go back into a closed zone). The stop runs once
      // they are back (ReadmitAfterReload), so `done` gets every one.
      if (rebuild->second.stop) return Status::NotFound("zone already stopping: " + zone_id);
      rebuild->second.stop = std::move(done);
      return Status::Ok();
    }
    zone = it->second;
    zones_.erase(it);
  }
  StopRemoved(zone, std::move(done));
  return Status::Ok();
}

void WorldHost::StopRemoved(const std::shared_ptr<Zone>& zone,
                            std::function<void(std::vector<PlayerTransfer>)> done) {
  zone->Stop([this, done = std::move(done)](std::vector<PlayerTransfer> players) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const PlayerTransfer& player : players) roster_.erase(NameKey(player.state.name));
    }
    done(std::move(players));
  });
}

size_t WorldHost::StopAllZones(std::chrono::milliseconds timeout,
                               std::function<void(std::vector<PlayerTransfer>)> frozen) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
  };
  RefuseReloads();  // a reload starting now would rebuild zones this is stopping
  auto waiter = std::make_shared<Waiter>();  // outlives a zone that finishes after the timeout
  for (const auto& zone_id : RunningZones()) {
    std::lock_guard lock(waiter->mu);
    const Status s = StopZone(zone_id, [waiter, frozen](std::vector<PlayerTransfer> players) {
      if (frozen) frozen(std::move(players));
      std::lock_guard inner(waiter->mu);
      --waiter->left;
      waiter->cv.notify_all();
    });
    if (s.ok()) ++waiter->left;
  }
  std::unique_lock lock(waiter->mu);
  waiter->cv.wait_for(lock, timeout, [&] { return waiter->left == 0; });
  return waiter->left;
}

std::vector<std::string> WorldHost::RunningZones() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, zone] : zones_) ids.push_back(id);
  return ids;
}

std::shared_ptr<const Pack> WorldHost::pack() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pack_;
}

std::string WorldHost::TargetZone(const CharacterState& state) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!state.room.empty() && pack_->FindRoom(state.room) != nullptr) return state.room.zone;
  return pack_->start_room.zone;
}

WorldHost::RosterEntry WorldHost::MakeRosterEntry(const CharacterState& state,
                                                  const std::string& zone) const {
  RosterEntry entry{state.name, zone, state.level, {}, {}};
  const GameRules& game = pack_->game;
  if (game.empty()) return entry;
  // A character without a race or class yet is given the defaults by its zone on admission.
  const RaceDef* race = game.FindRace(state.race.empty() ? game.default_race : state.race);
  const ClassDef* cls =
      game.FindClass(state.char_class.empty() ? game.default_class : state.char_class);
  if (race == nullptr) race = game.FindRace(game.default_race);
  if (cls == nullptr) cls = game.FindClass(game.default_class);
  if (race != nullptr) entry.race = race->name;
  if (cls != nullptr) entry.char_class = cls->name;
  return entry;
}

Status WorldHost::AdmitLocked(PlayerTransfer transfer) {
  if (transfer.state.room.empty() || pack_->FindRoom(transfer.state.room) == nullptr) {
    transfer.state.room = pack_->start_room;
  }
  std::string zone_id = transfer.state.room.zone;
  auto it = zones_.find(zone_id);
  if (it == zones_.end()) return Status::Unavailable("zone not running here: " + zone_id);
  std::string key = NameKey(transfer.state.name);
  RosterEntry entry = MakeRosterEntry(transfer.state, zone_id);
  TELOS_RETURN_IF_ERROR(it->second->Admit(std::move(transfer)));
  roster_[key] = std::move(entry);
  if (fleet_ != nullptr) fleet_->Resident(key, zone_id);
  return Status::Ok();
}

Status WorldHost::Login(CharacterState state, std::shared_ptr<PlayerSink> sink) {
  std::string key = NameKey(state.name);
  PartyState party;
  std::string party_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (roster_.count(key) != 0) return Status::AlreadyExists(state.name + " is already online");
    if (zones_.size() >= 1 && roster_.size() >= limits::kPlayersPerZoneMax * zones_.size()) {
      return Status::ResourceExhausted("world is full");
    }
    // A leader's roster goes out again at login (ReconcileParty) as a newer version.
    if (!state.party.empty() && NameKey(state.party.leader) == key) ++state.party.version;
    party = state.party;
    party_name = state.name;
    Status admitted = AdmitLocked(PlayerTransfer{std::move(state), std::move(sink), {}, {}});
    if (!admitted.ok()) return admitted;
  }
  if (!party.empty()) {
    CharacterState who;
    who.name = std::move(party_name);
    who.party = std::move(party);
    ReconcileParty(who);  // sends through the router, which takes the roster lock itself
  }
  AnnounceUnreadMail(key);  // a mail port may answer inline: not under the roster lock
  return Status::Ok();
}

void WorldHost::ReconcileParty(const CharacterState& state) {
  const PartyState& party = state.party;
  if (NameKey(party.leader) != NameKey(state.name)) {
    // A member: the leader says whether they are still in it (kRoster or kGone), or nobody
    // answers and their copy is dropped (kUnreachable for kHello).
    SendParty(
        party.leader,
        PartyMessage{.op = PartyMessage::Op::kHello, .party_id = party.id, .from = state.name});
    return;
  }
  // The leader: the roster again, newer than any copy; a member who left meanwhile answers it
  // with a leave.
  for (const std::string& member : party.members) {
    if (NameKey(member) == NameKey(state.name)) continue;
    SendParty(member, PartyMessage{.op = PartyMessage::Op::kRoster,
                                   .party_id = party.id,
                                   .from = state.name,
                                   .text = state.name + " is back.",
                                   .roster = party});
  }
}

void WorldHost::SendParty(const std::string& to, PartyMessage message) {
  const std::string from_key = NameKey(message.from);
  const PartyMessage::Op op = message.op;
  const std::string party_id = message.party_id;
  auto unreachable = [this, from_key, to, op, party_id](std::string why) {
    (void)DeliverParty(from_key, PartyMessage{.op = PartyMessage::Op::kUnreachable,
                                              .party_id = party_id,
                                              .from = to,
                                              .text = std::move(why),
                                              .failed = op});
  };
  const std::string to_key = NameKey(to);
  std::string encoded = comms_ != nullptr ? EncodePartyMessage(message) : std::string();
  const Status delivered = DeliverParty(to_key, std::move(message));
  if (delivered.ok()) return;
  if (delivered.code() != StatusCode::kNotFound) {
    unreachable(to + " cannot be reached right now.");
  } else if (comms_ != nullptr) {
    // Not here: perhaps on another shard; a failure finds the sender wherever they are then.
    comms_->Party(to, encoded, std::move(unreachable));
  } else {
    unreachable("Nobody called '" + to + "' is online.");
  }
}

Status WorldHost::DeliverParty(const std::string& to_key, PartyMessage message) {
  std::lock_guard<std::mutex> lock(mu_);
  auto target = roster_.find(to_key);
  if (target == roster_.end()) return Status::NotFound("not online here");
  HeldOp op{.kind = HeldOp::Kind::kParty, .party = message};
  if (Status held; HoldDuringReloadLocked(to_key, op, &held)) return held;
  auto zone = zones_.find(target->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("in transit");
  return zone->second->DeliverParty(to_key, std::move(message));
}

namespace {
std::string GuildChatLine(const std::string& guild, const std::string& from,
                          const std::string& text) {
  return "{C}[" + guild + "] " + from + ": " + text + "{x}";
}
}  // namespace

void WorldHost::GuildLine(const std::string& guild, const std::string& from,
                          const std::string& text, const std::vector<std::string>& members) {
  std::vector<std::string> elsewhere;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& key : members) {
      if (roster_.count(key) == 0) elsewhere.push_back(key);
    }
  }
  DeliverGuildLine(guild, from, text, members);
  if (elsewhere.empty()) return;
  if (comms_ == nullptr || !comms_->GuildLine(guild, from, text, elsewhere)) {
    (void)Notify(NameKey(from),
                 "Only guild members on this world heard that: the rest of the world cannot be "
                 "reached right now.");
  }
}

void WorldHost::DeliverGuildLine(const std::string& guild, const std::string& from,
                                 const std::string& text, const std::vector<std::string>& members) {
  const std::string line = GuildChatLine(guild, from, text);
  for (const std::string& key : members) (void)Notify(key, line);
}

void WorldHost::AnnounceUnreadMail(const std::string& name_key) {
  if (deps_.mail == nullptr) return;
  // Runs once the letters are listed (another thread); Notify takes the roster lock itself.
  deps_.mail->List(name_key, [this, name_key](Result<std::vector<MailHeader>> letters) {
    if (!letters.ok()) return;
    const auto unread = std::count_if(letters->begin(), letters->end(),
                                      [](const MailHeader& h) { return !h.read; });
    if (unread == 0) return;
    (void)Notify(name_key, "You have " + std::to_string(unread) + " unread letter" +
                               (unread == 1 ? "" : "s") + ". Type 'mail' to list them.");
  });
}

Status WorldHost::Admit(PlayerTransfer transfer) {
  std::lock_guard<std::mutex> lock(mu_);
  return AdmitLocked(std::move(transfer));
}

Status WorldHost::Submit(const std::string& name, std::string line) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = NameKey(name);
  auto it = roster_.find(key);
  if (it == roster_.end()) return Status::NotFound(name + " is not online");
  auto zone = zones_.find(it->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("zone not running: " + it->second.zone);
  return zone->second->Command(key, std::move(line));
}

Status WorldHost::FreezePlayer(const std::string& name,
                               std::function<void(Result<PlayerTransfer>)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = NameKey(name);
  auto it = roster_.find(key);
  if (it == roster_.end()) return Status::NotFound(name + " is not online");
  HeldOp op{.kind = HeldOp::Kind::kFreeze, .freeze_done = ForgetOnFreeze(key, std::move(done))};
  // Mid-rebuild the rebuilt zone does not hold the player yet: the freeze waits for them.
  if (Status held; HoldDuringReloadLocked(key, op, &held)) return held;
  auto zone = zones_.find(it->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("zone not running: " + it->second.zone);
  return zone->second->Freeze(key, std::move(op.freeze_done));
}

std::function<void(Result<PlayerTransfer>)> WorldHost::ForgetOnFreeze(
    const std::string& name_key, std::function<void(Result<PlayerTransfer>)> done) {
  return [this, name_key, done = std::move(done)](Result<PlayerTransfer> transfer) {
    if (transfer.ok()) {
      std::lock_guard<std::mutex> inner(mu_);
      roster_.erase(name_key);
    }
    done(std::move(transfer));
  };
}

bool WorldHost::HoldDuringReloadLocked(const std::string& name_key, HeldOp& op, Status* status) {
  auto player = roster_.find(name_key);
  if (player == roster_.end()) return false;
  auto rebuild = reloading_.find(player->second.zone);
  if (rebuild == reloading_.end()) return false;
  std::vector<HeldOp>& held = rebuild->second.held[name_key];
  // A freeze is never refused (its caller waits on it, one per caller); the rest is bounded.
  if (op.kind != HeldOp::Kind::kFreeze && held.size() >= limits::kReloadHeldLinesMax) {
    *status = Status::ResourceExhausted("too much held for " + name_key + " during a reload");
    return true;
  }
  held.push_back(std::move(op));
  *status = Status::Ok();
  return true;
}

std::optional<std::string> WorldHost::ZoneOf(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = roster_.find(NameKey(name));
  if (it == roster_.end()) return std::nullopt;
  return it->second.zone;
}

size_t WorldHost::online_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return roster_.size();
}

std::shared_ptr<Zone> WorldHost::FindZone(const std::string& zone_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = zones_.find(zone_id);
  return it == zones_.end() ? nullptr : it->second;
}

bool WorldHost::Transfer(PlayerTransfer& transfer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = zones_.find(transfer.state.room.zone);
  if (it == zones_.end()) {
    if (fleet_ == nullptr || !fleet_->IsRemote(transfer.state.room.zone)) return false;
    roster_.erase(NameKey(transfer.state.name));
    fleet_->Depart(std::move(transfer));
    return true;
  }
  std::string key = NameKey(transfer.state.name);
  RosterEntry entry = MakeRosterEntry(transfer.state, it->first);
  Status status = it->second->TryAdmit(transfer);
  if (!status.ok()) {
    // The player is still in `transfer`: the caller keeps them where they were.
    deps_.logger->Warn("zone transfer refused",
                       {{"player", key}, {"zone", it->first}, {"status", status.ToString()}});
    return false;
  }
  roster_[key] = std::move(entry);
  if (fleet_ != nullptr) fleet_->Resident(key, it->first);
  return true;
}

void WorldHost::Tell(const std::string& from, const std::string& to, const std::string& text) {
  const std::string from_key = NameKey(from);
  std::string target_name;
  const Status delivered = DeliverTell(from, NameKey(to), text, &target_name);
  if (delivered.ok()) {
    (void)Notify(from_key, "You tell " + target_name + ", '" + text + "'");
  } else if (delivered.code() != StatusCode::kNotFound) {
    (void)Notify(from_key, target_name + " cannot hear you right now.");
  } else if (comms_ != nullptr) {
    // Not here: perhaps on another shard. The answer finds the sender wherever they are then.
    comms_->Tell(from, to, text,
                 [this, from_key](std::string answer) { (void)Notify(from_key, answer); });
  } else {
    (void)Notify(from_key, "Nobody called '" + to + "' is online.");
  }
}

// --- Staff

Status WorldHost::ApplyStaff(const StaffOrder& order, std::function<void(StaffOutcome)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  auto target = roster_.find(NameKey(order.target));
  if (target == roster_.end()) return Status::NotFound("not online here");
  auto zone = zones_.find(target->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("in transit");
  return zone->second->ApplyStaff(order, std::move(done));
}

void WorldHost::Staff(StaffOrder order) {
  if (order.kind == StaffKind::kLocate && order.target.empty()) {
    // goto <room>: no one else is involved.
    StaffOutcome outcome;
    outcome.room = order.room;
    outcome.text = "You go to " + order.room.ToString() + ".";
    return FinishStaff(order, std::move(outcome));
  }
  auto done = [this, order](StaffOutcome outcome) { FinishStaff(order, std::move(outcome)); };
  const Status here = ApplyStaff(order, done);
  if (here.ok()) return;
  if (here.code() == StatusCode::kNotFound && comms_ != nullptr) {
    // Not here: perhaps on another world, whose host applies it the same way.
    return comms_->Staff(order, std::move(done));
  }
  StaffOutcome outcome;
  outcome.status = here;
  outcome.text = here.code() == StatusCode::kNotFound
                     ? "Nobody called '" + order.target + "' is online."
                     : order.target + " cannot be reached right now; try again.";
  FinishStaff(order, std::move(outcome));
}

Status WorldHost::CheckReceivedStaff(StaffOrder* order) const {
  if (order->reason.size() > limits::kStaffReasonBytesMax) {
    order->reason = std::string(Utf8Prefix(order->reason, limits::kStaffReasonBytesMax));
  }
  if (order->kind == StaffKind::kMute) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deps_.clock->WallNow().time_since_epoch())
                            .count();
    constexpr int64_t kLongestMs =
        limits::kStaffMuteMinutesMax * 60'000 + limits::kStaffClockSkewMsMax;
    // As a difference from now, so an instant near INT64_MAX cannot wrap the comparison.
    if (order->mute_until_unix_ms > now && order->mute_until_unix_ms - now > kLongestMs) {
      return Status::InvalidArgument("mute longer than " +
                                     std::to_string(limits::kStaffMuteMinutesMax) + " minutes");
    }
  }
  if (order->kind == StaffKind::kTransfer) {
    const std::shared_ptr<const Pack> current = pack();
    if (order->room.empty() || current->FindRoom(order->room) == nullptr) {
      return Status::InvalidArgument("no room " + order->room.ToString() + " in this world");
    }
  }
  return Status::Ok();
}

void WorldHost::AuditReceivedStaff(const StaffOrder& order, const std::string& target,
                                   const Status& result) {
  AuditRecord record;
  record.actor = order.issuer;
  record.action = std::string(StaffKindName(order.kind));
  record.target = target;
  std::string detail = result.ok() ? "applied" : "refused: " + result.ToString();
  detail += "; from world " + (order.origin_world.empty() ? "?" : order.origin_world);
  if (!order.reason.empty()) detail += "; reason: " + order.reason;
  if (order.kind == StaffKind::kMute) {
    detail += "; until_unix_ms " + std::to_string(order.mute_until_unix_ms);
  }
  record.detail = std::move(detail);
  Audit(std::move(record));
}

void WorldHost::SetRoles(const std::string& name_key, Roles roles) {
  std::lock_guard<std::mutex> lock(mu_);
  auto player = roster_.find(name_key);
  if (player == roster_.end()) return;
  auto zone = zones_.find(player->second.zone);
  if (zone == zones_.end()) return;
  (void)zone->second->SetRoles(name_key, roles);
}

void WorldHost::FinishStaff(const StaffOrder& order, StaffOutcome outcome) {
  const std::string issuer_key = NameKey(order.issuer);
  if (order.kind == StaffKind::kLocate && outcome.status.ok() && !outcome.room.empty()) {
    Teleport(issuer_key, outcome.room);
  }
  (void)Notify(issuer_key, outcome.text);
  AuditRecord record;
  record.actor = order.issuer;
  record.action = std::string(StaffKindName(order.kind));
  record.target = !outcome.target_name.empty() ? outcome.target_name
                  : !order.target.empty()      ? order.target
                                               : order.room.ToString();
  // No answer in time (or the bus lost mid-request) does not mean the order failed: the far
  // world may have applied it and its answer been lost. The trail says so (style rule 8).
  const StatusCode code = outcome.status.code();
  const bool unknown = code == StatusCode::kDeadlineExceeded || code == StatusCode::kCancelled;
  std::string detail = outcome.status.ok() ? "ok"
                       : unknown           ? "unknown outcome: " + outcome.status.ToString()
                                           : "failed: " + outcome.status.ToString();
  if (!order.reason.empty()) detail += "; reason: " + order.reason;
  if (order.kind == StaffKind::kMute) {
    detail += "; until_unix_ms " + std::to_string(order.mute_until_unix_ms);
  }
  record.detail = std::move(detail);
  Audit(std::move(record));
}

void WorldHost::Teleport(const std::string& name_key, const Ref& room) {
  std::lock_guard<std::mutex> lock(mu_);
  auto player = roster_.find(name_key);
  if (player == roster_.end()) return;
  auto zone = zones_.find(player->second.zone);
  if (zone == zones_.end()) return;
  (void)zone->second->Teleport(name_key, room);
}

void WorldHost::Audit(AuditRecord record) {
  record.at_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deps_.clock->WallNow().time_since_epoch())
                          .count();
  record.world = world_id_;
  // Cut between characters: the store refuses invalid UTF-8, and a row refused for a split
  // character would leave the trail with the log line alone.
  // Every field, since a refused order from another world names whomever its sender wrote.
  for (std::string* field : {&record.actor, &record.action, &record.target, &record.detail}) {
    if (field->size() > limits::kAuditDetailBytesMax) {
      *field = std::string(Utf8Prefix(*field, limits::kAuditDetailBytesMax));
    }
  }
  // The log line is written whatever becomes of the durable row.
  deps_.logger->Info("audit: staff action", {{"actor", record.actor},
                                             {"action", record.action},
                                             {"target", record.target},
                                             {"detail", record.detail},
                                             {"world", record.world},
                                             {"at_unix_ms", record.at_unix_ms}});
  if (audit_ != nullptr) audit_->Record(std::move(record));
}

Status WorldHost::DeliverTell(const std::string& from, const std::string& to_key,
                              const std::string& text, std::string* display_name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto target = roster_.find(to_key);
  if (target == roster_.end()) return Status::NotFound("not online here");
  *display_name = target->second.name;
  HeldOp op{.kind = HeldOp::Kind::kTell, .from = from, .text = text};
  if (Status held; HoldDuringReloadLocked(to_key, op, &held)) return held;
  auto zone = zones_.find(target->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("in transit");
  return zone->second->DeliverTell(from, target->first, text);
}

Status WorldHost::Notify(const std::string& name_key, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  auto player = roster_.find(name_key);
  if (player == roster_.end()) return Status::NotFound("not online here");
  HeldOp op{.kind = HeldOp::Kind::kNotice, .text = text};
  if (Status held; HoldDuringReloadLocked(name_key, op, &held)) return held;
  auto zone = zones_.find(player->second.zone);
  if (zone == zones_.end()) return Status::Unavailable("in transit");
  return zone->second->DeliverNotice(name_key, text);
}

void WorldHost::Channel(const std::string& channel, const std::string& from,
                        const std::string& text) {
  DeliverChannel(channel, from, text);
  if (comms_ != nullptr && !comms_->Channel(channel, from, text)) {
    (void)Notify(NameKey(from),
                 "Only players on this shard heard that: the rest of the world cannot be reached "
                 "right now.");
  }
}

bool WorldHost::Announce(const std::string& zone, const std::string& text) {
  DeliverAnnouncement(zone, text);
  return broadcasts_ == nullptr || broadcasts_->Broadcast(zone, text);
}

void WorldHost::DeliverAnnouncement(const std::string& zone, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (zone.empty()) {
    for (const auto& [id, running] : zones_) (void)running->DeliverAnnouncement(text);
    return;
  }
  if (auto it = zones_.find(zone); it != zones_.end()) (void)it->second->DeliverAnnouncement(text);
}

void WorldHost::DeliverToZonesOfKind(ZoneKind kind, const std::string& text,
                                     const OutputEvent& event) {
  const std::shared_ptr<const Pack> pack = this->pack();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, running] : zones_) {
    const ZoneDef* def = pack->FindZone(id);
    if (def != nullptr && def->kind == kind) (void)running->DeliverBroadcast(text, event);
  }
}

void WorldHost::DeliverChannel(const std::string& channel, const std::string& from,
                               const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, zone] : zones_) (void)zone->DeliverChannel(channel, from, text);
}

std::vector<WhoEntry> WorldHost::Who() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WhoEntry> who;
  for (const auto& [key, entry] : roster_) {
    who.push_back({entry.name, entry.level, entry.zone, entry.race, entry.char_class});
  }
  return who;
}

bool WorldHost::IsRunning(const std::string& zone_id) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (zones_.count(zone_id) != 0) return true;
  }
  return fleet_ != nullptr && fleet_->IsRemote(zone_id);
}

void WorldHost::Forward(const std::string& name_key, std::string line, int hops) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = roster_.find(name_key);
  if (it == roster_.end()) return;
  // The player's zone is being rebuilt and they are not back in it yet: keep the line for
  // when they are, rather than bouncing it until it is dropped.
  HeldOp op{.kind = HeldOp::Kind::kLine, .text = std::move(line)};
  if (Status held; HoldDuringReloadLocked(name_key, op, &held)) {
    if (!held.ok()) {
      deps_.logger->Warn("command dropped: too many lines held during a reload",
                         {{"player", name_key}, {"zone", it->second.zone}});
    }
    return;
  }
  line = std::move(op.text);
  if (hops >= static_cast<int>(limits::kRouteHopsMax)) {
    deps_.logger->Warn("command dropped after re-routing", {{"player", name_key}});
    return;
  }
  auto zone = zones_.find(it->second.zone);
  if (zone != zones_.end()) (void)zone->second->Command(name_key, std::move(line), hops + 1);
}

void WorldHost::Departed(const std::string& name_key) {
  std::string zone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = roster_.find(name_key);
    if (it == roster_.end()) return;
    zone = it->second.zone;
    roster_.erase(it);
  }
  if (fleet_ != nullptr) fleet_->Quit(name_key, zone);
}

// ------------------------------------------------------------------ content hot reload

namespace {

// What a player whose room the new pack removed is told, after the room they land in.
constexpr std::string_view kRoomGoneLine =
    "The world shifts around you: the place where you stood is gone, and you find yourself "
    "here.";

}  // namespace

Status WorldHost::Reload(std::shared_ptr<const Pack> next, std::function<void(ReloadReport)> done) {
  struct Pending {
    std::mutex mu;
    size_t zones_left = 0;
    ReloadReport report;
    std::function<void(ReloadReport)> done;
  };
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  // Old zone -> its replacement, for the zones rebuilt here.
  std::vector<std::pair<std::shared_ptr<Zone>, std::shared_ptr<Zone>>> swaps;
  std::vector<std::string> changed;
  std::map<std::string, std::shared_ptr<Executor>> to_build;  // running changed zone -> executor
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reloads_refused_) {
      return Status::Unavailable("this world is stopping: no content reload now");
    }
    if (!reloading_.empty() || building_) {
      return Status::Unavailable("a content reload is still rebuilding zones here");
    }
    Result<PackDiff> diff = DiffPacks(*pack_, *next);
    if (!diff.ok()) return diff.status();
    changed = diff->changed_zones;
    for (const std::string& zone_id : changed) {
      if (zones_.count(zone_id) != 0) to_build[zone_id] = executors_(zone_id);
    }
    building_ = true;  // pack_ stays as it is until the swap below: no other reload meanwhile
  }
  // Making a zone (rooms, mobs, a Lua VM running its scripts, a first reset) takes a while: out
  // of the lock, so that routing, logins and input for every zone go on meanwhile.
  std::map<std::string, std::shared_ptr<Zone>> built;
  for (auto& [zone_id, executor] : to_build) {
    built[zone_id] = Zone::Create(next, zone_id, MixSeed(seed_, zone_id), deps_, executor);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    building_ = false;
    if (reloads_refused_) {
      // A stop began while the zones were built: it stops the zones running now; the ones
      // built (never started) are dropped and nothing changed.
      return Status::Unavailable("this world began stopping during the reload; nothing changed");
    }
    pack_ = next;
    for (const std::string& zone_id : changed) {
      auto it = zones_.find(zone_id);
      if (it == zones_.end()) continue;  // not hosted here: it starts from `next` when it does
      std::shared_ptr<Zone>& rebuilt = built[zone_id];
      if (rebuilt == nullptr) {
        // Started (from the old pack) while the others were built: built here, the rare case.
        rebuilt = Zone::Create(next, zone_id, MixSeed(seed_, zone_id), deps_, executors_(zone_id));
      }
      // The replacement takes the old one's place at once: from here on, input, tells and
      // arrivals for the zone reach the new zone, and what reaches players not yet back is held.
      reloading_[zone_id];
      swaps.emplace_back(it->second, rebuilt);
      it->second = rebuilt;
      pending->report.rebuilt.push_back(zone_id);
      rebuilt->Start(HeartbeatPhase(zones_started_++));
    }
    pending->zones_left = swaps.size();
  }
  if (swaps.empty()) {
    pending->done(pending->report);
    return Status::Ok();
  }
  for (auto& [old_zone, rebuilt] : swaps) {
    old_zone->Stop([this, pending, rebuilt = rebuilt](std::vector<PlayerTransfer> players) {
      ReloadReport part;
      ReadmitAfterReload(rebuilt->id(), rebuilt, std::move(players), &part);
      std::function<void(ReloadReport)> finish;
      ReloadReport report;
      {
        std::lock_guard<std::mutex> lock(pending->mu);
        pending->report.players += part.players;
        pending->report.relocated += part.relocated;
        if (--pending->zones_left == 0) {
          finish = std::move(pending->done);
          report = pending->report;
        }
      }
      if (finish) finish(std::move(report));
    });
  }
  return Status::Ok();
}

void WorldHost::RefuseReloads() {
  std::lock_guard<std::mutex> lock(mu_);
  reloads_refused_ = true;
}

void WorldHost::ReadmitAfterReload(const std::string& zone_id, const std::shared_ptr<Zone>& zone,
                                   std::vector<PlayerTransfer> players, ReloadReport* report) {
  std::vector<std::function<void()>> after;  // freezes that found nobody: run without mu_
  std::function<void(std::vector<PlayerTransfer>)> stop;
  std::shared_ptr<Zone> to_stop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Rebuild rebuild = std::move(reloading_[zone_id]);
    reloading_.erase(zone_id);
    for (PlayerTransfer& player : players) {
      const std::string key = NameKey(player.state.name);
      ++report->players;
      if (pack_->FindRoom(player.state.room) == nullptr) {
        // The zone places an unknown room at its start room; the player is told why.
        ++report->relocated;
        player.arrival.emplace_back(kRoomGoneLine);
      }
      Status admitted = zone->TryAdmit(player);
      if (admitted.ok()) continue;
      // The new zone's inbox is full: the player was saved when frozen; put them wherever the
      // host can (the start room) rather than lose them.
      deps_.logger->Warn("reload: rebuilt zone refused a player; trying the start room",
                         {{"player", key}, {"zone", zone_id}, {"status", admitted.ToString()}});
      player.state.room = Ref{};
      if (Status s = AdmitLocked(std::move(player)); !s.ok()) {
        deps_.logger->Error("reload: player could not be admitted anywhere; saved and dropped",
                            {{"player", key}, {"status", s.ToString()}});
        roster_.erase(key);
        if (fleet_ != nullptr) fleet_->Quit(key, zone_id);
      }
    }
    // What reached them meanwhile goes, in order, after their admission to wherever they are
    // now (the rebuilt zone, a start room elsewhere, or a zone they walked into meanwhile).
    for (auto& [key, ops] : rebuild.held) {
      std::shared_ptr<Zone> target;
      if (auto player = roster_.find(key); player != roster_.end()) {
        if (auto running = zones_.find(player->second.zone); running != zones_.end()) {
          target = running->second;
        }
      }
      for (HeldOp& op : ops) {
        Status applied = Status::NotFound(key + " is not online");
        switch (op.kind) {
          case HeldOp::Kind::kLine:
            if (target) applied = target->Command(key, std::move(op.text));
            break;
          case HeldOp::Kind::kTell:
            if (target) applied = target->DeliverTell(op.from, key, op.text);
            break;
          case HeldOp::Kind::kNotice:
            if (target) applied = target->DeliverNotice(key, op.text);
            break;
          case HeldOp::Kind::kParty:
            if (target) applied = target->DeliverParty(key, std::move(op.party));
            break;
          case HeldOp::Kind::kFreeze:
            if (target) applied = target->Freeze(key, op.freeze_done);
            if (!applied.ok()) {
              after.push_back([done = std::move(op.freeze_done), applied] { done(applied); });
            }
            break;
        }
      }
    }
    if (rebuild.stop) {
      // A stop asked for during the rebuild: the players are in the rebuilt zone's inbox now,
      // and the zone's stop applies its inbox before it freezes everyone.
      stop = std::move(rebuild.stop);
      if (auto running = zones_.find(zone_id); running != zones_.end() && running->second == zone) {
        to_stop = zone;
        zones_.erase(running);
      }
    }
  }
  for (std::function<void()>& fail : after) fail();
  if (stop) {
    if (to_stop) {
      StopRemoved(to_stop, std::move(stop));
    } else {
      stop({});
    }
  }
  deps_.logger->Info("reload: zone rebuilt",
                     {{"zone", zone_id},
                      {"players", static_cast<int64_t>(report->players)},
                      {"relocated", static_cast<int64_t>(report->relocated)}});
}

namespace {
// A character can change zone (walk, die and respawn) between the roster lookup and the
// freeze; the freeze then misses and is tried again where the roster now says it is.
constexpr int kRemoveAttemptsMax = limits::kRemovePlayerAttemptsMax;
}  // namespace

void WorldHost::RemovePlayer(const std::string& name, std::function<void()> done) {
  RemoveAttempt(NameKey(name), std::make_shared<std::function<void()>>(std::move(done)), 0);
}

void WorldHost::RemoveAttempt(const std::string& name_key,
                              std::shared_ptr<std::function<void()>> done, int attempt) {
  const Status s =
      FreezePlayer(name_key, [this, name_key, done, attempt](Result<PlayerTransfer> transfer) {
        if (!transfer.ok() && ZoneOf(name_key) && attempt + 1 < kRemoveAttemptsMax) {
          return RemoveAttempt(name_key, done, attempt + 1);
        }
        (*done)();
      });
  if (!s.ok()) (*done)();  // not online (or its zone is gone): nothing to take out
}

}  // namespace telos::world
