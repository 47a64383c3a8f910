// Staff commands (issue 30): goto, transfer, boot (the kick), mute, unmute, stat. Each
// names its role in its CommandSpec, so the dispatcher refuses it to anyone without that role
// before any of this code runs. The target may play in any zone of any world: the order goes to the
// router (WorldHost::Staff), which applies it where the target is, tells the issuer the outcome and
// writes the audit record. What is applied to the target happens in ZoneCore::ApplyStaff, on
// the target's zone.
#include <charconv>
#include <string>
#include <string_view>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

// The order a staff command sends, with the issuer filled in.
StaffOrder OrderFrom(const CommandContext& c, StaffKind kind, std::string_view target) {
  StaffOrder order;
  order.kind = kind;
  order.issuer = c.actor.name;
  order.issuer_roles = c.actor.roles;
  order.target = std::string(target);
  return order;
}

// False (and the issuer told why) for a reason too long to keep.
bool ReasonOk(CommandContext& c, std::string_view reason) {
  if (reason.size() <= limits::kStaffReasonBytesMax) return true;
  c.zone.Send(c.actor, "That reason is too long (at most " +
                           std::to_string(limits::kStaffReasonBytesMax) + " characters).");
  return false;
}

bool NotSelf(CommandContext& c, std::string_view target) {
  if (NameKey(target) != c.actor.key) return true;
  c.zone.Send(c.actor, "Not on yourself.");
  return false;
}

void Goto(CommandContext& c) {
  if (c.args.empty()) {
    c.zone.Send(c.actor, "Go to whom or where? Usage: goto <player> | goto <zone:room>");
    return;
  }
  // A room reference (zone:room, or a room of this zone) goes straight there; anything else
  // is a player's name, looked up wherever they play.
  const std::string word(SplitWord(c.args).first);
  std::optional<Ref> room = ParseRef(Lower(word), c.zone.zone_id());
  if (room && c.zone.pack().FindRoom(*room) != nullptr) {
    StaffOrder order = OrderFrom(c, StaffKind::kLocate, "");
    order.room = *room;
    c.zone.deps().router->Staff(std::move(order));
    return;
  }
  if (!NotSelf(c, word)) return;
  c.zone.deps().router->Staff(OrderFrom(c, StaffKind::kLocate, word));
}

void Transfer(CommandContext& c) {
  auto [target, rest] = SplitWord(c.args);
  if (target.empty()) {
    c.zone.Send(c.actor, "Bring whom? Usage: transfer <player>");
    return;
  }
  if (!NotSelf(c, target) || c.actor.room < 0) return;
  StaffOrder order = OrderFrom(c, StaffKind::kTransfer, target);
  order.room = c.zone.room(c.actor.room).ref;
  c.zone.deps().router->Staff(std::move(order));
}

void Kick(CommandContext& c) {
  auto [target, reason] = SplitWord(c.args);
  if (target.empty()) {
    c.zone.Send(c.actor, "Boot whom? Usage: boot <player> [reason]");
    return;
  }
  if (!NotSelf(c, target) || !ReasonOk(c, reason)) return;
  StaffOrder order = OrderFrom(c, StaffKind::kKick, target);
  order.reason = std::string(reason);
  c.zone.deps().router->Staff(std::move(order));
}

void Mute(CommandContext& c) {
  auto [target, rest] = SplitWord(c.args);
  auto [minutes_word, reason] = SplitWord(rest);
  int64_t minutes = 0;
  const auto parsed =
      std::from_chars(minutes_word.data(), minutes_word.data() + minutes_word.size(), minutes);
  if (target.empty() || minutes_word.empty() || parsed.ec != std::errc() ||
      parsed.ptr != minutes_word.data() + minutes_word.size() || minutes < 1 ||
      minutes > limits::kStaffMuteMinutesMax) {
    c.zone.Send(c.actor, "Usage: mute <player> <minutes, 1 to " +
                             std::to_string(limits::kStaffMuteMinutesMax) + "> [reason]");
    return;
  }
  if (!NotSelf(c, target) || !ReasonOk(c, reason)) return;
  StaffOrder order = OrderFrom(c, StaffKind::kMute, target);
  order.mute_until_unix_ms = c.zone.WallUnixMs() + minutes * 60'000;
  order.reason = std::string(reason);
  c.zone.deps().router->Staff(std::move(order));
}

