// ZoneCore: the private state and rules of one zone. Everything here runs on the zone's
// executor (Zone guarantees it); nothing in this file is thread-safe.
//
// Actors (players and mobs) and items are owned by unique_ptr. An actor that leaves the zone or
// dies is moved to a graveyard freed at the end of the current batch, so an Actor& taken at the
// start of a command stays valid even if a script removes it; check `removed` after anything
// that may run a script.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/registry.h"
#include "lua_vm.h"
#include "telos/base/random.h"
#include "telos/world/zone.h"

namespace telos::world {

// Game cadences, in heartbeats of limits::kZoneHeartbeatMs.
inline constexpr int kCombatRoundHeartbeats = 8;  // 2 s
inline constexpr int kAffectPulseHeartbeats = 4;  // 1 s: poison and regeneration act
inline constexpr int kRegenHeartbeats = 20;       // 5 s
inline constexpr int kMobActHeartbeats = 12;      // 3 s: wander, aggression
inline constexpr int kCorpseDecayHeartbeats = 4 * 60 * 5;
inline constexpr int kPoisonDamagePerPulse = 2;
inline constexpr int kRegenerationHealPerPulse = 3;

enum class Position { kDead = 0, kSleeping, kResting, kFighting, kStanding };
std::string_view PositionName(Position position);

struct Item {
  uint64_t id = 0;
  const ItemDef* def = nullptr;  // null for a corpse
  std::string corpse_of;         // corpses: "a sewer rat"
  std::vector<std::unique_ptr<Item>> contents;
  int64_t coins = 0;
  int64_t decay_heartbeat = 0;  // 0: never decays

  bool is_corpse() const { return def == nullptr; }
  bool is_container() const { return is_corpse() || def->type == ItemType::kContainer; }
  std::string Name() const;    // "a short sword"
  std::string Ground() const;  // the room line
  bool Matches(std::string_view word) const;
};

// One entry of a GMCP Char.Items list as it was last sent (see ZoneCore::SyncItems).
struct GmcpItem {
  std::string id;      // items: their instance id; mobs: "m" and their actor id
  std::string name;    // "a short sword"
  std::string attrib;  // IRE's letters: w worn, W wearable, c container, t takeable, m mob, d dead
  bool operator==(const GmcpItem&) const = default;
};

struct Affect {
  AffectKind kind = AffectKind::kPoison;
  int64_t remaining_ms = 0;
};

struct Actor {
  uint64_t id = 0;
  bool is_player = false;
  bool removed = false;
  std::string name;  // players: "Alice"; mobs: "a sewer rat"
  std::string key;   // players: name key
  std::vector<std::string> keywords;
  const MobDef* def = nullptr;  // mobs
  int reset_index = -1;         // mobs spawned by a reset

  int level = 1;
  int64_t exp = 0;
  Stats stats;
  int hp = 1, max_hp = 1, mana = 0, max_mana = 0, moves = 0, max_moves = 0;
  int room = -1;  // index into ZoneCore::rooms
  Position position = Position::kStanding;
  uint64_t fighting = 0;  // actor id, 0 when not fighting
  std::vector<std::unique_ptr<Item>> inventory;
  std::array<std::unique_ptr<Item>, kWearSlotCount> equipment;
  std::vector<Affect> affects;
  int64_t gold = 0;
  int64_t bank = 0;
  // Skills and spells (skills.cc): the instant (ZoneCore::NowMs) before which the actor may use
  // no skill (lag), and per skill id the instant before which that skill is not ready
  // (cooldown). Absolute instants, not heartbeats of this zone, so a player carries them in
  // CharacterState through zone transfers, handoffs and relogins.
  int64_t lag_until_ms = 0;
  std::map<std::string, int64_t, std::less<>> cooldown_until_ms;
  // A mob brought by a summon: never aggressive, never reset, worth no exp or loot; it fades at
  // summon_ends_ms or as soon as its summoner (an actor id of this zone) is gone.
  bool summoned = false;
  uint64_t summoner = 0;
  int64_t summon_ends_ms = 0;

