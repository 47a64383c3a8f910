// Content packs: the immutable description of a world, as loaded from a folder.
//
// The format is specified in docs/content.md. LoadPack() reads pack.toml, zones/*.toml and
// scripts/*.lua, validates the whole pack and either returns it or reports every problem it
// found as `file:line: message` (it does not stop at the first). A loaded Pack is immutable:
// share it as std::shared_ptr<const Pack> between zones running on different executors; reading
// it needs no synchronisation.
//
// Thread safety: LoadPack may run on any thread (it does blocking file I/O, so never on a zone
// executor). A Pack is read-only after loading.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::world {

// A reference to a room, item or mob: `id` in the same zone or `zone:id` elsewhere. After
// loading, every Ref in a Pack is fully qualified (zone is never empty).
struct Ref {
  std::string zone;
  std::string id;

  std::string ToString() const { return zone + ":" + id; }
  bool empty() const { return id.empty(); }
  auto operator<=>(const Ref&) const = default;
};

// Parses `id` or `zone:id`; `home_zone` fills in a missing zone. Empty optional when malformed.
std::optional<Ref> ParseRef(std::string_view text, std::string_view home_zone);
// True for a valid id: [a-z0-9_], 1..32 characters.
bool IsValidId(std::string_view id);
// A room's number, what GMCP Room.Info "num" and MSDP ROOM_VNUM carry for mappers: the 32-bit
// FNV-1a hash of "zone:id" with its top bit cleared, 0 taken as 1, so 1..2^31-1 (Mudlet's
// mapper keeps room ids in a signed 32-bit int). It depends on the id alone: the same on every
// world and across restarts. LoadPack refuses a pack in which two rooms share a number.
int32_t RoomNumber(const Ref& room);

// NdS, NdS+B or NdS-B.
struct Dice {
  int count = 1;
  int sides = 1;
  int bonus = 0;

  std::string ToString() const;
  int Min() const { return count + bonus; }
  int Max() const { return count * sides + bonus; }
  bool operator==(const Dice&) const = default;
};
// Empty optional when malformed or out of range (1..100 dice, 1..1000 sides, |bonus| <= 1000).
std::optional<Dice> ParseDice(std::string_view text);

enum class ZoneKind { kLobby, kTown, kWilderness, kDungeon, kArena, kCasino };
enum class ItemType {
  kWeapon,
  kArmor,
  kFood,
  kDrink,
  kPotion,
  kContainer,
  kTreasure,
  kKey,
  kLight,
  kTrash
};
enum class WearSlot {
  kNone,
  kWield,
  kHold,
  kShield,
  kHead,
  kNeck,
  kBody,
  kArms,
  kHands,
  kFinger,
  kLegs,
  kFeet
};
inline constexpr int kWearSlotCount = 12;
// kShield adds kShieldArmor to armour while it lasts (a spell's buff); the others act on pulses.
enum class AffectKind { kPoison, kRegeneration, kHaste, kShield };
inline constexpr int kShieldArmor = 20;

std::string_view ZoneKindName(ZoneKind kind);
std::string_view ItemTypeName(ItemType type);
std::string_view WearSlotName(WearSlot slot);
std::string_view AffectKindName(AffectKind kind);
std::optional<WearSlot> ParseWearSlot(std::string_view name);
std::optional<AffectKind> ParseAffectKind(std::string_view name);

// Room flags, mob flags: bit sets.
enum RoomFlag : uint32_t { kRoomSafe = 1, kRoomBank = 2, kRoomIndoors = 4, kRoomNoMob = 8 };
enum MobFlag : uint32_t {
  kMobAggressive = 1,
  kMobWanders = 2,
  kMobSentinel = 4,
  kMobFlees = 8,
  kMobShopkeeper = 16,
  kMobBoss = 32,
  kMobTrainer = 64,  // teaches (`practice`) and trains (`train`) the players in its room
};

struct ExitDef {
  std::string dir;  // north east south west up down, or another single word
  Ref to;
  std::string description;
  bool operator==(const ExitDef&) const = default;
};

struct ExtraDef {
  std::vector<std::string> keywords;
  std::string text;
  bool operator==(const ExtraDef&) const = default;
};

struct RoomDef {
  std::string id;
  std::string name;
  std::string description;
  uint32_t flags = 0;  // RoomFlag bits
  std::string script;  // file name in scripts/, or empty
  std::vector<ExitDef> exits;
  std::vector<ExtraDef> extras;
  bool operator==(const RoomDef&) const = default;
};

