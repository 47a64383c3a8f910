// Pack diff: which zones a content hot reload must rebuild.
//
// DiffPacks compares two validated packs zone by zone. A zone is changed when its definition
// differs (rooms, exits, items, mobs, shops, resets, help, commands, any field), when a Lua
// script it names differs, or when an item or mob of another zone that it spawns, equips or
// sells differs: a rebuilt zone must not keep spawning the old definition of a thing it uses.
// A change to the races, classes or skills (game.toml, or a skill's script) changes every zone.
// Everything else is unchanged and keeps running untouched through a reload.
//
// A reload swaps content, not the shape of the fleet: zones are leased by id and the lobby is
// hosted on every shard, so a pack that adds or removes zones, or moves the start room to
// another zone, is refused (FailedPrecondition, naming what differs); that takes a restart.
//
// Pure functions over immutable packs: any thread.
#pragma once

#include <string>
#include <vector>

#include "telos/base/status.h"
#include "telos/world/content.h"

namespace telos::world {

struct PackDiff {
  std::vector<std::string> changed_zones;    // sorted by id
  std::vector<std::string> unchanged_zones;  // sorted by id
  bool same_content() const { return changed_zones.empty(); }
};

// REQUIRES: both packs passed LoadPack (every Ref qualified, zones sorted by id).
Result<PackDiff> DiffPacks(const Pack& from, const Pack& to);

}  // namespace telos::world