void Unmute(CommandContext& c) {
  auto [target, rest] = SplitWord(c.args);
  if (target.empty()) {
    c.zone.Send(c.actor, "Unmute whom? Usage: unmute <player>");
    return;
  }
  c.zone.deps().router->Staff(OrderFrom(c, StaffKind::kUnmute, target));
}

// The state of a player or mob, as the lines `stat` shows.
std::string StatText(ZoneCore& zone, const Actor& a) {
  std::string out =
      a.Display() +
      (a.is_player ? " (player)" : " (mob " + (a.def ? a.def->ref.ToString() : "?") + ")");
  out += "\n  level " + std::to_string(a.level) + ", exp " + std::to_string(a.exp);
  out += "\n  hp " + std::to_string(a.hp) + "/" + std::to_string(a.max_hp) + ", mana " +
         std::to_string(a.mana) + "/" + std::to_string(a.max_mana) + ", moves " +
         std::to_string(a.moves) + "/" + std::to_string(a.max_moves);
  out += "\n  position " + std::string(PositionName(a.position)) +
         (a.fighting != 0 ? ", fighting" : "");
  out += "\n  room " + (a.room >= 0 ? zone.room(a.room).ref.ToString() : std::string("none"));
  out += "\n  gold " + std::to_string(a.gold) + ", bank " + std::to_string(a.bank) + ", items " +
         std::to_string(a.inventory.size());
  if (a.is_player) {
    out += "\n  roles " + RoleNames(a.roles);
    const int64_t now = zone.WallUnixMs();
    if (a.muted_until_unix_ms > now) {
      out += ", muted for " + std::to_string(MinutesLeft(a.muted_until_unix_ms, now)) +
             " more minutes";
    }
  }
  return out;
}

void Stat(CommandContext& c) {
  const std::string word(SplitWord(c.args).first);
  if (word.empty()) {
    c.zone.Send(c.actor, "Stat whom? Usage: stat <player or mob>");
    return;
  }
  // A mob (or a player) in the room is shown at once; a player anywhere else is asked for.
  if (Actor* here = c.zone.FindInRoom(c.actor, word); here != nullptr) {
    const std::string text = StatText(c.zone, *here);
    for (std::string_view rest = text; !rest.empty();) {
      const size_t end = rest.find('\n');
      c.zone.Send(c.actor, rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    AuditRecord record;
    record.actor = c.actor.name;
    record.action = "stat";
    record.target = here->name;
    c.zone.deps().router->Audit(std::move(record));
    return;
  }
  c.zone.deps().router->Staff(OrderFrom(c, StaffKind::kStat, word));
}

}  // namespace

std::string_view StaffKindName(StaffKind kind) {
  switch (kind) {
    case StaffKind::kKick: return "kick";
    case StaffKind::kMute: return "mute";
    case StaffKind::kUnmute: return "unmute";
    case StaffKind::kTransfer: return "transfer";
    case StaffKind::kStat: return "stat";
    case StaffKind::kLocate: return "goto";
  }
  return "unknown";
}

Roles StaffRoleFor(StaffKind kind) {
  switch (kind) {
    case StaffKind::kKick:
    case StaffKind::kMute:
    case StaffKind::kUnmute:
    case StaffKind::kTransfer:
    case StaffKind::kStat:
    case StaffKind::kLocate: return kRoleAdmin;
  }
  return kRoleAdmin;
}

int64_t MinutesLeft(int64_t until_unix_ms, int64_t now_unix_ms) {
  if (until_unix_ms <= now_unix_ms) return 0;
  // The difference as unsigned: until - now + 59'999 in int64 wraps for a far instant.
  const uint64_t left_ms =
      static_cast<uint64_t>(until_unix_ms) - static_cast<uint64_t>(now_unix_ms);
  return static_cast<int64_t>(left_ms / 60'000 + (left_ms % 60'000 != 0 ? 1 : 0));
}

int64_t ZoneCore::WallUnixMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             deps_.clock->WallNow().time_since_epoch())
      .count();
}

bool ZoneCore::RefuseMuted(Actor& actor) {
  if (actor.muted_until_unix_ms == 0) return false;
  const int64_t now = WallUnixMs();
  if (actor.muted_until_unix_ms <= now) {
    actor.muted_until_unix_ms = 0;  // lapsed: speak freely again
    return false;
  }
  const int64_t minutes = MinutesLeft(actor.muted_until_unix_ms, now);
  Send(actor, "You are muted for " + std::to_string(minutes) + " more minute" +
                  (minutes == 1 ? "" : "s") + ".");
  return true;
}