struct ItemDef {
  Ref ref;
  std::string name;
  std::vector<std::string> keywords;
  std::string ground;
  std::string description;
  ItemType type = ItemType::kTrash;
  WearSlot slot = WearSlot::kNone;
  int64_t value = 0;
  int64_t weight = 0;
  std::optional<Dice> damage;
  int armor = 0;
  std::optional<AffectKind> use_affect;
  int64_t use_seconds = 0;
  int use_heal = 0;
  std::string script;
  bool operator==(const ItemDef&) const = default;
};

struct MobDef {
  Ref ref;
  std::string name;
  std::vector<std::string> keywords;
  std::string ground;
  std::string description;
  int level = 1;
  int hp = 1;
  Dice damage;
  int armor = 0;
  int hitroll = 0;
  int64_t exp = 0;
  int64_t gold = 0;
  uint32_t flags = 0;  // MobFlag bits
  int flee_percent = 0;
  std::vector<Ref> equipment;
  std::vector<Ref> inventory;
  std::string script;
  std::vector<std::string> spells;  // skill ids (game.toml) the mob uses in a fight
  bool operator==(const MobDef&) const = default;
};

struct ShopDef {
  std::string keeper;  // mob id in this zone
  std::vector<Ref> sells;
  int buy_percent = 100;
  int sell_percent = 50;
  bool operator==(const ShopDef&) const = default;
};

struct ResetDef {
  std::optional<Ref> mob;  // exactly one of mob and item is set
  std::optional<Ref> item;
  std::string room;  // room id in this zone
  int max = 1;
  bool operator==(const ResetDef&) const = default;
};

struct HelpDef {
  std::vector<std::string> keywords;
  std::string text;
  bool operator==(const HelpDef&) const = default;
};

struct ZoneCommandDef {
  std::string name;
  std::string script;
  std::string function;
  bool operator==(const ZoneCommandDef&) const = default;
};

struct ZoneDef {
  std::string id;
  std::string name;
  ZoneKind kind = ZoneKind::kTown;
  int reset_minutes = 5;
  std::string description;
  // Zones naming the same group are related (a dungeon below the moor that opens it): the
  // director keeps them on one shard where it can and moves them together. Empty: none.
  std::string colocation_group;
  std::vector<RoomDef> rooms;
  std::vector<ItemDef> items;
  std::vector<MobDef> mobs;
  std::vector<ShopDef> shops;
  std::vector<ResetDef> resets;
  std::vector<HelpDef> help;
  std::vector<ZoneCommandDef> commands;

  const RoomDef* FindRoom(std::string_view id) const;
  // Member-wise: the pack diff (pack_diff.h) compares zones by value.
  bool operator==(const ZoneDef&) const = default;
};

// --- Races, classes and skills (game.toml; docs/content.md "Races, classes and skills").
// A pack without game.toml has none: its characters have no race or class and level as before.

enum class SkillKind { kSkill, kSpell };
// Who a skill acts on: the user, one character in the room (the opponent when none is named),
// everyone on the other side in the room, or an object carried or lying in the room.
enum class SkillTarget { kSelf, kCharacter, kRoom, kObject };
enum class SkillEffect { kDamage, kHeal, kAffect, kTeleport, kSummon, kLua };

struct SkillDef {
  std::string id;    // also the command word of a kind = "skill" skill
  std::string name;  // "magic missile"
  SkillKind kind = SkillKind::kSpell;
  int mana = 0;  // cost; a spell costs mana, a skill mana or moves (a cost of nothing is refused)
  int moves = 0;
  int64_t lag_ms = 0;       // the user can use no skill or spell for this long afterwards
  int64_t cooldown_ms = 0;  // this skill cannot be used again for this long
  SkillTarget target = SkillTarget::kCharacter;
  SkillEffect effect = SkillEffect::kDamage;
  std::optional<Dice> amount;  // damage and heal
  std::optional<AffectKind> affect;
  int64_t affect_seconds = 0;
  Ref to;              // teleport: a room in the user's zone (a fully qualified ref)
  Ref mob;             // summon: a mob prototype
  std::string script;  // lua: file in scripts/, called as function(user, target)
  std::string function;
  std::string message;      // shown to the user on success; empty for the effect's own text
  std::string description;  // for `help <skill>`
  bool hostile = false;     // derived: damage, or a poison affect, on someone else starts a fight
  bool operator==(const SkillDef&) const = default;
};

struct StatBlock {
  int strength = 0, dexterity = 0, constitution = 0, intelligence = 0, wisdom = 0;
  bool operator==(const StatBlock&) const = default;
};

