// ZoneCore's side of Lua: running hooks, and the ScriptHost calls scripts make.
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {

void ZoneCore::RunRoomHook(int room_index, const char* hook, Actor& actor) {
  if (room_index < 0 || !lua_) return;
  const std::string& script = room(room_index).def->script;
  if (script.empty()) return;
  lua_->Call(script, hook, {LuaActor{actor.id}});
}

void ZoneCore::RunSpeechHooks(Actor& speaker, const std::string& text) {
  if (!lua_ || speaker.room < 0) return;
  int room_index = speaker.room;
  const std::string& room_script = room(room_index).def->script;
  if (!room_script.empty()) lua_->Call(room_script, "on_speech", {LuaActor{speaker.id}, text});
  // A hook may move or destroy actors: the mobs with scripts are taken first, and each is
  // looked up again before its hook runs.
  std::vector<uint64_t> scripted;
  for (const Actor* actor : room(room_index).actors) {
    if (!actor->is_player && actor != &speaker && !actor->def->script.empty()) {
      scripted.push_back(actor->id);
    }
  }
  for (uint64_t id : scripted) {
    Actor* mob = FindActor(id);
    if (mob == nullptr) continue;
    // Mob-bound hooks also get the mob itself as a third argument (docs/content.md).
    lua_->Call(mob->def->script, "on_speech", {LuaActor{speaker.id}, text, LuaActor{mob->id}});
  }
}

void ZoneCore::RunMobHeartbeats() {
  std::vector<std::pair<uint64_t, const std::string*>> due;
  for (const auto& [id, actor] : actors_) {
    if (actor->is_player || actor->def->script.empty()) continue;
    due.emplace_back(id, &actor->def->script);
  }
  for (const auto& [id, script] : due) {
    Actor* mob = FindActor(id);
    if (mob == nullptr || !lua_->Has(*script, "on_heartbeat")) continue;
    lua_->Call(*script, "on_heartbeat", {LuaActor{id}});
  }
}

bool ZoneCore::RunZoneCommand(Actor& actor, const ZoneCommandDef& command, std::string_view args) {
  EnsureScript(command.script);
  if (!lua_ || !lua_->Has(command.script, command.function)) return false;
  lua_->Call(command.script, command.function, {LuaActor{actor.id}, std::string(args)});
  return true;
}

void ZoneCore::RunUseHook(Actor& actor, Item& item) {
  if (item.def == nullptr || item.def->script.empty()) return;
  EnsureScript(item.def->script);
  if (!lua_) return;
  lua_->Call(item.def->script, "on_use",
             {LuaActor{actor.id}, LuaItem{item.id, item.Name(), item.def->ref.ToString()}});
}

const ZoneCommandDef* ZoneCore::FindZoneCommand(std::string_view word, bool exact) const {
  const ZoneCommandDef* found = nullptr;
  for (const ZoneCommandDef& command : zone_.commands) {
    if (command.name == word) return &command;
    if (!exact && !word.empty() && command.name.starts_with(word)) {
      if (found != nullptr) return nullptr;  // ambiguous
      found = &command;
    }
  }
  return exact ? nullptr : found;
}

std::optional<ActorInfo> ZoneCore::DescribeActor(uint64_t id) {
  Actor* actor = FindActor(id);
  if (actor == nullptr) return std::nullopt;
  ActorInfo info;
  info.id = actor->id;
  info.name = actor->is_player ? actor->name : actor->name;
  info.is_player = actor->is_player;
  info.level = actor->level;
  info.hp = actor->hp;
  info.max_hp = actor->max_hp;
  if (actor->room >= 0) info.room = room(actor->room).def->id;
  return info;
}

void ZoneCore::ScriptSend(uint64_t id, std::string_view text) {
  if (Actor* actor = FindActor(id)) Send(*actor, std::string(text));
}

void ZoneCore::ScriptEcho(std::string_view room_id, std::string_view text) {
  std::optional<Ref> ref = ParseRef(room_id, zone_.id);
  if (!ref) return;
  ToRoom(LocalRoom(*ref), std::string(text));
}

void ZoneCore::ScriptSay(uint64_t id, std::string_view text) {
  Actor* actor = FindActor(id);
  if (actor == nullptr || actor->room < 0) return;
  ToRoom(actor->room, actor->Display() + " says, '" + std::string(text) + "'", actor->id);
  if (actor->is_player) Send(*actor, "You say, '" + std::string(text) + "'");
}

void ZoneCore::ScriptEmote(uint64_t id, std::string_view text) {
  Actor* actor = FindActor(id);
  if (actor == nullptr || actor->room < 0) return;
  ToRoom(actor->room, actor->Display() + " " + std::string(text));
}

bool ZoneCore::ScriptMove(uint64_t id, std::string_view room_ref) {
  Actor* actor = FindActor(id);
  std::optional<Ref> ref = ParseRef(room_ref, zone_.id);
  if (actor == nullptr || !ref) return false;
  int target = LocalRoom(*ref);
  if (target < 0) return false;
  if (actor->fighting != 0) StopFighting(*actor);
  MoveLocal(*actor, target, "vanishes.", "appears.", true);
  return true;
}

void ZoneCore::ScriptHeal(uint64_t id, int amount) {
  if (Actor* actor = FindActor(id)) Heal(*actor, amount);
}

void ZoneCore::ScriptDamage(uint64_t id, int amount) {
  if (Actor* actor = FindActor(id)) Damage(*actor, amount, nullptr);
}

bool ZoneCore::ScriptAffect(uint64_t id, std::string_view name, int64_t seconds) {
  Actor* actor = FindActor(id);
  std::optional<AffectKind> kind = ParseAffectKind(name);
  if (actor == nullptr || !kind) return false;
  ApplyAffect(*actor, *kind, seconds * 1000);
  return true;
}

bool ZoneCore::ScriptGive(uint64_t id, std::string_view item_ref) {
  Actor* actor = FindActor(id);
  std::optional<Ref> ref = ParseRef(item_ref, zone_.id);
  if (actor == nullptr || !ref) return false;
  const ItemDef* def = pack_->FindItem(*ref);
  if (def == nullptr || actor->inventory.size() >= limits::kInventoryItemsMax) return false;
  actor->inventory.push_back(MakeItem(*def));
  return true;
}

int64_t ZoneCore::ScriptRandom(int64_t lo, int64_t hi) {
  return random_.Uniform(lo, hi);
}

const FlagValue* ZoneCore::ScriptFlag(std::string_view key) {
  auto it = flags_.find(key);
  return it == flags_.end() ? nullptr : &it->second;
}

bool ZoneCore::ScriptSetFlag(std::string_view key, FlagValue value) {
  if (key.size() > limits::kLuaFlagBytesMax) return false;
  if (const auto* text = std::get_if<std::string>(&value)) {
    if (text->size() > limits::kLuaFlagBytesMax) return false;
    if (text->empty()) {  // nil or "" clears the flag
      auto it = flags_.find(key);
      if (it != flags_.end()) flags_.erase(it);
      return true;
    }
  }
  auto it = flags_.find(key);
  if (it == flags_.end()) {
    if (flags_.size() >= limits::kLuaFlagsPerZoneMax) return false;
    flags_.emplace(std::string(key), std::move(value));
  } else {
    it->second = std::move(value);
  }
  return true;
}

}  // namespace telos::world
