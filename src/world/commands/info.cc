// Information commands: look, examine, who, score, inventory, equipment, help, commands.
#include <algorithm>

#include "commands/registry.h"
#include "telos/world/who_json.h"
#include "zone_core.h"

namespace telos::world {
namespace {

std::string Condition(const Actor& actor) {
  int percent = actor.max_hp > 0 ? actor.hp * 100 / actor.max_hp : 0;
  if (percent >= 100) return "is in excellent condition.";
  if (percent >= 75) return "has a few scratches.";
  if (percent >= 50) return "has some nasty wounds.";
  if (percent >= 25) return "is bleeding badly.";
  return "is barely clinging to life.";
}

void SendLines(ZoneCore& zone, Actor& actor, std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    zone.Send(actor, std::string(text.substr(start, end - start)));
    if (end == text.size()) break;
    start = end + 1;
  }
}

void ShowContents(ZoneCore& zone, Actor& actor, const Item& item) {
  zone.Send(actor, Capitalize(item.Name()) + " contains:");
  if (item.contents.empty() && item.coins == 0) zone.Send(actor, "  nothing.");
  for (const auto& inner : item.contents) zone.Send(actor, "  " + inner->Name());
  if (item.coins > 0) zone.Send(actor, "  " + std::to_string(item.coins) + " coins");
}

void Examine(CommandContext& c, std::string_view target) {
  ZoneCore& zone = c.zone;
  Actor& actor = c.actor;
  if (Actor* other = zone.FindInRoom(actor, target)) {
    if (!other->is_player && !other->def->description.empty()) {
      SendLines(zone, actor, other->def->description);
    } else if (other->is_player) {
      zone.Send(actor, "You see " + other->name + ", an adventurer of level " +
                           std::to_string(other->level) + ".");
    }
    zone.Send(actor, other->Display() + " " + Condition(*other));
    return;
  }
  Item* item = zone.FindItemIn(actor.inventory, target);
  if (item == nullptr) {
    for (auto& worn : actor.equipment) {
      if (worn && worn->Matches(Lower(target))) item = worn.get();
    }
  }
  if (item == nullptr) item = zone.FindItemIn(zone.room(actor.room).items, target);
  if (item != nullptr) {
    if (!item->is_corpse() && !item->def->description.empty()) {
      SendLines(zone, actor, item->def->description);
    } else if (!item->is_corpse()) {
      zone.Send(actor, "You see nothing special about " + item->Name() + ".");
    }
    if (item->is_container()) ShowContents(zone, actor, *item);
    return;
  }
  std::string key = Lower(target);
  for (const ExtraDef& extra : zone.room(actor.room).def->extras) {
    for (const std::string& keyword : extra.keywords) {
      if (!key.empty() && keyword.starts_with(key)) {
        SendLines(zone, actor, extra.text);
        return;
      }
    }
  }
  zone.Send(actor, "You do not see '" + std::string(target) + "' here.");
}

void Look(CommandContext& c) {
  if (c.args.empty()) {
    c.zone.ShowRoom(c.actor);
    c.zone.SendRoomInfo(c.actor);
    return;
  }
  std::string_view target = c.args;
  if (target.starts_with("at ")) target = Trim(target.substr(3));
  static constexpr std::pair<const char*, const char*> kShort[] = {
      {"n", "north"}, {"e", "east"}, {"s", "south"}, {"w", "west"}, {"u", "up"}, {"d", "down"}};
  std::string dir = Lower(target);
  for (const auto& [abbrev, full] : kShort) {
    if (dir == abbrev) dir = full;
  }
  for (const ExitDef& exit : c.zone.room(c.actor.room).def->exits) {
    if (exit.dir == dir) {
      if (exit.description.empty()) {
        const RoomDef* there = c.zone.pack().FindRoom(exit.to);
        c.zone.Send(c.actor, "The way " + exit.dir + " leads to " +
                                 (there ? there->name : std::string("somewhere")) + ".");
      } else {
        SendLines(c.zone, c.actor, exit.description);
      }
      return;
    }
  }
  Examine(c, target);
}

void Who(CommandContext& c) {
  std::vector<WhoEntry> who = c.zone.deps().router->Who();
  c.zone.Send(c.actor, "{w}Adventurers in the world:{x}");
  for (WhoEntry& entry : who) {
    // Players in this zone are shown as they are now (a level just gained, a class just
    // chosen); the rest as the world last saw them.
    if (const Actor* here = c.zone.FindPlayer(NameKey(entry.name))) {
      entry.level = here->level;
      if (here->race != nullptr) entry.race = here->race->name;
      if (here->char_class != nullptr) entry.char_class = here->char_class->name;
    }
    std::string level = std::to_string(entry.level);
    if (level.size() < 3) level.insert(0, 3 - level.size(), ' ');
    const ZoneDef* zone = c.zone.pack().FindZone(entry.zone);
    std::string title;
    if (!entry.race.empty() || !entry.char_class.empty()) {
      title = " " + entry.race + (entry.race.empty() ? "" : " ") + entry.char_class;
    }
    c.zone.Send(c.actor,
                "[" + level + title + "] " + entry.name + " - " + (zone ? zone->name : entry.zone));
  }
  c.zone.Send(c.actor,
              std::to_string(who.size()) + (who.size() == 1 ? " player" : " players") + " online.");
}

// "3 times", "once".
std::string Times(int64_t count) {
  if (count == 1) return "once";
  if (count == 2) return "twice";
  return std::to_string(count) + " times";
}

// One record as a player reads it: a boss by its name in the pack.
std::string RecordText(const Pack& pack, const RecordLine& line) {
  if (line.kind == "boss_kill") {
    std::string text = Capitalize(RecordSubjectName(pack, line)) + ": slain " + Times(line.count);
    if (!line.first_actor.empty()) text += "; first by " + line.first_actor;
    if (line.count > 1 && !line.last_actor.empty()) text += ", last by " + line.last_actor;
    return text + ".";
  }
  return line.kind + " " + line.subject + ": " + Times(line.count) + ".";
}

// The fleet-wide records, as the leader director applied them from every world's game events.
void Records(CommandContext& c) {
  RecordsPort* records = c.zone.deps().records;
  if (records == nullptr) {
    c.zone.Send(c.actor, "No chronicler keeps the legends of this world.");
    return;
  }
  std::string key = c.actor.key;
  ZoneCore::Poster post = c.zone.poster();
  records->Tallies([post, key](Result<std::vector<RecordLine>> result) {
    (void)post([key, result = std::move(result)](ZoneCore& z) {
      if (!result.ok()) {
        z.Notice(key, "The hall of legends is closed right now. Try again later.");
        return;
      }
      z.Notice(key, "{w}Legends of the realm:{x}");
      if (result->empty()) z.Notice(key, "No deed has been recorded yet.");
      for (const RecordLine& line : *result) z.Notice(key, "  " + RecordText(z.pack(), line));
    });
  });
}

void Score(CommandContext& c) {
  Actor& a = c.actor;
  ZoneCore& z = c.zone;
  z.Send(a, "{w}" + a.name + "{x}, level " + std::to_string(a.level) +
                (a.char_class != nullptr ? " " + a.race->name + " " + a.char_class->name : "") +
                ".");
  z.Send(a, "Experience: " + std::to_string(a.exp) + " (next level at " +
                std::to_string(int64_t{100} * a.level * a.level) + ").");
  z.Send(a, "Hit points: " + std::to_string(a.hp) + "/" + std::to_string(a.max_hp) +
                "  Mana: " + std::to_string(a.mana) + "/" + std::to_string(a.max_mana) +
                "  Moves: " + std::to_string(a.moves) + "/" + std::to_string(a.max_moves));
  z.Send(a, "Str " + std::to_string(a.stats.strength) + "  Dex " +
                std::to_string(a.stats.dexterity) + "  Con " +
                std::to_string(a.stats.constitution) + "  Int " +
                std::to_string(a.stats.intelligence) + "  Wis " + std::to_string(a.stats.wisdom));
  z.Send(a, "Coins: " + std::to_string(a.gold) + " carried, " + std::to_string(a.bank) +
                " in the bank.  Armor: " + std::to_string(z.ArmorOf(a)) + ".");
  if (a.char_class != nullptr) {
    z.Send(a, "Practices: " + std::to_string(a.practices) + "  Training sessions: " +
                  std::to_string(a.trains) + "  Skills known: " + std::to_string(a.skills.size()) +
                  (a.may_choose ? "  (type 'choose' to pick your race and class)" : ""));
  }
  z.Send(a, "You are " + std::string(PositionName(a.position)) + ".");
  for (const Affect& affect : a.affects) {
    z.Send(a, "Affected by " + std::string(AffectKindName(affect.kind)) + " for " +
                  std::to_string((affect.remaining_ms + 999) / 1000) + " more seconds.");
  }
}

void Inventory(CommandContext& c) {
  c.zone.Send(c.actor, "You are carrying:");
  if (c.actor.inventory.empty()) c.zone.Send(c.actor, "  Nothing.");
  for (const auto& item : c.actor.inventory) c.zone.Send(c.actor, "  " + item->Name());
  c.zone.Send(c.actor, "You have " + std::to_string(c.actor.gold) + " coins.");
}

void Equipment(CommandContext& c) {
  c.zone.Send(c.actor, "You are using:");
  bool any = false;
  for (size_t slot = 1; slot < c.actor.equipment.size(); ++slot) {
    const auto& item = c.actor.equipment[slot];
    if (!item) continue;
    std::string label = "<" + std::string(WearSlotName(static_cast<WearSlot>(slot))) + ">";
    label.resize(10, ' ');
    c.zone.Send(c.actor, "  " + label + item->Name());
    any = true;
  }
  if (!any) c.zone.Send(c.actor, "  Nothing.");
}

void Help(CommandContext& c) {
  std::string topic = Lower(c.args);
  if (topic.empty()) {
    c.zone.Send(c.actor, "Type 'help <topic>' for a command or subject, 'commands' for a list.");
    c.zone.Send(c.actor, "Start with: look, north/south/east/west, say, who, score, inventory.");
    return;
  }
  // Help entries from every zone of the pack: the world shares one help desk.
  for (const ZoneDef& zone : c.zone.pack().zones) {
    for (const HelpDef& help : zone.help) {
      for (const std::string& keyword : help.keywords) {
        if (Lower(keyword) == topic) {
          SendLines(c.zone, c.actor, help.text);
          return;
        }
      }
    }
  }
  if (GameHelp(c.zone, c.actor, topic)) return;
  const CommandSpec* spec = c.zone.registry().FindExact(topic);
  std::vector<std::string> ambiguous;
  if (spec == nullptr) spec = c.zone.registry().FindPrefix(topic, &ambiguous);
  if (spec != nullptr) {
    c.zone.Send(c.actor, "Usage: " + spec->usage);
    if (!spec->aliases.empty()) {
      std::string aliases;
      for (const std::string& alias : spec->aliases)
        aliases += (aliases.empty() ? "" : ", ") + alias;
      c.zone.Send(c.actor, "Also: " + aliases);
    }
    c.zone.Send(c.actor, spec->help);
    return;
  }
  for (const ZoneDef& zone : c.zone.pack().zones) {
    for (const HelpDef& help : zone.help) {
      for (const std::string& keyword : help.keywords) {
        if (Lower(keyword).starts_with(topic)) {
          SendLines(c.zone, c.actor, help.text);
          return;
        }
      }
    }
  }
  c.zone.Send(c.actor, "No help on '" + topic + "'. Try 'commands'.");
}

void Commands(CommandContext& c) {
  std::string line;
  c.zone.Send(c.actor, "Commands:");
  for (const CommandSpec& spec : c.zone.registry().all()) {
    if (spec.hidden || !HasRole(c.actor.roles, spec.role)) continue;
    if (line.size() + spec.name.size() + 1 > 72) {
      c.zone.Send(c.actor, "  " + line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + spec.name;
  }
  if (!line.empty()) c.zone.Send(c.actor, "  " + line);
  for (const ZoneCommandDef& command : c.zone.zone().commands) {
    c.zone.Send(c.actor, "  " + command.name + " (here only)");
  }
}

}  // namespace

void RegisterInfoCommands(CommandRegistry& r) {
  r.Add({"look",
         {"l"},
         Position::kResting,
         "look [direction|thing]",
         "Describes your surroundings, a direction, or something or someone here.",
         Look});
  r.Add({"examine",
         {"exa", "ex"},
         Position::kResting,
         "examine <thing>",
         "Looks closely at an item, a creature or a feature of the room.",
         [](CommandContext& c) {
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Examine what?");
             return;
           }
           Examine(c, c.args);
         }});
  r.Add({"who", {}, Position::kSleeping, "who", "Lists everyone in the world.", Who});
  r.Add({"records",
         {"legends"},
         Position::kSleeping,
         "records",
         "Lists the deeds the whole realm remembers: every boss slain, how often, and by whom.",
         Records});
  r.Add({"score",
         {"sc"},
         Position::kSleeping,
         "score",
         "Shows your level, experience, vitals, stats and money.",
         Score});
  r.Add({"inventory",
         {"i", "inv"},
         Position::kSleeping,
         "inventory",
         "Lists what you are carrying.",
         Inventory});
  r.Add({"equipment",
         {"eq"},
         Position::kSleeping,
         "equipment",
         "Lists what you wear and wield.",
         Equipment});
  r.Add({"help",
         {"?"},
         Position::kSleeping,
         "help [topic]",
         "Shows help on a command or a subject.",
         Help});
  r.Add({"commands", {}, Position::kSleeping, "commands", "Lists every command.", Commands});
}

}  // namespace telos::world
