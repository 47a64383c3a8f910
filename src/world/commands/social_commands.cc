// Guilds (`guild`, `gchat`), friends (`friend`) and the account's locale (`config locale`): the
// commands ask the SocialPort (the character store, with the fleet's presence for who is
// online) and show its answer when it comes back. Guild chat asks the port for the speaker's
// guild and members, then sends the line to them wherever they play (ZoneRouter::GuildLine).
#include <algorithm>

#include "commands/registry.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using Op = SocialRequest::Op;

constexpr const char* kNoHall = "Guilds and friends are not kept on this world.";

// A refusal's message as a sentence: the store words some in lower case without a full stop.
std::string Sentence(std::string text) {
  if (!text.empty() && text.front() >= 'a' && text.front() <= 'z') {
    text.front() = static_cast<char>(text.front() - 'a' + 'A');
  }
  if (!text.empty() && text.back() != '.' && text.back() != '!' && text.back() != '?') {
    text.push_back('.');
  }
  return text;
}

// Sends `request` and shows what comes back to `key`, wherever in this zone they are then.
// `show` turns an OK answer into lines; a refusal shows its message (the store's sentence).
void Ask(CommandContext& c, Op op, std::string arg,
         std::function<std::vector<std::string>(const SocialAnswer&)> show) {
  SocialPort* port = c.zone.deps().social;
  if (port == nullptr) {
    c.zone.Send(c.actor, kNoHall);
    return;
  }
  const std::string key = c.actor.key;
  ZoneCore::Poster post = c.zone.poster();
  port->Ask(SocialRequest{.op = op, .character = c.actor.name, .arg = std::move(arg)},
            [post, key, show = std::move(show)](SocialAnswer answer) {
              std::vector<std::string> lines;
              if (answer.status.ok()) {
                lines = show(answer);
              } else if (answer.status.code() == StatusCode::kUnavailable ||
                         answer.status.code() == StatusCode::kDeadlineExceeded ||
                         answer.status.code() == StatusCode::kInternal) {
                lines = {"The guild hall cannot be reached right now; try again later."};
              } else {
                lines = {Sentence(answer.status.message())};
              }
              (void)post([key, lines = std::move(lines)](ZoneCore& z) {
                for (const std::string& line : lines) z.Notice(key, line);
              });
            });
}

std::vector<std::string> One(std::string line) {
  return {std::move(line)};
}

// ---------------------------------------------------------------------------------- guilds

std::vector<std::string> ShowGuild(const SocialAnswer& a) {
  if (a.guild.empty()) return One("You are not in a guild. 'guild create <name>' founds one.");
  std::vector<std::string> lines;
  size_t online = 0;
  for (const SocialAnswer::Person& p : a.people) online += p.online ? 1 : 0;
  lines.push_back("The guild " + a.guild + " (you are its " + a.rank + "; " +
                  std::to_string(a.people.size()) + " members, " + std::to_string(online) +
                  " online):");
  for (const SocialAnswer::Person& p : a.people) {
    lines.push_back("  " + p.name + " (" + p.rank + ")" + (p.online ? " - online" : ""));
  }
  return lines;
}

void GuildChat(CommandContext& c, std::string_view text) {
  if (text.empty()) {
    c.zone.Send(c.actor, "Say what to your guild?");
    return;
  }
  SocialPort* port = c.zone.deps().social;
  if (port == nullptr) {
    c.zone.Send(c.actor, kNoHall);
    return;
  }
  const std::string key = c.actor.key;
  const std::string name = c.actor.name;
  ZoneCore::Poster post = c.zone.poster();
  // The store says who is in the guild now, so a member removed a moment ago hears no more.
  port->Ask(SocialRequest{.op = Op::kGuildInfo, .character = name, .arg = {}},
            [post, key, name, line = std::string(text)](SocialAnswer answer) {
              (void)post([key, name, line, answer = std::move(answer)](ZoneCore& z) {
                if (!answer.status.ok()) {
                  z.Notice(key, "The guild hall cannot be reached right now; try again later.");
                  return;
                }
                if (answer.guild.empty()) {
                  z.Notice(key, "You are not in a guild.");
                  return;
                }
                std::vector<std::string> members;
                for (const SocialAnswer::Person& p : answer.people) {
                  members.push_back(NameKey(p.name));
                }
                z.deps().router->GuildLine(answer.guild, name, line, members);
              });
            });
}

