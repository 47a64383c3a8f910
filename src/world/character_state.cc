// CharacterState <-> JSON. Boost.JSON stays inside this file.
#include "telos/world/character_state.h"

#include <algorithm>

#include <boost/json.hpp>

#include "party_json.h"
#include "telos/base/limits.h"

namespace telos::world {
namespace json = boost::json;
namespace {

json::object EncodeItem(const ItemState& item) {
  json::object out;
  out["item"] = item.proto.ToString();
  if (!item.contents.empty()) {
    json::array contents;
    for (const ItemState& inner : item.contents) contents.push_back(EncodeItem(inner));
    out["contents"] = std::move(contents);
  }
  return out;
}

// Reading helpers: each returns false (and names the field in *error) when the value is wrong.
class Reader {
 public:
  explicit Reader(std::string* error) : error_(error) {}

  bool Int(const json::object& obj, std::string_view key, int64_t* out, bool required = true) {
    const json::value* v = obj.if_contains(key);
    if (v == nullptr) return Missing(key, required);
    if (!v->is_int64()) return Fail(std::string(key) + " must be an integer");
    *out = v->as_int64();
    return true;
  }
  bool Int(const json::object& obj, std::string_view key, int* out, bool required = true) {
    int64_t value = *out;
    if (!Int(obj, key, &value, required)) return false;
    if (value < INT32_MIN || value > INT32_MAX) return Fail(std::string(key) + " out of range");
    *out = static_cast<int>(value);
    return true;
  }
  bool String(const json::object& obj, std::string_view key, std::string* out,
              bool required = true) {
    const json::value* v = obj.if_contains(key);
    if (v == nullptr) return Missing(key, required);
    if (!v->is_string()) return Fail(std::string(key) + " must be a string");
    *out = std::string(v->as_string());
    return true;
  }
  bool Bool(const json::object& obj, std::string_view key, bool* out, bool required = true) {
    const json::value* v = obj.if_contains(key);
    if (v == nullptr) return Missing(key, required);
    if (!v->is_bool()) return Fail(std::string(key) + " must be a boolean");
    *out = v->as_bool();
    return true;
  }
  bool Item(const json::value& v, ItemState* out, int depth) {
    if (depth > 8) return Fail("items nested too deeply");
    if (!v.is_object()) return Fail("an item must be an object");
    const json::object& obj = v.as_object();
    std::string ref;
    if (!String(obj, "item", &ref)) return false;
    std::optional<Ref> parsed = ParseRef(ref, "");
    if (!parsed) return Fail("bad item reference '" + ref + "'");
    out->proto = *parsed;
    if (const json::value* contents = obj.if_contains("contents")) {
      if (!contents->is_array()) return Fail("contents must be an array");
      for (const json::value& inner : contents->as_array()) {
        ItemState item;
        if (!Item(inner, &item, depth + 1)) return false;
        out->contents.push_back(std::move(item));
      }
    }
    return true;
  }
  bool Fail(std::string message) {
    *error_ = std::move(message);
    return false;
  }

