// The casino's commands against a fake ArcadePort that answers on the test's thread: chips,
// buy (coins taken, and given back when the sale is refused), bet and cashout with a fresh
// idempotency key each, refusals in words, the commands refused outside the casino, and the
// frames broadcast to the casino's players only (text and GMCP).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "telos/world/ports.h"
#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TestWorld;

class FakeArcade final : public ArcadePort {
 public:
  void Chips(std::string player, std::function<void(Result<int64_t>)> done) override {
    done(chips[player]);
  }
  void Buy(std::string player, int64_t n, std::string key,
           std::function<void(Result<ArcadeWager>)> done) override {
    keys.push_back(key);
    if (!up) return done(Status::Unavailable("ledger down"));
    if (down_after_first && sold.contains(key)) return done(Status::Unavailable("ledger down"));
    // A retry under a key that committed changes nothing: the ledger answers with that posting.
    if (sold.insert(key).second) chips[player] += n;
    if (unconfirmed > 0) {  // committed, but the answer was lost
      --unconfirmed;
      return done(Status::UnknownResult("the commit was not confirmed"));
    }
    done(ArcadeWager{.stake = n, .chips = chips[player]});
  }
  void Bet(std::string player, std::string game, int64_t stake, int64_t target, std::string key,
           std::function<void(Result<ArcadeWager>)> done) override {
    keys.push_back(key);
    bets.push_back(player + " " + game + " " + std::to_string(stake) + " " +
                   std::to_string(target));
    if (stake > chips[player]) return done(Status::FailedPrecondition("not enough chips"));
    chips[player] -= stake;
    done(ArcadeWager{.round = 17, .stake = stake});
  }
  void CashOut(std::string /*player*/, std::string key,
               std::function<void(Result<ArcadeWager>)> done) override {
    keys.push_back(key);
    done(ArcadeWager{.round = 17, .stake = 10, .cashout_x100 = 185, .chips = 18});
  }
  std::map<std::string, int64_t> chips;
  std::vector<std::string> keys;
  std::vector<std::string> bets;
  std::set<std::string> sold;     // buy keys that committed
  int unconfirmed = 0;            // commits whose answer is lost, from the next buy on
  bool down_after_first = false;  // a retry of a committed buy finds the ledger unreachable
  bool up = true;
};

class ArcadeCommandsTest : public ::testing::Test {
 protected:
  ArcadeCommandsTest() {
    testing::WriteSmallPack(dir_);
    dir_.Write("zones/casino.toml", R"([zone]
id = "casino"
name = "The Casino"
kind = "casino"
reset_minutes = 5

[[rooms]]
id = "floor"
name = "The Floor"
description = "Tables under a dome."
flags = ["safe"]

  [[rooms.exits]]
  dir = "west"
  to = "lobby:atrium"
)");
    world_ = std::make_unique<TestWorld>(
        dir_.path(), 42, 0, limits::kOutputPulseCrowdPlayersDefault, nullptr, &arcade_);
    CharacterState rich = NewCharacter("Alice", world_->pack->start_room);
    rich.room = Ref{"casino", "floor"};
    rich.wallet_coins = 100;
    world_->LoginState(rich);
    world_->Login("Bob");  // in the lobby
  }
  int64_t GoldOf(const std::string& key) {
    int64_t gold = -1;
    auto zone = world_->host->FindZone("casino");
    (void)zone->Inspect([&](const ZoneCore& z) {
      if (auto state = z.PlayerState(key)) gold = state->wallet_coins;
    });
    world_->Run();
    return gold;
  }

  TempDir dir_;
  FakeArcade arcade_;
  std::unique_ptr<TestWorld> world_;
};

TEST_F(ArcadeCommandsTest, BuyingChipsTakesCoinsOneWayAndARefusedSaleGivesThemBack) {
  EXPECT_THAT(world_->Do("Alice", "buy 30"), HasSubstr("You buy 30 chips for 30 coins"));
  EXPECT_THAT(world_->Do("Alice", "chips"), HasSubstr("You hold 30 chips. Chips are play money"));
  EXPECT_EQ(GoldOf("alice"), 70);
  EXPECT_THAT(world_->Do("Alice", "buy 500"), HasSubstr("You do not carry that many coins."));
  arcade_.up = false;
  EXPECT_THAT(world_->Do("Alice", "buy 20"), HasSubstr("Your coins are returned."));
  EXPECT_EQ(GoldOf("alice"), 70) << "a refused sale loses nothing";
  EXPECT_EQ(arcade_.chips["alice"], 30);
}

TEST_F(ArcadeCommandsTest, BetsAndCashOutsCarryAFreshKeyAndRefusalsAreWords) {
  arcade_.chips["alice"] = 50;
  EXPECT_THAT(world_->Do("Alice", "bet dice 10 5000"),
              HasSubstr("Your bet of 10 chips is in dice round #17: you win if the roll is under "
                        "5000."));
  EXPECT_THAT(world_->Do("Alice", "bet crash 5 2.5"),
              HasSubstr("it cashes out by itself at 2.50x"));
  EXPECT_THAT(world_->Do("Alice", "bet crash 99"), HasSubstr("Not enough chips."));
  EXPECT_THAT(world_->Do("Alice", "cashout"), HasSubstr("You cash out at 1.85x: 18 chips."));
  ASSERT_EQ(arcade_.bets.size(), 3u);
  EXPECT_EQ(arcade_.bets[0], "alice dice 10 5000");
  EXPECT_EQ(arcade_.bets[1], "alice crash 5 250");
  const std::set<std::string> distinct(arcade_.keys.begin(), arcade_.keys.end());
  EXPECT_EQ(distinct.size(), arcade_.keys.size()) << "one key per command";
  // Malformed: usage, nothing sent.
  EXPECT_THAT(world_->Do("Alice", "bet dice ten 5000"), HasSubstr("Bet how many chips?"));
  EXPECT_THAT(world_->Do("Alice", "bet dice 10"), HasSubstr("Bet under which number?"));
  EXPECT_THAT(world_->Do("Alice", "bet crash 10 soon"), HasSubstr("An auto cash-out is"));
  EXPECT_EQ(arcade_.bets.size(), 3u);
}

