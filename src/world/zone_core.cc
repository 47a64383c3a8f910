// ZoneCore: rooms, actors, items, arrival and departure, dispatch, output, heartbeat, resets.
#include "zone_core.h"

#include <algorithm>
#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/utf8.h"

namespace telos::world {
namespace {

namespace json = boost::json;

// GMCP bodies are Boost.JSON documents. Names, channel text and content strings come from
// players and builders: repaired to valid UTF-8 first, since the serializer copies bytes as
// they are. Members keep the order in which they are added.
json::string JsonText(std::string_view text) {
  return json::string(SanitizeUtf8(text));
}

// Comm.Channel.Text as IRE clients read it: "talker" names the speaker and "text" is the
// whole line as the player sees it (without colour), what chat-capture scripts show; "message"
// is the spoken words alone, for a client (ours) that lays the line out itself.
std::string ChannelJson(std::string_view channel, std::string_view talker, std::string_view line,
                        std::string_view message) {
  return json::serialize(json::object{{"channel", JsonText(channel)},
                                      {"talker", JsonText(talker)},
                                      {"text", JsonText(line)},
                                      {"message", JsonText(message)}});
}

// Room.Info exits are keyed the short way IRE clients and mapper scripts use ("n", "ne", "u");
// a direction that is not one of the usual twelve keeps its own name.
std::string ExitKey(std::string_view dir) {
  static constexpr std::pair<std::string_view, std::string_view> kShort[] = {
      {"north", "n"}, {"northeast", "ne"}, {"east", "e"}, {"southeast", "se"},
      {"south", "s"}, {"southwest", "sw"}, {"west", "w"}, {"northwest", "nw"},
      {"up", "u"},    {"down", "d"},       {"in", "in"},  {"out", "out"}};
  for (const auto& [full, abbrev] : kShort) {
    if (dir == full) return std::string(abbrev);
  }
  return SanitizeUtf8(dir);
}

// Room.Players and Room.AddPlayer entries.
json::object PlayerJson(const Actor& player) {
  return json::object{{"name", JsonText(player.name)}, {"fullname", JsonText(player.name)}};
}

json::object ItemJson(const GmcpItem& item) {
  json::object o{{"id", JsonText(item.id)}, {"name", JsonText(item.name)}};
  if (!item.attrib.empty()) o.emplace("attrib", item.attrib);
  return o;
}

std::string ItemsListJson(std::string_view location, const std::vector<GmcpItem>& items) {
  json::array list;
  list.reserve(items.size());
  for (const GmcpItem& item : items) list.push_back(ItemJson(item));
  return json::serialize(json::object{{"location", location}, {"items", std::move(list)}});
}

std::string ItemChangeJson(std::string_view location, const GmcpItem& item) {
  return json::serialize(json::object{{"location", location}, {"item", ItemJson(item)}});
}

GmcpItem ViewItem(const Item& item, std::string attrib) {
  if (item.is_container()) attrib += 'c';
  return GmcpItem{std::to_string(item.id), item.Name(), std::move(attrib)};
}

// What the player carries: worn and wielded first, as the equipment command lists them.
std::vector<GmcpItem> InventoryView(const Actor& actor) {
  std::vector<GmcpItem> out;
  for (const auto& worn : actor.equipment) {
    if (worn) out.push_back(ViewItem(*worn, "w"));
  }
  for (const auto& item : actor.inventory) {
    out.push_back(ViewItem(*item, !item->is_corpse() && item->def->slot != WearSlot::kNone
                                      ? std::string("W")
                                      : std::string()));
  }
  return out;
}

// What lies in the room, then the mobs there (IRE lists denizens as items marked "m").
std::vector<GmcpItem> RoomView(const RoomState& here) {
  std::vector<GmcpItem> out;
  for (const auto& item : here.items) {
    if (out.size() >= limits::kItemsPerRoomMax) return out;
    out.push_back(ViewItem(*item, item->is_corpse() ? "td" : "t"));
  }
  for (const Actor* other : here.actors) {
    if (out.size() >= limits::kItemsPerRoomMax) return out;
    if (!other->is_player) out.push_back({"m" + std::to_string(other->id), other->name, "m"});
  }
  return out;
}

// Appends Char.Items.Add, Update and Remove events for the difference between `sent` and `now`,
// then makes `now` the list sent.
void DiffItems(std::string_view location, std::vector<GmcpItem> now, std::vector<GmcpItem>& sent,
               std::vector<OutputEvent>& events) {
  std::unordered_map<std::string_view, const GmcpItem*> before;
  before.reserve(sent.size());
  for (const GmcpItem& item : sent) before.emplace(item.id, &item);
  for (const GmcpItem& item : now) {
    const auto it = before.find(item.id);
    if (it == before.end()) {
      events.push_back({"Char.Items.Add", ItemChangeJson(location, item)});
      continue;
    }
    if (!(*it->second == item)) {
      events.push_back({"Char.Items.Update", ItemChangeJson(location, item)});
    }
    before.erase(it);
  }
  for (const GmcpItem& item : sent) {
    if (before.count(item.id) != 0) {
      events.push_back({"Char.Items.Remove", ItemChangeJson(location, item)});
    }
  }
  sent = std::move(now);
}

// "2.sword" -> (2, "sword"); "sword" -> (1, "sword").
std::pair<int, std::string> SplitOrdinal(std::string_view word) {
  size_t dot = word.find('.');
  if (dot != std::string_view::npos && dot > 0 && dot < 4) {
    int n = 0;
    for (size_t i = 0; i < dot; ++i) {
      if (word[i] < '0' || word[i] > '9') return {1, Lower(word)};
      n = n * 10 + (word[i] - '0');
    }
    if (n >= 1) return {n, Lower(word.substr(dot + 1))};
  }
  return {1, Lower(word)};
}

bool KeywordMatch(const std::vector<std::string>& keywords, std::string_view word) {
  if (word.empty()) return false;
  for (const std::string& keyword : keywords) {
    if (keyword.size() >= word.size() && keyword.compare(0, word.size(), word) == 0) return true;
  }
  return false;
}

}  // namespace

// --- Item and Actor helpers

std::string Item::Name() const {
  return is_corpse() ? "the corpse of " + corpse_of : def->name;
}

std::string Item::Ground() const {
  return is_corpse() ? "The corpse of " + corpse_of + " lies here." : def->ground;
}

bool Item::Matches(std::string_view word) const {
  if (is_corpse()) {
    if (std::string_view("corpse").starts_with(word) && !word.empty()) return true;
    std::string lower = Lower(corpse_of);
    return !word.empty() && lower.find(word) != std::string::npos;
  }
  return KeywordMatch(def->keywords, word);
}

bool Actor::HasAffect(AffectKind kind) const {
  return std::any_of(affects.begin(), affects.end(),
                     [kind](const Affect& a) { return a.kind == kind; });
}

std::string Actor::Display() const {
  return Capitalize(name);
}

// --- Construction

ZoneCore::ZoneCore(std::shared_ptr<const Pack> pack, const ZoneDef& zone, uint64_t seed,
                   ZoneDeps deps)
    : pack_(std::move(pack)), zone_(zone), deps_(deps), random_(seed) {
  RegisterInfoCommands(registry_);
  RegisterMovementCommands(registry_);
  RegisterCommCommands(registry_);
  RegisterObjectCommands(registry_);
  RegisterShopCommands(registry_);
  RegisterCombatCommands(registry_);
  RegisterMiscCommands(registry_);
  RegisterSkillCommands(registry_);
  RegisterQuestCommands(registry_);
  RegisterStaffCommands(registry_);
  RegisterPartyCommands(registry_);
  RegisterSocialCommands(registry_);
  RegisterArcadeCommands(registry_);
  BuildRooms();
  save_interval_heartbeats_ =
      std::max<int64_t>(1, deps_.save_interval_ms / limits::kZoneHeartbeatMs);
  reset_interval_heartbeats_ =
      std::max<int64_t>(1, int64_t{zone_.reset_minutes} * 60'000 / limits::kZoneHeartbeatMs);
  occupancy_ = &deps_.metrics->Gauge("zone_occupancy", "Players in the zone", {{"zone", zone_.id}});
  occupancy_->Set(0);
}

ZoneCore::~ZoneCore() {
  deps_.metrics->RemoveGauge("zone_occupancy", *occupancy_);
}

void ZoneCore::BuildRooms() {
  rooms_.reserve(zone_.rooms.size());
  for (const RoomDef& def : zone_.rooms) {
    RoomState room;
    room.def = &def;
    room.ref = Ref{zone_.id, def.id};
    room_index_[def.id] = static_cast<int>(rooms_.size());
    rooms_.push_back(std::move(room));
  }
  for (RoomState& room : rooms_) {
    for (const ExitDef& exit : room.def->exits) {
      room.exit_rooms.push_back(exit.to.zone == zone_.id ? RoomIndex(exit.to.id) : -1);
    }
  }
}

void ZoneCore::EnsureVm() {
  if (lua_) return;
  lua_ = std::make_unique<LuaVm>(zone_.id, *deps_.logger, *this, limits::kLuaMemoryBytesPerVmMax,
                                 limits::kLuaInstructionsPerCallMax, deps_.clock);
}

void ZoneCore::EnsureScript(const std::string& script) {
  if (script.empty() || loaded_scripts_.count(script) != 0) return;
  loaded_scripts_.insert(script);
  EnsureVm();
  auto it = pack_->scripts.find(script);
  if (it == pack_->scripts.end()) return;
  lua_->Load(script, it->second);
}

void ZoneCore::Start() {
  for (const RoomDef& room : zone_.rooms) EnsureScript(room.script);
  for (const MobDef& mob : zone_.mobs) EnsureScript(mob.script);
  for (const ItemDef& item : zone_.items) EnsureScript(item.script);
  for (const ZoneCommandDef& command : zone_.commands) EnsureScript(command.script);
  RunResets();
}

// --- Lookups

int ZoneCore::RoomIndex(std::string_view room_id) const {
  auto it = room_index_.find(room_id);
  return it == room_index_.end() ? -1 : it->second;
}

int ZoneCore::LocalRoom(const Ref& ref) const {
  return ref.zone == zone_.id ? RoomIndex(ref.id) : -1;
}

Actor* ZoneCore::FindActor(uint64_t id) {
  auto it = actor_by_id_.find(id);
  return it == actor_by_id_.end() ? nullptr : it->second;
}

Actor* ZoneCore::FindPlayerMutable(std::string_view key) {
  auto it = players_.find(key);
  return it == players_.end() ? nullptr : FindActor(it->second);
}

const Actor* ZoneCore::FindPlayer(std::string_view key) const {
  auto it = players_.find(key);
  if (it == players_.end()) return nullptr;
  auto actor = actor_by_id_.find(it->second);
  return actor == actor_by_id_.end() ? nullptr : actor->second;
}

std::vector<const Actor*> ZoneCore::ActorsIn(std::string_view room_id) const {
  std::vector<const Actor*> out;
  int index = RoomIndex(room_id);
  if (index < 0) return out;
  const auto& actors = rooms_[static_cast<size_t>(index)].actors;
  out.assign(actors.begin(), actors.end());
  return out;
}

std::optional<CharacterState> ZoneCore::PlayerState(std::string_view key) const {
  const Actor* actor = FindPlayer(key);
  if (actor == nullptr) return std::nullopt;
  return Snapshot(*actor);
}

Actor* ZoneCore::FindInRoom(Actor& viewer, std::string_view word) {
  if (viewer.room < 0) return nullptr;
  auto [nth, key] = SplitOrdinal(word);
  if (key == "self" || key == "me") return &viewer;
  for (Actor* other : room(viewer.room).actors) {
    if (other == &viewer) continue;
    bool match = other->is_player ? Lower(other->name).starts_with(key) && !key.empty()
                                  : KeywordMatch(other->keywords, key);
    if (match && --nth == 0) return other;
  }
  return nullptr;
}

Item* ZoneCore::FindItemIn(std::vector<std::unique_ptr<Item>>& items, std::string_view word) {
  auto [nth, key] = SplitOrdinal(word);
  for (auto& item : items) {
    if (item->Matches(key) && --nth == 0) return item.get();
  }
  return nullptr;
}

std::unique_ptr<Item> ZoneCore::TakeItem(std::vector<std::unique_ptr<Item>>& items,
                                         const Item* item) {
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (it->get() == item) {
      std::unique_ptr<Item> taken = std::move(*it);
      items.erase(it);
      return taken;
    }
  }
  return nullptr;
}

std::unique_ptr<Item> ZoneCore::MakeItem(const ItemDef& def) {
  auto item = std::make_unique<Item>();
  item->id = next_item_id_++;
  item->def = &def;
  return item;
}

std::unique_ptr<Item> ZoneCore::MakeItem(const ItemState& state) {
  const ItemDef* def = pack_->FindItem(state.proto);
  if (def == nullptr) {
    deps_.logger->Warn("dropping unknown item from character state",
                       {{"zone", zone_.id}, {"item", state.proto.ToString()}});
    return nullptr;
  }
  std::unique_ptr<Item> item = MakeItem(*def);
  for (const ItemState& inner : state.contents) {
    if (auto child = MakeItem(inner)) item->contents.push_back(std::move(child));
  }
  return item;
}

ItemState ZoneCore::SaveItem(const Item& item) const {
  ItemState state;
  state.proto = item.def->ref;
  for (const auto& inner : item.contents) {
    if (!inner->is_corpse()) state.contents.push_back(SaveItem(*inner));
  }
  return state;
}

// --- Placement

void ZoneCore::PlaceActor(Actor& actor, int room_index) {
  actor.room = room_index;
  RoomState& here = room(room_index);
  if (actor.is_player && !here.players.empty()) {
    // GMCP: those already here learn of the arrival (Room.Players is sent to the newcomer).
    const std::string body = json::serialize(PlayerJson(actor));
    for (Actor* other : here.players) SendEvent(*other, "Room.AddPlayer", body);
  }
  here.actors.push_back(&actor);
  if (actor.is_player) here.players.push_back(&actor);
  if (actor.is_player && !actor.quests.empty()) QuestVisit(actor);
}

void ZoneCore::UnplaceActor(Actor& actor) {
  if (actor.room < 0) return;
  RoomState& here = room(actor.room);
  std::erase(here.actors, &actor);
  if (actor.is_player) {
    std::erase(here.players, &actor);
    const std::string body = json::serialize(JsonText(actor.name));
    for (Actor* other : here.players) SendEvent(*other, "Room.RemovePlayer", body);
  }
  actor.room = -1;
}

void ZoneCore::RemoveActor(Actor& actor) {
  StopFighting(actor);
  for (uint64_t id : std::vector<uint64_t>(fighters_.begin(), fighters_.end())) {
    Actor* other = FindActor(id);
    if (other != nullptr && other->fighting == actor.id) StopFighting(*other);
  }
  UnplaceActor(actor);
  actor.removed = true;
  if (actor.is_player) {
    players_.erase(actor.key);
    UpdateOccupancy();
  }
  auto it = actors_.find(actor.id);
  if (it != actors_.end()) {
    graveyard_.push_back(std::move(it->second));
    actors_.erase(it);
    actor_by_id_.erase(actor.id);
  }
}

void ZoneCore::UpdateOccupancy() {
  occupancy_->Set(static_cast<double>(players_.size()));
}

Actor& ZoneCore::SpawnMob(const MobDef& def, int room_index, int reset_index) {
  auto mob = std::make_unique<Actor>();
  mob->id = next_actor_id_++;
  mob->def = &def;
  mob->name = def.name;
  mob->keywords = def.keywords;
  mob->level = def.level;
  mob->hp = mob->max_hp = def.hp;
  mob->gold = def.gold;
  mob->reset_index = reset_index;
  for (const Ref& ref : def.equipment) {
    if (const ItemDef* item = pack_->FindItem(ref)) {
      auto& slot = mob->equipment[static_cast<size_t>(item->slot)];
      if (!slot) slot = MakeItem(*item);
    }
  }
  for (const Ref& ref : def.inventory) {
    if (const ItemDef* item = pack_->FindItem(ref)) mob->inventory.push_back(MakeItem(*item));
  }
  Actor& placed = *mob;
  actor_by_id_[mob->id] = &placed;
  actors_[mob->id] = std::move(mob);
  PlaceActor(placed, room_index);
  return placed;
}

// --- Arrival and departure

void ZoneCore::Admit(PlayerTransfer transfer) {
  CharacterState& s = transfer.state;
  std::string key = NameKey(s.name);
  if (players_.count(key) != 0) {
    deps_.logger->Error("player admitted twice; keeping the first",
                        {{"zone", zone_.id}, {"player", key}});
    return;
  }
  int room_index = LocalRoom(s.room);
  if (room_index < 0) room_index = LocalRoom(pack_->start_room);
  if (room_index < 0) room_index = 0;
  auto actor = std::make_unique<Actor>();
  Actor& a = *actor;
  a.id = next_actor_id_++;
  a.is_player = true;
  a.name = s.name;
  a.key = key;
  a.keywords = {key};
  a.level = s.level;
  a.exp = s.exp;
  a.stats = s.stats;
  a.hp = s.hp;
  a.max_hp = s.max_hp;
  a.mana = s.mana;
  a.max_mana = s.max_mana;
  a.moves = s.moves;
  a.max_moves = s.max_moves;
  if (a.hp <= 0) a.hp = 1;
  for (const ItemState& item : s.inventory) {
    if (auto made = MakeItem(item)) a.inventory.push_back(std::move(made));
  }
  for (const auto& [slot, item] : s.equipment) {
    if (slot == WearSlot::kNone) continue;
    if (auto made = MakeItem(item)) a.equipment[static_cast<size_t>(slot)] = std::move(made);
  }
  for (const AffectState& affect : s.affects)
    a.affects.push_back({affect.kind, affect.remaining_ms});
  a.gold = s.wallet_coins;
  a.bank = s.bank_coins;
  a.aliases = s.aliases;
  a.colour = s.colour;
  AssignClass(a, s);
  a.roles = s.roles;
  a.muted_until_unix_ms = s.muted_until_unix_ms;
  a.sink = std::move(transfer.sink);
  a.reply_to = std::move(transfer.reply_to);
  a.party = s.party;
  a.party_invite = s.party_invite;
  a.following = s.following;
  a.next_save_heartbeat = heartbeats_ + save_interval_heartbeats_;
  SendEvent(a, "Char.Name", json::serialize(PlayerJson(a)));
  actor_by_id_[a.id] = &a;
  actors_[a.id] = std::move(actor);
  players_[key] = a.id;
  UpdateOccupancy();
  PlaceActor(a, room_index);
  ToRoom(room_index, a.Display() + " arrives.", a.id);
  ShowRoom(a);
  for (std::string& line : transfer.arrival) Send(a, std::move(line));
  if (a.may_choose && a.char_class != nullptr) {
    Send(a,
         "{y}You are new to this world and may choose your race and class: type 'choose' "
         "to be asked, or 'choose <race> <class>'. Until then you are " +
             a.race->name + ", " + a.char_class->name + ".{x}");
  }
  SendRoomInfo(a);
  MarkDirty(a);
  MarkUrgent(a);
  RunRoomHook(room_index, "on_enter", a);
  if (!a.removed) CheckAggression(a);
}

CharacterState ZoneCore::Snapshot(const Actor& a) const {
  CharacterState s;
  s.name = a.name;
  s.level = a.level;
  s.exp = a.exp;
  s.stats = a.stats;
  s.hp = a.hp;
  s.max_hp = a.max_hp;
  s.mana = a.mana;
  s.max_mana = a.max_mana;
  s.moves = a.moves;
  s.max_moves = a.max_moves;
  if (a.room >= 0) s.room = rooms_[static_cast<size_t>(a.room)].ref;
  for (const auto& item : a.inventory) {
    if (!item->is_corpse()) s.inventory.push_back(SaveItem(*item));
  }
  for (size_t slot = 0; slot < a.equipment.size(); ++slot) {
    if (a.equipment[slot]) {
      s.equipment.emplace_back(static_cast<WearSlot>(slot), SaveItem(*a.equipment[slot]));
    }
  }
  for (const Affect& affect : a.affects) s.affects.push_back({affect.kind, affect.remaining_ms});
  s.wallet_coins = a.gold;
  s.bank_coins = a.bank;
  s.aliases = a.aliases;
  s.colour = a.colour;
  if (a.race != nullptr) s.race = a.race->id;
  if (a.char_class != nullptr) s.char_class = a.char_class->id;
  s.may_choose = a.may_choose;
  s.practices = a.practices;
  s.trains = a.trains;
  s.skills.insert(a.skills.begin(), a.skills.end());
  s.quests.insert(a.quests.begin(), a.quests.end());
  s.quests_done.insert(a.quests_done.begin(), a.quests_done.end());
  // Only waits still running: the state stays small and bounded by the skills known.
  const int64_t now = NowMs();
  if (a.lag_until_ms > now) s.lag_until_ms = a.lag_until_ms;
  for (const auto& [id, until_ms] : a.cooldown_until_ms) {
    if (until_ms > now) s.cooldowns[id] = until_ms;
  }
  s.roles = a.roles;
  s.muted_until_unix_ms = a.muted_until_unix_ms;
  s.party = a.party;
  if (a.party_invite.expires_ms > now) s.party_invite = a.party_invite;
  s.following = a.following;
  return s;
}

void ZoneCore::Save(Actor& player, SaveReason reason) {
  if (!player.is_player) return;
  deps_.persistence->RequestSave(
      CharacterSnapshot{player.key, EncodeCharacter(Snapshot(player)), reason});
  player.next_save_heartbeat = heartbeats_ + save_interval_heartbeats_;
}

PlayerTransfer ZoneCore::DetachPlayer(Actor& player) {
  if (player.answer) {
    // The question does not travel: give the terminal its echo back before the player leaves,
    // or it would hide what they type in the next zone.
    player.answer = nullptr;
    player.pending.echo = PlayerOutput::Echo::kOn;
    Send(player, "You were moved before you answered; nothing was changed.");
  }
  FlushPlayer(player);
  PlayerTransfer transfer;
  transfer.state = Snapshot(player);
  transfer.sink = std::move(player.sink);
  transfer.reply_to = player.reply_to;
  RemoveActor(player);
  return transfer;
}

Result<PlayerTransfer> ZoneCore::Freeze(const std::string& key, SaveReason reason) {
  Actor* player = FindPlayerMutable(key);
  if (player == nullptr) return Status::NotFound(key + " is not in zone " + zone_.id);
  Save(*player, reason);
  return DetachPlayer(*player);
}

std::vector<PlayerTransfer> ZoneCore::FreezeAll() {
  std::vector<PlayerTransfer> out;
  std::vector<std::string> keys;
  for (const auto& [key, id] : players_) keys.push_back(key);
  for (const std::string& key : keys) {
    Result<PlayerTransfer> transfer = Freeze(key, SaveReason::kFreeze);
    if (transfer.ok()) out.push_back(std::move(transfer).value());
  }
  return out;
}

void ZoneCore::QuitPlayer(Actor& player) {
  LeavePartyOnQuit(player);
  Send(player, "Farewell. Your progress has been saved.");
  Save(player, SaveReason::kQuit);
  int room_index = player.room;
  RunRoomHook(room_index, "on_leave", player);
  if (player.removed) return;
  ToRoom(room_index, player.Display() + " has left the world.", player.id);
  player.pending.disconnect = true;
  std::string key = player.key;
  FlushPlayer(player);
  RemoveActor(player);
  deps_.router->Departed(key);
}

// --- Movement

void ZoneCore::MoveLocal(Actor& actor, int to_room, const std::string& leave_text,
                         const std::string& arrive_text, bool show_room) {
  int from = actor.room;
  if (from >= 0) {
    RunRoomHook(from, "on_leave", actor);
    if (actor.removed || actor.room != from) return;
    if (!leave_text.empty()) ToRoom(from, actor.Display() + " " + leave_text, actor.id);
    UnplaceActor(actor);
  }
  PlaceActor(actor, to_room);
  if (!arrive_text.empty()) ToRoom(to_room, actor.Display() + " " + arrive_text, actor.id);
  if (show_room && actor.is_player) {
    ShowRoom(actor);
    SendRoomInfo(actor);
  }
  RunRoomHook(to_room, "on_enter", actor);
  if (!actor.removed && actor.room == to_room) CheckAggression(actor);
}

bool ZoneCore::Walk(Actor& actor, std::string_view dir) {
  if (actor.room < 0) return false;
  RoomState& here = room(actor.room);
  for (size_t i = 0; i < here.def->exits.size(); ++i) {
    const ExitDef& exit = here.def->exits[i];
    if (exit.dir != dir) continue;
    int target = here.exit_rooms[i];
    if (actor.is_player) {
      if (actor.moves <= 0) {
        Send(actor, "You are too exhausted to go on. Rest a while.");
        return true;
      }
      if (target < 0 && !deps_.router->IsRunning(exit.to.zone)) {
        Send(actor, "The way " + exit.dir + " is closed for now.");
        return true;
      }
      --actor.moves;
      MarkDirty(actor);
    } else if (target < 0) {
      return true;  // mobs stay in their zone
    }
    if (target >= 0) {
      MoveLocal(actor, target, "leaves " + exit.dir + ".", "arrives.", true);
      return true;
    }
    RunRoomHook(actor.room, "on_leave", actor);
    if (actor.removed) return true;
    ToRoom(actor.room, actor.Display() + " leaves " + exit.dir + ".", actor.id);
    SendPlayerTo(actor, exit.to, {});
    return true;
  }
  return false;
}

void ZoneCore::SendPlayerTo(Actor& actor, const Ref& to, std::vector<std::string> arrival) {
  int local = LocalRoom(to);
  if (local >= 0) {
    UnplaceActor(actor);
    PlaceActor(actor, local);
    ToRoom(local, actor.Display() + " appears.", actor.id);
    if (actor.is_player) {
      ShowRoom(actor);
      for (std::string& line : arrival) Send(actor, std::move(line));
      SendRoomInfo(actor);
    }
    RunRoomHook(local, "on_enter", actor);
    if (!actor.removed && actor.room == local) CheckAggression(actor);
    return;
  }
  if (!actor.is_player) return;
  Ref origin = actor.room >= 0 ? room(actor.room).ref : pack_->start_room;
  PlayerTransfer transfer = DetachPlayer(actor);
  transfer.state.room = to;
  transfer.from_room = origin;
  transfer.arrival = std::move(arrival);
  if (!deps_.router->Transfer(transfer)) {
    // The destination went away between the check and now: stay here.
    transfer.state.room = origin;
    transfer.arrival = {"The way is closed; you stay where you are."};
    Admit(std::move(transfer));
  }
}

// --- Commands

void ZoneCore::Command(const std::string& key, const std::string& line, int hops) {
  Actor* actor = FindPlayerMutable(key);
  if (actor == nullptr) {
    deps_.router->Forward(key, line, hops);
    return;
  }
  replying_to_ = actor->id;
  if (actor->answer) {
    // The line answers a prompt and may be a secret: it goes to the question alone, unparsed.
    // Taken out first, so the answer may ask the next question.
    auto answer = std::move(actor->answer);
    actor->answer = nullptr;
    answer(*this, *actor, line);
  } else {
    Dispatch(*actor, line);
  }
  replying_to_ = 0;
  MarkUrgent(*actor);
}

void ZoneCore::Dispatch(Actor& actor, std::string_view line) {
  line = Trim(line);
  if (line.empty()) return;
  std::string_view word;
  std::string_view args;
  if (line[0] == '\'' || line[0] == ':') {
    word = line.substr(0, 1);
    args = Trim(line.substr(1));
  } else {
    std::tie(word, args) = SplitWord(line);
  }
  std::string verb = Lower(word);
  std::string expanded;
  if (auto alias = actor.aliases.find(verb); alias != actor.aliases.end() && verb != "alias") {
    expanded = alias->second;
    if (!args.empty()) expanded += " " + std::string(args);
    std::tie(word, args) = SplitWord(expanded);
    verb = Lower(word);
  }
  // Builders' verbs come first: a room, mob or item script may take any verb, built-in or not.
  if (RunCommandHooks(actor, verb, args)) return;

  const CommandSpec* spec = registry_.FindExact(verb);
  if (spec == nullptr && actor.char_class != nullptr) {
    // A skill (not a spell: those are cast) is its own verb, for the classes that have it.
    const SkillDef* skill = pack_->game.FindSkill(verb);
    if (skill != nullptr && skill->kind == SkillKind::kSkill &&
        actor.char_class->LevelFor(skill->id) > 0) {
      UseSkill(actor, *skill, args);
      return;
    }
  }
  const ZoneCommandDef* zone_command = spec ? nullptr : FindZoneCommand(verb, true);
  if (spec == nullptr && zone_command == nullptr && actor.room >= 0) {
    for (const ExitDef& exit : room(actor.room).def->exits) {
      if (exit.dir == verb) {
        spec = registry_.FindExact("go");
        args = exit.dir;
        break;
      }
    }
  }
  std::vector<std::string> ambiguous;
  if (spec == nullptr && zone_command == nullptr) {
    spec = registry_.FindPrefix(verb, &ambiguous, actor.roles);
  }
  if (spec == nullptr && zone_command == nullptr && ambiguous.empty()) {
    zone_command = FindZoneCommand(verb, false);
  }
  if (spec == nullptr && zone_command == nullptr) {
    if (!ambiguous.empty()) {
      std::string list;
      for (const std::string& name : ambiguous) list += (list.empty() ? "" : ", ") + name;
      Send(actor, "'" + verb + "' could mean: " + list + ". Type more letters.");
      return;
    }
    std::string suggestion = registry_.Suggest(verb, actor.roles);
    Send(actor, "Unknown command '" + verb + "'." +
                    (suggestion.empty() ? "" : " Did you mean '" + suggestion + "'?") +
                    " Type 'commands' for a list.");
    return;
  }
  if (zone_command != nullptr) {
    if (actor.position < Position::kResting) {
      Send(actor, "You cannot do that now.");
      return;
    }
    if (!RunZoneCommand(actor, *zone_command, args)) {
      Send(actor, "Nothing happens.");
    }
    return;
  }
  if (!HasRole(actor.roles, spec->role)) {
    // Checked here, once, for every command that names a role: a staff command's own code
    // never runs for a player, whatever it forgets to check.
    Send(actor, "'" + spec->name + "' is a staff command (" + RoleNames(spec->role) +
                    " only), and you are not " + RoleNames(spec->role) + ".");
    return;
  }
  if (actor.position < spec->min_position) {
    switch (actor.position) {
      case Position::kFighting: Send(actor, "You are fighting! Try 'flee' first."); break;
      case Position::kResting:
      case Position::kSleeping: Send(actor, "You need to stand up first."); break;
      default: Send(actor, "You cannot do that now."); break;
    }
    return;
  }
  CommandContext ctx{*this, actor, spec->name, args};
  spec->run(ctx);
}

// --- Output

void ZoneCore::MarkDirty(Actor& actor) {
  if (!actor.is_player || actor.dirty) return;
  actor.dirty = true;
  ++dirty_count_;
  dirty_players_.push_back(actor.id);
}

void ZoneCore::MarkUrgent(Actor& actor) {
  if (!actor.is_player || actor.urgent) return;
  actor.urgent = true;
  urgent_players_.push_back(actor.id);
}

void ZoneCore::Send(Actor& actor, std::string_view line) {
  if (!actor.is_player) return;
  if (line.find('{') == std::string_view::npos) {
    AddLine(actor, line);
  } else {
    AddLine(actor, ApplyColour(line, actor.colour));
  }
}

void ZoneCore::AddLine(Actor& actor, std::string_view rendered) {
  PlayerOutput& out = actor.pending;
  // Past the cap a flush carries one notice; the rest of the flood is never copied. What
  // answers the player's own command counts against a cap of its own: however much others
  // said, the player sees what they did.
  const bool reply = actor.id == replying_to_;
  const size_t counted = reply ? out.reply_line_count : out.line_count - out.reply_line_count;
  if (counted >= limits::kOutputLinesPerFlushMax) {
    if (counted == limits::kOutputLinesPerFlushMax) {
      out.AddLine("[output truncated]");
      if (reply) ++out.reply_line_count;
    }
    return;
  }
  out.AddLine(rendered);
  if (reply) ++out.reply_line_count;
  MarkDirty(actor);
}

void ZoneCore::SendEvent(Actor& actor, std::string name, std::string json) {
  if (!actor.is_player) return;
  actor.pending.events.push_back({std::move(name), std::move(json)});
  MarkDirty(actor);
}

void ZoneCore::ToRoom(int room_index, const std::string& line, uint64_t except, uint64_t except2) {
  if (room_index < 0) return;
  // Coloured and plain are rendered once for the room, not once per listener.
  const bool has_codes = line.find('{') != std::string::npos;
  const std::string coloured = has_codes ? ApplyColour(line, true) : std::string();
  const std::string plain = has_codes ? ApplyColour(line, false) : std::string();
  for (Actor* other : room(room_index).players) {
    if (other->id == except || other->id == except2) continue;
    AddLine(*other, !has_codes ? std::string_view(line) : other->colour ? coloured : plain);
  }
}

void ZoneCore::ShowRoom(Actor& actor) {
  if (actor.room < 0) return;
  RoomState& here = room(actor.room);
  Send(actor, "{c}" + here.def->name + "{x}");
  std::string_view description = here.def->description;
  while (!description.empty() && (description.back() == '\n' || description.back() == ' ')) {
    description.remove_suffix(1);
  }
  size_t start = 0;
  while (start <= description.size() && !description.empty()) {
    size_t end = description.find('\n', start);
    if (end == std::string_view::npos) end = description.size();
    Send(actor, std::string(description.substr(start, end - start)));
    start = end + 1;
    if (end == description.size()) break;
  }
  std::string exits;
  for (const ExitDef& exit : here.def->exits) exits += (exits.empty() ? "" : " ") + exit.dir;
  Send(actor, "{g}[Exits: " + (exits.empty() ? std::string("none") : exits) + "]{x}");
  for (const auto& item : here.items) Send(actor, item->Ground());
  // Every mob is listed, and every player fighting; past a crowd's worth, other players are
  // counted rather than named (a lobby with hundreds in it stays readable, and cheap to show).
  size_t players_listed = 0;
  size_t players_unlisted = 0;
  for (Actor* other : here.actors) {
    if (other == &actor) continue;
    if (other->is_player && other->fighting == 0 &&
        ++players_listed > limits::kRoomPlayersListedMax) {
      ++players_unlisted;
      continue;
    }
    std::string line;
    if (other->is_player) {
      line =
          other->name + (other->position == Position::kResting ? " is resting here." : " is here.");
    } else {
      line = other->def->ground;
    }
    if (other->fighting != 0) {
      Actor* target = FindActor(other->fighting);
      if (target != nullptr) {
        line = other->Display() + " is here, fighting " +
               (target == &actor ? std::string("YOU") : target->name) + "!";
      }
    }
    Send(actor, "{y}" + line + "{x}");
  }
  if (players_unlisted > 0) {
    Send(actor, "{y}" + std::to_string(players_unlisted) +
                    (players_unlisted == 1 ? " other person is" : " other people are") +
                    " here.{x}");
  }
}

void ZoneCore::SendRoomInfo(Actor& actor) {
  if (actor.room < 0 || !actor.is_player) return;
  RoomState& here = room(actor.room);
  json::object exits;
  // emplace keeps a direction's first exit: the document never repeats a key.
  for (const ExitDef& exit : here.def->exits) exits.emplace(ExitKey(exit.dir), RoomNumber(exit.to));
  // The mapper's fields first (num, name, area, environment, exits), then the world's own ids.
  json::object info{{"num", RoomNumber(here.ref)},
                    {"name", JsonText(here.def->name)},
                    {"area", JsonText(zone_.name.empty() ? zone_.id : zone_.name)},
                    {"environment", here.Has(kRoomIndoors) ? "indoors" : "outdoors"},
                    {"exits", std::move(exits)},
                    {"zone", JsonText(zone_.id)},
                    {"id", JsonText(here.def->id)}};
  SendEvent(actor, "Room.Info", json::serialize(info));
  json::array players;
  for (const Actor* other : here.players) {
    if (other == &actor) continue;
    if (players.size() >= limits::kGmcpRoomPlayersMax) break;
    players.push_back(PlayerJson(*other));
  }
  SendEvent(actor, "Room.Players", json::serialize(players));
}

void ZoneCore::SyncItems(Actor& actor) {
  std::vector<OutputEvent>& events = actor.pending.events;
  if (!actor.items_inv_listed) {
    actor.items_inv_listed = true;
    actor.items_sent_inv = InventoryView(actor);
    events.push_back({"Char.Items.List", ItemsListJson("inv", actor.items_sent_inv)});
  } else {
    DiffItems("inv", InventoryView(actor), actor.items_sent_inv, events);
  }
  if (actor.room < 0) return;
  if (actor.items_room_listed != actor.room) {
    actor.items_room_listed = actor.room;
    actor.items_sent_room = RoomView(room(actor.room));
    events.push_back({"Char.Items.List", ItemsListJson("room", actor.items_sent_room)});
  } else {
    DiffItems("room", RoomView(room(actor.room)), actor.items_sent_room, events);
  }
}

void ZoneCore::Prompt(Actor& actor) {
  MarkDirty(actor);
}

bool ZoneCore::FlushPlayer(Actor& actor) {
  if (actor.dirty) {
    actor.dirty = false;
    --dirty_count_;
  }
  std::array<int, 6> vitals{actor.hp,       actor.max_hp, actor.mana,
                            actor.max_mana, actor.moves,  actor.max_moves};
  if (vitals != actor.last_vitals) {
    actor.last_vitals = vitals;
    actor.pending.events.push_back(
        {"Char.Vitals", json::serialize(json::object{{"hp", actor.hp},
                                                     {"maxhp", actor.max_hp},
                                                     {"mana", actor.mana},
                                                     {"maxmana", actor.max_mana},
                                                     {"moves", actor.moves},
                                                     {"maxmoves", actor.max_moves}})});
  }
  const std::array<int64_t, 3> status{actor.level, actor.exp, actor.gold};
  if (status != actor.last_status) {
    actor.last_status = status;
    json::object doc{{"name", JsonText(actor.name)},
                     {"level", actor.level},
                     {"exp", actor.exp},
                     {"gold", actor.gold}};
    if (actor.char_class != nullptr) {
      doc["race"] = JsonText(actor.race->name);
      doc["class"] = JsonText(actor.char_class->name);
    }
    actor.pending.events.push_back({"Char.Status", json::serialize(doc)});
  }
  SyncItems(actor);
  if (actor.pending.text.empty() && actor.pending.events.empty() && !actor.pending.disconnect &&
      actor.pending.echo == PlayerOutput::Echo::kUnchanged) {
    return false;
  }
  PlayerOutput out = std::move(actor.pending);
  actor.pending = PlayerOutput{};
  const bool text = !out.text.empty();
  if (actor.sink) actor.sink->Deliver(std::move(out));
  return text;
}

void ZoneCore::Flush() {
  last_flush_players_ = FlushSlice(0, 1);  // one slice holds everyone
}

size_t ZoneCore::FlushSlice(size_t slice, size_t slices) {
  size_t players = 0;
  size_t kept = 0;
  for (uint64_t id : dirty_players_) {
    if (id % slices != slice) {
      dirty_players_[kept++] = id;
      continue;
    }
    Actor* actor = FindActor(id);
    if (actor != nullptr && actor->is_player && actor->dirty && FlushPlayer(*actor)) ++players;
  }
  dirty_players_.resize(kept);
  // An over-count at worst (ids of players who left, or were flushed with a reply meanwhile).
  dirty_count_ = static_cast<int64_t>(kept);
  FlushUrgent();
  return players;
}

void ZoneCore::FlushUrgent() {
  for (uint64_t id : urgent_players_) {
    Actor* actor = FindActor(id);
    if (actor == nullptr) continue;
    actor->urgent = false;
    if (actor->dirty) FlushPlayer(*actor);
  }
  urgent_players_.clear();
  graveyard_.clear();
}

// --- Cross-zone messages

void ZoneCore::DeliverTell(const std::string& from, const std::string& to_key,
                           const std::string& text) {
  Actor* target = FindPlayerMutable(to_key);
  if (target == nullptr) return;
  const std::string line = from + " tells you, '" + text + "'";
  Send(*target, "{m}" + line + "{x}");
  SendEvent(*target, "Comm.Channel.Text", ChannelJson("tell", from, line, text));
  target->reply_to = from;
  MarkUrgent(*target);  // a message to one person goes out at once; only broadcasts wait
}

void ZoneCore::DeliverChannel(const std::string& channel, const std::string& from,
                              const std::string& text) {
  const std::string plain = "[" + channel + "] " + from + ": " + text;
  const std::string line = "{c}" + plain + "{x}";
  const std::string body = ChannelJson(channel, from, plain, text);
  for (const auto& [key, id] : players_) {
    Actor* player = FindActor(id);
    if (player == nullptr) continue;
    Send(*player, line);
    SendEvent(*player, "Comm.Channel.Text", body);
  }
  // The speaker sees their own line at once; everyone else hears it at the pulse.
  if (Actor* speaker = FindPlayerMutable(NameKey(from))) MarkUrgent(*speaker);
}

void ZoneCore::Notice(const std::string& to_key, const std::string& text) {
  if (Actor* player = FindPlayerMutable(to_key)) {
    Send(*player, text);
    MarkUrgent(*player);  // often the answer to what they did (a tell's echo)
  }
}

void ZoneCore::Announce(const std::string& text) {
  const std::string line = "{Y}" + text + "{x}";
  const std::string body = json::serialize(json::object{{"text", JsonText(text)}});
  for (const auto& [key, id] : players_) {
    Actor* player = FindActor(id);
    if (player == nullptr) continue;
    Send(*player, line);
    SendEvent(*player, "Comm.Announce", body);
  }
}

void ZoneCore::Broadcast(const std::string& text, const OutputEvent& event) {
  for (const auto& [key, id] : players_) {
    Actor* player = FindActor(id);
    if (player == nullptr) continue;
    if (!text.empty()) Send(*player, text);
    if (!event.name.empty()) SendEvent(*player, event.name, event.json);
  }
}

// --- Heartbeat

void ZoneCore::Heartbeat() {
  ++heartbeats_;
  if (lua_) RunMobHeartbeats();
  if (!timers_.empty()) RunTimers();
  if (heartbeats_ % kCombatRoundHeartbeats == 0) CombatRound();
  AffectsTick();
  if (heartbeats_ % kAffectPulseHeartbeats == 0) ExpireSummons();
  if (heartbeats_ % kRegenHeartbeats == 0) RegenTick();
  if (heartbeats_ % kMobActHeartbeats == 0) MobActTick();
  if (heartbeats_ % reset_interval_heartbeats_ == 0) RunResets();
  // Players due a periodic save get one; checked every heartbeat so the interval holds.
  for (const auto& [key, id] : players_) {
    Actor* player = FindActor(id);
    if (player != nullptr && player->next_save_heartbeat <= heartbeats_) {
      Save(*player, SaveReason::kPeriodic);
    }
  }
  if (heartbeats_ % kRegenHeartbeats == 0) {
    // Corpses decay.
    for (RoomState& r : rooms_) {
      for (size_t i = 0; i < r.items.size();) {
        Item& item = *r.items[i];
        if (item.decay_heartbeat != 0 && item.decay_heartbeat <= heartbeats_) {
          std::string text = Capitalize(item.Name()) + " crumbles into dust.";
          r.items.erase(r.items.begin() + static_cast<std::ptrdiff_t>(i));
          ToRoom(static_cast<int>(&r - rooms_.data()), text);
        } else {
          ++i;
        }
      }
    }
  }
}

// --- Mobs and resets

void ZoneCore::RunResets() {
  for (size_t i = 0; i < zone_.resets.size(); ++i) {
    const ResetDef& reset = zone_.resets[i];
    int room_index = RoomIndex(reset.room);
    if (room_index < 0) continue;
    if (reset.mob) {
      const MobDef* def = pack_->FindMob(*reset.mob);
      if (def == nullptr) continue;
      int alive = 0;
      for (const auto& [id, actor] : actors_) {
        if (!actor->is_player && actor->def == def) ++alive;
      }
      for (; alive < reset.max; ++alive) SpawnMob(*def, room_index, static_cast<int>(i));
    } else if (reset.item) {
      const ItemDef* def = pack_->FindItem(*reset.item);
      if (def == nullptr) continue;
      auto& items = room(room_index).items;
      int present = static_cast<int>(std::count_if(
          items.begin(), items.end(), [def](const auto& item) { return item->def == def; }));
      for (; present < reset.max && items.size() < limits::kItemsPerRoomMax; ++present) {
        items.push_back(MakeItem(*def));
      }
    }
  }
}

void ZoneCore::CheckAggression(Actor& arriving) {
  if (arriving.room < 0 || room(arriving.room).Has(kRoomSafe)) return;
  RoomState& here = room(arriving.room);
  if (arriving.is_player) {
    // Nothing in the room moves until the first aggressive mob is found, and then the loop ends.
    for (Actor* mob : here.actors) {
      if (mob->is_player || mob->fighting != 0 || mob->summoned) continue;
      if ((mob->def->flags & kMobAggressive) == 0) continue;
      ToRoom(arriving.room, mob->Display() + " snarls and attacks " + arriving.name + "!",
             arriving.id);
      Send(arriving, "{r}" + mob->Display() + " attacks you!{x}");
      StartFight(*mob, arriving);
      return;
    }
  } else if (arriving.def != nullptr && (arriving.def->flags & kMobAggressive) != 0 &&
             arriving.fighting == 0 && !arriving.summoned) {
    for (Actor* player : here.players) {
      Send(*player, "{r}" + arriving.Display() + " attacks you!{x}");
      StartFight(arriving, *player);
      return;
    }
  }
}

void ZoneCore::MobActTick() {
  std::vector<uint64_t> mobs;
  for (const auto& [id, actor] : actors_) {
    if (!actor->is_player) mobs.push_back(id);
  }
  for (uint64_t id : mobs) {
    Actor* mob = FindActor(id);
    if (mob == nullptr || mob->fighting != 0 || mob->room < 0) continue;
    uint32_t flags = mob->def->flags;
    if ((flags & kMobAggressive) != 0) {
      CheckAggression(*mob);
      if (mob->fighting != 0) continue;
    }
    if ((flags & kMobWanders) == 0 || (flags & (kMobSentinel | kMobShopkeeper)) != 0) continue;
    if (!random_.Chance(1.0 / 3.0)) continue;
    RoomState& here = room(mob->room);
    std::vector<size_t> choices;
    for (size_t i = 0; i < here.exit_rooms.size(); ++i) {
      int target = here.exit_rooms[i];
      if (target >= 0 && !room(target).Has(kRoomNoMob)) choices.push_back(i);
    }
    if (choices.empty()) continue;
    size_t pick =
        choices[static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(choices.size()) - 1))];
    MoveLocal(*mob, here.exit_rooms[pick], "leaves " + here.def->exits[pick].dir + ".", "arrives.",
              false);
  }
}

// --- Shops

const ShopDef* ZoneCore::ShopOf(const Actor& keeper) const {
  if (keeper.is_player || keeper.def == nullptr || keeper.def->ref.zone != zone_.id) return nullptr;
  for (const ShopDef& shop : zone_.shops) {
    if (shop.keeper == keeper.def->ref.id) return &shop;
  }
  return nullptr;
}

Actor* ZoneCore::ShopkeeperIn(int room_index) {
  for (Actor* actor : room(room_index).actors) {
    if (ShopOf(*actor) != nullptr) return actor;
  }
  return nullptr;
}

}  // namespace telos::world
