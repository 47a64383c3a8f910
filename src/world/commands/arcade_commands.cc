// The arcade in the casino (issue 27): `chips`, `buy <coins>`, `bet <game> <chips> [target]`,
// `cashout`. The commands ask the ArcadePort (the process's arcade::Casino) and show its answer
// when it comes back. Each wager carries an idempotency key made here, one per command, unique
// within and across processes (NewKey). Chips are play money: coins buy them, nothing buys coins
// back.
//
// `buy` takes the coins first and gives them back when the sale is refused, so two buys typed
// at once can never spend the same coins.
#include <atomic>
#include <charconv>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

constexpr const char* kNoArcade = "The tables are covered tonight: no arcade runs on this world.";
constexpr const char* kPlayMoney =
    "Chips are play money: coins buy them, and they can never be turned back into coins.";

bool InCasino(CommandContext& c) {
  if (c.zone.zone().kind == ZoneKind::kCasino) return true;
  c.zone.Send(c.actor, "You can only do that in the casino.");
  return false;
}

ArcadePort* Port(CommandContext& c) {
  ArcadePort* port = c.zone.deps().arcade;
  if (port == nullptr) c.zone.Send(c.actor, kNoArcade);
  return port;
}

std::optional<int64_t> Number(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "2.5", "2.5x", "2" -> 250, 250, 200; nullopt when not a multiplier.
std::optional<int64_t> Multiplier(std::string_view text) {
  if (!text.empty() && (text.back() == 'x' || text.back() == 'X')) text.remove_suffix(1);
  const size_t dot = text.find('.');
  std::optional<int64_t> whole = Number(text.substr(0, dot));
  if (!whole || *whole < 0 || *whole > 100'000) return std::nullopt;
  int64_t cents = 0;
  if (dot != std::string_view::npos) {
    std::string_view frac = text.substr(dot + 1);
    if (frac.empty() || frac.size() > 2) return std::nullopt;
    std::optional<int64_t> f = Number(frac);
    if (!f || *f < 0) return std::nullopt;
    cents = frac.size() == 1 ? *f * 10 : *f;
  }
  return *whole * 100 + cents;
}

std::string X100(int64_t x100) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%02lldx", static_cast<long long>(x100 / 100),
                static_cast<long long>(x100 % 100));
  return buf;
}

// A fresh idempotency key for one command: a random id drawn once per process and a counter,
// so keys never repeat across zones, reloads or restarts. (The zone's seeded Random would:
// a zone rebuilt on the same seed draws the same numbers, and a repeated key replays an old
// wager's answer instead of placing this one.)
std::string NewKey() {
  static const uint64_t process_id = [] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ uint64_t { device() };
  }();
  static std::atomic<uint64_t> next{0};
  char buf[48];
  std::snprintf(buf, sizeof buf, "t%016llx.%llx", static_cast<unsigned long long>(process_id),
                static_cast<unsigned long long>(next.fetch_add(1, std::memory_order_relaxed)));
  return buf;
}

// A refusal as a sentence for the player.
std::string Refusal(const Status& status) {
  if (status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kInternal ||
      status.code() == StatusCode::kUnknownResult) {
    return "The arcade's books cannot be reached right now; try again in a moment.";
  }
  std::string text = status.message();
  if (!text.empty() && text.front() >= 'a' && text.front() <= 'z') {
    text.front() = static_cast<char>(text.front() - 'a' + 'A');
  }
  if (!text.empty() && text.back() != '.') text.push_back('.');
  return text;
}

// Shows `line` to `key` on this zone's executor, if they are still here.
void Tell(const ZoneCore::Poster& post, const std::string& key, std::string line) {
  (void)post([key, line = std::move(line)](ZoneCore& z) { z.Notice(key, line); });
}

void Chips(CommandContext& c) {
  if (!InCasino(c)) return;
  ArcadePort* port = Port(c);
  if (port == nullptr) return;
  port->Chips(c.actor.key, [post = c.zone.poster(), key = c.actor.key](Result<int64_t> chips) {
    Tell(post, key,
         chips.ok() ? "You hold " + std::to_string(*chips) + " chips. " + kPlayMoney
                    : Refusal(chips.status()));
  });
}

void Bet(CommandContext& c) {
  if (!InCasino(c)) return;
  ArcadePort* port = Port(c);
  if (port == nullptr) return;
  std::vector<std::string> words;
  for (size_t at = 0; at < c.args.size();) {
    const size_t end = std::min(c.args.find(' ', at), c.args.size());
    if (end > at) words.emplace_back(c.args.substr(at, end - at));
    at = end + 1;
  }
  const char* usage =
      "Usage: bet dice <chips> <under> (the roll, 0-9999, must be under your number, 100-9800) "
      "or bet crash <chips> [auto cash-out, e.g. 2.5].";
  if (words.size() < 2 || words.size() > 3) {
    c.zone.Send(c.actor, usage);
    return;
  }
  const std::string game = Lower(words[0]);
  std::optional<int64_t> stake = Number(words[1]);
  if (!stake || *stake < 1) {
    c.zone.Send(c.actor, "Bet how many chips? " + std::string(usage));
    return;
  }
  int64_t target = 0;
  if (game == "dice") {
    std::optional<int64_t> under = words.size() == 3 ? Number(words[2]) : std::nullopt;
    if (!under) {
      c.zone.Send(c.actor, "Bet under which number? " + std::string(usage));
      return;
    }
    target = *under;
  } else if (words.size() == 3) {
    std::optional<int64_t> at = Multiplier(words[2]);
    if (!at) {
      c.zone.Send(c.actor, "An auto cash-out is a multiplier such as 2.5. " + std::string(usage));
      return;
    }
    target = *at;
  }
  port->Bet(c.actor.key, game, *stake, target, NewKey(),
            [post = c.zone.poster(), key = c.actor.key, game, target](Result<ArcadeWager> bet) {
              if (!bet.ok()) {
                Tell(post, key, Refusal(bet.status()));
                return;
              }
              std::string line = "Your bet of " + std::to_string(bet->stake) + " chips is in " +
                                 game + " round #" + std::to_string(bet->round);
              if (game == "dice") {
                line += ": you win if the roll is under " + std::to_string(target) + ".";
              } else if (target > 0) {
                line += ": it cashes out by itself at " + X100(target) + ".";
              } else {
                line += ": type 'cashout' before it crashes.";
              }
              Tell(post, key, line);
            });
}

