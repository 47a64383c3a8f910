// Quests (game.toml [[quests]], docs/content.md): taking one from its giver, progress from kills,
// visits and talk, turning it in for the rewards, and the `quest` command.
//
// Progress lives on the player (Actor::quests, saved in CharacterState), so it is kept across
// quitting and carried to another zone or world with the rest of the character.
#include <algorithm>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

// What a step asks, in words: its own text, or one made from its target.
std::string StepText(const Pack& pack, const QuestStep& step) {
  if (!step.text.empty()) return step.text;
  switch (step.kind) {
    case QuestStepKind::kKill: {
      const MobDef* mob = pack.FindMob(step.target);
      return "Kill " + (mob ? mob->name : step.target.ToString());
    }
    case QuestStepKind::kFetch: {
      const ItemDef* item = pack.FindItem(step.target);
      return "Bring " + (item ? item->name : step.target.ToString());
    }
    case QuestStepKind::kVisit: {
      const RoomDef* room = pack.FindRoom(step.target);
      return "Visit " + (room ? room->name : step.target.ToString());
    }
    case QuestStepKind::kTalk: {
      const MobDef* mob = pack.FindMob(step.target);
      return "Speak with " + (mob ? mob->name : step.target.ToString());
    }
    case QuestStepKind::kLua: return "Do what is asked";
  }
  return "";
}

int Carried(const Actor& actor, const Ref& item) {
  int count = 0;
  for (const auto& held : actor.inventory) {
    if (held->def != nullptr && held->def->ref == item) ++count;
  }
  return count;
}

// How far a step is: the count reached (fetch: carried now; lua: 1 while its predicate holds)
// out of step.count.
int Reached(ZoneCore& zone, Actor& actor, const QuestDef& quest, size_t step, int recorded) {
  switch (quest.steps[step].kind) {
    case QuestStepKind::kFetch: return Carried(actor, quest.steps[step].target);
    case QuestStepKind::kLua: return zone.QuestPredicate(actor, quest, step) ? 1 : 0;
    default: return recorded;
  }
}

bool AllDone(ZoneCore& zone, Actor& actor, const QuestDef& quest, const std::vector<int>& counts) {
  for (size_t i = 0; i < quest.steps.size(); ++i) {
    if (Reached(zone, actor, quest, i, counts[i]) < quest.steps[i].count) return false;
  }
  return true;
}

Actor* GiverIn(ZoneCore& zone, int room, const QuestDef& quest) {
  if (room < 0) return nullptr;
  for (Actor* actor : zone.room(room).actors) {
    if (!actor->is_player && actor->def->ref == quest.giver) return actor;
  }
  return nullptr;
}

bool MayTake(const Actor& actor, const QuestDef& quest) {
  if (actor.quests.count(quest.id) != 0 || actor.level < quest.level) return false;
  return quest.repeatable || actor.quests_done.count(quest.id) == 0;
}

// A quest named by id, or by the start of its name, among `candidates`.
const QuestDef* FindQuestNamed(const std::vector<const QuestDef*>& candidates,
                               std::string_view words) {
  std::string lower = Lower(Trim(words));
  if (lower.empty()) return nullptr;
  for (const QuestDef* quest : candidates) {
    if (quest->id == lower || Lower(quest->name) == lower) return quest;
  }
  for (const QuestDef* quest : candidates) {
    if (Lower(quest->name).starts_with(lower) || quest->id.starts_with(lower)) return quest;
  }
  // "errand" for "The Smith's Errand": any word of it will do.
  for (const QuestDef* quest : candidates) {
    if (Lower(quest->name).find(lower) != std::string::npos) return quest;
  }
  return nullptr;
}

void Progress(ZoneCore& zone, Actor& player, const QuestDef& quest, const QuestStep& step,
              int reached) {
  zone.Send(player, "{c}Quest '" + quest.name + "': " + StepText(zone.pack(), step) + " (" +
                        std::to_string(reached) + "/" + std::to_string(step.count) + ").{x}");
  std::vector<int> counts = player.quests.find(quest.id)->second;
  if (AllDone(zone, player, quest, counts)) {
    zone.Send(player, "{y}Quest '" + quest.name + "' is ready to turn in.{x}");
  }
}

// Advances every step of `kind` aimed at `target` in the player's quests.
void Advance(ZoneCore& zone, Actor& player, QuestStepKind kind, const Ref& target) {
  const GameRules& game = zone.pack().game;
  for (auto& [id, counts] : player.quests) {
    const QuestDef* quest = game.FindQuest(id);
    if (quest == nullptr) continue;
    for (size_t i = 0; i < quest->steps.size() && i < counts.size(); ++i) {
      const QuestStep& step = quest->steps[i];
      if (step.kind != kind || step.target != target || counts[i] >= step.count) continue;
      ++counts[i];
      Progress(zone, player, *quest, step, counts[i]);
    }
  }
}

// --- The quest command

