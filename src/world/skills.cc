// Races, classes, skills and spells: assigning a class on admission, level growth, and using a
// skill (cost, proficiency, lag, cooldown, the effect). Content is game.toml (docs/content.md).
//
// Every roll is drawn from the zone's seeded Random and every wait (lag, cooldown, a summon's
// lifetime) is an absolute instant on the injected Clock, so a fight with spells replays exactly
// from the zone's seed and clock, and a wait follows the player into any zone and session.
#include <algorithm>
#include <chrono>

#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

int Roll(Random& random, const Dice& dice) {
  int total = dice.bonus;
  for (int i = 0; i < dice.count; ++i) total += static_cast<int>(random.Uniform(1, dice.sides));
  return total;
}

int Bonus(int stat) {
  return (stat - 13) / 2;
}

Stats Combine(const RaceDef& race, const ClassDef& cls) {
  auto clamp = [](int value) { return std::clamp(value, 3, 25); };
  return Stats{clamp(race.stats.strength + cls.stats.strength),
               clamp(race.stats.dexterity + cls.stats.dexterity),
               clamp(race.stats.constitution + cls.stats.constitution),
               clamp(race.stats.intelligence + cls.stats.intelligence),
               clamp(race.stats.wisdom + cls.stats.wisdom)};
}

}  // namespace

void ZoneCore::AssignClass(Actor& a, const CharacterState& s) {
  const GameRules& game = pack_->game;
  a.practices = s.practices;
  a.trains = s.trains;
  a.may_choose = s.may_choose;
  for (const auto& [id, counts] : s.quests) {
    const QuestDef* quest = game.FindQuest(id);
    if (quest == nullptr) continue;  // a quest since removed: dropped
    std::vector<int> steps = counts;
    steps.resize(quest->steps.size(), 0);  // a quest whose steps changed keeps what fits
    a.quests[id] = std::move(steps);
  }
  a.quests_done.insert(s.quests_done.begin(), s.quests_done.end());
  // Waits that came with the character, clamped to what the skill allows now: a pack that
  // shortened a cooldown, or a state from a clock running ahead, cannot lock a skill longer.
  const int64_t now = NowMs();
  if (s.lag_until_ms > now) a.lag_until_ms = std::min(s.lag_until_ms, now + limits::kSkillLagMsMax);
  for (const auto& [id, until_ms] : s.cooldowns) {
    const SkillDef* skill = game.FindSkill(id);
    if (skill == nullptr || until_ms <= now) continue;
    a.cooldown_until_ms[id] = std::min(until_ms, now + skill->cooldown_ms);
  }
  for (const auto& [id, proficiency] : s.skills) {
    if (game.FindSkill(id) != nullptr) a.skills[id] = proficiency;  // a skill since removed: gone
  }
  if (game.empty()) return;
  a.race = game.FindRace(s.race);
  a.char_class = game.FindClass(s.char_class);
  const bool fresh = s.char_class.empty() && s.may_choose && s.level == 1 && s.exp == 0;
  if (a.race == nullptr) a.race = game.FindRace(game.default_race);
  if (a.char_class == nullptr) a.char_class = game.FindClass(game.default_class);
  // A brand-new character starts as the defaults, fully (stats and points), until it chooses;
  // an established one (saved before classes, or whose class left the pack) keeps its stats.
  if (fresh) StartAs(a, *a.race, *a.char_class);
}

void ZoneCore::StartAs(Actor& a, const RaceDef& race, const ClassDef& cls) {
  a.race = &race;
  a.char_class = &cls;
  a.stats = Combine(race, cls);
  a.max_hp = std::max(1, cls.hp + Bonus(a.stats.constitution) * 2);
  a.max_mana = std::max(0, cls.mana + Bonus(a.stats.intelligence) * 2);
  a.max_moves = std::max(0, cls.moves + Bonus(a.stats.dexterity) * 2);
  a.hp = a.max_hp;
  a.mana = a.max_mana;
  a.moves = a.max_moves;
  a.skills.clear();
  // Enough to learn the first skills from a trainer.
  a.practices = std::max(2, cls.practices_per_level * 2);
  a.trains = 0;
  MarkDirty(a);
}

