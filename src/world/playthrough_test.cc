// A content test of the shipped world (content/): a new character plays from level 1 to level
// 10 on the manual clock, as a player would: chooses a race and class, takes the club and cloak
// from the cloakroom, learns spells from the sergeant, fights with them, buys a sword, and
// completes the quests of the town and the forest (the wolves' again and again, as it is
// repeatable) until level 10. The driver decides as a player would, from what it sees (its
// own vitals, who is in the room) and a map of the exits; the assertions are on the text the
// player is sent. A change to the content that makes the path impossible (a quest gone, a
// trainer moved, a class that cannot survive the wolves) fails here with the transcript's tail.
#include <deque>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "world_test_util.h"
#include "zone_core.h"

namespace telos::world {
namespace {

using ::testing::HasSubstr;
using testing::TestWorld;

struct Vitals {
  bool present = false;
  int level = 0;
  int64_t exp = 0;
  int hp = 0, max_hp = 0, mana = 0, max_mana = 0;
  bool fighting = false;
  Ref room;
};

class Player {
 public:
  Player(TestWorld& world, std::string name) : world_(world), name_(std::move(name)) {
    key_ = Lower(name_);
    for (const ZoneDef& zone : world.pack->zones) {
      for (const RoomDef& room : zone.rooms) {
        Ref from{zone.id, room.id};
        for (const ExitDef& exit : room.exits) exits_[from].push_back({exit.dir, exit.to});
      }
    }
  }

  std::string Do(const std::string& line) {
    std::string out = world_.Do(name_, line);
    Note("> " + line + "\n" + out);
    return out;
  }

  // Runs `count` heartbeats and returns what the player was sent meanwhile.
  std::string Beat(int count) {
    world_.Beat(count);
    world_.Run();
    std::string out = world_.sink(name_)->Take();
    if (!out.empty()) Note(out);
    return out;
  }

  Vitals Me() {
    Vitals v;
    std::optional<std::string> zone_id = world_.host->ZoneOf(key_);
    if (!zone_id) return v;
    auto zone = world_.host->FindZone(*zone_id);
    if (zone == nullptr) return v;
    Status status = zone->Inspect([&](const ZoneCore& core) {
      const Actor* me = core.FindPlayer(key_);
      if (me == nullptr) return;
      v.present = true;
      v.level = me->level;
      v.exp = me->exp;
      v.hp = me->hp;
      v.max_hp = me->max_hp;
      v.mana = me->mana;
      v.max_mana = me->max_mana;
      v.fighting = me->fighting != 0;
      if (me->room >= 0) v.room = core.rooms()[static_cast<size_t>(me->room)].ref;
    });
    world_.Run();
    EXPECT_TRUE(status.ok());
    return v;
  }

  // The rooms of `zone_id` holding a live mob made from `mob`.
  std::vector<Ref> RoomsWith(const std::string& zone_id, const std::string& mob) {
    std::vector<Ref> found;
    auto zone = world_.host->FindZone(zone_id);
    if (zone == nullptr) return found;
    Status status = zone->Inspect([&](const ZoneCore& core) {
      for (const RoomState& room : core.rooms()) {
        for (const Actor* actor : room.actors) {
          if (!actor->is_player && actor->def->ref.id == mob && !actor->removed) {
            found.push_back(room.ref);
            break;
          }
        }
      }
    });
    world_.Run();
    EXPECT_TRUE(status.ok());
    return found;
  }

  // Fights until no one fights the player: a cleric casts cause wounds while it has mana to
  // spare, cures itself when hurt, and flees when close to death. False if the player died.
  bool FightOn() {
    for (int round = 0; round < 4000; ++round) {
      Vitals v = Me();
      if (!v.present) return false;
      if (!v.fighting) return true;
      if (v.hp * 10 < v.max_hp * 2) {
        Do("flee");
      } else if (v.hp * 2 < v.max_hp && v.mana >= 10) {
        Do("cast cure");
      } else if (v.mana >= 20) {
        Do("cast cause");
      }
      std::string seen = Beat(1);
      if (seen.find("You have been KILLED!") != std::string::npos) {
        ++deaths_;
        return false;
      }
    }
    ADD_FAILURE() << "a fight never ended" << Tail();
    return false;
  }

  // Rests to full hit points and mana; a fight that finds the player is fought first.
  void Rest() {
    Do("rest");
    for (int i = 0; i < 400; ++i) {
      Vitals v = Me();
      if (v.fighting) {
        FightOn();
        Do("rest");
      }
      if (v.hp >= v.max_hp && v.mana >= v.max_mana) break;
      Beat(20);
    }
    Do("stand");
  }