  // Players only.
  const RaceDef* race = nullptr;  // null in a pack without game.toml
  const ClassDef* char_class = nullptr;
  bool may_choose = false;  // CharacterState::may_choose
  int practices = 0;
  int trains = 0;
  std::map<std::string, int, std::less<>> skills;               // skill id -> proficiency 1..100
  std::map<std::string, std::vector<int>, std::less<>> quests;  // CharacterState::quests
  std::map<std::string, int, std::less<>> quests_done;
  std::map<std::string, std::string> aliases;
  bool colour = true;
  Roles roles = kRolePlayer;        // CharacterState::roles: what the staff commands check
  int64_t muted_until_unix_ms = 0;  // CharacterState::muted_until_unix_ms
  std::string reply_to;
  // Parties (party.h): this member's copy of the party, an invitation not yet answered, and
  // the display name of the member this player follows (empty: nobody). All three travel in
  // CharacterState.
  PartyState party;
  PartyInvite party_invite;
  std::string following;
  // Set while the player's next line answers a question (the password command's prompts)
  // rather than being a command: Command() hands the line here whole and unread, so it is
  // never dispatched, expanded as an alias, shown to anyone or logged. A secret held between
  // prompts lives in the closure and dies with it.
  std::function<void(ZoneCore&, Actor&, std::string)> answer;
  std::shared_ptr<PlayerSink> sink;
  PlayerOutput pending;
  bool dirty = false;   // in ZoneCore::dirty_players
  bool urgent = false;  // in ZoneCore::urgent_players: flush at the end of this batch
  std::array<int, 6> last_vitals{-1, -1, -1, -1, -1, -1};
  std::array<int64_t, 3> last_status{-1, -1, -1};  // level, exp, gold last sent as Char.Status
  // GMCP Char.Items as last sent: each flush compares and sends only what changed.
  std::vector<GmcpItem> items_sent_inv;
  std::vector<GmcpItem> items_sent_room;
  bool items_inv_listed = false;
  int items_room_listed = -1;  // the room index whose list was sent, -1 for none yet
  int64_t next_save_heartbeat = 0;

  bool HasAffect(AffectKind kind) const;
  std::string Display() const;  // capitalised name for the start of a sentence
};

struct RoomState {
  const RoomDef* def = nullptr;
  Ref ref;
  // In arrival order. An actor leaves the room before it is destroyed; a loop that may move or
  // destroy actors (a script, a fight) copies ids and looks each one up as it goes.
  std::vector<Actor*> actors;
  std::vector<Actor*> players;  // the players among them: what a line said here is sent to
  std::vector<std::unique_ptr<Item>> items;
  std::vector<int> exit_rooms;  // per exit: local room index, or -1 for another zone

  bool Has(uint32_t flag) const { return (def->flags & flag) != 0; }
};

// Who a script timer belongs to: the room, mob or item whose hook scheduled it (kZone for a
// zone command, a skill's lua effect or a script's load). A timer is cancelled when its mob
// dies or leaves the zone and when its item is destroyed or carried out of it; rooms and the
// zone last as long as the ZoneCore, and a content reload builds a new one with no timers.
struct ScriptOwner {
  enum class Kind { kZone, kRoom, kMob, kItem };
  Kind kind = Kind::kZone;
  uint64_t id = 0;  // actor id (kMob), item id (kItem), room index (kRoom)
};

struct ScriptTimer {
  std::string script;
  int ref = 0;  // the callback, held by the LuaVm
  Instant due{};
  int64_t period_ms = 0;  // 0: fires once
  ScriptOwner owner;
};

// An item as its on_get/on_drop/on_give hooks see it, taken before the hooks run (which may
// move or destroy it).
struct ItemHookEvent {
  LuaItem item;
  std::string script;  // the item's own script, or empty
};

class ZoneCore final : public ScriptHost {
 public:
  using Poster = std::function<Status(std::function<void(ZoneCore&)>)>;
  ZoneCore(std::shared_ptr<const Pack> pack, const ZoneDef& zone, uint64_t seed, ZoneDeps deps);
  ~ZoneCore() override;