void ZoneCore::GrowLevel(Actor& a) {
  const ClassDef& cls = *a.char_class;
  a.max_hp += std::max(1, cls.hp_per_level + Bonus(a.stats.constitution));
  a.max_mana += std::max(0, cls.mana_per_level + Bonus(a.stats.intelligence));
  a.max_moves += std::max(0, cls.moves_per_level + Bonus(a.stats.dexterity));
  a.practices += cls.practices_per_level;
  a.trains += cls.trains_per_level;
  a.may_choose = false;  // the choice is for new characters: it closes at level 2
  for (const ClassSkill& entry : cls.skills) {
    if (entry.level == a.level) {
      if (const SkillDef* skill = pack_->game.FindSkill(entry.skill)) {
        Send(a, "{c}You may now learn " + skill->name + " from a trainer.{x}");
      }
    }
  }
}

Actor* ZoneCore::TrainerIn(int room_index) {
  if (room_index < 0) return nullptr;
  for (Actor* actor : room(room_index).actors) {
    if (!actor->is_player && (actor->def->flags & kMobTrainer) != 0) return actor;
  }
  return nullptr;
}

bool ZoneCore::UseSkill(Actor& user, const SkillDef& skill, std::string_view args) {
  const bool spell = skill.kind == SkillKind::kSpell;
  int proficiency = 100;  // mobs know their spells
  if (user.is_player) {
    auto known = user.skills.find(skill.id);
    if (known == user.skills.end()) {
      Send(user, std::string(spell ? "You do not know the spell '" : "You do not know how to ") +
                     skill.name + (spell ? "'." : "."));
      return false;
    }
    proficiency = known->second;
  }
  if (user.position < Position::kFighting) {
    Send(user, "You need to stand up first.");
    return false;
  }
  const int64_t now = NowMs();
  if (now < user.lag_until_ms) {
    Send(user, "You are still recovering from your last effort.");
    return false;
  }
  if (auto ready = user.cooldown_until_ms.find(skill.id);
      ready != user.cooldown_until_ms.end() && now < ready->second) {
    int64_t seconds = (ready->second - now + 999) / 1000;
    Send(user, Capitalize(skill.name) + " is not ready yet (" + std::to_string(seconds) +
                   (seconds == 1 ? " second)." : " seconds)."));
    return false;
  }

  // Targets: resolved before anything is paid, so a wrong name costs nothing.
  std::vector<Actor*> targets;
  Item* object = nullptr;
  switch (skill.target) {
    case SkillTarget::kSelf: targets.push_back(&user); break;
    case SkillTarget::kCharacter: {
      Actor* target = nullptr;
      if (!args.empty()) {
        target = FindInRoom(user, args);
        if (target == nullptr) {
          Send(user, "You do not see '" + std::string(args) + "' here.");
          return false;
        }
      } else if (skill.hostile) {
        target = user.fighting != 0 ? FindActor(user.fighting) : nullptr;
        if (target == nullptr) {
          Send(user, Capitalize(skill.name) + " whom?");
          return false;
        }
      } else {
        target = &user;
      }
      targets.push_back(target);
      break;
    }
    case SkillTarget::kRoom:
      if (user.room >= 0) {
        // The other side for harm (players against mobs), the user's own side for help.
        // A summoned mob fights on its summoner's side.
        const bool user_side = user.is_player || user.summoned;
        for (Actor* other : room(user.room).actors) {
          bool same_side = (other->is_player || other->summoned) == user_side;
          if (skill.hostile ? !same_side : same_side) targets.push_back(other);
        }
      }
      if (targets.empty()) {
        Send(user, "There is no one here for that.");
        return false;
      }
      break;
    case SkillTarget::kObject:
      if (args.empty()) {
        Send(user, Capitalize(skill.name) + " what?");
        return false;
      }
      object = FindItemIn(user.inventory, args);
      if (object == nullptr && user.room >= 0) object = FindItemIn(room(user.room).items, args);
      if (object == nullptr) {
        Send(user, "You do not see '" + std::string(args) + "' here.");
        return false;
      }
      break;
  }
  if (skill.hostile) {
    for (Actor* target : targets) {
      if (target == &user) {
        Send(user, "You think better of it.");
        return false;
      }
      if (user.is_player && target->is_player) {
        Send(user, "You cannot attack other players.");
        return false;
      }
    }
    if (!CanFightHere(user)) {
      Send(user, "This is a place of peace. No fighting here.");
      return false;
    }
  }
  if (user.is_player && (user.mana < skill.mana || user.moves < skill.moves)) {
    Send(user, user.mana < skill.mana ? "You do not have enough mana."
                                      : "You are too exhausted for that.");
    return false;
  }

  // Committed: the roll, the cost (half on a failure), the wait.
  const bool works = random_.Uniform(1, 100) <= proficiency;
  if (user.is_player) {
    user.mana -= works ? skill.mana : skill.mana / 2;
    user.moves -= works ? skill.moves : skill.moves / 2;
    MarkDirty(user);
  }
  user.lag_until_ms = now + skill.lag_ms;
  if (skill.cooldown_ms > 0) user.cooldown_until_ms[skill.id] = now + skill.cooldown_ms;
  // Use teaches, failures included; the better one is, the less there is to learn.
  if (user.is_player && proficiency < 100 && random_.Uniform(1, 100) > proficiency) {
    user.skills[skill.id] = proficiency + 1;
    Send(user, "{c}You have become better at " + skill.name + "!{x}");
  }
  if (!works) {
    Send(user, spell ? "You lose your concentration." : "You fail to " + skill.name + ".");
    ToRoom(user.room, user.Display() + (spell ? " mutters, but nothing happens." : " fumbles."),
           user.id);
    return true;
  }
  if (!skill.message.empty()) Send(user, skill.message);
  if (spell)
    ToRoom(user.room, user.Display() + " utters the words, '" + skill.name + "'.", user.id);

  const int power = Bonus(spell ? user.stats.intelligence : user.stats.strength);
  std::vector<uint64_t> ids;
  for (Actor* target : targets) ids.push_back(target->id);
  switch (skill.effect) {
    case SkillEffect::kDamage:
      for (uint64_t id : ids) {
        Actor* target = FindActor(id);
        if (target == nullptr || user.removed) break;
        if (target->room != user.room) continue;
        int amount = std::max(1, Roll(random_, *skill.amount) + (user.is_player ? power : 0));
        Send(user, "{g}Your " + skill.name + " hits " + target->name + " for " +
                       std::to_string(amount) + ".{x}");
        Send(*target, "{r}" + user.Display() + "'s " + skill.name + " hits you for " +
                          std::to_string(amount) + ".{x}");
        ToRoom(user.room, user.Display() + "'s " + skill.name + " hits " + target->name + ".",
               user.id, target->id);
        if (target->fighting == 0 || user.fighting == 0) StartFight(user, *target);
        Damage(*target, amount, &user);
      }
      break;
    case SkillEffect::kHeal:
      for (uint64_t id : ids) {
        Actor* target = FindActor(id);
        if (target == nullptr) continue;
        int amount = std::max(1, Roll(random_, *skill.amount) + std::max(0, power));
        Heal(*target, amount);
        Send(*target, "{g}You feel better.{x}");
        if (target != &user) Send(user, "You heal " + target->name + ".");
      }
      break;
    case SkillEffect::kAffect:
      for (uint64_t id : ids) {
        Actor* target = FindActor(id);
        if (target == nullptr || user.removed) continue;
        if (target != &user) {
          Send(user, "Your " + skill.name + " takes hold of " + target->name + ".");
        }
        ApplyAffect(*target, *skill.affect, skill.affect_seconds * 1000);
        if (skill.hostile && (target->fighting == 0 || user.fighting == 0)) {
          StartFight(user, *target);
        }
      }
      break;
    case SkillEffect::kTeleport: {
      // Whoever was fighting the user loses them.
      StopFighting(user);
      for (uint64_t id : std::vector<uint64_t>(fighters_.begin(), fighters_.end())) {
        Actor* other = FindActor(id);
        if (other != nullptr && other->fighting == user.id) StopFighting(*other);
      }
      if (user.is_player) {
        ToRoom(user.room, user.Display() + " vanishes in a flash of light.", user.id);
        SendPlayerTo(user, skill.to, {"You appear in a flash of light."});
      } else if (int to = LocalRoom(skill.to); to >= 0) {
        MoveLocal(user, to, "vanishes in a flash of light.", "appears in a flash of light.", false);
      }
      break;
    }
    case SkillEffect::kSummon: {
      // Bounded per summoner (one player cannot take every slot) and over the whole zone.
      size_t in_zone = 0, own = 0;
      for (uint64_t id : summons_) {
        const Actor* summon = FindActor(id);
        if (summon == nullptr || summon->removed) continue;
        ++in_zone;
        own += summon->summoner == user.id ? 1 : 0;
      }
      const MobDef* def = pack_->FindMob(skill.mob);
      if (def == nullptr || in_zone >= limits::kSummonedMobsPerZoneMax ||
          own >= limits::kSummonsPerOwnerMax || user.room < 0) {
        Send(user, "Nothing answers your call.");
        break;
      }
      Actor& mob = SpawnMob(*def, user.room, -1);
      mob.summoned = true;
      mob.summoner = user.id;
      mob.summon_ends_ms = now + limits::kSummonLifetimeMs;
      // It brings nothing to lose: what the prototype carries would be loot from thin air.
      mob.inventory.clear();
      for (auto& item : mob.equipment) item.reset();
      mob.gold = 0;
      summons_.insert(mob.id);
      Send(user, Capitalize(mob.name) + " answers your call.");
      ToRoom(user.room, Capitalize(mob.name) + " appears at " + user.name + "'s call.", user.id);
      if (Actor* enemy = user.fighting != 0 ? FindActor(user.fighting) : nullptr) {
        if (enemy->room == mob.room) StartFight(mob, *enemy);
      }
      break;
    }
    case SkillEffect::kLua: {
      EnsureScript(skill.script);
      if (!lua_ || !lua_->Has(skill.script, skill.function)) {
        Send(user, "Nothing happens.");
        break;
      }
      std::vector<LuaArg> lua_args;
      lua_args.emplace_back(std::in_place_type<LuaActor>, LuaActor{user.id});
      if (object != nullptr) {
        lua_args.emplace_back(std::in_place_type<LuaItem>,
                              LuaItem{object->id, object->Name(),
                                      object->def ? object->def->ref.ToString() : std::string()});
      } else if (!targets.empty()) {
        lua_args.emplace_back(std::in_place_type<LuaActor>, LuaActor{targets.front()->id});
      }
      lua_->Call(skill.script, skill.function, lua_args);
      break;
    }
  }
  return true;
}

