// ZoneCore's side of Lua: running hooks, script timers, and the ScriptHost calls scripts make.
#include <algorithm>

#include "quest_predicate.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

ScriptOwner RoomOwner(int room_index) {
  return {ScriptOwner::Kind::kRoom, static_cast<uint64_t>(room_index)};
}
ScriptOwner MobOwner(uint64_t id) {
  return {ScriptOwner::Kind::kMob, id};
}
ScriptOwner ItemOwner(uint64_t id) {
  return {ScriptOwner::Kind::kItem, id};
}

void CollectItemIds(const std::vector<std::unique_ptr<Item>>& items, std::set<uint64_t>* ids) {
  for (const auto& item : items) {
    ids->insert(item->id);
    CollectItemIds(item->contents, ids);
  }
}

}  // namespace

bool ZoneCore::CallHook(const ScriptOwner& owner, const std::string& script, const char* function,
                        const std::vector<LuaArg>& args, bool* truthy) {
  if (!lua_) return false;
  ScriptOwner outer = hook_owner_;
  hook_owner_ = owner;
  bool ok = lua_->Call(script, function, args, truthy);
  hook_owner_ = outer;
  return ok;
}

void ZoneCore::RunRoomHook(int room_index, const char* hook, Actor& actor) {
  if (room_index < 0 || !lua_) return;
  const std::string& script = room(room_index).def->script;
  if (script.empty()) return;
  CallHook(RoomOwner(room_index), script, hook, {LuaActor{actor.id}});
}

void ZoneCore::RunSpeechHooks(Actor& speaker, const std::string& text) {
  if (!lua_ || speaker.room < 0) return;
  int room_index = speaker.room;
  const std::string& room_script = room(room_index).def->script;
  if (!room_script.empty()) {
    CallHook(RoomOwner(room_index), room_script, "on_speech", {LuaActor{speaker.id}, text});
  }
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
    CallHook(MobOwner(mob->id), mob->def->script, "on_speech",
             {LuaActor{speaker.id}, text, LuaActor{mob->id}});
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
    CallHook(MobOwner(id), *script, "on_heartbeat", {LuaActor{id}});
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
  CallHook(ItemOwner(item.id), item.def->script, "on_use",
           {LuaActor{actor.id}, ItemEvent(item).item});
}

bool ZoneCore::RunCommandHooks(Actor& actor, const std::string& verb, std::string_view args) {
  if (actor.room < 0) return false;
  // The candidates are taken first: a hook may move or destroy any of them, so each is looked
  // up again before its turn.
  struct Candidate {
    ScriptOwner owner;
    const std::string* script;
  };
  std::vector<Candidate> candidates;
  int here = actor.room;
  if (!room(here).def->script.empty()) {
    candidates.push_back({RoomOwner(here), &room(here).def->script});
  }
  for (const Actor* other : room(here).actors) {
    if (!other->is_player && !other->def->script.empty()) {
      candidates.push_back({MobOwner(other->id), &other->def->script});
    }
  }
  auto add_items = [&](const std::vector<std::unique_ptr<Item>>& items) {
    for (const auto& item : items) {
      if (item->def != nullptr && !item->def->script.empty()) {
        candidates.push_back({ItemOwner(item->id), &item->def->script});
      }
    }
  };
  add_items(actor.inventory);
  for (const auto& worn : actor.equipment) {
    if (worn && worn->def != nullptr && !worn->def->script.empty()) {
      candidates.push_back({ItemOwner(worn->id), &worn->def->script});
    }
  }
  add_items(room(here).items);
  if (candidates.empty()) return false;
  const std::string function = "on_command";
  for (const Candidate& candidate : candidates) {
    if (actor.removed) return true;
    if (actor.room != here) return false;  // moved by a hook: the verb is for the new room
    const std::string& script = *candidate.script;
    EnsureScript(script);  // an item carried in from another zone
    if (!lua_ || !lua_->Has(script, function)) continue;
    LuaArg self;  // nil for a room
    if (candidate.owner.kind == ScriptOwner::Kind::kMob) {
      Actor* mob = FindActor(candidate.owner.id);
      if (mob == nullptr || mob->removed || mob->room != here) continue;
      self = LuaActor{mob->id};
    } else if (candidate.owner.kind == ScriptOwner::Kind::kItem) {
      const Item* item = nullptr;
      for (const auto* list : {&actor.inventory, &room(here).items}) {
        for (const auto& held : *list) {
          if (held->id == candidate.owner.id) item = held.get();
        }
      }
      for (const auto& worn : actor.equipment) {
        if (worn && worn->id == candidate.owner.id) item = worn.get();
      }
      if (item == nullptr) continue;
      self = ItemEvent(*item).item;
    }
    bool handled = false;
    // A hook that fails (an error, its budget) is logged by the VM and the verb falls through.
    if (!CallHook(candidate.owner, script, function.c_str(),
                  {LuaActor{actor.id}, verb, std::string(args), self}, &handled)) {
      continue;
    }
    if (handled || actor.removed) return true;
  }
  return false;
}

