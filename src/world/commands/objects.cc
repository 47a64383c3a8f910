// Items: get, drop, give, put, wear, wield, remove, use (eat, drink, quaff).
#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using Items = std::vector<std::unique_ptr<Item>>;

bool InventoryFull(ZoneCore& zone, Actor& actor) {
  if (actor.inventory.size() < limits::kInventoryItemsMax) return false;
  zone.Send(actor, "Your hands are full.");
  return true;
}

// A container the actor can reach: carried first, then in the room.
Item* FindContainer(ZoneCore& zone, Actor& actor, std::string_view word) {
  Item* item = zone.FindItemIn(actor.inventory, word);
  if (item == nullptr) item = zone.FindItemIn(zone.room(actor.room).items, word);
  return item;
}

// Runs `hook` for each item moved by a command, after the move (a hook may move or destroy the
// actor, the item or anything else, so none runs while the command is still walking a list).
void RunHooks(ZoneCore& zone, const char* hook, Actor& actor,
              const std::vector<ItemHookEvent>& events) {
  for (const ItemHookEvent& event : events) {
    if (actor.removed) return;
    zone.RunItemHooks(hook, actor, event);
  }
}

void GetFrom(CommandContext& c, std::string_view what, std::string_view from) {
  ZoneCore& zone = c.zone;
  Actor& actor = c.actor;
  Item* container = FindContainer(zone, actor, from);
  if (container == nullptr) {
    zone.Send(actor, "You do not see '" + std::string(from) + "' here.");
    return;
  }
  if (!container->is_container()) {
    zone.Send(actor, Capitalize(container->Name()) + " is not a container.");
    return;
  }
  std::vector<ItemHookEvent> got;  // their on_get hooks run once the command is done
  if (Lower(what) == "all") {
    if (container->contents.empty() && container->coins == 0) {
      zone.Send(actor, Capitalize(container->Name()) + " is empty.");
      return;
    }
    while (!container->contents.empty() && !InventoryFull(zone, actor)) {
      std::unique_ptr<Item> item = std::move(container->contents.front());
      container->contents.erase(container->contents.begin());
      zone.Send(actor, "You get " + item->Name() + " from " + container->Name() + ".");
      got.push_back(ZoneCore::ItemEvent(*item));
      actor.inventory.push_back(std::move(item));
    }
  } else {
    Item* item = zone.FindItemIn(container->contents, what);
    if (item == nullptr) {
      zone.Send(actor, "There is no '" + std::string(what) + "' in " + container->Name() + ".");
      return;
    }
    if (InventoryFull(zone, actor)) return;
    zone.Send(actor, "You get " + item->Name() + " from " + container->Name() + ".");
    got.push_back(ZoneCore::ItemEvent(*item));
    actor.inventory.push_back(zone.TakeItem(container->contents, item));
  }
  if (container->coins > 0) {
    zone.Send(actor, "You get " + std::to_string(container->coins) + " coins.");
    actor.gold += container->coins;
    container->coins = 0;
  }
  zone.ToRoom(actor.room, actor.Display() + " rummages in " + container->Name() + ".", actor.id);
  RunHooks(zone, "on_get", actor, got);
}

void Get(CommandContext& c) {
  auto [what, from] = SplitWord(c.args);
  if (what.empty()) {
    c.zone.Send(c.actor, "Get what?");
    return;
  }
  if (!from.empty()) {
    if (from.starts_with("from ")) from = Trim(from.substr(5));
    GetFrom(c, what, from);
    return;
  }
  Items& floor = c.zone.room(c.actor.room).items;
  bool all = Lower(what) == "all";
  bool any = false;
  bool full = false;
  std::vector<ItemHookEvent> got;
  for (size_t i = 0; i < floor.size();) {
    Item* item = floor[i].get();
    bool wanted = all || item == c.zone.FindItemIn(floor, what);
    if (!wanted || item->is_corpse()) {
      if (wanted && !all) {
        c.zone.Send(c.actor, "You cannot carry " + item->Name() + ". Try 'get all corpse'.");
        return;
      }
      ++i;
      continue;
    }
    if (InventoryFull(c.zone, c.actor)) {
      full = true;
      break;
    }
    std::unique_ptr<Item> taken = c.zone.TakeItem(floor, item);
    c.zone.Send(c.actor, "You get " + taken->Name() + ".");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " gets " + taken->Name() + ".", c.actor.id);
    got.push_back(ZoneCore::ItemEvent(*taken));
    c.actor.inventory.push_back(std::move(taken));
    any = true;
    if (!all) break;
  }
  if (!any && !full) {
    c.zone.Send(c.actor, all ? "There is nothing here to take." : "You do not see that here.");
  }
  RunHooks(c.zone, "on_get", c.actor, got);
}