void ListQuests(CommandContext& c) {
  const GameRules& game = c.zone.pack().game;
  if (c.actor.quests.empty()) {
    c.zone.Send(c.actor, "You have no quests.");
  } else {
    c.zone.Send(c.actor, "{w}Your quests:{x}");
    for (const auto& [id, counts] : c.actor.quests) {
      const QuestDef* quest = game.FindQuest(id);
      if (quest == nullptr) continue;
      c.zone.Send(c.actor,
                  "  " + quest->name +
                      (AllDone(c.zone, c.actor, *quest, counts) ? " (ready to turn in)" : ""));
    }
  }
  std::vector<std::string> offered;
  for (const QuestDef& quest : game.quests) {
    if (MayTake(c.actor, quest) && GiverIn(c.zone, c.actor.room, quest) != nullptr) {
      offered.push_back(quest.name);
    }
  }
  if (!offered.empty()) {
    c.zone.Send(c.actor, "{w}Offered here:{x}");
    for (const std::string& name : offered) c.zone.Send(c.actor, "  " + name);
    c.zone.Send(c.actor, "Type 'quest accept <name>' to take one, 'quest info <name>' to ask.");
  }
}

void Info(CommandContext& c, const QuestDef& quest) {
  c.zone.Send(
      c.actor, "{w}" + quest.name + "{x}" + (quest.repeatable ? " (repeatable)" : "") + ", from " +
                   [&] {
                     const MobDef* giver = c.zone.pack().FindMob(quest.giver);
                     return giver ? giver->name : quest.giver.ToString();
                   }() +
                   ".");
  if (!quest.description.empty()) c.zone.Send(c.actor, quest.description);
  auto active = c.actor.quests.find(quest.id);
  for (size_t i = 0; i < quest.steps.size(); ++i) {
    const QuestStep& step = quest.steps[i];
    std::string line = "  - " + StepText(c.zone.pack(), step);
    if (active != c.actor.quests.end()) {
      int reached = std::min(step.count, Reached(c.zone, c.actor, quest, i, active->second[i]));
      line += " (" + std::to_string(reached) + "/" + std::to_string(step.count) + ")";
    } else if (step.count > 1) {
      line += " (" + std::to_string(step.count) + ")";
    }
    c.zone.Send(c.actor, line);
  }
  std::string reward;
  if (quest.exp > 0) reward = std::to_string(quest.exp) + " experience";
  if (quest.coins > 0)
    reward += (reward.empty() ? "" : ", ") + std::to_string(quest.coins) + " coins";
  for (const Ref& ref : quest.items) {
    if (const ItemDef* item = c.zone.pack().FindItem(ref)) {
      reward += (reward.empty() ? "" : ", ") + item->name;
    }
  }
  if (!reward.empty()) c.zone.Send(c.actor, "Reward: " + reward + ".");
  if (c.actor.level < quest.level) {
    c.zone.Send(c.actor, "You must be level " + std::to_string(quest.level) + " to take it.");
  }
}

void Accept(CommandContext& c, const QuestDef& quest) {
  Actor* giver = GiverIn(c.zone, c.actor.room, quest);
  if (giver == nullptr) {
    c.zone.Send(c.actor, "Whoever offers that quest is not here.");
    return;
  }
  if (c.actor.quests.count(quest.id) != 0) {
    c.zone.Send(c.actor, "You are already on that quest.");
    return;
  }
  if (!MayTake(c.actor, quest)) {
    c.zone.Send(c.actor, c.actor.level < quest.level
                             ? "You must be level " + std::to_string(quest.level) + " to take it."
                             : std::string("You have already done that quest."));
    return;
  }
  if (c.actor.quests.size() >= limits::kActiveQuestsMax) {
    c.zone.Send(c.actor, "You have too many quests already; finish or abandon one.");
    return;
  }
  c.actor.quests[quest.id] = std::vector<int>(quest.steps.size(), 0);
  c.zone.Send(c.actor, "{y}You take the quest '" + quest.name + "'.{x}");
  c.zone.QuestDialogue(*giver, c.actor, quest, "offer", quest.offer);
  Info(c, quest);
  c.zone.QuestVisit(c.actor);  // standing in the room to visit already counts
  c.zone.Save(c.actor, SaveReason::kLevel);
}