  // Walks to `to` by the shortest way around `avoid`, fighting whatever attacks on the way.
  bool WalkTo(const Ref& to, const std::set<std::string>& avoid = {}) {
    for (int steps = 0; steps < 60; ++steps) {
      Vitals v = Me();
      if (!v.present) return false;
      if (v.fighting && !FightOn()) return false;
      if (v.room == to) return true;
      std::optional<std::string> dir = NextStep(v.room, to, avoid);
      if (!dir) {
        ADD_FAILURE() << "no way from " << v.room.ToString() << " to " << to.ToString() << Tail();
        return false;
      }
      Do("go " + *dir);
    }
    ADD_FAILURE() << "lost on the way to " << to.ToString() << Tail();
    return false;
  }

  // Kills one `keyword` in this room; false if it was not here or the player died.
  bool Kill(const std::string& keyword) {
    std::string out = Do("kill " + keyword);
    if (out.find("They are not here") != std::string::npos ||
        out.find("do not see") != std::string::npos) {
      return false;
    }
    return FightOn();
  }

  std::string Tail() const {
    return "\n--- the last of the transcript:\n" +
           transcript_.substr(transcript_.size() > 4000 ? transcript_.size() - 4000 : 0);
  }
  const std::string& transcript() const { return transcript_; }
  int deaths() const { return deaths_; }

 private:
  struct Exit {
    std::string dir;
    Ref to;
  };

  std::optional<std::string> NextStep(const Ref& from, const Ref& to,
                                      const std::set<std::string>& avoid) {
    std::map<Ref, std::pair<Ref, std::string>> came;  // room -> (previous, dir taken)
    std::deque<Ref> queue{from};
    came[from] = {from, ""};
    while (!queue.empty()) {
      Ref at = queue.front();
      queue.pop_front();
      if (at == to) break;
      for (const Exit& exit : exits_[at]) {
        if (came.count(exit.to) != 0 || (avoid.count(exit.to.ToString()) != 0 && exit.to != to)) {
          continue;
        }
        came[exit.to] = {at, exit.dir};
        queue.push_back(exit.to);
      }
    }
    if (came.count(to) == 0) return std::nullopt;
    Ref step = to;
    while (came[step].first != from) step = came[step].first;
    return came[step].second;
  }

  void Note(const std::string& text) { transcript_ += text + "\n"; }