void Drop(CommandContext& c) {
  if (c.args.empty()) {
    c.zone.Send(c.actor, "Drop what?");
    return;
  }
  Items& floor = c.zone.room(c.actor.room).items;
  bool all = Lower(c.args) == "all";
  std::vector<ItemHookEvent> dropped_items;
  while (true) {
    Item* item = all ? (c.actor.inventory.empty() ? nullptr : c.actor.inventory.front().get())
                     : c.zone.FindItemIn(c.actor.inventory, c.args);
    if (item == nullptr) {
      if (!all) c.zone.Send(c.actor, "You are not carrying that.");
      break;
    }
    if (floor.size() >= limits::kItemsPerRoomMax) {
      c.zone.Send(c.actor, "There is no room here to drop anything more.");
      break;
    }
    std::unique_ptr<Item> dropped = c.zone.TakeItem(c.actor.inventory, item);
    c.zone.Send(c.actor, "You drop " + dropped->Name() + ".");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " drops " + dropped->Name() + ".", c.actor.id);
    dropped_items.push_back(ZoneCore::ItemEvent(*dropped));
    floor.push_back(std::move(dropped));
    if (!all) break;
  }
  RunHooks(c.zone, "on_drop", c.actor, dropped_items);
}

void Give(CommandContext& c) {
  auto [what, rest] = SplitWord(c.args);
  if (what.empty() || rest.empty()) {
    c.zone.Send(c.actor, "Give what to whom? Usage: give <item> <person>");
    return;
  }
  if (rest.starts_with("to ")) rest = Trim(rest.substr(3));
  // "give 10 coins bob"
  if (!what.empty() &&
      std::all_of(what.begin(), what.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    auto [unit, who] = SplitWord(rest);
    int64_t amount = what.size() > 12 ? 0 : std::stoll(std::string(what));
    Actor* target = c.zone.FindInRoom(c.actor, who);
    if ((unit != "coins" && unit != "coin") || target == nullptr || amount <= 0) {
      c.zone.Send(c.actor, "Usage: give <amount> coins <person>");
      return;
    }
    if (amount > c.actor.gold) {
      c.zone.Send(c.actor, "You do not have that many coins.");
      return;
    }
    c.actor.gold -= amount;
    target->gold += amount;
    c.zone.Send(c.actor, "You give " + std::to_string(amount) + " coins to " + target->name + ".");
    c.zone.Send(*target, c.actor.Display() + " gives you " + std::to_string(amount) + " coins.");
    return;
  }
  Item* item = c.zone.FindItemIn(c.actor.inventory, what);
  if (item == nullptr) {
    c.zone.Send(c.actor, "You are not carrying that.");
    return;
  }
  Actor* target = c.zone.FindInRoom(c.actor, rest);
  if (target == nullptr || target == &c.actor) {
    c.zone.Send(c.actor, "You do not see '" + std::string(rest) + "' here.");
    return;
  }
  if (target->inventory.size() >= limits::kInventoryItemsMax) {
    c.zone.Send(c.actor, target->Display() + " cannot carry any more.");
    return;
  }
  std::unique_ptr<Item> given = c.zone.TakeItem(c.actor.inventory, item);
  c.zone.Send(c.actor, "You give " + given->Name() + " to " + target->name + ".");
  c.zone.Send(*target, c.actor.Display() + " gives you " + given->Name() + ".");
  c.zone.ToRoom(c.actor.room,
                c.actor.Display() + " gives " + given->Name() + " to " + target->name + ".",
                c.actor.id, target->id);
  ItemHookEvent event = ZoneCore::ItemEvent(*given);
  target->inventory.push_back(std::move(given));
  c.zone.RunItemHooks("on_give", c.actor, event, target);
}

void Put(CommandContext& c) {
  auto [what, rest] = SplitWord(c.args);
  if (rest.starts_with("in ")) rest = Trim(rest.substr(3));
  if (what.empty() || rest.empty()) {
    c.zone.Send(c.actor, "Put what where? Usage: put <item> <container>");
    return;
  }
  Item* item = c.zone.FindItemIn(c.actor.inventory, what);
  if (item == nullptr) {
    c.zone.Send(c.actor, "You are not carrying that.");
    return;
  }
  Item* container = FindContainer(c.zone, c.actor, rest);
  if (container == nullptr || container == item) {
    c.zone.Send(c.actor, "You do not see '" + std::string(rest) + "' here.");
    return;
  }
  if (container->is_corpse() || container->def->type != ItemType::kContainer) {
    c.zone.Send(c.actor, "You cannot put things in " + container->Name() + ".");
    return;
  }
  std::unique_ptr<Item> moved = c.zone.TakeItem(c.actor.inventory, item);
  c.zone.Send(c.actor, "You put " + moved->Name() + " in " + container->Name() + ".");
  container->contents.push_back(std::move(moved));
}

bool WearOne(CommandContext& c, Item* item, bool wield) {
  if (item->is_corpse() || item->def->slot == WearSlot::kNone) {
    c.zone.Send(c.actor, "You cannot wear " + item->Name() + ".");
    return false;
  }
  WearSlot slot = item->def->slot;
  if (wield != (slot == WearSlot::kWield)) {
    c.zone.Send(c.actor, wield ? "You cannot wield " + item->Name() + "."
                               : "You wield weapons; try 'wield'.");
    return false;
  }
  auto& place = c.actor.equipment[static_cast<size_t>(slot)];
  if (place) {
    c.zone.Send(c.actor, "You are already using " + place->Name() + ". Remove it first.");
    return false;
  }
  place = c.zone.TakeItem(c.actor.inventory, item);
  if (wield) {
    c.zone.Send(c.actor, "You wield " + place->Name() + ".");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " wields " + place->Name() + ".", c.actor.id);
  } else {
    c.zone.Send(c.actor,
                "You wear " + place->Name() + " on your " + std::string(WearSlotName(slot)) + ".");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " wears " + place->Name() + ".", c.actor.id);
  }
  return true;
}