  // --- Messages (called by Zone on the executor)
  void Start();
  void Admit(PlayerTransfer transfer);
  void Command(const std::string& key, const std::string& line, int hops);
  Result<PlayerTransfer> Freeze(const std::string& key, SaveReason reason);
  std::vector<PlayerTransfer> FreezeAll();
  void Heartbeat();
  void DeliverTell(const std::string& from, const std::string& to_key, const std::string& text);
  void DeliverChannel(const std::string& channel, const std::string& from, const std::string& text);
  void Notice(const std::string& to_key, const std::string& text);
  // An announcement for every player here (WorldHost::Announce), with a Comm.Announce event.
  void Announce(const std::string& text);
  // A line (may be empty) and an event (name empty: none) for every player here.
  void Broadcast(const std::string& text, const OutputEvent& event);
  // A party message for a player here (party_commands.cc); ignored when they are not here.
  void DeliverParty(const std::string& to_key, const PartyMessage& message);
  // Flushes collected output to sinks and frees the graveyard. Called after each batch.
  void Flush();
  // Flushes the players who acted in this batch (their command's reply, the room they
  // arrived in) and ends the batch; everyone else's output waits for Flush().
  void FlushUrgent();
  // Flushes the players in `slice` (of `slices`, by actor id) and ends the batch as
  // FlushUrgent() does; the others' output keeps waiting. Returns how many were given text.
  size_t FlushSlice(size_t slice, size_t slices);
  // Whether some player has output that FlushUrgent() left for the next Flush().
  // May say yes for a player who left the zone with output pending; Flush() then sends none.
  bool has_deferred_output() const { return dirty_count_ > 0; }
  // How many players the last Flush() delivered text to.
  size_t last_flush_players() const { return last_flush_players_; }

  // --- Queries (tests, Inspect)
  const std::string& zone_id() const { return zone_.id; }
  size_t player_count() const { return players_.size(); }
  int64_t heartbeat_count() const { return heartbeats_; }
  const Actor* FindPlayer(std::string_view key) const;
  std::vector<const Actor*> ActorsIn(std::string_view room_id) const;
  std::optional<CharacterState> PlayerState(std::string_view key) const;

  // --- Shared helpers used by commands, combat and scripting
  const Pack& pack() const { return *pack_; }
  const ZoneDef& zone() const { return zone_; }
  ZoneDeps& deps() { return deps_; }
  Random& random() { return random_; }
  Logger& logger() { return *deps_.logger; }
  const CommandRegistry& registry() const { return registry_; }
  int64_t heartbeats() const { return heartbeats_; }
  // Wall-clock ms since the Unix epoch on the injected Clock: the time line skill waits are
  // kept on, shared by every process (a monotonic reading has a per-process epoch).
  int64_t NowMs() const;

  Actor* FindActor(uint64_t id);
  Actor* FindPlayerMutable(std::string_view key);
  RoomState& room(int index) { return rooms_[static_cast<size_t>(index)]; }
  int RoomIndex(std::string_view room_id) const;
  const std::vector<RoomState>& rooms() const { return rooms_; }
  // The local room index of a room ref in this zone, or -1.
  int LocalRoom(const Ref& ref) const;

  void Send(Actor& actor, std::string_view line);
  // Appends a line whose colour codes are already rendered for `actor`.
  void AddLine(Actor& actor, std::string_view rendered);
  // Marks a player for flushing (output or vitals changed).
  void MarkDirty(Actor& actor);
  void MarkUrgent(Actor& actor);
  // Removes a player from the zone with their state and sink, output flushed first.
  PlayerTransfer DetachPlayer(Actor& player);
  void EnsureScript(const std::string& script);
  void SendEvent(Actor& actor, std::string name, std::string json);
  // To everyone in `room` except up to two actors.
  void ToRoom(int room, const std::string& line, uint64_t except = 0, uint64_t except2 = 0);
  void ShowRoom(Actor& actor);
  void SendRoomInfo(Actor& actor);
  void Prompt(Actor& actor);

