// LoadPack: reads a content pack folder, validates it as a whole and collects every problem.
//
// toml++ throws on a syntax error; the throw is caught here, at the boundary, and becomes a
// Problem. Lua scripts are compiled (never run) in a throw-away state to check their syntax.
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <openssl/evp.h>
#include <toml++/toml.h>
#include <lua.hpp>

#include "quest_predicate.h"
#include "telos/base/limits.h"
#include "telos/world/content.h"

namespace telos::world {
namespace {

namespace fs = std::filesystem;

int LineOf(const toml::node& node) {
  return static_cast<int>(node.source().begin.line);
}

// A reference waiting for every zone to be parsed before it can be resolved.
struct PendingRef {
  enum Kind { kRoom, kItem, kMob };
  Kind kind;
  Ref ref;
  std::string file;
  int line;
  std::string what;  // "exit 'north' of room 'square'"
};

struct PendingScript {
  std::string name;
  std::string file;
  int line;
};

// A quest step's named predicate: `function` must be defined by `script`.
struct PendingFunction {
  std::string script;
  std::string function;
  std::string file;
  int line;
  std::string what;
};

// A skill id named by a mob, resolved once game.toml has been read.
struct PendingSkill {
  std::string id;
  std::string file;
  int line;
  std::string what;  // "spells of mob 'hermit'"
};

class Loader {
 public:
  explicit Loader(fs::path dir) : dir_(std::move(dir)) {}

  Result<Pack> Run(std::vector<Problem>* problems);

 private:
  void Report(const std::string& file, int line, std::string message) {
    problems_.push_back(Problem{file, line, std::move(message)});
  }

  std::optional<std::string> ReadFile(const fs::path& path, const std::string& rel);
  void LoadPackToml();
  void LoadZone(const fs::path& path, const std::string& rel);
  void LoadScripts();
  // game.toml (races, classes, skills): optional; see the block at the end of this file.
  void LoadGame();
  void LoadStats(const toml::table& owner, const std::string& file, const std::string& context,
                 StatBlock* out, int min, int max);
  void LoadSkill(const toml::table& t, const std::string& file, std::set<std::string>* ids);
  void LoadQuest(const toml::table& t, const std::string& file, std::set<std::string>* ids);
  void ResolveGame();
  void Resolve();
  std::string Hash() const;

  // Field readers over one TOML table. Each reports its own problems and leaves `out`
  // untouched when the value is missing or wrong.
  class Fields {
   public:
    Fields(Loader* loader, const toml::table& table, std::string file, std::string context)
        : loader_(loader), table_(&table), file_(std::move(file)), context_(std::move(context)) {}

    int line() const { return LineOf(*table_); }
    bool Has(std::string_view key) const { return table_->contains(key); }
    void String(std::string_view key, bool required, std::string* out);
    void Int(std::string_view key, bool required, int64_t min, int64_t max, int64_t* out);
    void Int(std::string_view key, bool required, int64_t min, int64_t max, int* out) {
      int64_t value = *out;
      Int(key, required, min, max, &value);
      *out = static_cast<int>(value);
    }
    void Strings(std::string_view key, bool required, std::vector<std::string>* out);
    // An array of tables (or a missing key, which is an empty array).
    std::vector<const toml::table*> Tables(std::string_view key);
    void CheckKeys(std::initializer_list<std::string_view> allowed);
    void Problem(std::string_view key, std::string message);
    int LineOfKey(std::string_view key) const {
      const toml::node* node = table_->get(key);
      return node != nullptr ? LineOf(*node) : line();
    }
    const std::string& file() const { return file_; }

   private:
    Loader* loader_;
    const toml::table* table_;
    std::string file_;
    std::string context_;
  };

  // A quest step of kind "lua": its `when` (compiled here) or `script` and `function`.
  void LoadQuestPredicate(Fields& sf, const std::string& rel, const std::string& quest_id,
                          size_t step_index, QuestStep* step);

