// Combat: fights, rounds, hits and damage, death and corpses, experience and levels, fleeing.
#include <algorithm>

#include "zone_core.h"

namespace telos::world {
namespace {

int64_t ExpForNextLevel(int level) {
  return int64_t{100} * level * level;
}

int RollDice(Random& random, const Dice& dice) {
  int total = dice.bonus;
  for (int i = 0; i < dice.count; ++i) total += static_cast<int>(random.Uniform(1, dice.sides));
  return total;
}

Dice WeaponDice(const Actor& actor) {
  const auto& weapon = actor.equipment[static_cast<size_t>(WearSlot::kWield)];
  if (weapon && weapon->def != nullptr && weapon->def->damage) return *weapon->def->damage;
  if (!actor.is_player) return actor.def->damage;
  return Dice{1, 3, 0};
}

int HitrollOf(const Actor& actor) {
  return actor.is_player ? actor.level / 2 + (actor.stats.dexterity - 13) / 2 : actor.def->hitroll;
}

}  // namespace

bool ZoneCore::CanFightHere(const Actor& actor) const {
  return actor.room >= 0 && !rooms_[static_cast<size_t>(actor.room)].Has(kRoomSafe);
}

int ZoneCore::ArmorOf(const Actor& actor) const {
  int armor = actor.is_player ? 0 : actor.def->armor;
  if (actor.HasAffect(AffectKind::kShield)) armor += kShieldArmor;
  for (const auto& item : actor.equipment) {
    if (item && item->def != nullptr) armor += item->def->armor;
  }
  return armor;
}

void ZoneCore::StartFight(Actor& attacker, Actor& victim) {
  if (&attacker == &victim) return;
  attacker.fighting = victim.id;
  attacker.position = Position::kFighting;
  fighters_.insert(attacker.id);
  if (victim.fighting == 0) {
    victim.fighting = attacker.id;
    victim.position = Position::kFighting;
    fighters_.insert(victim.id);
  }
  MarkDirty(attacker);
  MarkDirty(victim);
}

void ZoneCore::StopFighting(Actor& actor) {
  actor.fighting = 0;
  if (actor.position == Position::kFighting) actor.position = Position::kStanding;
  fighters_.erase(actor.id);
}

void ZoneCore::GainExp(Actor& actor, int64_t amount) {
  if (!actor.is_player || amount <= 0) return;
  actor.exp += amount;
  Send(actor, "You receive " + std::to_string(amount) + " experience.");
  bool levelled = false;
  while (actor.level < 100 && actor.exp >= ExpForNextLevel(actor.level)) {
    ++actor.level;
    if (actor.char_class != nullptr) {
      GrowLevel(actor);
    } else {
      actor.max_hp += 10 + std::max(0, (actor.stats.constitution - 13) / 2);
      actor.max_mana += 5;
      actor.max_moves += 5;
    }
    actor.hp = actor.max_hp;
    Send(actor, "{y}You are now level " + std::to_string(actor.level) + "!{x}");
    levelled = true;
  }
  MarkDirty(actor);
  if (levelled) Save(actor, SaveReason::kLevel);
}

void ZoneCore::CombatRound() {
  std::vector<uint64_t> ids(fighters_.begin(), fighters_.end());
  for (uint64_t id : ids) {
    Actor* attacker = FindActor(id);
    if (attacker == nullptr || attacker->fighting == 0) continue;
    int attacks = attacker->HasAffect(AffectKind::kHaste) ? 2 : 1;
    for (int i = 0; i < attacks; ++i) {
      Actor* victim = FindActor(attacker->fighting);
      if (victim == nullptr || victim->room != attacker->room) {
        StopFighting(*attacker);
        break;
      }
      int chance = 55 + 4 * (attacker->level - victim->level) + 3 * HitrollOf(*attacker) -
                   ArmorOf(*victim) / 4;
      chance = std::clamp(chance, 10, 95);
      std::string a_name = attacker->Display();
      std::string v_name = victim->name;
      if (random_.Uniform(1, 100) > chance) {
        Send(*attacker, "You miss " + v_name + ".");
        Send(*victim, a_name + " misses you.");
        ToRoom(attacker->room, a_name + " misses " + v_name + ".", attacker->id, victim->id);
        continue;
      }
      int damage = RollDice(random_, WeaponDice(*attacker));
      if (attacker->is_player) damage += (attacker->stats.strength - 13) / 2;
      damage = std::max(1, damage - ArmorOf(*victim) / 5);
      Send(*attacker, "{g}You hit " + v_name + " for " + std::to_string(damage) + ".{x}");
      Send(*victim, "{r}" + a_name + " hits you for " + std::to_string(damage) + ".{x}");
      ToRoom(attacker->room, a_name + " hits " + v_name + ".", attacker->id, victim->id);
      victim->hp -= damage;
      MarkDirty(*victim);
      if (victim->hp <= 0) {
        Die(*victim, attacker);
        break;
      }
    }
    if (attacker->removed || attacker->is_player || attacker->fighting == 0) continue;
    if (!attacker->def->spells.empty()) {
      MobCast(*attacker);
      if (attacker->removed || attacker->fighting == 0) continue;
    }
    const MobDef& def = *attacker->def;
    if ((def.flags & kMobFlees) != 0 && attacker->hp * 100 < attacker->max_hp * def.flee_percent) {
      Flee(*attacker);
    }
  }
}

void ZoneCore::Die(Actor& victim, Actor* killer) {
  if (victim.removed || victim.position == Position::kDead) return;
  int room_index = victim.room;
  victim.position = Position::kDead;
  ToRoom(room_index, "{r}" + victim.Display() + " is DEAD!{x}", victim.id);
  Send(victim, "{r}You have been KILLED!{x}");
  if (victim.summoned) {
    // Called up from nothing, it leaves nothing: no corpse, no coins, no exp, no quest credit,
    // no death script (which might give). Otherwise summoning and killing would be a farm.
    ToRoom(room_index, Capitalize(victim.name) + " fades away.", victim.id);
    RemoveActor(victim);
    return;
  }
  if (!victim.is_player && !victim.def->script.empty() && lua_) {
    std::vector<LuaArg> args;
    args.reserve(2);
    args.emplace_back(std::in_place_type<LuaActor>, LuaActor{victim.id});
    if (killer != nullptr) {
      args.emplace_back(std::in_place_type<LuaActor>, LuaActor{killer->id});
    } else {
      args.emplace_back(std::in_place_type<std::monostate>);
    }
    lua_->Call(victim.def->script, "on_death", args);
  }
  // The corpse keeps everything the victim carried and wore, and their coins.
  auto corpse = std::make_unique<Item>();
  corpse->id = next_item_id_++;
  corpse->corpse_of = victim.name;
  corpse->decay_heartbeat = heartbeats_ + kCorpseDecayHeartbeats;
  for (auto& item : victim.inventory) corpse->contents.push_back(std::move(item));
  victim.inventory.clear();
  for (auto& item : victim.equipment) {
    if (item) corpse->contents.push_back(std::move(item));
  }
  corpse->coins = victim.gold;
  victim.gold = 0;
  if (room_index >= 0) room(room_index).items.push_back(std::move(corpse));

  if (killer != nullptr && !killer->removed && killer != &victim) {
    StopFighting(*killer);
    if (!victim.is_player) GainExp(*killer, victim.def->exp);
    if (!victim.is_player && killer->is_player && !killer->quests.empty()) {
      QuestKill(*killer, *victim.def);
    }
  }
  // A boss's death matters beyond the zone: the fleet counts it (records, legends) and tells
  // everyone. Queued for the world's publisher; nothing here waits for it.
  if (!victim.is_player && (victim.def->flags & kMobBoss) != 0 && deps_.game_events != nullptr) {
    std::string actor = killer != nullptr && killer->is_player ? killer->name : std::string();
    deps_.game_events->Publish("boss_kill", victim.def->ref.ToString(), std::move(actor));
  }
  if (!victim.is_player) {
    RemoveActor(victim);
    return;
  }
  // A player respawns at the pack's start room with half their hit points.
  StopFighting(victim);
  for (uint64_t id : std::vector<uint64_t>(fighters_.begin(), fighters_.end())) {
    Actor* other = FindActor(id);
    if (other != nullptr && other->fighting == victim.id) StopFighting(*other);
  }
  victim.affects.clear();
  victim.hp = std::max(1, victim.max_hp / 2);
  victim.position = Position::kStanding;
  MarkDirty(victim);
  Save(victim, SaveReason::kDeath);
  SendPlayerTo(victim, pack_->start_room,
               {"You wake with a gasp, whole again. Your belongings lie where you fell."});
}

bool ZoneCore::Flee(Actor& actor) {
  if (actor.fighting == 0 || actor.room < 0) return false;
  RoomState& here = room(actor.room);
  std::vector<size_t> choices;
  for (size_t i = 0; i < here.exit_rooms.size(); ++i) {
    int target = here.exit_rooms[i];
    if (target < 0) continue;
    if (!actor.is_player && room(target).Has(kRoomNoMob)) continue;
    choices.push_back(i);
  }
  if (choices.empty() || !random_.Chance(0.75)) {
    Send(actor, "You panic, but cannot get away!");
    ToRoom(actor.room, actor.Display() + " tries to flee, but cannot get away!", actor.id);
    return false;
  }
  size_t pick =
      choices[static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(choices.size()) - 1))];
  StopFighting(actor);
  for (uint64_t id : std::vector<uint64_t>(fighters_.begin(), fighters_.end())) {
    Actor* other = FindActor(id);
    if (other != nullptr && other->fighting == actor.id) StopFighting(*other);
  }
  const std::string& dir = here.def->exits[pick].dir;
  Send(actor, "You flee " + dir + "!");
  MoveLocal(actor, here.exit_rooms[pick], "flees " + dir + "!", "arrives, out of breath.", true);
  return true;
}

}  // namespace telos::world