  // Moves an actor between local rooms, with messages and hooks. `how` is "leaves north" style
  // text for the departure; arrival text says "arrives".
  void MoveLocal(Actor& actor, int to_room, const std::string& leave_text,
                 const std::string& arrive_text, bool show_room);
  // Walks through an exit (local or to another zone). Returns false when no such exit.
  bool Walk(Actor& actor, std::string_view dir);
  // Sends a player to a room anywhere; crosses zones through the router.
  void SendPlayerTo(Actor& actor, const Ref& to, std::vector<std::string> arrival);
  void PlaceActor(Actor& actor, int room);
  void UnplaceActor(Actor& actor);
  // Removes an actor from the zone (it dies or leaves); it is freed after the batch.
  void RemoveActor(Actor& actor);

  // Finding things by keyword (supports "2.sword").
  Actor* FindInRoom(Actor& viewer, std::string_view word);
  Item* FindItemIn(std::vector<std::unique_ptr<Item>>& items, std::string_view word);
  std::unique_ptr<Item> TakeItem(std::vector<std::unique_ptr<Item>>& items, const Item* item);
  std::unique_ptr<Item> MakeItem(const ItemDef& def);
  std::unique_ptr<Item> MakeItem(const ItemState& state);
  ItemState SaveItem(const Item& item) const;
  Actor& SpawnMob(const MobDef& def, int room, int reset_index);

  // Combat (combat.cc).
  void StartFight(Actor& attacker, Actor& victim);
  void StopFighting(Actor& actor);
  void CombatRound();
  void Die(Actor& victim, Actor* killer);
  bool Flee(Actor& actor);
  int ArmorOf(const Actor& actor) const;
  void GainExp(Actor& actor, int64_t amount);
  bool CanFightHere(const Actor& actor) const;

  // Affects and regeneration (affects.cc).
  void ApplyAffect(Actor& actor, AffectKind kind, int64_t duration_ms);
  void AffectsTick();
  void RegenTick();
  void Damage(Actor& actor, int amount, Actor* source);
  void Heal(Actor& actor, int amount);

  // Races, classes, skills and spells (skills.cc).
  // On admission: the character's race and class, or the pack's defaults for one that has
  // none (saved before classes existed) or names one the pack no longer has.
  void AssignClass(Actor& player, const CharacterState& state);
  // Sets starting stats, points and skills from `race` and `cls` (a new character's choice).
  void StartAs(Actor& player, const RaceDef& race, const ClassDef& cls);
  // Applies the class's growth for one level gained.
  void GrowLevel(Actor& player);
  // Uses `skill` with `args` naming the target (may be empty). Checks knowledge, lag,
  // cooldown, position and cost, rolls proficiency on the zone's Random, applies the effect
  // and may raise proficiency. Returns true if the skill was used (whether or not it worked).
  bool UseSkill(Actor& user, const SkillDef& skill, std::string_view args);
  // A fighting mob's turn to perhaps use one of its content `spells`.
  void MobCast(Actor& mob);
  // A trainer (kMobTrainer) in the actor's room, or null.
  Actor* TrainerIn(int room);
  // Summons whose lifetime ended or whose summoner left the zone fade away (each second).
  void ExpireSummons();

  // Quests (quests.cc): progress from what a player does.
  void QuestKill(Actor& player, const MobDef& victim);
  void QuestVisit(Actor& player);
  void QuestTalk(Actor& speaker);
  // The giver says `text` and its script's on_quest(actor, quest_id, event, self) runs.
  void QuestDialogue(Actor& giver, Actor& player, const QuestDef& quest, const std::string& event,
                     const std::string& text);

  // Mobs and resets.
  void MobActTick();
  void RunResets();
  void CheckAggression(Actor& arriving);

  // Shops.
  const ShopDef* ShopOf(const Actor& keeper) const;
  Actor* ShopkeeperIn(int room);