  fs::path dir_;
  std::vector<Problem> problems_;
  Pack pack_;
  std::vector<std::pair<std::string, std::string>> hashed_files_;  // rel path, contents
  std::vector<PendingRef> pending_refs_;
  std::vector<PendingScript> pending_scripts_;
  std::vector<PendingFunction> pending_functions_;
  std::vector<PendingSkill> pending_skills_;
  std::set<std::string> script_files_;
};

void Loader::Fields::Problem(std::string_view key, std::string message) {
  loader_->Report(file_, LineOfKey(key), context_ + ": " + std::move(message));
}

void Loader::Fields::String(std::string_view key, bool required, std::string* out) {
  const toml::node* node = table_->get(key);
  if (node == nullptr) {
    if (required) Problem(key, "missing '" + std::string(key) + "'");
    return;
  }
  if (!node->is_string()) {
    Problem(key, "'" + std::string(key) + "' must be a string");
    return;
  }
  *out = node->as_string()->get();
}

void Loader::Fields::Int(std::string_view key, bool required, int64_t min, int64_t max,
                         int64_t* out) {
  const toml::node* node = table_->get(key);
  if (node == nullptr) {
    if (required) Problem(key, "missing '" + std::string(key) + "'");
    return;
  }
  if (!node->is_integer()) {
    Problem(key, "'" + std::string(key) + "' must be a whole number");
    return;
  }
  int64_t value = node->as_integer()->get();
  if (value < min || value > max) {
    Problem(key, "'" + std::string(key) + "' = " + std::to_string(value) + " is out of range " +
                     std::to_string(min) + ".." + std::to_string(max));
    return;
  }
  *out = value;
}

void Loader::Fields::Strings(std::string_view key, bool required, std::vector<std::string>* out) {
  const toml::node* node = table_->get(key);
  if (node == nullptr) {
    if (required) Problem(key, "missing '" + std::string(key) + "'");
    return;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    Problem(key, "'" + std::string(key) + "' must be an array of strings");
    return;
  }
  out->clear();
  for (const toml::node& element : *array) {
    if (!element.is_string()) {
      Problem(key, "'" + std::string(key) + "' must contain only strings");
      out->clear();
      return;
    }
    out->push_back(element.as_string()->get());
  }
  if (required && out->empty()) Problem(key, "'" + std::string(key) + "' must not be empty");
}

std::vector<const toml::table*> Loader::Fields::Tables(std::string_view key) {
  std::vector<const toml::table*> tables;
  const toml::node* node = table_->get(key);
  if (node == nullptr) return tables;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    Problem(key,
            "'" + std::string(key) + "' must be an array of tables ([[" + std::string(key) + "]])");
    return tables;
  }
  for (const toml::node& element : *array) {
    if (const toml::table* table = element.as_table()) {
      tables.push_back(table);
    } else {
      Problem(key, "'" + std::string(key) + "' must contain only tables");
    }
  }
  return tables;
}

void Loader::Fields::CheckKeys(std::initializer_list<std::string_view> allowed) {
  for (auto&& [key, value] : *table_) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
      loader_->Report(file_, LineOf(value),
                      context_ + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
}

std::optional<std::string> Loader::ReadFile(const fs::path& path, const std::string& rel) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    Report(rel, 0, "cannot read: " + ec.message());
    return std::nullopt;
  }
  if (size > limits::kPackFileBytesMax) {
    Report(rel, 0, "file is larger than " + std::to_string(limits::kPackFileBytesMax) + " bytes");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Report(rel, 0, "cannot open file");
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  hashed_files_.emplace_back(rel, text);
  return text;
}

void Loader::LoadPackToml() {
  const std::string rel = "pack.toml";
  std::optional<std::string> text = ReadFile(dir_ / rel, rel);
  if (!text) return;
  toml::table root;
  try {
    root = toml::parse(*text, rel);
  } catch (const toml::parse_error& error) {
    Report(rel, static_cast<int>(error.source().begin.line), std::string(error.description()));
    return;
  }
  Fields fields(this, root, rel, "pack");
  fields.CheckKeys({"name", "version", "start_room"});
  fields.String("name", true, &pack_.name);
  fields.String("version", true, &pack_.version);
  std::string start;
  fields.String("start_room", true, &start);
  if (!start.empty()) {
    std::optional<Ref> ref;
    if (start.find(':') != std::string::npos) ref = ParseRef(start, "");
    if (!ref) {
      fields.Problem("start_room", "start_room '" + start + "' must be a 'zone:room' reference");
    } else {
      pack_.start_room = *ref;
      pending_refs_.push_back(
          {PendingRef::kRoom, *ref, rel, fields.LineOfKey("start_room"), "start_room"});
    }
  }
}

template <typename Enum, size_t N>
std::optional<Enum> FindName(const std::array<std::string_view, N>& names, std::string_view text) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

constexpr std::array<std::string_view, 6> kZoneKinds = {"lobby",   "town",  "wilderness",
                                                        "dungeon", "arena", "casino"};
constexpr std::array<std::string_view, 10> kItemTypes = {
    "weapon", "armor", "food", "drink", "potion", "container", "treasure", "key", "light", "trash"};
constexpr std::array<std::string_view, 4> kRoomFlagNames = {"safe", "bank", "indoors", "no_mob"};
constexpr std::array<std::string_view, 7> kMobFlagNames = {
    "aggressive", "wanders", "sentinel", "flees", "shopkeeper", "boss", "trainer"};

template <size_t N>
uint32_t ParseFlags(const std::vector<std::string>& words,
                    const std::array<std::string_view, N>& names,
                    const std::function<void(const std::string&)>& unknown) {
  uint32_t bits = 0;
  for (const std::string& word : words) {
    auto index = FindName<int>(names, word);
    if (!index) {
      unknown(word);
      continue;
    }
    bits |= 1u << *index;
  }
  return bits;
}

bool IsWord(std::string_view word) {
  if (word.empty() || word.size() > 32) return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

void Loader::LoadZone(const fs::path& path, const std::string& rel) {
  std::optional<std::string> text = ReadFile(path, rel);
  if (!text) return;
  toml::table root;
  try {
    root = toml::parse(*text, rel);
  } catch (const toml::parse_error& error) {
    Report(rel, static_cast<int>(error.source().begin.line), std::string(error.description()));
    return;
  }
  const std::string stem = path.stem().string();
  ZoneDef zone;
  zone.id = stem;

  Fields top(this, root, rel, "zone file");
  top.CheckKeys({"zone", "rooms", "items", "mobs", "shops", "resets", "help", "commands"});
  const toml::table* header = root["zone"].as_table();
  if (header == nullptr) {
    Report(rel, 1, "missing [zone] table");
  } else {
    Fields f(this, *header, rel, "[zone]");
    f.CheckKeys({"id", "name", "kind", "reset_minutes", "description", "colocation_group"});
    std::string id;
    f.String("id", true, &id);
    if (!id.empty() && id != stem) {
      f.Problem("id", "zone id '" + id + "' must equal the file name '" + stem + "'");
    }
    if (!IsValidId(stem)) {
      Report(rel, f.line(), "zone file name '" + stem + "' is not a valid id ([a-z0-9_], 1-32)");
    }
    f.String("name", true, &zone.name);
    std::string kind;
    f.String("kind", true, &kind);
    if (!kind.empty()) {
      auto parsed = FindName<ZoneKind>(kZoneKinds, kind);
      if (!parsed) {
        f.Problem("kind", "unknown zone kind '" + kind +
                              "' (lobby, town, wilderness, dungeon, arena, casino)");
      } else {
        zone.kind = *parsed;
      }
    }
    f.Int("reset_minutes", true, 1, 1440, &zone.reset_minutes);
    f.String("description", false, &zone.description);
    f.String("colocation_group", false, &zone.colocation_group);
    if (!zone.colocation_group.empty() && !IsValidId(zone.colocation_group)) {
      f.Problem("colocation_group",
                "invalid colocation group '" + zone.colocation_group + "' ([a-z0-9_], 1-32)");
    }
  }

  auto note_script = [&](Fields& f, const std::string& script) {
    if (script.empty()) return;
    pending_scripts_.push_back({script, rel, f.LineOfKey("script")});
  };
  auto ref_field = [&](Fields& f, std::string_view key, const std::string& ref_text,
                       PendingRef::Kind kind, const std::string& what) -> std::optional<Ref> {
    std::optional<Ref> ref = ParseRef(ref_text, stem);
    if (!ref) {
      f.Problem(key, "malformed reference '" + ref_text + "' (want id or zone:id)");
      return std::nullopt;
    }
    pending_refs_.push_back({kind, *ref, rel, f.LineOfKey(key), what});
    return ref;
  };

  std::set<std::string> room_ids;
  for (const toml::table* t : top.Tables("rooms")) {
    Fields f(this, *t, rel, "room");
    RoomDef room;
    f.String("id", true, &room.id);
    if (!room.id.empty()) {
      f = Fields(this, *t, rel, "room '" + room.id + "'");
      if (!IsValidId(room.id)) f.Problem("id", "invalid id '" + room.id + "'");
      if (!room_ids.insert(room.id).second) f.Problem("id", "duplicate room id '" + room.id + "'");
    }
    f.CheckKeys({"id", "name", "description", "flags", "script", "exits", "extras"});
    f.String("name", true, &room.name);
    f.String("description", true, &room.description);
    std::vector<std::string> flags;
    f.Strings("flags", false, &flags);
    room.flags = ParseFlags(flags, kRoomFlagNames, [&](const std::string& w) {
      f.Problem("flags", "unknown room flag '" + w + "' (safe, bank, indoors, no_mob)");
    });
    f.String("script", false, &room.script);
    note_script(f, room.script);
    std::set<std::string> dirs;
    for (const toml::table* et : f.Tables("exits")) {
      Fields ef(this, *et, rel, "exit of room '" + room.id + "'");
      ef.CheckKeys({"dir", "to", "description"});
      ExitDef exit;
      ef.String("dir", true, &exit.dir);
      if (!exit.dir.empty()) {
        if (!IsWord(exit.dir))
          ef.Problem("dir", "exit direction '" + exit.dir + "' must be one word");
        if (!dirs.insert(exit.dir).second) ef.Problem("dir", "duplicate exit '" + exit.dir + "'");
      }
      std::string to;
      ef.String("to", true, &to);
      ef.String("description", false, &exit.description);
      if (!to.empty()) {
        auto ref = ref_field(ef, "to", to, PendingRef::kRoom,
                             "exit '" + exit.dir + "' of room '" + room.id + "'");
        if (ref) exit.to = *ref;
      }
      room.exits.push_back(std::move(exit));
    }
    for (const toml::table* xt : f.Tables("extras")) {
      Fields xf(this, *xt, rel, "extra of room '" + room.id + "'");
      xf.CheckKeys({"keywords", "text"});
      ExtraDef extra;
      xf.Strings("keywords", true, &extra.keywords);
      xf.String("text", true, &extra.text);
      room.extras.push_back(std::move(extra));
    }
    zone.rooms.push_back(std::move(room));
  }

  std::set<std::string> item_ids;
  for (const toml::table* t : top.Tables("items")) {
    Fields f(this, *t, rel, "item");
    ItemDef item;
    item.ref.zone = stem;
    f.String("id", true, &item.ref.id);
    if (!item.ref.id.empty()) {
      f = Fields(this, *t, rel, "item '" + item.ref.id + "'");
      if (!IsValidId(item.ref.id)) f.Problem("id", "invalid id '" + item.ref.id + "'");
      if (!item_ids.insert(item.ref.id).second) {
        f.Problem("id", "duplicate item id '" + item.ref.id + "'");
      }
    }
    f.CheckKeys({"id", "name", "keywords", "ground", "description", "type", "slot", "value",
                 "weight", "damage", "armor", "use_affect", "use_seconds", "use_heal", "script"});
    f.String("name", true, &item.name);
    f.Strings("keywords", true, &item.keywords);
    f.String("ground", true, &item.ground);
    f.String("description", false, &item.description);
    std::string type;
    f.String("type", true, &type);
    if (!type.empty()) {
      auto parsed = FindName<ItemType>(kItemTypes, type);
      if (!parsed) {
        f.Problem("type", "unknown item type '" + type + "'");
      } else {
        item.type = *parsed;
      }
    }
    std::string slot;
    f.String("slot", false, &slot);
    if (!slot.empty()) {
      auto parsed = ParseWearSlot(slot);
      if (!parsed) {
        f.Problem("slot", "unknown wear slot '" + slot + "'");
      } else {
        item.slot = *parsed;
      }
    }
    f.Int("value", false, 0, 1'000'000'000, &item.value);
    f.Int("weight", false, 0, 1'000'000, &item.weight);
    std::string damage;
    f.String("damage", false, &damage);
    if (!damage.empty()) {
      item.damage = ParseDice(damage);
      if (!item.damage) f.Problem("damage", "bad dice '" + damage + "' (want NdS, NdS+B, NdS-B)");
    }
    f.Int("armor", false, 0, 1000, &item.armor);
    std::string affect;
    f.String("use_affect", false, &affect);
    if (!affect.empty()) {
      item.use_affect = ParseAffectKind(affect);
      if (!item.use_affect) {
        f.Problem("use_affect", "unknown affect '" + affect + "' (poison, regeneration, haste)");
      }
    }
    f.Int("use_seconds", false, 0, 86'400, &item.use_seconds);
    f.Int("use_heal", false, 0, 100'000, &item.use_heal);
    f.String("script", false, &item.script);
    note_script(f, item.script);
    zone.items.push_back(std::move(item));
  }

  std::set<std::string> mob_ids;
  for (const toml::table* t : top.Tables("mobs")) {
    Fields f(this, *t, rel, "mob");
    MobDef mob;
    mob.ref.zone = stem;
    f.String("id", true, &mob.ref.id);
    if (!mob.ref.id.empty()) {
      f = Fields(this, *t, rel, "mob '" + mob.ref.id + "'");
      if (!IsValidId(mob.ref.id)) f.Problem("id", "invalid id '" + mob.ref.id + "'");
      if (!mob_ids.insert(mob.ref.id).second)
        f.Problem("id", "duplicate mob id '" + mob.ref.id + "'");
    }
    f.CheckKeys({"id", "name", "keywords", "ground", "description", "level", "hp", "damage",
                 "armor", "hitroll", "exp", "gold", "flags", "flee_percent", "equipment",
                 "inventory", "script", "spells"});
    f.String("name", true, &mob.name);
    f.Strings("keywords", true, &mob.keywords);
    f.String("ground", true, &mob.ground);
    f.String("description", false, &mob.description);
    f.Int("level", true, 1, 100, &mob.level);
    f.Int("hp", true, 1, 1'000'000, &mob.hp);
    std::string damage = "1d2";
    f.String("damage", false, &damage);
    if (auto dice = ParseDice(damage)) {
      mob.damage = *dice;
    } else {
      f.Problem("damage", "bad dice '" + damage + "' (want NdS, NdS+B, NdS-B)");
    }
    f.Int("armor", false, 0, 1000, &mob.armor);
    f.Int("hitroll", false, -100, 100, &mob.hitroll);
    f.Int("exp", false, 0, 1'000'000'000, &mob.exp);
    f.Int("gold", false, 0, 1'000'000'000, &mob.gold);
    std::vector<std::string> flags;
    f.Strings("flags", false, &flags);
    mob.flags = ParseFlags(flags, kMobFlagNames, [&](const std::string& w) {
      f.Problem("flags", "unknown mob flag '" + w +
                             "' (aggressive, wanders, sentinel, flees, shopkeeper, boss, trainer)");
    });
    f.Int("flee_percent", false, 0, 100, &mob.flee_percent);
    std::vector<std::string> refs;
    f.Strings("equipment", false, &refs);
    for (const std::string& ref_text : refs) {
      if (auto ref = ref_field(f, "equipment", ref_text, PendingRef::kItem,
                               "equipment of mob '" + mob.ref.id + "'")) {
        mob.equipment.push_back(*ref);
      }
    }
    refs.clear();
    f.Strings("inventory", false, &refs);
    for (const std::string& ref_text : refs) {
      if (auto ref = ref_field(f, "inventory", ref_text, PendingRef::kItem,
                               "inventory of mob '" + mob.ref.id + "'")) {
        mob.inventory.push_back(*ref);
      }
    }
    f.String("script", false, &mob.script);
    note_script(f, mob.script);
    f.Strings("spells", false, &mob.spells);
    for (const std::string& spell : mob.spells) {
      pending_skills_.push_back(
          {spell, rel, f.LineOfKey("spells"), "spells of mob '" + mob.ref.id + "'"});
    }
    zone.mobs.push_back(std::move(mob));
  }

  std::set<std::string> keepers;
  for (const toml::table* t : top.Tables("shops")) {
    Fields f(this, *t, rel, "shop");
    f.CheckKeys({"keeper", "sells", "buy_percent", "sell_percent"});
    ShopDef shop;
    f.String("keeper", true, &shop.keeper);
    if (!shop.keeper.empty()) {
      if (!keepers.insert(shop.keeper).second) {
        f.Problem("keeper", "mob '" + shop.keeper + "' keeps two shops");
      }
      pending_refs_.push_back(
          {PendingRef::kMob, Ref{stem, shop.keeper}, rel, f.LineOfKey("keeper"), "shop keeper"});
    }
    std::vector<std::string> sells;
    f.Strings("sells", false, &sells);
    for (const std::string& ref_text : sells) {
      if (auto ref = ref_field(f, "sells", ref_text, PendingRef::kItem, "shop ware")) {
        shop.sells.push_back(*ref);
      }
    }
    f.Int("buy_percent", false, 1, 1000, &shop.buy_percent);
    f.Int("sell_percent", false, 0, 1000, &shop.sell_percent);
    if (shop.sell_percent > shop.buy_percent) {
      f.Problem("sell_percent", "sell_percent must not exceed buy_percent (coin printing)");
    }
    zone.shops.push_back(std::move(shop));
  }

  for (const toml::table* t : top.Tables("resets")) {
    Fields f(this, *t, rel, "reset");
    f.CheckKeys({"mob", "item", "room", "max"});
    ResetDef reset;
    std::string mob, item;
    f.String("mob", false, &mob);
    f.String("item", false, &item);
    if (mob.empty() == item.empty()) {
      Report(rel, f.line(), "reset: give exactly one of 'mob' and 'item'");
    } else if (!mob.empty()) {
      reset.mob = ref_field(f, "mob", mob, PendingRef::kMob, "reset");
    } else {
      reset.item = ref_field(f, "item", item, PendingRef::kItem, "reset");
    }
    f.String("room", true, &reset.room);
    if (!reset.room.empty()) {
      ref_field(f, "room", reset.room, PendingRef::kRoom, "reset room");
      if (reset.room.find(':') != std::string::npos) {
        f.Problem("room", "a reset room must be in this zone");
      }
    }
    f.Int("max", false, 1, 100, &reset.max);
    zone.resets.push_back(std::move(reset));
  }

  for (const toml::table* t : top.Tables("help")) {
    Fields f(this, *t, rel, "help");
    f.CheckKeys({"keywords", "text"});
    HelpDef help;
    f.Strings("keywords", true, &help.keywords);
    f.String("text", true, &help.text);
    zone.help.push_back(std::move(help));
  }

  std::set<std::string> command_names;
  for (const toml::table* t : top.Tables("commands")) {
    Fields f(this, *t, rel, "command");
    f.CheckKeys({"name", "script", "function"});
    ZoneCommandDef command;
    f.String("name", true, &command.name);
    if (!command.name.empty()) {
      if (!IsWord(command.name)) f.Problem("name", "command name must be one lower-case word");
      if (!command_names.insert(command.name).second) {
        f.Problem("name", "duplicate command '" + command.name + "'");
      }
    }
    f.String("script", true, &command.script);
    note_script(f, command.script);
    f.String("function", true, &command.function);
    zone.commands.push_back(std::move(command));
  }

  pack_.zones.push_back(std::move(zone));
}

void Loader::LoadScripts() {
  std::error_code ec;
  fs::path scripts_dir = dir_ / "scripts";
  if (!fs::is_directory(scripts_dir, ec)) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(scripts_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".lua")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  lua_State* L = luaL_newstate();
  for (const fs::path& path : files) {
    std::string name = path.filename().string();
    std::string rel = "scripts/" + name;
    std::optional<std::string> text = ReadFile(path, rel);
    if (!text) continue;
    script_files_.insert(name);
    std::string chunk_name = "@" + rel;
    // Mode "t": text only. Precompiled bytecode could break the VM's memory safety.
    int rc = luaL_loadbufferx(L, text->data(), text->size(), chunk_name.c_str(), "t");
    if (rc != LUA_OK) {
      std::string message = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "load error";
      int line = 0;
      // Messages look like "scripts/x.lua:3: unexpected symbol near 'y'".
      std::string prefix = rel + ":";
      if (message.rfind(prefix, 0) == 0) {
        size_t colon = message.find(':', prefix.size());
        if (colon != std::string::npos) {
          line = std::atoi(message.substr(prefix.size(), colon - prefix.size()).c_str());
          message = message.substr(colon + 1);
          if (!message.empty() && message[0] == ' ') message.erase(0, 1);
        }
      }
      Report(rel, line, "Lua syntax error: " + message);
    } else {
      pack_.scripts[name] = *text;
    }
    lua_settop(L, 0);
  }
  lua_close(L);
}

void Loader::Resolve() {
  for (const PendingScript& script : pending_scripts_) {
    if (script_files_.count(script.name) == 0) {
      Report(script.file, script.line, "script '" + script.name + "' not found in scripts/");
    }
  }
  for (const PendingFunction& pending : pending_functions_) {
    if (script_files_.count(pending.script) == 0) continue;  // reported above
    auto source = pack_.scripts.find(pending.script);
    if (source == pack_.scripts.end()) {
      Report(pending.file, pending.line,
             pending.what + ": script '" + pending.script + "' has errors (scripts/" +
                 pending.script + ")");
      continue;
    }
    // Scripts only run in a zone's VM, so "defined" is read from the text: a global
    // `function name(` or `name = function`. The name goes into the pattern: it must be a
    // Lua identifier first.
    static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(pending.function, kIdentifier)) {
      Report(pending.file, pending.line,
             pending.what + ": '" + pending.function + "' is not a Lua function name");
      continue;
    }
    std::regex defined("(^|[^.:\\w])function\\s+" + pending.function + "\\s*\\(|(^|\\n)\\s*" +
                       pending.function + "\\s*=\\s*function\\b");
    if (!std::regex_search(source->second, defined)) {
      Report(pending.file, pending.line,
             pending.what + ": function '" + pending.function + "' is not defined in scripts/" +
                 pending.script);
    }
  }
  for (const PendingRef& pending : pending_refs_) {
    const ZoneDef* zone = pack_.FindZone(pending.ref.zone);
    if (zone == nullptr) {
      Report(pending.file, pending.line,
             pending.what + ": unknown zone '" + pending.ref.zone + "' in '" +
                 pending.ref.ToString() + "'");
      continue;
    }
    bool found = false;
    const char* kind = "";
    switch (pending.kind) {
      case PendingRef::kRoom:
        found = pack_.FindRoom(pending.ref) != nullptr;
        kind = "room";
        break;
      case PendingRef::kItem:
        found = pack_.FindItem(pending.ref) != nullptr;
        kind = "item";
        break;
      case PendingRef::kMob:
        found = pack_.FindMob(pending.ref) != nullptr;
        kind = "mob";
        break;
    }
    if (!found) {
      Report(pending.file, pending.line,
             pending.what + ": unknown " + kind + " '" + pending.ref.ToString() + "'");
    }
  }
  // Item slots: equipment of mobs must be wearable.
  for (const ZoneDef& zone : pack_.zones) {
    for (const MobDef& mob : zone.mobs) {
      for (const Ref& ref : mob.equipment) {
        const ItemDef* item = pack_.FindItem(ref);
        if (item != nullptr && item->slot == WearSlot::kNone) {
          Report("zones/" + zone.id + ".toml", 0,
                 "mob '" + mob.ref.id + "': equipment '" + ref.ToString() + "' has no slot");
        }
      }
    }
    for (const ShopDef& shop : zone.shops) {
      const MobDef* keeper = pack_.FindMob(Ref{zone.id, shop.keeper});
      if (keeper != nullptr && (keeper->flags & kMobShopkeeper) == 0) {
        Report("zones/" + zone.id + ".toml", 0,
               "shop keeper '" + shop.keeper + "' lacks the 'shopkeeper' flag");
      }
    }
  }
  // Room numbers (GMCP Room.Info "num") come from the ids; two rooms hashing alike would merge
  // in a client's map, so the pack is refused and the builder renames one of them.
  std::map<int32_t, Ref> numbers;
  for (const ZoneDef& zone : pack_.zones) {
    for (const RoomDef& room : zone.rooms) {
      const Ref ref{zone.id, room.id};
      const auto [it, fresh] = numbers.emplace(RoomNumber(ref), ref);
      if (!fresh) {
        Report("zones/" + zone.id + ".toml", 0,
               "room '" + ref.ToString() + "' has the same room number (" +
                   std::to_string(it->first) + ") as '" + it->second.ToString() +
                   "'; rename one of them");
      }
    }
  }
}

std::string Loader::Hash() const {
  std::vector<std::pair<std::string, std::string>> files = hashed_files_;
  std::sort(files.begin(), files.end());
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (const auto& [rel, contents] : files) {
    // Framing: path, NUL, byte length in decimal, NUL, bytes. Unambiguous across file splits.
    std::string header =
        rel + std::string(1, '\0') + std::to_string(contents.size()) + std::string(1, '\0');
    EVP_DigestUpdate(ctx, header.data(), header.size());
    EVP_DigestUpdate(ctx, contents.data(), contents.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

Result<Pack> Loader::Run(std::vector<Problem>* problems) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    problems->push_back({dir_.string(), 0, "not a directory"});
    return Status::InvalidArgument("content pack " + dir_.string() + " is not a directory");
  }
  LoadPackToml();
  std::vector<fs::path> zone_files;
  fs::path zones_dir = dir_ / "zones";
  if (fs::is_directory(zones_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(zones_dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".toml") {
        zone_files.push_back(entry.path());
      }
    }
  }
  std::sort(zone_files.begin(), zone_files.end());
  if (zone_files.empty()) Report("zones", 0, "no zone files (zones/*.toml)");
  if (zone_files.size() > limits::kPackFilesMax) {
    Report("zones", 0, "too many zone files");
    zone_files.resize(limits::kPackFilesMax);
  }
  for (const fs::path& path : zone_files) {
    LoadZone(path, "zones/" + path.filename().string());
  }
  std::sort(pack_.zones.begin(), pack_.zones.end(),
            [](const ZoneDef& a, const ZoneDef& b) { return a.id < b.id; });
  LoadGame();
  LoadScripts();
  Resolve();
  ResolveGame();

  std::stable_sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  if (problems_.size() > limits::kPackProblemsMax) {
    problems_.resize(limits::kPackProblemsMax);
    problems_.push_back({"pack", 0, "too many problems; stopped reporting"});
  }
  *problems = problems_;
  if (!problems_.empty()) {
    return Status::InvalidArgument("content pack " + dir_.string() + " has " +
                                   std::to_string(problems_.size()) +
                                   " problem(s); first: " + problems_.front().ToString());
  }
  pack_.content_hash = Hash();
  return std::move(pack_);
}

// --- game.toml: races, classes and skills (docs/content.md "Races, classes and skills").
// Kept together here so the zone-file reader above stays as it was.

constexpr std::array<std::string_view, 2> kSkillKinds = {"skill", "spell"};
constexpr std::array<std::string_view, 4> kSkillTargets = {"self", "character", "room", "object"};
constexpr std::array<std::string_view, 6> kSkillEffects = {"damage",   "heal",   "affect",
                                                           "teleport", "summon", "lua"};

void Loader::LoadStats(const toml::table& owner, const std::string& file,
                       const std::string& context, StatBlock* out, int min, int max) {
  const toml::node* node = owner.get("stats");
  if (node == nullptr) return;
  const toml::table* table = node->as_table();
  if (table == nullptr) {
    Report(file, LineOf(*node), context + ": 'stats' must be a table { str = .., dex = .. }");
    return;
  }
  Fields f(this, *table, file, context + " stats");
  f.CheckKeys({"str", "dex", "con", "int", "wis"});
  f.Int("str", false, min, max, &out->strength);
  f.Int("dex", false, min, max, &out->dexterity);
  f.Int("con", false, min, max, &out->constitution);
  f.Int("int", false, min, max, &out->intelligence);
  f.Int("wis", false, min, max, &out->wisdom);
}

void Loader::LoadSkill(const toml::table& t, const std::string& rel, std::set<std::string>* ids) {
  Fields f(this, t, rel, "skill");
  SkillDef skill;
  f.String("id", true, &skill.id);
  if (!skill.id.empty()) {
    f = Fields(this, t, rel, "skill '" + skill.id + "'");
    if (!IsValidId(skill.id)) f.Problem("id", "invalid id '" + skill.id + "'");
    if (!ids->insert(skill.id).second) f.Problem("id", "duplicate skill id '" + skill.id + "'");
  }
  f.CheckKeys({"id", "name", "kind", "mana", "moves", "lag_ms", "cooldown_ms", "target", "effect",
               "amount", "affect", "seconds", "to", "mob", "script", "function", "message",
               "description"});
  f.String("name", true, &skill.name);
  std::string text;
  f.String("kind", true, &text);
  if (!text.empty()) {
    if (auto kind = FindName<SkillKind>(kSkillKinds, text)) {
      skill.kind = *kind;
    } else {
      f.Problem("kind", "unknown skill kind '" + text + "' (skill, spell)");
    }
  }
  f.Int("mana", false, 0, 10'000, &skill.mana);
  f.Int("moves", false, 0, 10'000, &skill.moves);
  if (skill.kind == SkillKind::kSpell && skill.mana == 0) {
    f.Problem("mana", "a spell must cost mana ('mana' >= 1)");
  } else if (skill.mana == 0 && skill.moves == 0) {
    f.Problem("moves", "a skill must cost mana or moves");
  }
  f.Int("lag_ms", false, 0, limits::kSkillLagMsMax, &skill.lag_ms);
  f.Int("cooldown_ms", false, 0, limits::kSkillCooldownMsMax, &skill.cooldown_ms);
  text.clear();
  f.String("target", true, &text);
  if (!text.empty()) {
    if (auto target = FindName<SkillTarget>(kSkillTargets, text)) {
      skill.target = *target;
    } else {
      f.Problem("target", "unknown target '" + text + "' (self, character, room, object)");
    }
  }
  text.clear();
  f.String("effect", true, &text);
  bool effect_known = false;
  if (!text.empty()) {
    if (auto effect = FindName<SkillEffect>(kSkillEffects, text)) {
      skill.effect = *effect;
      effect_known = true;
    } else {
      f.Problem("effect",
                "unknown effect '" + text + "' (damage, heal, affect, teleport, summon, lua)");
    }
  }
  std::string amount;
  f.String("amount", false, &amount);
  if (!amount.empty()) {
    skill.amount = ParseDice(amount);
    if (!skill.amount) f.Problem("amount", "bad dice '" + amount + "' (want NdS, NdS+B, NdS-B)");
  }
  std::string affect;
  f.String("affect", false, &affect);
  if (!affect.empty()) {
    skill.affect = ParseAffectKind(affect);
    if (!skill.affect) {
      f.Problem("affect", "unknown affect '" + affect + "' (poison, regeneration, haste, shield)");
    }
  }
  f.Int("seconds", false, 1, 86'400, &skill.affect_seconds);
  std::string to, mob;
  f.String("to", false, &to);
  f.String("mob", false, &mob);
  f.String("script", false, &skill.script);
  f.String("function", false, &skill.function);
  f.String("message", false, &skill.message);
  f.String("description", false, &skill.description);
  auto full_ref = [&](std::string_view key, const std::string& value, PendingRef::Kind kind,
                      Ref* out) {
    std::optional<Ref> ref;
    if (value.find(':') != std::string::npos) ref = ParseRef(value, "");
    if (!ref) {
      f.Problem(key, "'" + std::string(key) + "' must be a 'zone:id' reference");
      return;
    }
    *out = *ref;
    pending_refs_.push_back({kind, *ref, rel, f.LineOfKey(key), "skill '" + skill.id + "'"});
  };
  if (effect_known) {
    switch (skill.effect) {
      case SkillEffect::kDamage:
      case SkillEffect::kHeal:
        if (amount.empty()) f.Problem("amount", "a damage or heal effect needs 'amount' (dice)");
        break;
      case SkillEffect::kAffect:
        if (affect.empty()) f.Problem("affect", "an affect effect needs 'affect'");
        if (!f.Has("seconds")) f.Problem("seconds", "an affect effect needs 'seconds'");
        break;
      case SkillEffect::kTeleport:
        if (to.empty()) {
          f.Problem("to", "a teleport needs 'to' (a zone:room reference)");
        } else {
          full_ref("to", to, PendingRef::kRoom, &skill.to);
        }
        break;
      case SkillEffect::kSummon:
        if (mob.empty()) {
          f.Problem("mob", "a summon needs 'mob' (a zone:mob reference)");
        } else {
          full_ref("mob", mob, PendingRef::kMob, &skill.mob);
        }
        break;
      case SkillEffect::kLua:
        if (skill.script.empty() || skill.function.empty()) {
          f.Problem("script", "a lua effect needs 'script' and 'function'");
        } else {
          pending_scripts_.push_back({skill.script, rel, f.LineOfKey("script")});
        }
        break;
    }
    if (skill.effect == SkillEffect::kTeleport || skill.effect == SkillEffect::kSummon) {
      if (skill.target != SkillTarget::kSelf) {
        f.Problem("target", "a teleport or summon acts on its user: use target = \"self\"");
      }
    }
    if (skill.target == SkillTarget::kObject && skill.effect != SkillEffect::kLua) {
      f.Problem("target", "only a lua effect can act on an object");
    }
  }
  skill.hostile = skill.effect == SkillEffect::kDamage ||
                  (skill.effect == SkillEffect::kAffect && skill.affect == AffectKind::kPoison);
  if (skill.hostile && skill.target == SkillTarget::kSelf) {
    f.Problem("target", "a harmful effect cannot target its user");
  }
  pack_.game.skills.push_back(std::move(skill));
}

constexpr std::array<std::string_view, 5> kQuestStepKinds = {"kill", "fetch", "visit", "talk",
                                                             "lua"};

void Loader::LoadQuest(const toml::table& t, const std::string& rel, std::set<std::string>* ids) {
  Fields f(this, t, rel, "quest");
  QuestDef quest;
  f.String("id", true, &quest.id);
  if (!quest.id.empty()) {
    f = Fields(this, t, rel, "quest '" + quest.id + "'");
    if (!IsValidId(quest.id)) f.Problem("id", "invalid id '" + quest.id + "'");
    if (!ids->insert(quest.id).second) f.Problem("id", "duplicate quest id '" + quest.id + "'");
  }
  f.CheckKeys({"id", "name", "giver", "level", "repeatable", "description", "offer", "complete",
               "steps", "exp", "coins", "items"});
  f.String("name", true, &quest.name);
  f.String("description", false, &quest.description);
  f.String("offer", false, &quest.offer);
  f.String("complete", false, &quest.complete);
  f.Int("level", false, 1, 100, &quest.level);
  if (const toml::node* node = t.get("repeatable")) {
    if (node->is_boolean()) {
      quest.repeatable = node->as_boolean()->get();
    } else {
      f.Problem("repeatable", "'repeatable' must be true or false");
    }
  }
  f.Int("exp", false, 0, 1'000'000'000, &quest.exp);
  f.Int("coins", false, 0, 1'000'000'000, &quest.coins);
  // References here are always zone:id: game.toml belongs to no zone.
  auto full_ref = [&](Fields& ff, std::string_view key, const std::string& value,
                      PendingRef::Kind kind, const std::string& what) -> std::optional<Ref> {
    std::optional<Ref> ref;
    if (value.find(':') != std::string::npos) ref = ParseRef(value, "");
    if (!ref) {
      ff.Problem(key, "'" + value + "' must be a 'zone:id' reference");
      return std::nullopt;
    }
    pending_refs_.push_back({kind, *ref, rel, ff.LineOfKey(key), what});
    return ref;
  };
  std::string giver;
  f.String("giver", true, &giver);
  if (!giver.empty()) {
    if (auto ref =
            full_ref(f, "giver", giver, PendingRef::kMob, "giver of quest '" + quest.id + "'")) {
      quest.giver = *ref;
    }
  }
  std::vector<std::string> items;
  f.Strings("items", false, &items);
  for (const std::string& item : items) {
    if (auto ref =
            full_ref(f, "items", item, PendingRef::kItem, "reward of quest '" + quest.id + "'")) {
      quest.items.push_back(*ref);
    }
  }
  for (const toml::table* st : f.Tables("steps")) {
    Fields sf(this, *st, rel, "step of quest '" + quest.id + "'");
    sf.CheckKeys({"kind", "mob", "item", "room", "count", "text", "when", "script", "function"});
    QuestStep step;
    std::string kind;
    sf.String("kind", true, &kind);
    sf.Int("count", false, 1, 100, &step.count);
    sf.String("text", false, &step.text);
    if (kind.empty()) continue;
    auto parsed = FindName<QuestStepKind>(kQuestStepKinds, kind);
    if (!parsed) {
      sf.Problem("kind", "unknown step kind '" + kind + "' (kill, fetch, visit, talk, lua)");
      continue;
    }
    step.kind = *parsed;
    if (step.kind == QuestStepKind::kLua) {
      LoadQuestPredicate(sf, rel, quest.id, quest.steps.size(), &step);
      quest.steps.push_back(std::move(step));
      continue;
    }
    for (const char* lua_key : {"when", "script", "function"}) {
      if (st->contains(lua_key)) {
        sf.Problem(lua_key, std::string("only a lua step has '") + lua_key + "'");
      }
    }
    const char* key = step.kind == QuestStepKind::kFetch   ? "item"
                      : step.kind == QuestStepKind::kVisit ? "room"
                                                           : "mob";
    PendingRef::Kind ref_kind = step.kind == QuestStepKind::kFetch   ? PendingRef::kItem
                                : step.kind == QuestStepKind::kVisit ? PendingRef::kRoom
                                                                     : PendingRef::kMob;
    std::string target;
    sf.String(key, true, &target);
    if (!target.empty()) {
      if (auto ref = full_ref(sf, key, target, ref_kind, "step of quest '" + quest.id + "'")) {
        step.target = *ref;
      }
    }
    if ((step.kind == QuestStepKind::kVisit || step.kind == QuestStepKind::kTalk) &&
        step.count != 1) {
      sf.Problem("count", "a visit or talk step happens once ('count' = 1)");
    }
    quest.steps.push_back(std::move(step));
  }
  if (quest.steps.empty()) f.Problem("steps", "a quest needs at least one [[quests.steps]]");
  if (quest.steps.size() > limits::kQuestStepsMax) {
    f.Problem("steps", "a quest has at most " + std::to_string(limits::kQuestStepsMax) + " steps");
  }
  pack_.game.quests.push_back(std::move(quest));
}

void Loader::LoadQuestPredicate(Fields& sf, const std::string& rel, const std::string& quest_id,
                                size_t step_index, QuestStep* step) {
  std::string where = "step " + std::to_string(step_index + 1);
  sf.String("when", false, &step->when);
  sf.String("script", false, &step->script);
  sf.String("function", false, &step->function);
  if (step->count != 1) sf.Problem("count", "a lua step holds or not ('count' = 1)");
  if (step->text.empty()) sf.Problem("text", where + ": a lua step needs 'text' (what to do)");
  (void)quest_id;
  bool named = !step->script.empty() || !step->function.empty();
  if (step->when.empty() == !named) {
    sf.Problem("when", where + ": a lua step needs 'when', or 'script' and 'function' (not both)");
    return;
  }
  if (named) {
    if (step->script.empty() || step->function.empty()) {
      sf.Problem(step->script.empty() ? "script" : "function",
                 where + ": a named predicate needs both 'script' and 'function'");
      return;
    }
    pending_scripts_.push_back({step->script, rel, sf.LineOfKey("script")});
    pending_functions_.push_back({step->script, step->function, rel, sf.LineOfKey("function"),
                                  "quest '" + quest_id + "' " + where});
    return;
  }
  if (step->when.size() > limits::kQuestPredicateBytesMax) {
    sf.Problem("when", where + ": 'when' is longer than " +
                           std::to_string(limits::kQuestPredicateBytesMax) + " bytes");
    return;
  }
  // Compiled here (not run) so that a syntax error is a load problem, not a log line in play.
  lua_State* L = luaL_newstate();
  std::string source = QuestPredicateSource(step->when);
  int rc = luaL_loadbufferx(L, source.data(), source.size(), "=when", "t");
  if (rc != LUA_OK) {
    std::string message = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "load error";
    sf.Problem("when", where + ": Lua syntax error in " + message);
  }
  lua_close(L);
}

void Loader::LoadGame() {
  const std::string rel = "game.toml";
  std::error_code ec;
  if (!fs::exists(dir_ / rel, ec)) return;  // optional: a pack without classes
  std::optional<std::string> text = ReadFile(dir_ / rel, rel);
  if (!text) return;
  toml::table root;
  try {
    root = toml::parse(*text, rel);
  } catch (const toml::parse_error& error) {
    Report(rel, static_cast<int>(error.source().begin.line), std::string(error.description()));
    return;
  }
  GameRules& game = pack_.game;
  Fields top(this, root, rel, "game");
  top.CheckKeys({"default_race", "default_class", "races", "classes", "skills", "quests"});

  std::set<std::string> skill_ids;
  for (const toml::table* t : top.Tables("skills")) LoadSkill(*t, rel, &skill_ids);

  std::set<std::string> race_ids;
  for (const toml::table* t : top.Tables("races")) {
    Fields f(this, *t, rel, "race");
    RaceDef race;
    f.String("id", true, &race.id);
    if (!race.id.empty()) {
      f = Fields(this, *t, rel, "race '" + race.id + "'");
      if (!IsValidId(race.id)) f.Problem("id", "invalid id '" + race.id + "'");
      if (!race_ids.insert(race.id).second) f.Problem("id", "duplicate race id '" + race.id + "'");
    }
    f.CheckKeys({"id", "name", "description", "stats"});
    f.String("name", true, &race.name);
    f.String("description", false, &race.description);
    race.stats = StatBlock{13, 13, 13, 13, 13};
    LoadStats(*t, rel, "race '" + race.id + "'", &race.stats, 3, 25);
    game.races.push_back(std::move(race));
  }

  std::set<std::string> class_ids;
  for (const toml::table* t : top.Tables("classes")) {
    Fields f(this, *t, rel, "class");
    ClassDef cls;
    f.String("id", true, &cls.id);
    if (!cls.id.empty()) {
      f = Fields(this, *t, rel, "class '" + cls.id + "'");
      if (!IsValidId(cls.id)) f.Problem("id", "invalid id '" + cls.id + "'");
      if (!class_ids.insert(cls.id).second) f.Problem("id", "duplicate class id '" + cls.id + "'");
    }
    f.CheckKeys({"id", "name", "description", "stats", "hp", "mana", "moves", "hp_per_level",
                 "mana_per_level", "moves_per_level", "practices_per_level", "trains_per_level",
                 "skills"});
    f.String("name", true, &cls.name);
    f.String("description", false, &cls.description);
    LoadStats(*t, rel, "class '" + cls.id + "'", &cls.stats, -10, 10);
    f.Int("hp", false, 1, 10'000, &cls.hp);
    f.Int("mana", false, 0, 10'000, &cls.mana);
    f.Int("moves", false, 0, 10'000, &cls.moves);
    f.Int("hp_per_level", false, 0, 1'000, &cls.hp_per_level);
    f.Int("mana_per_level", false, 0, 1'000, &cls.mana_per_level);
    f.Int("moves_per_level", false, 0, 1'000, &cls.moves_per_level);
    f.Int("practices_per_level", false, 0, 100, &cls.practices_per_level);
    f.Int("trains_per_level", false, 0, 100, &cls.trains_per_level);
    std::set<std::string> taught;
    for (const toml::table* st : f.Tables("skills")) {
      Fields sf(this, *st, rel, "skill of class '" + cls.id + "'");
      sf.CheckKeys({"skill", "level"});
      ClassSkill entry;
      sf.String("skill", true, &entry.skill);
      sf.Int("level", true, 1, 100, &entry.level);
      if (entry.skill.empty()) continue;
      if (!taught.insert(entry.skill).second) {
        sf.Problem("skill", "skill '" + entry.skill + "' listed twice");
      }
      if (skill_ids.count(entry.skill) == 0) {
        sf.Problem("skill", "unknown skill '" + entry.skill + "'");
      }
      // A character may know at most kCharacterSkillsMax skills (a saved state claiming more is
      // refused at decode): a class teaching more would make characters that cannot load.
      if (cls.skills.size() == limits::kCharacterSkillsMax) {
        sf.Problem("skill", "a class may teach at most " +
                                std::to_string(limits::kCharacterSkillsMax) + " skills");
      }
      cls.skills.push_back(std::move(entry));
    }
    game.classes.push_back(std::move(cls));
  }

  top.String("default_race", !game.races.empty(), &game.default_race);
  top.String("default_class", !game.classes.empty(), &game.default_class);
  if (!game.default_race.empty() && race_ids.count(game.default_race) == 0) {
    top.Problem("default_race", "unknown race '" + game.default_race + "'");
  }
  if (!game.default_class.empty() && class_ids.count(game.default_class) == 0) {
    top.Problem("default_class", "unknown class '" + game.default_class + "'");
  }
  std::set<std::string> quest_ids;
  for (const toml::table* t : top.Tables("quests")) LoadQuest(*t, rel, &quest_ids);
  if (game.races.empty() != game.classes.empty()) {
    Report(rel, 1, "game: give both [[races]] and [[classes]], or neither");
  }
}

void Loader::ResolveGame() {
  for (const PendingSkill& pending : pending_skills_) {
    if (pack_.game.FindSkill(pending.id) == nullptr) {
      Report(pending.file, pending.line,
             pending.what + ": unknown skill '" + pending.id + "'" +
                 (pack_.game.skills.empty() ? " (the pack has no game.toml skills)" : ""));
    }
  }
  for (const SkillDef& skill : pack_.game.skills) {
    if (skill.effect == SkillEffect::kSummon && skill.target == SkillTarget::kSelf) {
      // Summoning a shopkeeper or trainer would let a player carry one about.
      const MobDef* mob = pack_.FindMob(skill.mob);
      if (mob != nullptr && (mob->flags & (kMobShopkeeper | kMobTrainer)) != 0) {
        Report("game.toml", 0,
               "skill '" + skill.id + "': cannot summon a shopkeeper or trainer ('" +
                   skill.mob.ToString() + "')");
      }
    }
  }
}

}  // namespace

Result<Pack> LoadPack(const std::filesystem::path& dir, std::vector<Problem>* problems) {
  ASSERT(problems != nullptr);
  problems->clear();
  Loader loader(dir);
  return loader.Run(problems);
}

}  // namespace telos::world