TEST_F(ArcadeCommandsTest, ASaleWhoseCommitWasNotConfirmedIsAskedAgainUnderItsKey) {
  // The first answer is lost after the commit: asking again under the same key gets the sale,
  // so the coins are not given back for chips that were bought.
  arcade_.unconfirmed = 1;
  EXPECT_THAT(world_->Do("Alice", "buy 30"), HasSubstr("You buy 30 chips for 30 coins"));
  ASSERT_EQ(arcade_.keys.size(), 2u);
  EXPECT_EQ(arcade_.keys[0], arcade_.keys[1]);
  EXPECT_EQ(arcade_.chips["alice"], 30);
  EXPECT_EQ(GoldOf("alice"), 70);
  // Every answer lost: the coins are held, not returned on top of the chips.
  arcade_.chips["alice"] = 0;
  arcade_.unconfirmed = limits::kArcadeBuyAttemptsMax + 5;
  arcade_.keys.clear();
  EXPECT_THAT(world_->Do("Alice", "buy 20"), HasSubstr("could not confirm your purchase"));
  EXPECT_EQ(arcade_.keys.size(), static_cast<size_t>(limits::kArcadeBuyAttemptsMax));
  EXPECT_EQ(GoldOf("alice"), 50);
  EXPECT_EQ(arcade_.chips["alice"], 20);
  // Unknown, then the ledger unreachable: the refusal does not prove the first commit failed,
  // so the coins stay held rather than returned on top of chips that may be bought.
  arcade_.chips["alice"] = 0;
  arcade_.unconfirmed = 1;
  arcade_.down_after_first = true;
  EXPECT_THAT(world_->Do("Alice", "buy 10"), HasSubstr("could not confirm your purchase"));
  EXPECT_EQ(GoldOf("alice"), 40);
  EXPECT_EQ(arcade_.chips["alice"], 10);
}

TEST_F(ArcadeCommandsTest, AWorldBuiltAgainOnTheSameSeedNeverRepeatsAKey) {
  // A reload or a restart with TELOS_SEED rebuilds the casino on the same seed; a key that came
  // back would replay the old wager's answer (coins taken, no chips) instead of placing this one.
  EXPECT_THAT(world_->Do("Alice", "buy 10"), HasSubstr("You buy 10 chips"));
  world_ = std::make_unique<TestWorld>(dir_.path(), 42, 0, limits::kOutputPulseCrowdPlayersDefault,
                                       nullptr, &arcade_);
  CharacterState again = NewCharacter("Alice", world_->pack->start_room);
  again.room = Ref{"casino", "floor"};
  again.wallet_coins = 100;
  world_->LoginState(again);
  EXPECT_THAT(world_->Do("Alice", "buy 10"), HasSubstr("You buy 10 chips"));
  ASSERT_EQ(arcade_.keys.size(), 2u);
  EXPECT_NE(arcade_.keys[0], arcade_.keys[1]);
}

TEST_F(ArcadeCommandsTest, OutsideTheCasinoTheCommandsAreRefusedAndBuyIsTheShops) {
  EXPECT_THAT(world_->Do("Bob", "bet dice 10 5000"),
              HasSubstr("You can only do that in the casino."));
  EXPECT_THAT(world_->Do("Bob", "chips"), HasSubstr("You can only do that in the casino."));
  EXPECT_THAT(world_->Do("Bob", "buy 10"), HasSubstr("There is no shop here."));
  EXPECT_TRUE(arcade_.keys.empty());
  // Abbreviations players already type keep their meaning.
  EXPECT_THAT(world_->Do("Bob", "cas"), Not(HasSubstr("cashout")));
}

TEST_F(ArcadeCommandsTest, FramesReachTheCasinosPlayersOnlyAsTextAndGmcp) {
  world_->sink("Alice")->Take();
  world_->sink("Alice")->events.clear();
  world_->sink("Bob")->Take();
  world_->host->DeliverToZonesOfKind(ZoneKind::kCasino, "[dice #3] The roll is 42.",
                                     OutputEvent{.name = "Arcade.Frame", .json = "{\"roll\":42}"});
  world_->Run();
  EXPECT_THAT(world_->sink("Alice")->Take(), HasSubstr("[dice #3] The roll is 42."));
  bool gmcp = false;
  for (const OutputEvent& e : world_->sink("Alice")->events) {
    gmcp |= e.name == "Arcade.Frame" && e.json == "{\"roll\":42}";
  }
  EXPECT_TRUE(gmcp);
  EXPECT_THAT(world_->sink("Bob")->Take(), Not(HasSubstr("roll")));
}

}  // namespace
}  // namespace telos::world
