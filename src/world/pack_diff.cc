// DiffPacks: zone-by-zone comparison of two validated packs (see pack_diff.h).
#include "telos/world/pack_diff.h"

#include <set>

namespace telos::world {
namespace {

// The Lua files a zone's own definitions name.
std::set<std::string> ScriptsOf(const ZoneDef& zone) {
  std::set<std::string> scripts;
  auto add = [&scripts](const std::string& file) {
    if (!file.empty()) scripts.insert(file);
  };
  for (const RoomDef& room : zone.rooms) add(room.script);
  for (const ItemDef& item : zone.items) add(item.script);
  for (const MobDef& mob : zone.mobs) add(mob.script);
  for (const ZoneCommandDef& command : zone.commands) add(command.script);
  return scripts;
}

// The items and mobs of other zones this zone spawns, equips or sells.
std::set<Ref> ForeignThingsOf(const ZoneDef& zone) {
  std::set<Ref> refs;
  auto add = [&refs, &zone](const Ref& ref) {
    if (ref.zone != zone.id) refs.insert(ref);
  };
  for (const MobDef& mob : zone.mobs) {
    for (const Ref& ref : mob.equipment) add(ref);
    for (const Ref& ref : mob.inventory) add(ref);
  }
  for (const ShopDef& shop : zone.shops) {
    for (const Ref& ref : shop.sells) add(ref);
  }
  for (const ResetDef& reset : zone.resets) {
    if (reset.mob) add(*reset.mob);
    if (reset.item) add(*reset.item);
  }
  return refs;
}

const std::string* ScriptSource(const Pack& pack, const std::string& file) {
  auto it = pack.scripts.find(file);
  return it == pack.scripts.end() ? nullptr : &it->second;
}

bool SameScript(const Pack& from, const Pack& to, const std::string& file) {
  const std::string* a = ScriptSource(from, file);
  const std::string* b = ScriptSource(to, file);
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

// Whether the item or mob `ref` names is defined the same in both packs.
bool SameThing(const Pack& from, const Pack& to, const Ref& ref) {
  const ItemDef* item_a = from.FindItem(ref);
  const ItemDef* item_b = to.FindItem(ref);
  if ((item_a == nullptr) != (item_b == nullptr)) return false;
  if (item_a != nullptr && !(*item_a == *item_b && SameScript(from, to, item_a->script))) {
    return false;
  }
  const MobDef* mob_a = from.FindMob(ref);
  const MobDef* mob_b = to.FindMob(ref);
  if ((mob_a == nullptr) != (mob_b == nullptr)) return false;
  return mob_a == nullptr || (*mob_a == *mob_b && SameScript(from, to, mob_a->script));
}

bool ZoneChanged(const Pack& from, const Pack& to, const ZoneDef& a, const ZoneDef& b) {
  if (!(a == b)) return true;
  for (const std::string& file : ScriptsOf(a)) {
    if (!SameScript(from, to, file)) return true;
  }
  for (const Ref& ref : ForeignThingsOf(a)) {
    if (!SameThing(from, to, ref)) return true;
  }
  return false;
}

std::string Join(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

}  // namespace

Result<PackDiff> DiffPacks(const Pack& from, const Pack& to) {
  std::vector<std::string> added;
  std::vector<std::string> removed;
  for (const ZoneDef& zone : to.zones) {
    if (from.FindZone(zone.id) == nullptr) added.push_back(zone.id);
  }
  for (const ZoneDef& zone : from.zones) {
    if (to.FindZone(zone.id) == nullptr) removed.push_back(zone.id);
  }
  if (!added.empty() || !removed.empty()) {
    std::string what;
    if (!added.empty()) what += "adds zone(s) " + Join(added);
    if (!removed.empty())
      what += std::string(what.empty() ? "" : " and ") + "removes zone(s) " + Join(removed);
    return Status::FailedPrecondition("the new pack " + what +
                                      ": zones are leased by id, so that takes a restart, not a "
                                      "reload");
  }
  if (from.start_room.zone != to.start_room.zone) {
    return Status::FailedPrecondition("the new pack moves the start room from zone " +
                                      from.start_room.zone + " to " + to.start_room.zone +
                                      ": every shard hosts the lobby, so that takes a restart");
  }
  // Races, classes and skills (game.toml) are used by every zone: a change rebuilds them all.
  bool game_changed = !(from.game == to.game);
  for (const SkillDef& skill : from.game.skills) {
    if (!skill.script.empty() && !SameScript(from, to, skill.script)) game_changed = true;
  }
  PackDiff diff;
  for (const ZoneDef& zone : from.zones) {
    const ZoneDef& next = *to.FindZone(zone.id);
    (game_changed || ZoneChanged(from, to, zone, next) ? diff.changed_zones : diff.unchanged_zones)
        .push_back(zone.id);
  }
  return diff;
}

}  // namespace telos::world
