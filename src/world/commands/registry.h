// CommandRegistry: the built-in player commands, looked up by name, alias or unambiguous
// abbreviation. Each command lives in commands/<group>.cc and registers itself through one of
// the Register* functions below. Zone-defined ([[commands]]) and exit-name commands are
// resolved by ZoneCore around this registry.
//
// Thread safety: built once per zone, then read-only on that zone's executor.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/roles.h"

namespace telos::world {

class ZoneCore;
struct Actor;
enum class Position;

struct CommandContext {
  ZoneCore& zone;
  Actor& actor;
  std::string_view verb;  // the word the player typed, as resolved (e.g. "north")
  std::string_view args;  // the rest of the line, trimmed
};

struct CommandSpec {
  std::string name;
  std::vector<std::string> aliases;  // exact words: "l" for look, "'" for say
  Position min_position;
  std::string usage;  // "get <item> [container]"
  std::string help;   // one or more sentences
  std::function<void(CommandContext&)> run;
  bool hidden = false;  // not listed by `commands` (e.g. direction duplicates)
  // The staff role the command needs (telos/base/roles.h); kRolePlayer for everyone. The
  // dispatcher refuses it to anyone without the role, whatever the command's own code does.
  Roles role = kRolePlayer;
  // Matched by its full name or an alias only, never by an abbreviation: a command added
  // late (the arcade's) must not make an abbreviation players already type ("cas" for cast)
  // ambiguous.
  bool exact = false;
};

class CommandRegistry {
 public:
  CommandRegistry();

  void Add(CommandSpec spec);
  // Exact name or alias.
  const CommandSpec* FindExact(std::string_view word) const;
  // Unique prefix of a name among the commands `roles` may use (so an abbreviation never
  // resolves to, or is made ambiguous by, a staff command for a player). `ambiguous` lists the
  // candidates when more than one matches.
  const CommandSpec* FindPrefix(std::string_view word, std::vector<std::string>* ambiguous,
                                Roles roles = kRolePlayer) const;
  // The closest command name by edit distance among those `roles` may use, or empty when
  // nothing is close.
  std::string Suggest(std::string_view word, Roles roles = kRolePlayer) const;
  const std::vector<CommandSpec>& all() const { return commands_; }

 private:
  std::vector<CommandSpec> commands_;
};

void RegisterInfoCommands(CommandRegistry& registry);
void RegisterMovementCommands(CommandRegistry& registry);
void RegisterCommCommands(CommandRegistry& registry);
void RegisterObjectCommands(CommandRegistry& registry);
void RegisterShopCommands(CommandRegistry& registry);
void RegisterCombatCommands(CommandRegistry& registry);
void RegisterMiscCommands(CommandRegistry& registry);
void RegisterSkillCommands(CommandRegistry& registry);
void RegisterQuestCommands(CommandRegistry& registry);
void RegisterPartyCommands(CommandRegistry& registry);
void RegisterSocialCommands(CommandRegistry& registry);
// The arcade in the casino: chips, bet, cashout (arcade_commands.cc).
void RegisterArcadeCommands(CommandRegistry& registry);
// `buy <coins>` in a casino buys chips. False (nothing done) anywhere else or when the
// argument is not a number, so the shop's `buy <item>` takes it.
bool ArcadeBuy(CommandContext& c);

// `help <topic>` for a skill, spell, race or class of the pack's game.toml, written from the
// content itself so every one has an entry. False when the topic names none of them.
bool GameHelp(ZoneCore& zone, Actor& actor, std::string_view topic);
void RegisterStaffCommands(CommandRegistry& registry);

}  // namespace telos::world