 private:
  bool Missing(std::string_view key, bool required) {
    if (!required) return true;
    return Fail("missing " + std::string(key));
  }
  std::string* error_;
};

}  // namespace

CharacterState NewCharacter(std::string name, Ref start_room) {
  CharacterState state;
  state.name = std::move(name);
  state.room = std::move(start_room);
  state.wallet_coins = 20;
  state.may_choose = true;
  return state;
}

std::string EncodeCharacter(const CharacterState& s) {
  json::object out;
  out["schema"] = kCharacterSchemaVersion;
  out["name"] = s.name;
  out["level"] = s.level;
  out["exp"] = s.exp;
  out["stats"] = json::object{{"str", s.stats.strength},
                              {"dex", s.stats.dexterity},
                              {"con", s.stats.constitution},
                              {"int", s.stats.intelligence},
                              {"wis", s.stats.wisdom}};
  out["hp"] = s.hp;
  out["max_hp"] = s.max_hp;
  out["mana"] = s.mana;
  out["max_mana"] = s.max_mana;
  out["moves"] = s.moves;
  out["max_moves"] = s.max_moves;
  out["room"] = s.room.empty() ? std::string() : s.room.ToString();
  json::array inventory;
  for (const ItemState& item : s.inventory) inventory.push_back(EncodeItem(item));
  out["inventory"] = std::move(inventory);
  json::object equipment;
  for (const auto& [slot, item] : s.equipment) {
    equipment[WearSlotName(slot)] = EncodeItem(item);
  }
  out["equipment"] = std::move(equipment);
  json::array affects;
  for (const AffectState& affect : s.affects) {
    affects.push_back(
        json::object{{"kind", AffectKindName(affect.kind)}, {"remaining_ms", affect.remaining_ms}});
  }
  out["affects"] = std::move(affects);
  out["wallet_coins"] = s.wallet_coins;
  out["bank_coins"] = s.bank_coins;
  json::object aliases;
  for (const auto& [name, expansion] : s.aliases) aliases[name] = expansion;
  out["aliases"] = std::move(aliases);
  out["colour"] = s.colour;
  out["race"] = s.race;
  out["class"] = s.char_class;
  out["may_choose"] = s.may_choose;
  out["practices"] = s.practices;
  out["trains"] = s.trains;
  json::object skills;
  for (const auto& [id, proficiency] : s.skills) skills[id] = proficiency;
  out["skills"] = std::move(skills);
  json::object quests;
  for (const auto& [id, counts] : s.quests) {
    json::array steps;
    for (int count : counts) steps.push_back(count);
    quests[id] = std::move(steps);
  }
  out["quests"] = std::move(quests);
  json::object done;
  for (const auto& [id, times] : s.quests_done) done[id] = times;
  out["quests_done"] = std::move(done);
  if (s.lag_until_ms > 0) out["lag_until_ms"] = s.lag_until_ms;
  if (!s.cooldowns.empty()) {
    json::object cooldowns;
    for (const auto& [id, until_ms] : s.cooldowns) cooldowns[id] = until_ms;
    out["cooldowns"] = std::move(cooldowns);
  }
  // Only when set: a row that was never muted keeps the layout every older build reads.
  if (s.muted_until_unix_ms != 0) out["muted_until_unix_ms"] = s.muted_until_unix_ms;
  if (!s.party.empty()) out["party"] = PartyToJson(s.party);
  if (!s.party_invite.party_id.empty()) out["party_invite"] = InviteToJson(s.party_invite);
  if (!s.following.empty()) out["following"] = s.following;
  return json::serialize(out);
}

Result<CharacterState> DecodeCharacter(std::string_view text) {
  if (text.size() > limits::kCharacterStateBytesMax) {
    return Status::InvalidArgument("character state larger than the limit");
  }
  boost::system::error_code ec;
  json::value root = json::parse(text, ec);
  if (ec) return Status::InvalidArgument("character state is not JSON: " + ec.message());
  if (!root.is_object()) return Status::InvalidArgument("character state must be an object");
  const json::object& obj = root.as_object();
  std::string error;
  Reader r(&error);
  CharacterState s;
  int64_t schema = 0;
  auto fail = [&]() { return Status::InvalidArgument("character state: " + error); };
  if (!r.Int(obj, "schema", &schema)) return fail();
  if (schema < 1 || schema > kCharacterSchemaVersion) {
    return Status::InvalidArgument("character state schema " + std::to_string(schema) +
                                   " is not readable by this build (max " +
                                   std::to_string(kCharacterSchemaVersion) + ")");
  }
  // Fields common to every version; version 2's additions are read below.
  if (!r.String(obj, "name", &s.name) || !r.Int(obj, "level", &s.level) ||
      !r.Int(obj, "exp", &s.exp) || !r.Int(obj, "hp", &s.hp) || !r.Int(obj, "max_hp", &s.max_hp) ||
      !r.Int(obj, "mana", &s.mana) || !r.Int(obj, "max_mana", &s.max_mana) ||
      !r.Int(obj, "moves", &s.moves) || !r.Int(obj, "max_moves", &s.max_moves) ||
      !r.Int(obj, "wallet_coins", &s.wallet_coins) || !r.Int(obj, "bank_coins", &s.bank_coins) ||
      !r.Bool(obj, "colour", &s.colour, false) ||
      !r.Int(obj, "muted_until_unix_ms", &s.muted_until_unix_ms, false)) {
    return fail();
  }
  if (const json::value* stats = obj.if_contains("stats"); stats && stats->is_object()) {
    const json::object& so = stats->as_object();
    if (!r.Int(so, "str", &s.stats.strength) || !r.Int(so, "dex", &s.stats.dexterity) ||
        !r.Int(so, "con", &s.stats.constitution) || !r.Int(so, "int", &s.stats.intelligence) ||
        !r.Int(so, "wis", &s.stats.wisdom)) {
      return fail();
    }
  } else {
    return Status::InvalidArgument("character state: missing stats");
  }
  std::string room;
  if (!r.String(obj, "room", &room, false)) return fail();
  if (!room.empty()) {
    std::optional<Ref> ref = ParseRef(room, "");
    if (!ref) return Status::InvalidArgument("character state: bad room '" + room + "'");
    s.room = *ref;
  }
  if (const json::value* inventory = obj.if_contains("inventory")) {
    if (!inventory->is_array()) return Status::InvalidArgument("character state: inventory");
    for (const json::value& v : inventory->as_array()) {
      ItemState item;
      if (!r.Item(v, &item, 0)) return fail();
      s.inventory.push_back(std::move(item));
    }
  }
  if (const json::value* equipment = obj.if_contains("equipment")) {
    if (!equipment->is_object()) return Status::InvalidArgument("character state: equipment");
    for (const auto& [slot_name, v] : equipment->as_object()) {
      std::optional<WearSlot> slot = ParseWearSlot(slot_name);
      if (!slot) {
        return Status::InvalidArgument("character state: unknown slot '" + std::string(slot_name) +
                                       "'");
      }
      ItemState item;
      if (!r.Item(v, &item, 0)) return fail();
      s.equipment.emplace_back(*slot, std::move(item));
    }
    std::sort(s.equipment.begin(), s.equipment.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (const json::value* affects = obj.if_contains("affects")) {
    if (!affects->is_array()) return Status::InvalidArgument("character state: affects");
    for (const json::value& v : affects->as_array()) {
      if (!v.is_object()) return Status::InvalidArgument("character state: affect");
      std::string kind;
      AffectState affect;
      if (!r.String(v.as_object(), "kind", &kind) ||
          !r.Int(v.as_object(), "remaining_ms", &affect.remaining_ms)) {
        return fail();
      }
      std::optional<AffectKind> parsed = ParseAffectKind(kind);
      if (!parsed) return Status::InvalidArgument("character state: unknown affect " + kind);
      affect.kind = *parsed;
      s.affects.push_back(affect);
    }
  }
  if (const json::value* aliases = obj.if_contains("aliases")) {
    if (!aliases->is_object()) return Status::InvalidArgument("character state: aliases");
    for (const auto& [name, v] : aliases->as_object()) {
      if (!v.is_string()) return Status::InvalidArgument("character state: alias value");
      s.aliases[std::string(name)] = std::string(v.as_string());
    }
  }
  if (schema >= 2) {
    if (!r.String(obj, "race", &s.race) || !r.String(obj, "class", &s.char_class) ||
        !r.Bool(obj, "may_choose", &s.may_choose) || !r.Int(obj, "practices", &s.practices) ||
        !r.Int(obj, "trains", &s.trains)) {
      return fail();
    }
    if (s.practices < 0 || s.trains < 0) {
      return Status::InvalidArgument("character state: negative practices or trains");
    }
    if (const json::value* skills = obj.if_contains("skills")) {
      if (!skills->is_object()) return Status::InvalidArgument("character state: skills");
      if (skills->as_object().size() > limits::kCharacterSkillsMax) {
        return Status::InvalidArgument("character state: too many skills");
      }
      for (const auto& [id, v] : skills->as_object()) {
        if (!v.is_int64() || v.as_int64() < 1 || v.as_int64() > 100) {
          return Status::InvalidArgument("character state: skill proficiency must be 1..100");
        }
        s.skills[std::string(id)] = static_cast<int>(v.as_int64());
      }
    }
  }
  if (schema >= 3) {
    if (const json::value* quests = obj.if_contains("quests")) {
      if (!quests->is_object() || quests->as_object().size() > limits::kCharacterQuestsMax) {
        return Status::InvalidArgument("character state: quests");
      }
      for (const auto& [id, v] : quests->as_object()) {
        if (!v.is_array() || v.as_array().size() > limits::kQuestStepsMax) {
          return Status::InvalidArgument("character state: quest progress");
        }
        std::vector<int> counts;
        for (const json::value& count : v.as_array()) {
          if (!count.is_int64() || count.as_int64() < 0 || count.as_int64() > 100) {
            return Status::InvalidArgument("character state: quest step count must be 0..100");
          }
          counts.push_back(static_cast<int>(count.as_int64()));
        }
        s.quests[std::string(id)] = std::move(counts);
      }
    }
    if (const json::value* done = obj.if_contains("quests_done")) {
      if (!done->is_object() || done->as_object().size() > limits::kCharacterQuestsMax) {
        return Status::InvalidArgument("character state: quests_done");
      }
      for (const auto& [id, v] : done->as_object()) {
        if (!v.is_int64() || v.as_int64() < 1 || v.as_int64() > INT32_MAX) {
          return Status::InvalidArgument("character state: quests_done counts");
        }
        s.quests_done[std::string(id)] = static_cast<int>(v.as_int64());
      }
    }
  }
  // Skill waits: optional in every version (a state saved with none waiting has none).
  if (!r.Int(obj, "lag_until_ms", &s.lag_until_ms, false)) return fail();
  if (s.lag_until_ms < 0) return Status::InvalidArgument("character state: negative lag_until_ms");
  if (const json::value* cooldowns = obj.if_contains("cooldowns")) {
    if (!cooldowns->is_object() || cooldowns->as_object().size() > limits::kCharacterSkillsMax) {
      return Status::InvalidArgument("character state: cooldowns");
    }
    for (const auto& [id, v] : cooldowns->as_object()) {
      if (!v.is_int64() || v.as_int64() < 0) {
        return Status::InvalidArgument("character state: a cooldown must be a time in ms");
      }
      s.cooldowns[std::string(id)] = v.as_int64();
    }
  }
  if (const json::value* party = obj.if_contains("party")) {
    if (!PartyFromJson(*party, &s.party)) return Status::InvalidArgument("character state: party");
  }
  if (const json::value* invite = obj.if_contains("party_invite")) {
    if (!InviteFromJson(*invite, &s.party_invite)) {
      return Status::InvalidArgument("character state: party_invite");
    }
  }
  if (!r.String(obj, "following", &s.following, false)) return fail();
  if (s.following.size() > limits::kCharacterNameBytesMax) {
    return Status::InvalidArgument("character state: following");
  }
  // Version 1 predates races and classes: race and class stay empty and may_choose false, so
  // the zone assigns the pack's defaults on admission without asking an established player.
  return s;
}

}  // namespace telos::world