  // Persistence.
  CharacterState Snapshot(const Actor& player) const;
  void Save(Actor& player, SaveReason reason);
  void QuitPlayer(Actor& player);

  // Staff (commands/staff.cc). Applies an order to a player in this zone.
  StaffOutcome ApplyStaff(const StaffOrder& order);
  // Moves a player here to a room anywhere (goto); nothing when they are no longer here.
  void Teleport(const std::string& key, const Ref& to);
  // The player's staff roles from now on (a re-attach on a newer assertion); nothing when they
  // are no longer here.
  void SetRoles(const std::string& key, Roles roles);
  // True (and tells them so) when `actor` is muted now: speech commands call it first.
  bool RefuseMuted(Actor& actor);
  int64_t WallUnixMs() const;
  // Parties (party_commands.cc).
  // Sends `message` (op, party id and text set by the caller) from `sender` to `to`.
  void SendParty(Actor& sender, const std::string& to, PartyMessage message);
  // The leader's roster changed: bumps the version and sends it to every other member, with
  // `what` (one sentence) for them to read.
  void BroadcastRoster(Actor& leader, const std::string& what);
  // The player leaves their party as they quit (a leader hands it on).
  void LeavePartyOnQuit(Actor& player);
  // Walks `actor` out through `dir`, then each player in the room they left who follows them
  // (and, in turn, who follows those), at most limits::kPartyMembersMax deep.
  void WalkWithFollowers(Actor& actor, std::string_view dir);

  // Scripting entry points (scripting.cc).
  void RunRoomHook(int room, const char* hook, Actor& actor);
  void RunSpeechHooks(Actor& speaker, const std::string& text);
  void RunMobHeartbeats();
  bool RunZoneCommand(Actor& actor, const ZoneCommandDef& command, std::string_view args);
  void RunUseHook(Actor& actor, Item& item);
  const ZoneCommandDef* FindZoneCommand(std::string_view word, bool exact) const;
  // Calls script.function(args) with `owner` as the owner of any timer it schedules.
  bool CallHook(const ScriptOwner& owner, const std::string& script, const char* function,
                const std::vector<LuaArg>& args, bool* truthy = nullptr);
  // on_command(actor, verb, args, self) of the room, the mobs in it, then the items the actor
  // carries or wears and those on the floor: true when one returned true (it handled the
  // verb, and the built-in commands are not tried) or the actor is gone.
  bool RunCommandHooks(Actor& actor, const std::string& verb, std::string_view args);
  static ItemHookEvent ItemEvent(const Item& item);
  // `hook` is on_get, on_drop or on_give: the item's own hook (actor, item[, receiver]), then
  // on_give(actor, item, self) of a receiving mob, or on_get/on_drop(actor, item, self) of the
  // scripted mobs in the actor's room. Run after the item has moved.
  void RunItemHooks(const char* hook, Actor& actor, const ItemHookEvent& event,
                    Actor* receiver = nullptr);
  // Whether a quest's lua step holds for `player` now (a failing predicate does not).
  bool QuestPredicate(Actor& player, const QuestDef& quest, size_t step);
  size_t timer_count() const { return timers_.size(); }

  // Posting work back onto this zone, for port callbacks arriving on other threads. The
  // poster holds only a weak reference: copy it into the callback, never capture `this`.
  void SetPoster(Poster poster) { post_self_ = std::move(poster); }
  const Poster& poster() const { return post_self_; }

  // ScriptHost
  std::optional<ActorInfo> DescribeActor(uint64_t id) override;
  void ScriptSend(uint64_t actor, std::string_view text) override;
  void ScriptEcho(std::string_view room, std::string_view text) override;
  void ScriptSay(uint64_t actor, std::string_view text) override;
  void ScriptEmote(uint64_t actor, std::string_view text) override;
  bool ScriptMove(uint64_t actor, std::string_view room) override;
  void ScriptHeal(uint64_t actor, int amount) override;
  void ScriptDamage(uint64_t actor, int amount) override;
  bool ScriptAffect(uint64_t actor, std::string_view name, int64_t seconds) override;
  bool ScriptGive(uint64_t actor, std::string_view item) override;
  int64_t ScriptRandom(int64_t lo, int64_t hi) override;
  double ScriptUnit() override { return random_.Unit(); }
  const FlagValue* ScriptFlag(std::string_view key) override;
  bool ScriptSetFlag(std::string_view key, FlagValue value) override;
  uint64_t ScriptAfter(const std::string& script, int ref, int64_t delay_ms, bool repeat) override;
  bool ScriptCancel(uint64_t timer) override;
  int ScriptHasItem(uint64_t actor, std::string_view item) override;