void Guild(CommandContext& c) {
  auto [sub, rest] = SplitWord(c.args);
  const std::string verb = Lower(sub);
  const std::string who(SplitWord(rest).first);
  const std::string me = c.actor.name;
  if (verb.empty() || verb == "info" || verb == "members") {
    return Ask(c, Op::kGuildInfo, "", ShowGuild);
  }
  if (verb == "say" || verb == "chat") return GuildChat(c, rest);
  if (verb == "create" || verb == "found") {
    if (rest.empty()) {
      c.zone.Send(c.actor, "Found which guild? Usage: guild create <name>");
      return;
    }
    return Ask(c, Op::kGuildCreate, std::string(rest), [](const SocialAnswer& a) {
      return One("You found the guild " + a.guild + ". 'guild invite <player>' asks others in.");
    });
  }
  if (verb == "join") {
    if (rest.empty()) {
      c.zone.Send(c.actor, "Join which guild? Usage: guild join <name>");
      return;
    }
    return Ask(c, Op::kGuildJoin, std::string(rest), [](const SocialAnswer& a) {
      return One("You join the guild " + a.guild + ". 'gchat <text>' talks to its members.");
    });
  }
  if (verb == "leave") {
    return Ask(c, Op::kGuildLeave, "",
               [](const SocialAnswer&) { return One("You leave your guild."); });
  }
  if (verb == "invite" || verb == "kick" || verb == "remove" || verb == "promote" ||
      verb == "demote") {
    if (who.empty()) {
      c.zone.Send(c.actor, "Whom? Usage: guild " + verb + " <player>");
      return;
    }
    if (verb == "invite") {
      // The invitee hears of it wherever they play, once the store has the invitation.
      ZoneCore::Poster post = c.zone.poster();
      const std::string key = c.actor.key;
      SocialPort* port = c.zone.deps().social;
      if (port == nullptr) {
        c.zone.Send(c.actor, kNoHall);
        return;
      }
      port->Ask(SocialRequest{.op = Op::kGuildInvite, .character = me, .arg = who},
                [post, key, me, who](SocialAnswer answer) {
                  (void)post([key, me, who, answer = std::move(answer)](ZoneCore& z) {
                    if (!answer.status.ok()) {
                      z.Notice(key, answer.status.code() == StatusCode::kUnavailable
                                        ? "The guild hall cannot be reached right now; try "
                                          "again later."
                                        : Sentence(answer.status.message()));
                      return;
                    }
                    z.Notice(key, "You invite " + who + " into " + answer.guild + ".");
                    Actor* inviter = z.FindPlayerMutable(key);
                    if (inviter == nullptr) return;
                    z.SendParty(*inviter, who,
                                PartyMessage{.op = PartyMessage::Op::kNotice,
                                             .text = me + " invites you into the guild " +
                                                     answer.guild + ": type 'guild join " +
                                                     answer.guild + "' to accept."});
                  });
                });
      return;
    }
    const Op op = verb == "promote"  ? Op::kGuildPromote
                  : verb == "demote" ? Op::kGuildDemote
                                     : Op::kGuildKick;
    return Ask(c, op, who, [verb, who](const SocialAnswer&) {
      if (verb == "promote") return One("You make " + who + " an officer.");
      if (verb == "demote") return One(who + " is a member again, no longer an officer.");
      return One("You remove " + who + " from the guild.");
    });
  }
  c.zone.Send(c.actor,
              "Unknown guild command '" + std::string(sub) +
                  "'. Try: guild [info], create <name>, invite <player>, join <name>, leave, "
                  "kick <member>, promote <member>, demote <member>, say <text>.");
}

