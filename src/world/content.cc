// Small value helpers of the content model: ids, references, dice, enum names, pack lookups.
#include <algorithm>
#include <array>
#include <charconv>

#include "telos/world/content.h"

namespace telos::world {
namespace {

constexpr std::array<std::string_view, 6> kZoneKindNames = {"lobby",   "town",  "wilderness",
                                                            "dungeon", "arena", "casino"};
constexpr std::array<std::string_view, 10> kItemTypeNames = {
    "weapon", "armor", "food", "drink", "potion", "container", "treasure", "key", "light", "trash"};
constexpr std::array<std::string_view, kWearSlotCount> kWearSlotNames = {
    "none", "wield", "hold",  "shield", "head", "neck",
    "body", "arms",  "hands", "finger", "legs", "feet"};
constexpr std::array<std::string_view, 4> kAffectNames = {"poison", "regeneration", "haste",
                                                          "shield"};

std::optional<int> ParseSmallInt(std::string_view text) {
  int value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

bool IsValidId(std::string_view id) {
  if (id.empty() || id.size() > 32) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

int32_t RoomNumber(const Ref& room) {
  // FNV-1a: simple, specified byte by byte, and stable across compilers and releases (unlike
  // std::hash), which the number must be for a mapper's saved map to stay right.
  uint32_t hash = 2166136261u;
  const auto mix = [&hash](std::string_view bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<uint8_t>(c);
      hash *= 16777619u;
    }
  };
  mix(room.zone);
  mix(":");
  mix(room.id);
  const uint32_t number = hash & 0x7FFFFFFFu;
  return number == 0 ? 1 : static_cast<int32_t>(number);
}

std::optional<Ref> ParseRef(std::string_view text, std::string_view home_zone) {
  size_t colon = text.find(':');
  Ref ref;
  if (colon == std::string_view::npos) {
    ref.zone = std::string(home_zone);
    ref.id = std::string(text);
  } else {
    ref.zone = std::string(text.substr(0, colon));
    ref.id = std::string(text.substr(colon + 1));
  }
  if (!IsValidId(ref.zone) || !IsValidId(ref.id)) return std::nullopt;
  return ref;
}

std::string Dice::ToString() const {
  std::string out = std::to_string(count) + "d" + std::to_string(sides);
  if (bonus > 0) out += "+" + std::to_string(bonus);
  if (bonus < 0) out += std::to_string(bonus);
  return out;
}

std::optional<Dice> ParseDice(std::string_view text) {
  size_t d = text.find('d');
  if (d == std::string_view::npos) return std::nullopt;
  size_t sign = text.find_first_of("+-", d);
  Dice dice;
  auto count = ParseSmallInt(text.substr(0, d));
  auto sides =
      ParseSmallInt(text.substr(d + 1, sign == std::string_view::npos ? text.npos : sign - d - 1));
  if (!count || !sides) return std::nullopt;
  dice.count = *count;
  dice.sides = *sides;
  if (sign != std::string_view::npos) {
    auto bonus = ParseSmallInt(text.substr(sign + 1));
    if (!bonus) return std::nullopt;
    dice.bonus = text[sign] == '-' ? -*bonus : *bonus;
  }
  if (dice.count < 1 || dice.count > 100 || dice.sides < 1 || dice.sides > 1000 ||
      dice.bonus < -1000 || dice.bonus > 1000) {
    return std::nullopt;
  }
  return dice;
}

std::string_view ZoneKindName(ZoneKind kind) {
  return kZoneKindNames[static_cast<int>(kind)];
}
std::string_view ItemTypeName(ItemType type) {
  return kItemTypeNames[static_cast<int>(type)];
}
std::string_view WearSlotName(WearSlot slot) {
  return kWearSlotNames[static_cast<int>(slot)];
}
std::string_view AffectKindName(AffectKind kind) {
  return kAffectNames[static_cast<int>(kind)];
}

std::optional<WearSlot> ParseWearSlot(std::string_view name) {
  for (size_t i = 1; i < kWearSlotNames.size(); ++i) {
    if (kWearSlotNames[i] == name) return static_cast<WearSlot>(i);
  }
  return std::nullopt;
}

std::optional<AffectKind> ParseAffectKind(std::string_view name) {
  for (size_t i = 0; i < kAffectNames.size(); ++i) {
    if (kAffectNames[i] == name) return static_cast<AffectKind>(i);
  }
  return std::nullopt;
}

const RoomDef* ZoneDef::FindRoom(std::string_view room_id) const {
  for (const RoomDef& room : rooms) {
    if (room.id == room_id) return &room;
  }
  return nullptr;
}

const ZoneDef* Pack::FindZone(std::string_view id) const {
  auto it = std::lower_bound(zones.begin(), zones.end(), id,
                             [](const ZoneDef& z, std::string_view key) { return z.id < key; });
  if (it == zones.end() || it->id != id) return nullptr;
  return &*it;
}

const RoomDef* Pack::FindRoom(const Ref& ref) const {
  const ZoneDef* zone = FindZone(ref.zone);
  return zone == nullptr ? nullptr : zone->FindRoom(ref.id);
}

const ItemDef* Pack::FindItem(const Ref& ref) const {
  const ZoneDef* zone = FindZone(ref.zone);
  if (zone == nullptr) return nullptr;
  for (const ItemDef& item : zone->items) {
    if (item.ref.id == ref.id) return &item;
  }
  return nullptr;
}

const MobDef* Pack::FindMob(const Ref& ref) const {
  const ZoneDef* zone = FindZone(ref.zone);
  if (zone == nullptr) return nullptr;
  for (const MobDef& mob : zone->mobs) {
    if (mob.ref.id == ref.id) return &mob;
  }
  return nullptr;
}

int ClassDef::LevelFor(std::string_view skill) const {
  for (const ClassSkill& entry : skills) {
    if (entry.skill == skill) return entry.level;
  }
  return 0;
}

const RaceDef* GameRules::FindRace(std::string_view id) const {
  for (const RaceDef& race : races) {
    if (race.id == id) return &race;
  }
  return nullptr;
}

const ClassDef* GameRules::FindClass(std::string_view id) const {
  for (const ClassDef& cls : classes) {
    if (cls.id == id) return &cls;
  }
  return nullptr;
}

const SkillDef* GameRules::FindSkill(std::string_view id) const {
  for (const SkillDef& skill : skills) {
    if (skill.id == id) return &skill;
  }
  return nullptr;
}

const QuestDef* GameRules::FindQuest(std::string_view id) const {
  for (const QuestDef& quest : quests) {
    if (quest.id == id) return &quest;
  }
  return nullptr;
}

int Pack::RoomCount() const {
  int count = 0;
  for (const ZoneDef& zone : zones) count += static_cast<int>(zone.rooms.size());
  return count;
}

std::string Problem::ToString() const {
  return file + ":" + std::to_string(line) + ": " + message;
}

}  // namespace telos::world