ItemHookEvent ZoneCore::ItemEvent(const Item& item) {
  ItemHookEvent event{LuaItem{item.id, item.Name(), item.def ? item.def->ref.ToString() : ""},
                      item.def ? item.def->script : std::string()};
  return event;
}

void ZoneCore::RunItemHooks(const char* hook, Actor& actor, const ItemHookEvent& event,
                            Actor* receiver) {
  bool give = receiver != nullptr;
  uint64_t receiver_id = give ? receiver->id : 0;
  if (!event.script.empty()) {
    EnsureScript(event.script);
    std::vector<LuaArg> args{LuaActor{actor.id}, event.item};
    if (give) args.emplace_back(LuaActor{receiver_id});
    CallHook(ItemOwner(event.item.id), event.script, hook, args);
  }
  if (actor.removed || actor.room < 0) return;
  std::vector<uint64_t> mobs;
  if (give) {
    if (!receiver->is_player && !receiver->def->script.empty()) mobs.push_back(receiver_id);
  } else {
    for (const Actor* other : room(actor.room).actors) {
      if (!other->is_player && !other->def->script.empty()) mobs.push_back(other->id);
    }
  }
  for (uint64_t id : mobs) {
    Actor* mob = FindActor(id);
    if (mob == nullptr || mob->removed || actor.removed) continue;
    CallHook(MobOwner(id), mob->def->script, hook,
             {LuaActor{actor.id}, event.item, LuaActor{mob->id}});
  }
}

// --- Timers

uint64_t ZoneCore::ScriptAfter(const std::string& script, int ref, int64_t delay_ms, bool repeat) {
  if (timers_.size() >= limits::kLuaTimersPerZoneMax) {
    logger().Warn("script timer refused: too many timers in this zone",
                  {{"zone", zone_.id},
                   {"script", script},
                   {"limit", static_cast<int64_t>(limits::kLuaTimersPerZoneMax)}});
    return 0;
  }
  int64_t floor_ms = repeat ? limits::kLuaTimerPeriodMsMin : 0;
  delay_ms = std::clamp<int64_t>(delay_ms, floor_ms, limits::kLuaTimerDelayMsMax);
  uint64_t id = next_timer_id_++;
  timers_[id] = ScriptTimer{script, ref, deps_.clock->Now() + Millis(delay_ms),
                            repeat ? delay_ms : 0, hook_owner_};
  return id;
}

bool ZoneCore::ScriptCancel(uint64_t timer) {
  if (timers_.count(timer) == 0) return false;
  CancelTimer(timer);
  return true;
}

void ZoneCore::CancelTimer(uint64_t id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  if (lua_) lua_->Release(it->second.ref);
  timers_.erase(it);
}

std::set<uint64_t> ZoneCore::LiveItemIds() const {
  std::set<uint64_t> ids;
  for (const RoomState& r : rooms_) CollectItemIds(r.items, &ids);
  for (const auto& [id, actor] : actors_) {
    if (actor->removed) continue;
    CollectItemIds(actor->inventory, &ids);
    for (const auto& worn : actor->equipment) {
      if (!worn) continue;
      ids.insert(worn->id);
      CollectItemIds(worn->contents, &ids);
    }
  }
  return ids;
}