void Wear(CommandContext& c, bool wield) {
  if (c.args.empty()) {
    c.zone.Send(c.actor, wield ? "Wield what?" : "Wear what?");
    return;
  }
  if (!wield && Lower(c.args) == "all") {
    std::vector<Item*> candidates;
    for (auto& item : c.actor.inventory) {
      if (!item->is_corpse() && item->def->slot != WearSlot::kNone &&
          item->def->slot != WearSlot::kWield &&
          !c.actor.equipment[static_cast<size_t>(item->def->slot)]) {
        candidates.push_back(item.get());
      }
    }
    if (candidates.empty()) c.zone.Send(c.actor, "You have nothing else to wear.");
    for (Item* item : candidates) {
      if (!c.actor.equipment[static_cast<size_t>(item->def->slot)]) WearOne(c, item, false);
    }
    return;
  }
  Item* item = c.zone.FindItemIn(c.actor.inventory, c.args);
  if (item == nullptr) {
    c.zone.Send(c.actor, "You are not carrying that.");
    return;
  }
  WearOne(c, item, wield);
}

void Remove(CommandContext& c) {
  if (c.args.empty()) {
    c.zone.Send(c.actor, "Remove what?");
    return;
  }
  std::string key = Lower(c.args);
  for (auto& place : c.actor.equipment) {
    if (place && place->Matches(key)) {
      if (InventoryFull(c.zone, c.actor)) return;
      c.zone.Send(c.actor, "You stop using " + place->Name() + ".");
      c.zone.ToRoom(c.actor.room, c.actor.Display() + " stops using " + place->Name() + ".",
                    c.actor.id);
      c.actor.inventory.push_back(std::move(place));
      return;
    }
  }
  c.zone.Send(c.actor, "You are not using that.");
}

void Use(CommandContext& c) {
  if (c.args.empty()) {
    c.zone.Send(c.actor, "Use what?");
    return;
  }
  Item* item = c.zone.FindItemIn(c.actor.inventory, c.args);
  if (item == nullptr) {
    c.zone.Send(c.actor, "You are not carrying that.");
    return;
  }
  const ItemDef& def = *item->def;
  bool consumable =
      def.type == ItemType::kFood || def.type == ItemType::kDrink || def.type == ItemType::kPotion;
  if (!consumable && def.script.empty()) {
    c.zone.Send(c.actor, "You cannot use " + item->Name() + ".");
    return;
  }
  uint64_t actor_id = c.actor.id;
  if (consumable) {
    const char* verb = def.type == ItemType::kFood    ? "eat"
                       : def.type == ItemType::kDrink ? "drink"
                                                      : "quaff";
    c.zone.Send(c.actor, "You " + std::string(verb) + " " + item->Name() + ".");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " " + verb + "s " + item->Name() + ".",
                  actor_id);
    if (def.use_heal > 0) c.zone.Heal(c.actor, def.use_heal);
    if (def.use_affect) c.zone.ApplyAffect(c.actor, *def.use_affect, def.use_seconds * 1000);
  }
  c.zone.RunUseHook(c.actor, *item);
  if (consumable && !c.actor.removed) {
    // The script may have moved the item; consume it only if still carried.
    std::unique_ptr<Item> used = c.zone.TakeItem(c.actor.inventory, item);
    (void)used;
  }
}

}  // namespace

void RegisterObjectCommands(CommandRegistry& r) {
  r.Add({"get",
         {"take"},
         Position::kResting,
         "get <item>|all [container]",
         "Picks something up, or takes it out of a container or corpse.",
         Get});
  r.Add({"drop", {}, Position::kResting, "drop <item>|all", "Puts something down.", Drop});
  r.Add({"give",
         {},
         Position::kResting,
         "give <item> <person> | give <n> coins <person>",
         "Hands something to someone here.",
         Give});
  r.Add({"put",
         {},
         Position::kResting,
         "put <item> <container>",
         "Puts an item in a container.",
         Put});
  r.Add({"wear",
         {},
         Position::kResting,
         "wear <item>|all",
         "Puts on armour or jewellery.",
         [](CommandContext& c) { Wear(c, false); }});
  r.Add({"wield",
         {},
         Position::kResting,
         "wield <weapon>",
         "Takes a weapon in hand.",
         [](CommandContext& c) { Wear(c, true); }});
  r.Add({"remove",
         {"rem"},
         Position::kResting,
         "remove <item>",
         "Stops wearing or wielding.",
         Remove});
  r.Add({"use",
         {"eat", "drink", "quaff"},
         Position::kResting,
         "use <item>",
         "Eats food, drinks, quaffs a potion, or uses a magical thing.",
         Use});
}

}  // namespace telos::world