void CashOut(CommandContext& c) {
  if (!InCasino(c)) return;
  ArcadePort* port = Port(c);
  if (port == nullptr) return;
  port->CashOut(c.actor.key, NewKey(),
                [post = c.zone.poster(), key = c.actor.key](Result<ArcadeWager> out) {
                  Tell(post, key,
                       out.ok() ? "You cash out at " + X100(out->cashout_x100) + ": " +
                                      std::to_string(out->chips) + " chips."
                                : Refusal(out.status()));
                });
}

// Asks for `paid` coins' worth of chips under `wager_key`, the coins already taken. A refusal
// gives them back; an unknown outcome (the batch's commit was never confirmed) asks again under
// the same key, which the ledger answers with the first posting if it did commit, so the coins
// are neither returned for chips that were bought nor kept for chips that were not. Once an
// attempt ended unknown (`maybe_sold`), no later refusal proves the sale did not happen (a busy
// or unreachable ledger says nothing about the first commit), so the coins are returned only
// when no attempt was unknown; attempts used up keep the coins and log the key for staff.
void SendBuy(ZoneCore& zone, const std::string& key, int64_t paid, std::string wager_key,
             int attempts_left, bool maybe_sold) {
  ArcadePort* port = zone.deps().arcade;
  if (port == nullptr) return;
  port->Buy(key, paid, wager_key,
            [post = zone.poster(), key, paid, wager_key, attempts_left,
             maybe_sold](Result<ArcadeWager> sale) {
              (void)post([key, paid, wager_key, attempts_left, maybe_sold,
                          sale = std::move(sale)](ZoneCore& z) {
                if (sale.ok()) {
                  z.Notice(key, "You buy " + std::to_string(sale->stake) + " chips for " +
                                    std::to_string(paid) + " coins and hold " +
                                    std::to_string(sale->chips) + " chips. " + kPlayMoney);
                  return;
                }
                if (maybe_sold || sale.status().code() == StatusCode::kUnknownResult) {
                  if (attempts_left > 1) {
                    SendBuy(z, key, paid, wager_key, attempts_left - 1, /*maybe_sold=*/true);
                    return;
                  }
                  z.logger().Error("arcade: a chip sale's outcome is unknown; coins kept",
                                   {{"player", key}, {"coins", paid}, {"key", wager_key}});
                  z.Notice(key,
                           "The arcade could not confirm your purchase. Your coins are held "
                           "until staff settle it; 'chips' shows whether it went through.");
                  return;
                }
                Actor* buyer = z.FindPlayerMutable(key);
                if (buyer == nullptr) {
                  z.logger().Error("arcade: a refused chip sale's coins could not be returned",
                                   {{"player", key}, {"coins", paid}});
                  return;
                }
                buyer->gold += paid;
                z.Notice(key, Refusal(sale.status()) + " Your coins are returned.");
              });
            });
}

}  // namespace

bool ArcadeBuy(CommandContext& c) {
  if (c.zone.zone().kind != ZoneKind::kCasino) return false;
  std::optional<int64_t> coins = Number(c.args);
  if (!coins) return false;
  ArcadePort* port = Port(c);
  if (port == nullptr) return true;
  if (*coins < 1) {
    c.zone.Send(c.actor, "Buy how many chips? One coin buys one chip.");
    return true;
  }
  if (*coins > c.actor.gold) {
    c.zone.Send(c.actor, "You do not carry that many coins.");
    return true;
  }
  c.actor.gold -= *coins;  // taken now, given back if the sale is refused
  SendBuy(c.zone, c.actor.key, *coins, NewKey(), limits::kArcadeBuyAttemptsMax,
          /*maybe_sold=*/false);
  return true;
}

void RegisterArcadeCommands(CommandRegistry& r) {
  r.Add({"chips",
         {},
         Position::kResting,
         "chips",
         "Shows your arcade chips (in the casino). Chips are play money, bought with coins "
         "('buy <coins>') and never sold back.",
         Chips,
         false,
         kRolePlayer,
         true});
  r.Add({"bet",
         {},
         Position::kResting,
         "bet <dice|crash> <chips> [target]",
         "Bets chips on the casino's round games: 'bet dice 10 5000' wins when the roll "
         "(0-9999) is under 5000; 'bet crash 10 2.5' cashes out by itself at 2.50x, or type "
         "'cashout' before the multiplier crashes. Every round is provably fair: "
         "/api/arcade/rounds/<game>-<round> shows its hash.",
         Bet,
         false,
         kRolePlayer,
         true});
  r.Add({"cashout",
         {},
         Position::kResting,
         "cashout",
         "Cashes your crash bet out at the multiplier now, before it crashes.",
         CashOut,
         false,
         kRolePlayer,
         true});
}

}  // namespace telos::world
