// Parties: the `group` command, party chat (`gtell`), following, and what a member's zone does
// with the party messages other members' zones send it. party.h explains where a party lives
// and how the copies heal; the leader's zone is the only one that changes membership.
#include <algorithm>
#include <boost/json.hpp>

#include "commands/registry.h"
#include "telos/base/utf8.h"
#include "zone_core.h"

namespace telos::world {
namespace {

namespace json = boost::json;
using Op = PartyMessage::Op;

bool IsLeader(const Actor& actor) {
  return !actor.party.empty() && NameKey(actor.party.leader) == actor.key;
}

// The member of `party` called `word` (any case), as the roster spells it; empty when none.
std::string MemberNamed(const PartyState& party, std::string_view word) {
  const std::string key = NameKey(word);
  for (const std::string& member : party.members) {
    if (NameKey(member) == key) return member;
  }
  return "";
}

void Remove(std::vector<std::string>& names, std::string_view name) {
  const std::string key = NameKey(name);
  std::erase_if(names, [&](const std::string& n) { return NameKey(n) == key; });
}

// A word that could name a character: the gate's name rules are stricter, this only keeps
// what cannot be a name (empty, too long, spaces and punctuation) from going anywhere.
bool PlausibleName(std::string_view word) {
  if (word.empty() || word.size() > limits::kCharacterNameBytesMax) return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

std::string Possessive(const std::string& name) {
  return name + "'s";
}

void ClearParty(Actor& actor) {
  actor.party = PartyState{};
  actor.following.clear();
}

// A party of one with nobody invited is no party: the leader's copy is dropped (a refused or
// failed first invitation, the last other member leaving). True when it was.
bool DissolveIfAlone(ZoneCore& zone, Actor& leader) {
  if (!IsLeader(leader) || leader.party.members.size() > 1 || !leader.party.invited.empty()) {
    return false;
  }
  const bool had_members = leader.party.version > 1;
  ClearParty(leader);
  if (had_members) zone.Send(leader, "{y}With nobody else left, your party disbands.{x}");
  return true;
}

void ShowParty(ZoneCore& zone, Actor& actor) {
  if (actor.party.empty()) {
    zone.Send(actor, "You are not in a party. 'group invite <player>' starts one.");
    return;
  }
  const PartyState& party = actor.party;
  zone.Send(actor, Possessive(party.leader) + " party (" + std::to_string(party.members.size()) +
                       " of " + std::to_string(limits::kPartyMembersMax) + "):");
  for (const std::string& member : party.members) {
    std::string line = "  " + member;
    if (NameKey(member) == NameKey(party.leader)) line += " (leader)";
    if (NameKey(member) == actor.key) line += " (you)";
    if (!actor.following.empty() && NameKey(member) == NameKey(actor.following)) {
      line += " (you follow them)";
    }
    zone.Send(actor, line);
  }
  if (!party.invited.empty()) {
    std::string line = "Invited:";
    for (const std::string& name : party.invited) line += " " + name;
    zone.Send(actor, line);
  }
}

void Invite(ZoneCore& zone, Actor& actor, std::string_view who) {
  if (who.empty()) {
    zone.Send(actor, "Invite whom? Usage: group invite <player>");
    return;
  }
  if (!PlausibleName(who)) {
    zone.Send(actor, "There is no player called '" + std::string(who) + "'.");
    return;
  }
  if (NameKey(who) == actor.key) {
    zone.Send(actor, "You are always in your own company.");
    return;
  }
  if (!actor.party.empty() && !IsLeader(actor)) {
    zone.Send(actor, "Only the party leader (" + actor.party.leader + ") can invite.");
    return;
  }
  if (actor.party.Has(who)) {
    zone.Send(actor, MemberNamed(actor.party, who) + " is already in your party.");
    return;
  }
  if (actor.party.members.size() >= limits::kPartyMembersMax) {
    zone.Send(actor,
              "Your party is full (" + std::to_string(limits::kPartyMembersMax) + " members).");
    return;
  }
  const std::string key = NameKey(who);
  const bool again = std::any_of(actor.party.invited.begin(), actor.party.invited.end(),
                                 [&](const std::string& name) { return NameKey(name) == key; });
  if (!again && actor.party.invited.size() >= limits::kPartyInvitesMax) {
    zone.Send(actor, "You have " + std::to_string(limits::kPartyInvitesMax) +
                         " invitations waiting already; wait for answers first.");
    return;
  }
  if (actor.party.empty()) {
    // A solo player's first invitation founds the party, with them as its leader.
    actor.party.id = actor.key + "." + std::to_string(zone.NowMs());
    actor.party.leader = actor.name;
    actor.party.members = {actor.name};
    actor.party.version = 1;
  }
  if (!again) actor.party.invited.emplace_back(who);
  PartyState roster = actor.party;
  roster.invited.clear();
  zone.SendParty(actor, std::string(who),
                 PartyMessage{.op = Op::kInvite, .party_id = actor.party.id, .roster = roster});
  zone.Send(actor, "You invite " + std::string(who) + " to join your party.");
}

void Accept(ZoneCore& zone, Actor& actor) {
  PartyInvite invite = actor.party_invite;
  if (invite.party_id.empty()) {
    zone.Send(actor, "Nobody has invited you to a party.");
    return;
  }
  if (invite.expires_ms <= zone.NowMs()) {
    actor.party_invite = PartyInvite{};
    zone.Send(actor, "The invitation from " + invite.from + " has expired.");
    return;
  }
  if (!actor.party.empty()) {
    zone.Send(actor, "You are already in " + Possessive(actor.party.leader) +
                         " party; 'group leave' first.");
    return;
  }
  actor.party_invite = PartyInvite{};
  // The leader's zone adds them and sends the roster, which is what makes them a member.
  zone.SendParty(actor, invite.from, PartyMessage{.op = Op::kJoin, .party_id = invite.party_id});
  zone.Send(actor, "You accept " + Possessive(invite.from) + " invitation.");
}

void Decline(ZoneCore& zone, Actor& actor) {
  PartyInvite invite = actor.party_invite;
  if (invite.party_id.empty()) {
    zone.Send(actor, "Nobody has invited you to a party.");
    return;
  }
  actor.party_invite = PartyInvite{};
  zone.SendParty(actor, invite.from,
                 PartyMessage{.op = Op::kRefused,
                              .party_id = invite.party_id,
                              .text = actor.Display() + " declines your invitation."});
  zone.Send(actor, "You decline " + Possessive(invite.from) + " invitation.");
}

// Takes `actor` out of their party, telling whoever must know; `quitting` words it for a quit.
void Leave(ZoneCore& zone, Actor& actor, bool quitting) {
  if (actor.party.empty()) {
    if (!quitting) zone.Send(actor, "You are not in a party.");
    return;
  }
  PartyState party = actor.party;
  const std::string leader = party.leader;
  if (IsLeader(actor)) {
    Remove(party.members, actor.name);
    if (party.members.size() == 1) {
      zone.SendParty(actor, party.members.front(),
                     PartyMessage{.op = Op::kDisband, .party_id = party.id});
    } else if (!party.members.empty()) {
      // The next member to have joined leads now; the roster tells everyone.
      party.leader = party.members.front();
      party.invited.clear();
      ++party.version;
      const std::string what = actor.Display() + (quitting ? " has left the world" : " leaves") +
                               "; " + party.leader + " leads the party now.";
      for (const std::string& member : party.members) {
        zone.SendParty(
            actor, member,
            PartyMessage{.op = Op::kRoster, .party_id = party.id, .text = what, .roster = party});
      }
    }
  } else {
    zone.SendParty(actor, party.leader, PartyMessage{.op = Op::kLeave, .party_id = party.id});
  }
  ClearParty(actor);
  if (!quitting) zone.Send(actor, "You leave " + Possessive(leader) + " party.");
}

void Kick(ZoneCore& zone, Actor& actor, std::string_view who) {
  if (actor.party.empty()) {
    zone.Send(actor, "You are not in a party.");
    return;
  }
  if (!IsLeader(actor)) {
    zone.Send(actor, "Only the party leader (" + actor.party.leader + ") can remove members.");
    return;
  }
  if (who.empty()) {
    zone.Send(actor, "Remove whom? Usage: group kick <member>");
    return;
  }
  if (NameKey(who) == actor.key) {
    zone.Send(actor, "To leave your own party, type 'group leave'.");
    return;
  }
  const std::string member = MemberNamed(actor.party, who);
  if (member.empty()) {
    zone.Send(actor, std::string(who) + " is not in your party.");
    return;
  }
  Remove(actor.party.members, member);
  zone.SendParty(actor, member, PartyMessage{.op = Op::kKicked, .party_id = actor.party.id});
  zone.BroadcastRoster(actor, actor.Display() + " removes " + member + " from the party.");
  zone.Send(actor, "You remove " + member + " from the party.");
  DissolveIfAlone(zone, actor);
}

void Disband(ZoneCore& zone, Actor& actor) {
  if (actor.party.empty()) {
    zone.Send(actor, "You are not in a party.");
    return;
  }
  if (!IsLeader(actor)) {
    zone.Send(actor, "Only the party leader (" + actor.party.leader + ") can disband it.");
    return;
  }
  for (const std::string& member : actor.party.members) {
    if (NameKey(member) == actor.key) continue;
    zone.SendParty(actor, member, PartyMessage{.op = Op::kDisband, .party_id = actor.party.id});
  }
  ClearParty(actor);
  zone.Send(actor, "You disband your party.");
}

void Follow(ZoneCore& zone, Actor& actor, std::string_view who) {
  if (who.empty() || Lower(who) == "off" || Lower(who) == "none") {
    if (actor.following.empty()) {
      zone.Send(actor, "You are not following anyone.");
    } else {
      zone.Send(actor, "You stop following " + actor.following + ".");
      actor.following.clear();
    }
    return;
  }
  if (actor.party.empty()) {
    zone.Send(actor, "You can only follow members of your party, and you are not in one.");
    return;
  }
  if (NameKey(who) == actor.key) {
    zone.Send(actor, "You cannot follow yourself.");
    return;
  }
  const std::string member = MemberNamed(actor.party, who);
  if (member.empty()) {
    zone.Send(actor, std::string(who) + " is not in your party.");
    return;
  }
  actor.following = member;
  zone.Send(actor, "You now follow " + member + " wherever they walk.");
}

void PartyChat(ZoneCore& zone, Actor& actor, std::string_view text) {
  if (actor.party.empty()) {
    zone.Send(actor, "You are not in a party.");
    return;
  }
  if (text.empty()) {
    zone.Send(actor, "Say what to your party?");
    return;
  }
  for (const std::string& member : actor.party.members) {
    if (NameKey(member) == actor.key) continue;
    zone.SendParty(
        actor, member,
        PartyMessage{.op = Op::kChat, .party_id = actor.party.id, .text = std::string(text)});
  }
  zone.Send(actor, "{g}You tell the party, '" + std::string(text) + "'{x}");
}

void Group(CommandContext& c) {
  auto [sub, rest] = SplitWord(c.args);
  const std::string verb = Lower(sub);
  const std::string_view who = SplitWord(rest).first;
  if (verb.empty() || verb == "list") return ShowParty(c.zone, c.actor);
  if (verb == "invite") return Invite(c.zone, c.actor, who);
  if (verb == "accept" || verb == "join") return Accept(c.zone, c.actor);
  if (verb == "decline") return Decline(c.zone, c.actor);
  if (verb == "leave") return Leave(c.zone, c.actor, false);
  if (verb == "kick" || verb == "remove") return Kick(c.zone, c.actor, who);
  if (verb == "disband") return Disband(c.zone, c.actor);
  if (verb == "follow") return Follow(c.zone, c.actor, who);
  if (verb == "unfollow") return Follow(c.zone, c.actor, "");
  if (verb == "say" || verb == "tell") return PartyChat(c.zone, c.actor, rest);
  c.zone.Send(c.actor,
              "Unknown group command '" + std::string(sub) +
                  "'. Try: group [list], invite <player>, accept, decline, leave, kick <member>, "
                  "disband, follow <member>|off, say <text>.");
}

std::string PartyChatJson(std::string_view from, std::string_view text) {
  return json::serialize(json::object{{"channel", "party"},
                                      {"from", json::string(SanitizeUtf8(from))},
                                      {"text", json::string(SanitizeUtf8(text))}});
}

}  // namespace

// ---------------------------------------------------------------- the zone's half

void ZoneCore::SendParty(Actor& sender, const std::string& to, PartyMessage message) {
  message.from = sender.name;
  deps_.router->SendParty(to, std::move(message));
}

void ZoneCore::BroadcastRoster(Actor& leader, const std::string& what) {
  ++leader.party.version;
  PartyState roster = leader.party;
  roster.invited.clear();
  for (const std::string& member : leader.party.members) {
    if (NameKey(member) == leader.key) continue;
    SendParty(
        leader, member,
        PartyMessage{.op = Op::kRoster, .party_id = roster.id, .text = what, .roster = roster});
  }
}

void ZoneCore::LeavePartyOnQuit(Actor& player) {
  Leave(*this, player, true);
  player.party_invite = PartyInvite{};
}

void ZoneCore::WalkWithFollowers(Actor& actor, std::string_view dir) {
  struct Step {
    uint64_t id;
    int depth;
    std::string leads;  // whom this walker follows (empty for the first)
  };
  std::vector<Step> walkers = {{actor.id, 0, ""}};
  for (size_t i = 0; i < walkers.size(); ++i) {
    Actor* walker = FindActor(walkers[i].id);
    if (walker == nullptr || walker->removed || walker->room < 0) continue;
    const int from = walker->room;
    // Who follows this walker from the room they are leaving: gathered before the walk, which
    // may run scripts and take the walker out of the zone.
    std::vector<uint64_t> followers;
    for (Actor* other : room(from).players) {
      if (other != walker && !other->following.empty() &&
          NameKey(other->following) == walker->key && other->position == Position::kStanding) {
        followers.push_back(other->id);
      }
    }
    if (i == 0) {
      if (!Walk(*walker, dir)) {
        Send(*walker, "You cannot go that way.");
        return;
      }
    } else {
      Send(*walker, "You follow " + walkers[i].leads + ".");
      (void)Walk(*walker, dir);
    }
    // Followers go only if the walker really left the room (not stopped by exhaustion or a
    // closed way).
    Actor* after = FindActor(walkers[i].id);
    if (after != nullptr && !after->removed && after->room == from) continue;
    if (walkers[i].depth + 1 >= static_cast<int>(limits::kPartyMembersMax)) continue;
    for (uint64_t id : followers) walkers.push_back({id, walkers[i].depth + 1, walker->name});
  }
}

void ZoneCore::DeliverParty(const std::string& to_key, const PartyMessage& m) {
  Actor* actor = FindPlayerMutable(to_key);
  if (actor == nullptr) return;
  Actor& me = *actor;
  const bool mine = !me.party.empty() && me.party.id == m.party_id;
  switch (m.op) {
    case Op::kUnknown: return;
    case Op::kInvite: {
      if (!me.party.empty()) {
        SendParty(me, m.from,
                  PartyMessage{.op = Op::kRefused,
                               .party_id = m.party_id,
                               .text = me.Display() + " is already in a party."});
        return;
      }
      me.party_invite = PartyInvite{.party_id = m.party_id,
                                    .from = m.from,
                                    .expires_ms = NowMs() + limits::kPartyInviteTtlMs};
      Send(me, "{y}" + m.from +
                   " invites you to join their party. Type 'group accept' to join or 'group "
                   "decline'.{x}");
      break;
    }
    case Op::kJoin: {
      auto refuse = [&](const std::string& why) {
        SendParty(me, m.from,
                  PartyMessage{.op = Op::kRefused, .party_id = m.party_id, .text = why});
      };
      if (!mine || !IsLeader(me)) return refuse("That party is no more.");
      if (me.party.Has(m.from)) return;  // a repeated accept: the roster went out already
      const std::string key = NameKey(m.from);
      auto invited = std::find_if(me.party.invited.begin(), me.party.invited.end(),
                                  [&](const std::string& n) { return NameKey(n) == key; });
      if (invited == me.party.invited.end()) {
        return refuse(me.Display() + " has not invited you, or took the invitation back.");
      }
      if (me.party.members.size() >= limits::kPartyMembersMax) {
        me.party.invited.erase(invited);
        return refuse(Possessive(me.Display()) + " party is full.");
      }
      me.party.invited.erase(invited);
      me.party.members.push_back(m.from);
      BroadcastRoster(me, m.from + " joins the party.");
      Send(me, "{y}" + m.from + " joins your party.{x}");
      break;
    }
    case Op::kHello: {
      // A member back from a login asks whether they are still in. Any holder of the party
      // answers with their copy (the member keeps it only if newer); the leader has the truth.
      if (!mine || !me.party.Has(m.from)) {
        SendParty(me, m.from, PartyMessage{.op = Op::kGone, .party_id = m.party_id});
        return;
      }
      PartyState roster = me.party;
      roster.invited.clear();
      SendParty(me, m.from,
                PartyMessage{.op = Op::kRoster, .party_id = roster.id, .roster = roster});
      return;
    }
    case Op::kLeave: {
      if (!mine || !IsLeader(me) || !me.party.Has(m.from)) return;
      const std::string member = MemberNamed(me.party, m.from);
      Remove(me.party.members, member);
      if (NameKey(me.following) == NameKey(member)) me.following.clear();
      BroadcastRoster(me, member + " leaves the party.");
      Send(me, "{y}" + member + " leaves your party.{x}");
      DissolveIfAlone(*this, me);
      break;
    }
    case Op::kRoster: {
      const PartyState& roster = m.roster;
      if (!roster.Has(me.name)) {
        if (mine) {
          ClearParty(me);
          Send(me, "{y}You are no longer in " + Possessive(roster.leader) + " party.{x}");
        }
        return;
      }
      if (mine) {
        if (roster.version <= me.party.version) return;  // older news
      } else if (!me.party.empty()) {
        // A party they are not in (any more) still counts them: set the leader straight.
        SendParty(me, roster.leader, PartyMessage{.op = Op::kLeave, .party_id = roster.id});
        return;
      }
      const bool joined = !mine;
      me.party = roster;
      if (!me.following.empty() && !me.party.Has(me.following)) me.following.clear();
      if (joined) {
        Send(me, "{y}You join " + Possessive(roster.leader) + " party.{x}");
      } else if (!m.text.empty()) {
        Send(me, "{y}" + m.text + "{x}");
      }
      break;
    }
    case Op::kRefused: {
      if (!m.text.empty()) Send(me, "{y}" + m.text + "{x}");
      if (mine && IsLeader(me)) {
        Remove(me.party.invited, m.from);
        DissolveIfAlone(*this, me);
      }
      break;
    }
    case Op::kGone: {
      if (!mine) return;
      const std::string leader = me.party.leader;
      ClearParty(me);
      Send(me, "{y}You are no longer in " + Possessive(leader) + " party.{x}");
      break;
    }
    case Op::kKicked: {
      if (!mine || NameKey(m.from) != NameKey(me.party.leader)) return;
      ClearParty(me);
      Send(me, "{y}" + m.from + " has removed you from the party.{x}");
      break;
    }
    case Op::kDisband: {
      if (!mine || NameKey(m.from) != NameKey(me.party.leader)) return;
      ClearParty(me);
      Send(me, "{y}" + m.from + " has disbanded the party.{x}");
      break;
    }
    case Op::kChat: {
      if (!mine || !me.party.Has(m.from)) return;
      Send(me, "{g}[party] " + m.from + ": " + m.text + "{x}");
      SendEvent(me, "Comm.Channel", PartyChatJson(m.from, m.text));
      break;
    }
    case Op::kNotice: {
      if (m.text.empty()) return;
      Send(me, "{y}" + m.text + "{x}");
      break;
    }
    case Op::kUnreachable: {
      // `m.from` is whom a message of ours was for; m.text says why it did not get there.
      switch (m.failed) {
        case Op::kInvite:
          Send(me, m.text);
          if (mine) {
            Remove(me.party.invited, m.from);
            DissolveIfAlone(*this, me);
          }
          break;
        case Op::kJoin: Send(me, m.text + " The invitation lapses."); break;
        case Op::kHello:
          if (!mine) return;
          ClearParty(me);
          Send(me, "{y}Your party is gone: its leader, " + m.from + ", cannot be reached.{x}");
          break;
        case Op::kChat:
          if (mine) Send(me, m.from + " did not hear you (not online).");
          break;
        default: return;  // rosters, leaves and notices: the copies heal at the next change
      }
      break;
    }
  }
  MarkUrgent(me);
}

void RegisterPartyCommands(CommandRegistry& r) {
  r.Add({"group",
         {"party"},
         Position::kSleeping,
         "group [list|invite <player>|accept|decline|leave|kick <member>|disband|follow "
         "<member>|follow off|say <text>]",
         "Forms a party with other players, wherever in the world they are: the leader invites, "
         "the invited accept, and members chat with 'gtell' and may follow each other.",
         Group});
  r.Add({"gtell",
         {"gt"},
         Position::kSleeping,
         "gtell <text>",
         "Says something to every member of your party, on whichever world they are.",
         [](CommandContext& c) { PartyChat(c.zone, c.actor, c.args); }});
}

}  // namespace telos::world