bool ZoneCore::OwnerAlive(const ScriptOwner& owner, const std::set<uint64_t>* items) const {
  switch (owner.kind) {
    case ScriptOwner::Kind::kZone:
    case ScriptOwner::Kind::kRoom: return true;
    case ScriptOwner::Kind::kMob: {
      auto it = actor_by_id_.find(owner.id);
      return it != actor_by_id_.end() && !it->second->removed;
    }
    case ScriptOwner::Kind::kItem: return items != nullptr && items->count(owner.id) != 0;
  }
  return false;
}

void ZoneCore::RunTimers() {
  bool any_item_owned = std::any_of(timers_.begin(), timers_.end(), [](const auto& entry) {
    return entry.second.owner.kind == ScriptOwner::Kind::kItem;
  });
  std::set<uint64_t> items;
  if (any_item_owned) items = LiveItemIds();
  if (heartbeats_ % kAffectPulseHeartbeats == 0) {
    // Orphans give their slots back within a second, even those not due for hours.
    std::vector<uint64_t> orphans;
    for (const auto& [id, timer] : timers_) {
      if (!OwnerAlive(timer.owner, &items)) orphans.push_back(id);
    }
    for (uint64_t id : orphans) CancelTimer(id);
  }
  Instant now = deps_.clock->Now();
  std::vector<std::pair<Instant, uint64_t>> due;
  for (const auto& [id, timer] : timers_) {
    if (timer.due <= now) due.emplace_back(timer.due, id);
  }
  std::sort(due.begin(), due.end());
  if (due.size() > limits::kLuaTimerFiresPerHeartbeatMax) {
    due.resize(limits::kLuaTimerFiresPerHeartbeatMax);
  }
  for (const auto& [when, id] : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;  // cancelled by an earlier callback
    if (!OwnerAlive(it->second.owner, &items)) {
      CancelTimer(id);
      continue;
    }
    ScriptTimer timer = it->second;
    if (timer.period_ms > 0) {
      it->second.due = now + Millis(timer.period_ms);
    } else {
      timers_.erase(it);  // before the call: the callback may schedule the next one
    }
    bool ok = CallRefHook(timer);
    if (timer.period_ms == 0) {
      if (lua_) lua_->Release(timer.ref);
    } else if (!ok && timers_.count(id) != 0) {
      // A repeating callback that fails would fail (and spend its budget) every period.
      logger().Warn("script timer cancelled: its callback failed",
                    {{"zone", zone_.id}, {"script", timer.script}});
      CancelTimer(id);
    }
    // A callback may have changed what lives here.
    if (any_item_owned) items = LiveItemIds();
  }
}

bool ZoneCore::CallRefHook(const ScriptTimer& timer) {
  if (!lua_) return false;
  ScriptOwner outer = hook_owner_;
  hook_owner_ = timer.owner;
  bool ok = lua_->CallRef(timer.script, timer.ref, {});
  hook_owner_ = outer;
  return ok;
}

// --- Quest predicates

bool ZoneCore::QuestPredicate(Actor& player, const QuestDef& quest, size_t step_index) {
  const QuestStep& step = quest.steps[step_index];
  std::string script = step.script;
  std::string function = step.function;
  if (!step.when.empty()) {
    // A `when` is compiled into this zone's VM once, as a script of its own.
    script = QuestPredicateScript(quest.id, step_index);
    function = kQuestPredicateFunction;
    if (loaded_scripts_.insert(script).second) {
      EnsureVm();
      lua_->Load(script, QuestPredicateSource(step.when));
    }
  } else {
    EnsureScript(script);
  }
  if (!lua_) return false;
  bool holds = false;
  if (!CallHook(ScriptOwner{}, script, function.c_str(), {LuaActor{player.id}, quest.id}, &holds)) {
    return false;
  }
  return holds;
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
  if (actor->race != nullptr) info.race = actor->race->id;
  if (actor->char_class != nullptr) info.char_class = actor->char_class->id;
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

int ZoneCore::ScriptHasItem(uint64_t id, std::string_view item_ref) {
  Actor* actor = FindActor(id);
  std::optional<Ref> ref = ParseRef(item_ref, zone_.id);
  if (actor == nullptr || !ref) return 0;
  int count = 0;
  for (const auto& held : actor->inventory) {
    if (held->def != nullptr && held->def->ref == *ref) ++count;
  }
  for (const auto& worn : actor->equipment) {
    if (worn && worn->def != nullptr && worn->def->ref == *ref) ++count;
  }
  return count;
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