 private:
  // Fires the due script timers (at most limits::kLuaTimerFiresPerHeartbeatMax) and, each
  // second, cancels the timers whose owners are gone.
  void RunTimers();
  bool CallRefHook(const ScriptTimer& timer);
  void EnsureVm();
  bool OwnerAlive(const ScriptOwner& owner, const std::set<uint64_t>* items) const;
  void CancelTimer(uint64_t id);
  // Every item id in the zone: on the floors, carried, worn and inside containers.
  std::set<uint64_t> LiveItemIds() const;
  void Dispatch(Actor& actor, std::string_view line);
  void BuildRooms();
  // Delivers what `actor` has pending; true if that included text.
  bool FlushPlayer(Actor& actor);
  // Queues GMCP Char.Items for what changed since the last flush: a List of the inventory the
  // first time and of the room on entering one, then Add, Remove and Update.
  void SyncItems(Actor& actor);
  void UpdateOccupancy();

  std::shared_ptr<const Pack> pack_;
  const ZoneDef& zone_;
  ZoneDeps deps_;
  Random random_;
  Poster post_self_;
  CommandRegistry registry_;
  std::unique_ptr<LuaVm> lua_;

  std::vector<RoomState> rooms_;
  std::map<std::string, int, std::less<>> room_index_;
  std::map<uint64_t, std::unique_ptr<Actor>> actors_;  // ordered: deterministic iteration
  // The same actors by id for lookups: a room broadcast looks up every occupant, and a busy
  // zone holds thousands of actors.
  std::unordered_map<uint64_t, Actor*> actor_by_id_;
  std::map<std::string, uint64_t, std::less<>> players_;
  std::vector<std::unique_ptr<Actor>> graveyard_;
  // Players whose output waits, in the order they got some; may also hold ids already flushed
  // (skipped by Flush), which is cheaper than removing them after every batch.
  std::vector<uint64_t> dirty_players_;
  int64_t dirty_count_ = 0;   // actors with dirty set
  uint64_t replying_to_ = 0;  // the player whose command is running, whose lines are a reply
  size_t last_flush_players_ = 0;
  std::vector<uint64_t> urgent_players_;
  std::map<std::string, FlagValue, std::less<>> flags_;
  std::set<uint64_t> fighters_;  // actors with fighting != 0
  std::set<uint64_t> summons_;   // summoned mobs; ids of ones since removed are dropped lazily
  std::set<std::string> loaded_scripts_;
  std::map<uint64_t, ScriptTimer> timers_;  // by id
  uint64_t next_timer_id_ = 1;
  ScriptOwner hook_owner_;  // the owner of the hook running now
  uint64_t next_actor_id_ = 1;
  uint64_t next_item_id_ = 1;
  int64_t heartbeats_ = 0;
  int64_t reset_interval_heartbeats_ = 1;
  int64_t save_interval_heartbeats_ = 1;
  prometheus::Gauge* occupancy_ = nullptr;
};

// Colour codes: {r} etc. become ANSI escapes, or are stripped.
std::string ApplyColour(std::string_view text, bool colour);
// "a sewer rat" -> "A sewer rat".
std::string Capitalize(std::string_view text);
// Lower-cases ASCII.
std::string Lower(std::string_view text);
// Splits off the first word: "get sword bag" -> ("get", "sword bag").
std::pair<std::string_view, std::string_view> SplitWord(std::string_view text);
std::string_view Trim(std::string_view text);

}  // namespace telos::world