void ZoneCore::MobCast(Actor& mob) {
  const std::vector<std::string>& spells = mob.def->spells;
  if (random_.Uniform(1, limits::kMobCastOneInRounds) != 1) return;
  const size_t pick =
      static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(spells.size()) - 1));
  const SkillDef* skill = pack_->game.FindSkill(spells[pick]);
  if (skill == nullptr) return;
  // Help spells go to the caster itself, and only when it is hurt.
  if (!skill->hostile && mob.hp * 2 > mob.max_hp) return;
  if (skill->target == SkillTarget::kObject) return;
  // Quietly skip a spell that is cooling down: a mob says nothing about it.
  const int64_t now = NowMs();
  if (now < mob.lag_until_ms) return;
  if (auto ready = mob.cooldown_until_ms.find(skill->id);
      ready != mob.cooldown_until_ms.end() && now < ready->second) {
    return;
  }
  UseSkill(mob, *skill, "");
}

void ZoneCore::ExpireSummons() {
  const int64_t now = NowMs();
  for (auto it = summons_.begin(); it != summons_.end();) {
    Actor* summon = FindActor(*it);
    if (summon == nullptr || summon->removed) {  // killed, or gone another way
      it = summons_.erase(it);
      continue;
    }
    const Actor* owner = FindActor(summon->summoner);
    if (now < summon->summon_ends_ms && owner != nullptr && !owner->removed) {
      ++it;
      continue;
    }
    ToRoom(summon->room, Capitalize(summon->name) + " fades away.", summon->id);
    RemoveActor(*summon);
    it = summons_.erase(it);
  }
}

int64_t ZoneCore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             deps_.clock->WallNow().time_since_epoch())
      .count();
}

}  // namespace telos::world