struct RaceDef {
  std::string id;
  std::string name;  // "Elf"
  std::string description;
  StatBlock stats;  // the starting stats (before the class's bonuses)
  bool operator==(const RaceDef&) const = default;
};

struct ClassSkill {
  std::string skill;  // SkillDef id
  int level = 1;      // the first level at which it may be learned
  bool operator==(const ClassSkill&) const = default;
};

struct ClassDef {
  std::string id;
  std::string name;  // "Mage"
  std::string description;
  StatBlock stats;                     // added to the race's
  int hp = 30, mana = 20, moves = 80;  // at level 1
  int hp_per_level = 10, mana_per_level = 5, moves_per_level = 5;
  int practices_per_level = 2;  // sessions with a trainer (`practice`)
  int trains_per_level = 1;     // stat points (`train`)
  std::vector<ClassSkill> skills;
  // The level at which this class may learn `skill`, or 0 when it never may.
  int LevelFor(std::string_view skill) const;
  bool operator==(const ClassDef&) const = default;
};

// --- Quests (game.toml [[quests]]). A quest's steps are tracked side by side; when all are
// done the player returns to the giver (`quest complete`), who takes any fetched items and
// pays the rewards.
// A lua step is done while its predicate holds: a `when` body, or script.function(player,
// quest_id), returning true (quest_predicate.h); checked like a fetch, when the player looks
// at the quest and when turning it in.
enum class QuestStepKind { kKill, kFetch, kVisit, kTalk, kLua };

struct QuestStep {
  QuestStepKind kind = QuestStepKind::kKill;
  Ref target;        // kill/talk: a mob; fetch: an item; visit: a room; lua: none
  int count = 1;     // kill: how many; fetch: how many carried; visit/talk/lua: 1
  std::string text;  // "Kill three cellar rats"; made from the target when empty
  std::string when;  // lua: the predicate's body, or empty when script/function name one
  std::string script;
  std::string function;
  bool operator==(const QuestStep&) const = default;
};

struct QuestDef {
  std::string id;
  std::string name;
  Ref giver;      // a mob
  int level = 1;  // the lowest level that may take it
  bool repeatable = false;
  std::string description;  // `quest info`
  std::string offer;        // the giver says it when the quest is taken
  std::string complete;     // the giver says it when the quest is turned in
  std::vector<QuestStep> steps;
  int64_t exp = 0;
  int64_t coins = 0;
  std::vector<Ref> items;  // rewards
  bool operator==(const QuestDef&) const = default;
};

struct GameRules {
  std::vector<RaceDef> races;  // in file order: the creation dialogue's order
  std::vector<ClassDef> classes;
  std::vector<SkillDef> skills;
  std::string default_race;  // what a character that never chose (or predates classes) gets
  std::string default_class;
  std::vector<QuestDef> quests;

  bool empty() const { return classes.empty(); }
  const QuestDef* FindQuest(std::string_view id) const;
  const RaceDef* FindRace(std::string_view id) const;
  const ClassDef* FindClass(std::string_view id) const;
  const SkillDef* FindSkill(std::string_view id) const;
  bool operator==(const GameRules&) const = default;
};

// A whole, validated pack.
struct Pack {
  std::string name;
  std::string version;
  Ref start_room;
  std::vector<ZoneDef> zones;                  // sorted by id
  std::map<std::string, std::string> scripts;  // file name (e.g. "rat.lua") -> source
  std::string content_hash;                    // lower-case hex SHA-256, see docs/content.md
  GameRules game;                              // game.toml; empty when the pack has none

  const ZoneDef* FindZone(std::string_view id) const;
  const RoomDef* FindRoom(const Ref& ref) const;
  const ItemDef* FindItem(const Ref& ref) const;
  const MobDef* FindMob(const Ref& ref) const;
  int RoomCount() const;
};

// One validation problem. line is 0 when the problem is about the file as a whole.
struct Problem {
  std::string file;  // relative to the pack folder, e.g. "zones/town.toml"
  int line = 0;
  std::string message;

  std::string ToString() const;  // "zones/town.toml:12: unknown exit target 'gate'"
};

// Loads and validates the pack in `dir`. On success `problems` is empty. On failure the status
// is InvalidArgument (summary in its message) and `problems` lists every problem found, up to
// limits::kPackProblemsMax, in file then line order.
// REQUIRES: problems != nullptr.
Result<Pack> LoadPack(const std::filesystem::path& dir, std::vector<Problem>* problems);

}  // namespace telos::world