StaffOutcome ZoneCore::ApplyStaff(const StaffOrder& order) {
  StaffOutcome outcome;
  Actor* target = FindPlayerMutable(NameKey(order.target));
  if (target == nullptr) {
    outcome.status = Status::NotFound("not in zone " + zone_.id);
    outcome.text = "Nobody called '" + order.target + "' is online.";
    return outcome;
  }
  outcome.target_name = target->name;
  const std::string why = order.reason.empty() ? "." : ": " + order.reason;
  switch (order.kind) {
    case StaffKind::kKick:
      Send(*target, order.issuer + " has removed you from the game" + why);
      outcome.text = "You remove " + target->name + " from the game.";
      QuitPlayer(*target);  // saved, then the connection is closed
      break;
    case StaffKind::kMute: {
      target->muted_until_unix_ms = order.mute_until_unix_ms;
      const int64_t minutes = MinutesLeft(order.mute_until_unix_ms, WallUnixMs());
      Send(*target,
           order.issuer + " has muted you for " + std::to_string(minutes) + " minutes" + why);
      MarkUrgent(*target);
      Save(*target, SaveReason::kPeriodic);  // a mute outlives a crash, not only a quit
      outcome.text = "You mute " + target->name + " for " + std::to_string(minutes) + " minutes.";
      break;
    }
    case StaffKind::kUnmute:
      target->muted_until_unix_ms = 0;
      Send(*target, order.issuer + " has lifted your mute.");
      MarkUrgent(*target);
      Save(*target, SaveReason::kPeriodic);
      outcome.text = "You unmute " + target->name + ".";
      break;
    case StaffKind::kTransfer:
      outcome.text = "You bring " + target->name + " to you.";
      Send(*target, order.issuer + " summons you.");
      if (target->room >= 0) ToRoom(target->room, target->Display() + " vanishes.", target->id);
      SendPlayerTo(*target, order.room, {});
      break;
    case StaffKind::kStat: outcome.text = StatText(*this, *target); break;
    case StaffKind::kLocate:
      if (target->room >= 0) outcome.room = rooms_[static_cast<size_t>(target->room)].ref;
      outcome.text = "You go to " + target->name + ".";
      break;
  }
  return outcome;
}

void ZoneCore::Teleport(const std::string& key, const Ref& to) {
  Actor* actor = FindPlayerMutable(key);
  if (actor == nullptr || to.empty()) return;
  if (actor->room >= 0) ToRoom(actor->room, actor->Display() + " vanishes.", actor->id);
  SendPlayerTo(*actor, to, {});
  MarkUrgent(*actor);
}

void ZoneCore::SetRoles(const std::string& key, Roles roles) {
  Actor* actor = FindPlayerMutable(key);
  if (actor != nullptr) actor->roles = roles;
}

void RegisterStaffCommands(CommandRegistry& r) {
  r.Add({"goto",
         {},
         Position::kResting,
         "goto <player> | goto <zone:room>",
         "Staff: goes to a player, wherever they play, or to a room.",
         Goto,
         false,
         kRoleAdmin});
  r.Add({"transfer",
         {},
         Position::kResting,
         "transfer <player>",
         "Staff: brings a player, wherever they play, to your room.",
         Transfer,
         false,
         kRoleAdmin});
  // "boot", not "kick": kick is a warrior's skill (content game.toml).
  r.Add({"boot",
         {},
         Position::kSleeping,
         "boot <player> [reason]",
         "Staff: removes a player from the game (saved; they may log in again).",
         Kick,
         false,
         kRoleAdmin});
  r.Add({"mute",
         {},
         Position::kSleeping,
         "mute <player> <minutes> [reason]",
         "Staff: stops a player from saying, emoting, telling and using channels for a while.",
         Mute,
         false,
         kRoleAdmin});
  r.Add({"unmute",
         {},
         Position::kSleeping,
         "unmute <player>",
         "Staff: lifts a mute.",
         Unmute,
         false,
         kRoleAdmin});
  r.Add({"stat",
         {},
         Position::kSleeping,
         "stat <player or mob>",
         "Staff: shows a player's (anywhere) or a mob's (in your room) state.",
         Stat,
         false,
         kRoleAdmin});
}

}  // namespace telos::world
