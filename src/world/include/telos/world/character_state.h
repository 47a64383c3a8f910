// CharacterState: everything about a player character that outlives a session, as a value.
//
// A zone turns its live character into a CharacterState when the player is frozen, saved, or
// moves to another zone, and builds a live character from one on admission. The state is
// serialized as JSON text (EncodeCharacter / DecodeCharacter) carrying a schema version, so the
// stores can keep it as one opaque column and old rows stay readable: DecodeCharacter accepts
// every schema version up to kCharacterSchemaVersion and upgrades it.
//
// Thread safety: a value; copy and move freely between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/base/roles.h"
#include "telos/base/status.h"
#include "telos/world/content.h"
#include "telos/world/names.h"  // NameKey, for every caller that has always found it here
#include "telos/world/party.h"

namespace telos::world {

// Bumped whenever the JSON layout changes; decode keeps reading every older version.
// 2: race, class, practices, trains, skills and may_choose. A version-1 character has no race
// or class; the zone gives it the pack's defaults on admission and never asks it to choose.
// 3: quests (progress of those taken) and quests_done; older versions have none. Optional in
// any version: lag_until_ms and cooldowns (absent: nothing is waiting).
inline constexpr int kCharacterSchemaVersion = 3;

struct Stats {
  int strength = 13;
  int dexterity = 13;
  int constitution = 13;
  int intelligence = 13;
  int wisdom = 13;
  bool operator==(const Stats&) const = default;
};

// An item carried or worn: its prototype and, for containers, what is inside.
struct ItemState {
  Ref proto;
  std::vector<ItemState> contents;
  bool operator==(const ItemState&) const = default;
};

struct AffectState {
  AffectKind kind = AffectKind::kPoison;
  int64_t remaining_ms = 0;
  bool operator==(const AffectState&) const = default;
};

struct CharacterState {
  std::string name;  // display form, e.g. "Alice"; identity is its lower-case form
  int level = 1;
  int64_t exp = 0;
  Stats stats;
  int hp = 30, max_hp = 30;
  int mana = 20, max_mana = 20;
  int moves = 80, max_moves = 80;
  Ref room;  // empty: the pack's start room
  std::vector<ItemState> inventory;
  std::vector<std::pair<WearSlot, ItemState>> equipment;
  std::vector<AffectState> affects;
  int64_t wallet_coins = 0;
  int64_t bank_coins = 0;
  std::map<std::string, std::string> aliases;
  bool colour = true;
  // Races, classes and skills (content game.toml). Empty race/class: not assigned yet.
  std::string race;
  std::string char_class;
  bool may_choose = false;            // a new character that has not yet picked its race and class
  int practices = 0;                  // sessions left to spend with a trainer on skills
  int trains = 0;                     // points left to spend with a trainer on stats
  std::map<std::string, int> skills;  // skill id -> proficiency, 1..100
  // Quests taken: quest id -> per step, the count reached so far. Travels with the character
  // (saves and handoffs to another world) like everything here.
  std::map<std::string, std::vector<int>> quests;
  std::map<std::string, int> quests_done;  // quest id -> times completed
  // Skill waits, as absolute wall-clock instants (ms since the Unix epoch on the world's Clock)
  // so they mean the same in any zone, process or shard and after a relogin: no skill before
  // lag_until_ms, and per skill id none of that skill before its instant. Only waits still
  // running are kept; 0 / absent: nothing to wait for.
  int64_t lag_until_ms = 0;
  std::map<std::string, int64_t> cooldowns;
  // Silenced by staff (say, emote, tell, reply and channels refused) until then, Unix ms; 0 when
  // not. Saved, so a mute outlives a quit and a move to another world.
  int64_t muted_until_unix_ms = 0;
  // The account's staff roles, from the signed assertion the world admitted the character on.
  // Never encoded: a saved row or a snapshot's JSON must not be able to make anyone staff, so
  // whoever builds a state from JSON sets this from a verified assertion (or leaves a player).
  Roles roles = kRolePlayer;
  // This member's copy of their party, and an invitation not yet answered (party.h says why
  // they travel with the character). Optional in any version: absent, not in a party.
  PartyState party;
  PartyInvite party_invite;  // empty party_id: none
  std::string following;     // the member they follow, by display name; empty: nobody

  bool operator==(const CharacterState&) const = default;
};

// A fresh level-1 character standing in `start_room` with a little money, still to choose its
// race and class (may_choose).
CharacterState NewCharacter(std::string name, Ref start_room);

// JSON text with "schema": kCharacterSchemaVersion.
std::string EncodeCharacter(const CharacterState& state);
// InvalidArgument for malformed JSON, a missing field or a schema newer than this build.
Result<CharacterState> DecodeCharacter(std::string_view json);

}  // namespace telos::world
