// Race, class and skill commands: choose, cast, skills, spells, practice, train. Skills of kind
// "skill" are used by typing their id as a verb (resolved in ZoneCore::Dispatch); their effects
// live in skills.cc.
#include <algorithm>

#include "commands/registry.h"
#include "zone_core.h"

namespace telos::world {
namespace {

bool NoClasses(CommandContext& c) {
  if (!c.zone.pack().game.empty()) return false;
  c.zone.Send(c.actor, "This world has no classes, skills or spells.");
  return true;
}

std::string Padded(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

// --- choose: the new character's race and class

void ChooseNow(ZoneCore& zone, Actor& actor, const RaceDef& race, const ClassDef& cls) {
  zone.StartAs(actor, race, cls);
  actor.may_choose = false;
  actor.last_status = {-1, -1, -1};  // Char.Status again: it names the race and class
  zone.Send(actor, "{y}You are now " + race.name + ", " + cls.name +
                       ".{x} Type 'score' to see "
                       "yourself and 'skills' or 'spells' for what you may learn from a trainer.");
  zone.Save(actor, SaveReason::kLevel);
}

// Numbered or named: "2", "elf" or "Elf".
template <typename Def>
const Def* Pick(const std::vector<Def>& defs, std::string_view answer) {
  std::string word = Lower(Trim(answer));
  if (word.empty()) return nullptr;
  if (std::all_of(word.begin(), word.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    size_t index = word.size() > 3 ? 0 : static_cast<size_t>(std::stoi(word));
    return index >= 1 && index <= defs.size() ? &defs[index - 1] : nullptr;
  }
  for (const Def& def : defs) {
    if (def.id == word || Lower(def.name) == word) return &def;
  }
  return nullptr;
}

template <typename Def>
void ListChoices(ZoneCore& zone, Actor& actor, const std::vector<Def>& defs) {
  for (size_t i = 0; i < defs.size(); ++i) {
    std::string line = "  " + std::to_string(i + 1) + ") " + Padded(defs[i].name, 10);
    if (!defs[i].description.empty()) line += " " + defs[i].description;
    zone.Send(actor, line);
  }
}

void AnswerClass(const RaceDef* race, ZoneCore& zone, Actor& actor, std::string answer) {
  const ClassDef* cls = Pick(zone.pack().game.classes, answer);
  if (cls == nullptr) {
    zone.Send(actor,
              "That is not one of the classes; nothing was changed. Type 'choose' to "
              "begin again.");
    return;
  }
  ChooseNow(zone, actor, *race, *cls);
}

void AnswerRace(ZoneCore& zone, Actor& actor, std::string answer) {
  const RaceDef* race = Pick(zone.pack().game.races, answer);
  if (race == nullptr) {
    zone.Send(actor,
              "That is not one of the races; nothing was changed. Type 'choose' to "
              "begin again.");
    return;
  }
  zone.Send(actor, "Which class will you follow? (a number or a name)");
  ListChoices(zone, actor, zone.pack().game.classes);
  actor.answer = std::bind_front(AnswerClass, race);
}

void Choose(CommandContext& c) {
  if (NoClasses(c)) return;
  if (!c.actor.may_choose) {
    c.zone.Send(c.actor, "You chose your path long ago: you are " + c.actor.race->name + ", " +
                             c.actor.char_class->name + ".");
    return;
  }
  if (c.actor.position == Position::kFighting) {
    c.zone.Send(c.actor, "Not while you are fighting!");
    return;
  }
  const GameRules& game = c.zone.pack().game;
  if (!c.args.empty()) {
    auto [race_word, class_word] = SplitWord(c.args);
    const RaceDef* race = Pick(game.races, race_word);
    const ClassDef* cls = Pick(game.classes, class_word);
    if (race == nullptr || cls == nullptr) {
      c.zone.Send(c.actor, "Usage: choose <race> <class>, or 'choose' alone to be asked.");
      return;
    }
    ChooseNow(c.zone, c.actor, *race, *cls);
    return;
  }
  c.zone.Send(c.actor, "Which race are you? (a number or a name)");
  ListChoices(c.zone, c.actor, game.races);
  c.actor.answer = AnswerRace;
}

// --- cast and the lists

// The skill a player means: an id, a name, or the start of either, among the skills of `kind`
// their class has (the first match in class order).
const SkillDef* FindSkillFor(ZoneCore& zone, const Actor& actor, std::string_view word,
                             SkillKind kind) {
  if (actor.char_class == nullptr || word.empty()) return nullptr;
  const GameRules& game = zone.pack().game;
  std::string lower = Lower(word);
  const SkillDef* prefix = nullptr;
  for (const ClassSkill& entry : actor.char_class->skills) {
    const SkillDef* skill = game.FindSkill(entry.skill);
    if (skill == nullptr || skill->kind != kind) continue;
    if (skill->id == lower || skill->name == lower) return skill;
    if (prefix == nullptr && (skill->id.starts_with(lower) || skill->name.starts_with(lower))) {
      prefix = skill;
    }
  }
  return prefix;
}

void Cast(CommandContext& c) {
  if (NoClasses(c)) return;
  std::string_view args = c.args;
  std::string_view name;
  // 'magic missile' rat: a quoted name may hold spaces; otherwise the first word.
  if (!args.empty() && (args[0] == '\'' || args[0] == '"')) {
    size_t close = args.find(args[0], 1);
    name = args.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    args = close == std::string_view::npos ? std::string_view() : Trim(args.substr(close + 1));
  } else {
    std::tie(name, args) = SplitWord(args);
  }
  if (name.empty()) {
    c.zone.Send(c.actor, "Cast which spell? Type 'spells' for yours.");
    return;
  }
  const SkillDef* spell = FindSkillFor(c.zone, c.actor, name, SkillKind::kSpell);
  if (spell == nullptr) {
    c.zone.Send(c.actor, "You know no spell called '" + std::string(name) + "'.");
    return;
  }
  c.zone.UseSkill(c.actor, *spell, args);
}

void ListSkills(CommandContext& c, SkillKind kind) {
  if (NoClasses(c)) return;
  const GameRules& game = c.zone.pack().game;
  const bool spells = kind == SkillKind::kSpell;
  c.zone.Send(c.actor, "{w}" + std::string(spells ? "Spells" : "Skills") + " of the " +
                           c.actor.char_class->name + ":{x}");
  bool any = false;
  for (const ClassSkill& entry : c.actor.char_class->skills) {
    const SkillDef* skill = game.FindSkill(entry.skill);
    if (skill == nullptr || skill->kind != kind) continue;
    any = true;
    std::string state;
    if (auto known = c.actor.skills.find(skill->id); known != c.actor.skills.end()) {
      state = std::to_string(known->second) + "%";
    } else if (entry.level <= c.actor.level) {
      state = "not learned";
    } else {
      state = "at level " + std::to_string(entry.level);
    }
    std::string cost;
    if (skill->mana > 0) cost = std::to_string(skill->mana) + " mana";
    if (skill->moves > 0)
      cost += (cost.empty() ? "" : ", ") + std::to_string(skill->moves) + " moves";
    c.zone.Send(c.actor, "  " + Padded("[" + std::to_string(entry.level) + "]", 6) +
                             Padded(skill->name, 18) + Padded(state, 13) + cost);
  }
  if (!any) c.zone.Send(c.actor, spells ? "  Your class casts no spells." : "  None.");
  c.zone.Send(c.actor, "Practices left: " + std::to_string(c.actor.practices) + ".");
}

// --- practice and train, with a trainer present

Actor* RequireTrainer(CommandContext& c) {
  Actor* trainer = c.zone.TrainerIn(c.actor.room);
  if (trainer == nullptr) c.zone.Send(c.actor, "There is no trainer here.");
  return trainer;
}

void Practice(CommandContext& c) {
  if (NoClasses(c)) return;
  if (c.args.empty()) {
    ListSkills(c, SkillKind::kSkill);
    ListSkills(c, SkillKind::kSpell);
    return;
  }
  Actor* trainer = RequireTrainer(c);
  if (trainer == nullptr) return;
  const ClassDef& cls = *c.actor.char_class;
  const SkillDef* skill = FindSkillFor(c.zone, c.actor, c.args, SkillKind::kSkill);
  if (skill == nullptr) skill = FindSkillFor(c.zone, c.actor, c.args, SkillKind::kSpell);
  if (skill == nullptr) {
    c.zone.Send(c.actor, "A " + Lower(cls.name) + " cannot learn '" + std::string(c.args) + "'.");
    return;
  }
  if (cls.LevelFor(skill->id) > c.actor.level) {
    c.zone.Send(c.actor, "You must reach level " + std::to_string(cls.LevelFor(skill->id)) +
                             " to learn " + skill->name + ".");
    return;
  }
  if (c.actor.practices <= 0) {
    c.zone.Send(c.actor, "You have no practices left; you gain more as you level.");
    return;
  }
  int& proficiency = c.actor.skills[skill->id];  // 0 when new
  if (proficiency >= 75) {
    c.zone.Send(c.actor, "You have learned all a trainer can teach of " + skill->name +
                             "; use will teach you the rest.");
    return;
  }
  --c.actor.practices;
  int gain =
      std::max(5, 15 + (c.actor.stats.intelligence - 13) / 2 + (c.actor.stats.wisdom - 13) / 2);
  proficiency = std::min(75, proficiency + gain);
  c.zone.Send(c.actor, Capitalize(trainer->name) + " teaches you " + skill->name + ". You are " +
                           std::to_string(proficiency) + "% skilled.");
}

struct StatName {
  const char* word;
  int Stats::*field;
};
constexpr StatName kStatNames[] = {{"str", &Stats::strength},
                                   {"dex", &Stats::dexterity},
                                   {"con", &Stats::constitution},
                                   {"int", &Stats::intelligence},
                                   {"wis", &Stats::wisdom}};
inline constexpr int kTrainedStatMax = 25;

void Train(CommandContext& c) {
  if (NoClasses(c)) return;
  if (c.args.empty()) {
    c.zone.Send(c.actor, "You have " + std::to_string(c.actor.trains) +
                             " training sessions. Train one of: str dex con int wis (at a "
                             "trainer), up to " +
                             std::to_string(kTrainedStatMax) + ".");
    return;
  }
  Actor* trainer = RequireTrainer(c);
  if (trainer == nullptr) return;
  std::string word = Lower(c.args).substr(0, 3);
  for (const StatName& stat : kStatNames) {
    if (word != stat.word) continue;
    int& value = c.actor.stats.*stat.field;
    if (c.actor.trains <= 0) {
      c.zone.Send(c.actor, "You have no training sessions left; you gain more as you level.");
      return;
    }
    if (value >= kTrainedStatMax) {
      c.zone.Send(c.actor, "That is as far as training can take you.");
      return;
    }
    --c.actor.trains;
    ++value;
    c.zone.Send(c.actor, Capitalize(trainer->name) + " works you hard. Your " +
                             std::string(stat.word) + " is now " + std::to_string(value) + ".");
    c.zone.MarkDirty(c.actor);
    return;
  }
  c.zone.Send(c.actor, "Train what? One of: str dex con int wis.");
}

std::string_view TargetWords(SkillTarget target) {
  switch (target) {
    case SkillTarget::kSelf: return "yourself";
    case SkillTarget::kCharacter: return "one character (your opponent if you name none)";
    case SkillTarget::kRoom: return "everyone on the other side in the room";
    case SkillTarget::kObject: return "an object you carry or see";
  }
  return "";
}

std::string StatLine(const StatBlock& stats, bool signed_values) {
  auto one = [&](const char* name, int value) {
    std::string text = std::to_string(value);
    if (signed_values && value >= 0) text = "+" + text;
    return std::string(name) + " " + text;
  };
  return one("Str", stats.strength) + "  " + one("Dex", stats.dexterity) + "  " +
         one("Con", stats.constitution) + "  " + one("Int", stats.intelligence) + "  " +
         one("Wis", stats.wisdom);
}

}  // namespace

bool GameHelp(ZoneCore& zone, Actor& actor, std::string_view topic) {
  const GameRules& game = zone.pack().game;
  std::string word = Lower(topic);
  for (const SkillDef& skill : game.skills) {
    if (skill.id != word && skill.name != word) continue;
    bool spell = skill.kind == SkillKind::kSpell;
    zone.Send(actor,
              "{w}" + Capitalize(skill.name) + "{x} (" + (spell ? "spell" : "skill") +
                  "): " + (spell ? "cast '" + skill.name + "' [target]" : skill.id + " [target]"));
    if (!skill.description.empty()) zone.Send(actor, skill.description);
    std::string cost;
    if (skill.mana > 0) cost = std::to_string(skill.mana) + " mana";
    if (skill.moves > 0)
      cost += (cost.empty() ? "" : ", ") + std::to_string(skill.moves) + " moves";
    zone.Send(actor, "Costs " + cost + "; acts on " + std::string(TargetWords(skill.target)) + ".");
    if (skill.cooldown_ms > 0) {
      zone.Send(actor, "Ready again after " + std::to_string((skill.cooldown_ms + 999) / 1000) +
                           " seconds.");
    }
    std::string who;
    for (const ClassDef& cls : game.classes) {
      if (int level = cls.LevelFor(skill.id); level > 0) {
        who += (who.empty() ? "" : ", ") + cls.name + " at level " + std::to_string(level);
      }
    }
    zone.Send(actor, who.empty() ? "No class learns it." : "Learned by: " + who + ".");
    return true;
  }
  for (const RaceDef& race : game.races) {
    if (race.id != word && Lower(race.name) != word) continue;
    zone.Send(actor, "{w}" + race.name + "{x} (race). " + race.description);
    zone.Send(actor, "Starting stats: " + StatLine(race.stats, false) + ".");
    return true;
  }
  for (const ClassDef& cls : game.classes) {
    if (cls.id != word && Lower(cls.name) != word) continue;
    zone.Send(actor, "{w}" + cls.name + "{x} (class). " + cls.description);
    zone.Send(actor, "Stat bonuses: " + StatLine(cls.stats, true) + ".");
    zone.Send(actor, "Starts with " + std::to_string(cls.hp) + " hit points, " +
                         std::to_string(cls.mana) + " mana, " + std::to_string(cls.moves) +
                         " moves; gains " + std::to_string(cls.hp_per_level) + "/" +
                         std::to_string(cls.mana_per_level) + "/" +
                         std::to_string(cls.moves_per_level) + " a level.");
    std::string list;
    for (const ClassSkill& entry : cls.skills) {
      if (const SkillDef* skill = game.FindSkill(entry.skill)) {
        list += (list.empty() ? "" : ", ") + skill->name + " (" + std::to_string(entry.level) + ")";
      }
    }
    if (!list.empty()) zone.Send(actor, "Learns: " + list + ".");
    return true;
  }
  return false;
}

void RegisterSkillCommands(CommandRegistry& r) {
  r.Add({"choose",
         {},
         Position::kResting,
         "choose [<race> <class>]",
         "A new character picks its race and class: alone it asks you, one question at a time.",
         Choose});
  r.Add({"cast",
         {"c"},
         Position::kFighting,
         "cast <spell> [target]",
         "Casts a spell you have learned: cast 'magic missile' rat, or cast heal.",
         Cast});
  r.Add({"skills",
         {},
         Position::kSleeping,
         "skills",
         "Lists your class's skills, the level each is learned at and how good you are.",
         [](CommandContext& c) { ListSkills(c, SkillKind::kSkill); }});
  r.Add({"spells",
         {},
         Position::kSleeping,
         "spells",
         "Lists your class's spells, the level each is learned at and how good you are.",
         [](CommandContext& c) { ListSkills(c, SkillKind::kSpell); }});
  r.Add({"practice",
         {"prac"},
         Position::kResting,
         "practice [skill]",
         "With a trainer present, spends a practice on a skill or spell your class may learn.",
         Practice});
  r.Add({"train",
         {},
         Position::kResting,
         "train [str|dex|con|int|wis]",
         "With a trainer present, spends a training session to raise a stat by one.",
         Train});
}

}  // namespace telos::world