void Complete(CommandContext& c, const QuestDef& quest) {
  auto active = c.actor.quests.find(quest.id);
  if (active == c.actor.quests.end()) {
    c.zone.Send(c.actor, "You are not on that quest.");
    return;
  }
  Actor* giver = GiverIn(c.zone, c.actor.room, quest);
  if (giver == nullptr) {
    c.zone.Send(c.actor, "Return to whoever gave you the quest to turn it in.");
    return;
  }
  if (!AllDone(c.zone, c.actor, quest, std::vector<int>(active->second))) {
    c.zone.Send(c.actor, "You have not finished '" + quest.name + "' yet.");
    Info(c, quest);
    return;
  }
  for (const QuestStep& step : quest.steps) {
    if (step.kind != QuestStepKind::kFetch) continue;
    for (int i = 0; i < step.count; ++i) {
      for (const auto& held : c.actor.inventory) {
        if (held->def != nullptr && held->def->ref == step.target) {
          c.zone.Send(c.actor, "You give " + held->Name() + " to " + giver->name + ".");
          (void)c.zone.TakeItem(c.actor.inventory, held.get());
          break;
        }
      }
    }
  }
  c.actor.quests.erase(active);
  ++c.actor.quests_done[quest.id];
  c.zone.Send(c.actor, "{y}You complete the quest '" + quest.name + "'!{x}");
  c.zone.QuestDialogue(*giver, c.actor, quest, "complete", quest.complete);
  if (quest.coins > 0) {
    c.actor.gold += quest.coins;
    c.zone.Send(c.actor, "You receive " + std::to_string(quest.coins) + " coins.");
  }
  for (const Ref& ref : quest.items) {
    if (const ItemDef* item = c.zone.pack().FindItem(ref)) {
      c.actor.inventory.push_back(c.zone.MakeItem(*item));
      c.zone.Send(c.actor, "You receive " + item->name + ".");
    }
  }
  c.zone.GainExp(c.actor, quest.exp);
  c.zone.MarkDirty(c.actor);
  c.zone.Save(c.actor, SaveReason::kLevel);
}

void Quest(CommandContext& c) {
  const GameRules& game = c.zone.pack().game;
  if (game.quests.empty()) {
    c.zone.Send(c.actor, "This world has no quests.");
    return;
  }
  auto [sub, rest] = SplitWord(c.args);
  std::string action = Lower(sub);
  if (action.empty() || action == "list") return ListQuests(c);
  std::vector<const QuestDef*> all, mine, here;
  for (const QuestDef& quest : game.quests) {
    all.push_back(&quest);
    if (c.actor.quests.count(quest.id) != 0) mine.push_back(&quest);
    if (GiverIn(c.zone, c.actor.room, quest) != nullptr) here.push_back(&quest);
  }
  const QuestDef* quest = nullptr;
  if (action == "info") {
    quest = FindQuestNamed(mine, rest);
    if (quest == nullptr) quest = FindQuestNamed(all, rest);
  } else if (action == "accept") {
    quest = FindQuestNamed(here, rest);
  } else if (action == "abandon") {
    quest = FindQuestNamed(mine, rest);
  } else if (action == "complete") {
    if (Trim(rest).empty()) {
      // The first quest of this room's givers that is ready.
      for (const QuestDef* candidate : mine) {
        if (GiverIn(c.zone, c.actor.room, *candidate) != nullptr &&
            AllDone(c.zone, c.actor, *candidate,
                    std::vector<int>(c.actor.quests.find(candidate->id)->second))) {
          quest = candidate;
          break;
        }
      }
      if (quest == nullptr && !mine.empty()) quest = mine.front();
    } else {
      quest = FindQuestNamed(mine, rest);
    }
  } else {
    c.zone.Send(c.actor,
                "Usage: quest [list | info <quest> | accept <quest> | abandon <quest> | "
                "complete [quest]]");
    return;
  }
  if (quest == nullptr) {
    c.zone.Send(c.actor, "No such quest" +
                             std::string(action == "accept" ? " is offered here." : " of yours.") +
                             " Type 'quest' for a list.");
    return;
  }
  if (action == "info") return Info(c, *quest);
  if (action == "accept") return Accept(c, *quest);
  if (action == "complete") return Complete(c, *quest);
  c.actor.quests.erase(quest->id);
  c.zone.Send(c.actor, "You abandon the quest '" + quest->name + "'. You may take it again.");
  c.zone.Save(c.actor, SaveReason::kLevel);
}

}  // namespace

void ZoneCore::QuestKill(Actor& player, const MobDef& victim) {
  Advance(*this, player, QuestStepKind::kKill, victim.ref);
}

void ZoneCore::QuestVisit(Actor& player) {
  if (player.room < 0) return;
  Advance(*this, player, QuestStepKind::kVisit, room(player.room).ref);
}

void ZoneCore::QuestTalk(Actor& speaker) {
  if (speaker.room < 0) return;
  std::vector<Ref> mobs;
  for (const Actor* actor : room(speaker.room).actors) {
    if (!actor->is_player) mobs.push_back(actor->def->ref);
  }
  for (const Ref& mob : mobs) Advance(*this, speaker, QuestStepKind::kTalk, mob);
}

void ZoneCore::QuestDialogue(Actor& giver, Actor& player, const QuestDef& quest,
                             const std::string& event, const std::string& text) {
  if (!text.empty()) ScriptSay(giver.id, text);
  const std::string& script = giver.def->script;
  if (script.empty()) return;
  EnsureScript(script);
  if (!lua_ || !lua_->Has(script, "on_quest")) return;
  lua_->Call(script, "on_quest", {LuaActor{player.id}, quest.id, event, LuaActor{giver.id}});
}

void RegisterQuestCommands(CommandRegistry& r) {
  r.Add({"quest",
         {"quests"},
         Position::kResting,
         "quest [list | info <quest> | accept <quest> | abandon <quest> | complete [quest]]",
         "Quests: what you have taken and what the people here offer; take one, ask about it, "
         "give it up, or turn it in to its giver for the reward.",
         Quest});
}

}  // namespace telos::world