  TestWorld& world_;
  std::string name_;
  std::string key_;
  std::map<Ref, std::vector<Exit>> exits_;
  std::string transcript_;
  int deaths_ = 0;
};

const std::set<std::string> kForestDangers = {"forest:beehive_oak", "forest:spider_thicket",
                                              "forest:wolf_den", "forest:bandit_camp"};

TEST(Playthrough, ADwarfClericReachesLevelTenThroughTheShippedContent) {
  TestWorld world(std::filesystem::path(TELOS_SOURCE_DIR) / "content", 7);
  world.Login("Tess")->Take();
  Player tess(world, "Tess");
  const Ref watch_house{"town", "watch_house"};

  // Creation: the race and class a new character chooses.
  EXPECT_THAT(tess.Do("choose dwarf cleric"), HasSubstr("You are now Dwarf, Cleric"));
  EXPECT_THAT(tess.Do("score"), HasSubstr("Cleric"));
  // The cloakroom's club and cloak.
  tess.WalkTo({"lobby", "cloakroom"});
  tess.Do("get club");
  EXPECT_THAT(tess.Do("wield club"), HasSubstr("club"));
  tess.Do("get cloak");
  tess.Do("wear cloak");

  // The sergeant teaches and sends new blood round the town.
  ASSERT_TRUE(tess.WalkTo(watch_house));
  EXPECT_THAT(tess.Do("practice cure"), HasSubstr("teaches you cure light"));
  EXPECT_THAT(tess.Do("practice cause"), HasSubstr("teaches you cause wounds"));
  EXPECT_THAT(tess.Do("quest accept finding"), HasSubstr("You take the quest 'Finding Your Feet'"));
  ASSERT_TRUE(tess.WalkTo({"town", "chapel"}));
  EXPECT_THAT(tess.Do("say hello, Mother"), HasSubstr("(1/1)"));
  ASSERT_TRUE(tess.WalkTo({"town", "counting_house"}));
  ASSERT_TRUE(tess.WalkTo(watch_house));
  EXPECT_THAT(tess.Do("quest complete"), HasSubstr("You complete the quest 'Finding Your Feet'!"));

  // The innkeeper's rats, fought in the cellar with the club and cause wounds.
  const Ref tavern{"town", "tavern"};
  ASSERT_TRUE(tess.WalkTo(tavern));
  EXPECT_THAT(tess.Do("quest accept rats"), HasSubstr("You take the quest 'Rats in the Cellar'"));
  bool rats_done = false;
  for (int trip = 0; trip < 20 && !rats_done; ++trip) {
    tess.Rest();
    tess.Do("down");
    tess.FightOn();
    if (!tess.Me().present) break;
    if (tess.Me().room != tavern) tess.WalkTo(tavern);
    rats_done = tess.Do("quest info rats").find("(3/3)") != std::string::npos;
    if (!rats_done) tess.Beat(4 * 60 * 5);  // the cellar fills again
  }
  ASSERT_TRUE(rats_done) << tess.Tail();
  EXPECT_THAT(tess.Do("quest complete rats"), HasSubstr("You receive a minor healing draught."));
  EXPECT_GE(tess.Me().level, 2) << tess.Tail();

  // A sword from the smith.
  ASSERT_TRUE(tess.WalkTo({"town", "smithy"}));
  EXPECT_THAT(tess.Do("buy short"), HasSubstr("short sword"));
  tess.Do("wield sword");

  // Glowcaps from the Greywood for the alchemist.
  const Ref alchemist{"town", "alchemist"};
  ASSERT_TRUE(tess.WalkTo(alchemist));
  EXPECT_THAT(tess.Do("quest accept glowcaps"), HasSubstr("You take the quest 'Glowcaps"));
  ASSERT_TRUE(tess.WalkTo({"forest", "mushroom_ring"}, kForestDangers));
  tess.Do("get glowcap");
  tess.Do("get glowcap");
  ASSERT_TRUE(tess.WalkTo(alchemist, kForestDangers));
  std::string glowcaps = tess.Do("quest complete glowcaps");
  EXPECT_THAT(glowcaps, HasSubstr("You complete the quest 'Glowcaps for the Alchemist'!"));
  EXPECT_THAT(glowcaps, HasSubstr("You receive 250 experience."));
  tess.Rest();

  // The hermit's wolves, again and again, until level 10.
  const Ref hut{"forest", "hermit_hut"};
  ASSERT_TRUE(tess.WalkTo(hut, kForestDangers));
  int rounds = 0;
  for (int attempt = 0; attempt < 200 && tess.Me().level < 10; ++attempt) {
    ASSERT_TRUE(tess.Me().present) << tess.Tail();
    if (tess.Me().room != hut) {
      ASSERT_TRUE(tess.WalkTo(hut, kForestDangers));
    }
    std::string taken = tess.Do("quest accept wolves");
    if (taken.find("You take the quest") == std::string::npos &&
        taken.find("already on that quest") == std::string::npos) {
      ADD_FAILURE() << "the hermit gave no quest" << tess.Tail();
      break;
    }
    // Two wolves, wherever they roam, resting in the hut when hurt.
    while (tess.Do("quest info wolves").find("(2/2)") == std::string::npos) {
      std::vector<Ref> wolves = tess.RoomsWith("forest", "grey_wolf");
      if (wolves.empty()) {
        tess.Beat(4 * 60);  // wait a minute in the hut for the forest to reset
        continue;
      }
      if (!tess.WalkTo(wolves.front(), kForestDangers)) break;
      tess.Kill("wolf");
      tess.WalkTo(hut, kForestDangers);
      tess.Rest();
    }
    std::string done = tess.Do("quest complete wolves");
    if (done.find("You complete the quest 'Wolves of the Greywood'!") != std::string::npos) {
      ++rounds;
    }
  }
  EXPECT_GE(rounds, 1);
  Vitals end = tess.Me();
  EXPECT_GE(end.level, 10) << tess.Tail();
  EXPECT_THAT(tess.transcript(), HasSubstr("You are now level 10!"));
  EXPECT_THAT(tess.transcript(), HasSubstr("Your cause wounds hits"));
  EXPECT_THAT(tess.transcript(), HasSubstr("You feel better."));
  EXPECT_THAT(tess.Do("score"), HasSubstr("level 10"));
  std::string spells = tess.Do("spells");
  EXPECT_THAT(spells, HasSubstr("cure light"));
  RecordProperty("deaths", tess.deaths());
  RecordProperty("wolf_rounds", rounds);
}

}  // namespace
}  // namespace telos::world