// --------------------------------------------------------------------------------- friends

void Friend(CommandContext& c) {
  auto [sub, rest] = SplitWord(c.args);
  const std::string verb = Lower(sub);
  const std::string who(SplitWord(rest).first);
  if (verb.empty() || verb == "list") {
    return Ask(c, Op::kFriendList, "", [](const SocialAnswer& a) {
      if (a.people.empty()) return One("Your friends list is empty. 'friend add <player>'.");
      std::vector<std::string> lines = {"Your friends:"};
      for (const SocialAnswer::Person& p : a.people) {
        lines.push_back("  " + p.name + (p.online ? " - online" : " - offline"));
      }
      return lines;
    });
  }
  if (verb == "add" || verb == "remove" || verb == "delete") {
    if (who.empty()) {
      c.zone.Send(c.actor, "Whom? Usage: friend " + verb + " <player>");
      return;
    }
    if (verb == "add") {
      return Ask(c, Op::kFriendAdd, who, [who](const SocialAnswer&) {
        return One("You add " + who + " to your friends.");
      });
    }
    return Ask(c, Op::kFriendRemove, who, [who](const SocialAnswer&) {
      return One("You remove " + who + " from your friends.");
    });
  }
  c.zone.Send(c.actor, "Unknown friend command '" + std::string(sub) +
                           "'. Try: friend [list], add <player>, remove <player>.");
}

// ---------------------------------------------------------------------------------- config

void Config(CommandContext& c) {
  auto [sub, rest] = SplitWord(c.args);
  const std::string setting = Lower(sub);
  if (setting.empty()) {
    return Ask(c, Op::kLocaleGet, "", [](const SocialAnswer& a) {
      return One("Your settings: locale " + (a.locale.empty() ? "(not set)" : a.locale) +
                 ". 'config locale <xx-YY>' changes it.");
    });
  }
  if (setting == "locale") {
    if (rest.empty()) {
      return Ask(c, Op::kLocaleGet, "", [](const SocialAnswer& a) {
        return One(a.locale.empty() ? "Your locale is not set. 'config locale en-US', say."
                                    : "Your locale is " + a.locale + ".");
      });
    }
    return Ask(c, Op::kLocaleSet, std::string(SplitWord(rest).first),
               [](const SocialAnswer& a) { return One("Your locale is now " + a.locale + "."); });
  }
  c.zone.Send(c.actor, "Unknown setting '" + std::string(sub) + "'. Try: config locale <xx-YY>.");
}

}  // namespace

void RegisterSocialCommands(CommandRegistry& r) {
  r.Add({"guild",
         {},
         Position::kSleeping,
         "guild [info|create <name>|invite <player>|join <name>|leave|kick <member>|promote "
         "<member>|demote <member>|say <text>]",
         "Guilds outlast sessions: found one, invite players from anywhere in the world, and "
         "talk to its members with 'gchat'. The founder names officers, who may invite too.",
         Guild});
  r.Add({"gchat",
         {"gc"},
         Position::kSleeping,
         "gchat <text>",
         "Says something to every member of your guild who is online, on any world.",
         [](CommandContext& c) { GuildChat(c, c.args); }});
  r.Add({"friend",
         {"friends"},
         Position::kSleeping,
         "friend [list|add <player>|remove <player>]",
         "Keeps a list of friends and shows which of them are online anywhere in the world.",
         Friend});
  r.Add({"config",
         {},
         Position::kSleeping,
         "config [locale <xx-YY>]",
         "Shows or changes your account's settings: the locale (a language and a region, such "
         "as en-US).",
         Config});
}

}  // namespace telos::world
