// Shops and the bank: list, buy, sell, deposit, withdraw, balance.
#include <charconv>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

int64_t Price(int64_t value, int percent) {
  return std::max<int64_t>(1, value * percent / 100);
}

Actor* Keeper(CommandContext& c) {
  Actor* keeper = c.zone.ShopkeeperIn(c.actor.room);
  if (keeper == nullptr) c.zone.Send(c.actor, "There is no shop here.");
  return keeper;
}

void List(CommandContext& c) {
  Actor* keeper = Keeper(c);
  if (keeper == nullptr) return;
  const ShopDef& shop = *c.zone.ShopOf(*keeper);
  c.zone.Send(c.actor, keeper->Display() + " offers:");
  for (const Ref& ref : shop.sells) {
    const ItemDef* def = c.zone.pack().FindItem(ref);
    if (def == nullptr) continue;
    std::string price = std::to_string(Price(def->value, shop.buy_percent));
    if (price.size() < 6) price.insert(0, 6 - price.size(), ' ');
    c.zone.Send(c.actor, price + " coins  " + def->name);
  }
}

void Buy(CommandContext& c) {
  if (ArcadeBuy(c)) return;
  Actor* keeper = Keeper(c);
  if (keeper == nullptr) return;
  if (c.args.empty()) {
    c.zone.Send(c.actor, "Buy what? Type 'list' to see the wares.");
    return;
  }
  const ShopDef& shop = *c.zone.ShopOf(*keeper);
  std::string key = Lower(c.args);
  for (const Ref& ref : shop.sells) {
    const ItemDef* def = c.zone.pack().FindItem(ref);
    if (def == nullptr) continue;
    bool match = false;
    for (const std::string& keyword : def->keywords) match = match || keyword.starts_with(key);
    if (!match) continue;
    int64_t price = Price(def->value, shop.buy_percent);
    if (c.actor.gold < price) {
      c.zone.Send(c.actor, keeper->Display() + " says, 'That costs " + std::to_string(price) +
                               " coins, which you do not have.'");
      return;
    }
    if (c.actor.inventory.size() >= limits::kInventoryItemsMax) {
      c.zone.Send(c.actor, "Your hands are full.");
      return;
    }
    c.actor.gold -= price;
    c.actor.inventory.push_back(c.zone.MakeItem(*def));
    c.zone.Send(c.actor, "You buy " + def->name + " for " + std::to_string(price) + " coins.");
    c.zone.ToRoom(c.actor.room, c.actor.Display() + " buys " + def->name + ".", c.actor.id);
    return;
  }
  c.zone.Send(c.actor, keeper->Display() + " says, 'I do not sell that.'");
}

void Sell(CommandContext& c) {
  Actor* keeper = Keeper(c);
  if (keeper == nullptr) return;
  Item* item = c.args.empty() ? nullptr : c.zone.FindItemIn(c.actor.inventory, c.args);
  if (item == nullptr) {
    c.zone.Send(c.actor, "Sell what? You must be carrying it.");
    return;
  }
  const ShopDef& shop = *c.zone.ShopOf(*keeper);
  if (item->def->value <= 0 || shop.sell_percent == 0) {
    c.zone.Send(c.actor, keeper->Display() + " says, 'I have no use for " + item->Name() + ".'");
    return;
  }
  int64_t price = item->def->value * shop.sell_percent / 100;
  std::unique_ptr<Item> sold = c.zone.TakeItem(c.actor.inventory, item);
  c.actor.gold += price;
  c.zone.Send(c.actor, "You sell " + sold->Name() + " for " + std::to_string(price) + " coins.");
  c.zone.ToRoom(c.actor.room, c.actor.Display() + " sells " + sold->Name() + ".", c.actor.id);
}

bool AtBank(CommandContext& c) {
  if (c.zone.room(c.actor.room).Has(kRoomBank)) return true;
  c.zone.Send(c.actor, "You need to be at a bank.");
  return false;
}

std::optional<int64_t> Amount(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

void Bank(CommandContext& c, bool deposit) {
  if (!AtBank(c)) return;
  std::optional<int64_t> amount = Amount(c.args);
  if (!amount) {
    c.zone.Send(c.actor, deposit ? "Usage: deposit <coins>" : "Usage: withdraw <coins>");
    return;
  }
  int64_t& from = deposit ? c.actor.gold : c.actor.bank;
  int64_t& to = deposit ? c.actor.bank : c.actor.gold;
  if (*amount > from) {
    c.zone.Send(c.actor,
                deposit ? "You do not carry that much." : "Your account is not that rich.");
    return;
  }
  from -= *amount;
  to += *amount;
  c.zone.Send(c.actor, std::string(deposit ? "You deposit " : "You withdraw ") +
                           std::to_string(*amount) +
                           " coins. Balance: " + std::to_string(c.actor.bank) + ".");
}

}  // namespace

void RegisterShopCommands(CommandRegistry& r) {
  r.Add({"list", {}, Position::kResting, "list", "Shows what the shopkeeper here sells.", List});
  r.Add({"buy", {}, Position::kResting, "buy <item>", "Buys an item from the shop here.", Buy});
  r.Add({"sell", {}, Position::kResting, "sell <item>", "Sells an item to the shop here.", Sell});
  r.Add({"deposit",
         {},
         Position::kResting,
         "deposit <coins>",
         "Puts coins in the bank.",
         [](CommandContext& c) { Bank(c, true); }});
  r.Add({"withdraw",
         {},
         Position::kResting,
         "withdraw <coins>",
         "Takes coins from the bank.",
         [](CommandContext& c) { Bank(c, false); }});
  r.Add({"balance",
         {},
         Position::kResting,
         "balance",
         "Shows your bank balance.",
         [](CommandContext& c) {
           if (!AtBank(c)) return;
           c.zone.Send(c.actor, "Your balance is " + std::to_string(c.actor.bank) + " coins.");
         }});
}

}  // namespace telos::world
