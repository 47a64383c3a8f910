// Seeded simulations of the rebalance planner on a manual clock (rebalance_sim.h): skewed fleets
// converge, oscillating load does not make it thrash, colocation groups stay together, draining
// shards are never targets, and a seed always replays the same plans. Every round of every run
// also checks each plan's rules (RebalanceSim::Check). A failure names its seed;
// TELOS_DIRECTOR_SEED=<seed> replays exactly that run.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rebalance_sim.h"

namespace telos::director::sim {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kMarginPlayers = kRebalanceMarginPlayersDefault;

std::vector<uint64_t> Seeds(uint64_t count) {
  if (const char* env = std::getenv("TELOS_DIRECTOR_SEED"); env != nullptr && *env != '\0') {
    return {std::strtoull(env, nullptr, 10)};
  }
  std::vector<uint64_t> seeds;
  for (uint64_t s = 1; s <= count; ++s) seeds.push_back(s);
  return seeds;
}

std::string Replay(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay: TELOS_DIRECTOR_SEED=" + std::to_string(seed) +
         ")";
}

std::string ShardId(int64_t i) {
  return "world-" + std::to_string(i);
}

RebalanceConfig SimConfig(Random& random) {
  RebalanceConfig config;  // the defaults, with 1-6 moves in flight
  config.moves_in_flight_max = random.Uniform(1, 6);
  return config;
}

struct Skew {
  bool rolling_shard = false;   // one more, draining, shard from the start
  bool rollout_midway = false;  // a shard starts draining during the run
  int64_t grouped_pct = 15;     // of the zones, roughly, in colocation groups
};

// A fleet of 2-6 shards with 90% of its zones on the first. Every zone has no players or more
// than half the margin, so the planner's own bound holds (see SkewedStartsConverge...).
std::unique_ptr<RebalanceSim> SkewedFleet(uint64_t seed, Skew skew) {
  Random setup(seed);
  auto sim = std::make_unique<RebalanceSim>(setup.Next(), SimConfig(setup));
  const int64_t shards = setup.Uniform(2, 6);
  for (int64_t i = 0; i < shards; ++i) sim->AddShard(ShardId(i));
  if (skew.rolling_shard) sim->AddShard("rolling", /*draining=*/true);
  const int64_t zones = setup.Uniform(3 * shards, 12 * shards);
  std::vector<std::string> ungrouped;
  for (int64_t z = 0; z < zones; ++z) {
    const std::string id = "zone-" + std::to_string(z);
    int64_t players = setup.Uniform(kMarginPlayers / 2 + 1, 60);
    if (setup.Chance(0.15)) players = 0;                      // an empty wilderness
    if (setup.Chance(0.1)) players = setup.Uniform(60, 150);  // a busy town
    std::string shard = setup.Chance(0.9) ? ShardId(0) : ShardId(setup.Uniform(0, shards - 1));
    if (skew.rolling_shard && setup.Chance(0.05)) shard = "rolling";
    sim->AddZone(id, shard, players);
    ungrouped.push_back(id);
  }
  {
    const int64_t groups = setup.Uniform(0, zones * skew.grouped_pct / 300);
    for (int64_t g = 0; g < groups && ungrouped.size() >= 4; ++g) {
      std::vector<std::string> members;
      const int64_t size = setup.Uniform(2, 4);
      for (int64_t m = 0; m < size; ++m) {
        const auto pick =
            static_cast<size_t>(setup.Uniform(0, static_cast<int64_t>(ungrouped.size()) - 1));
        members.push_back(ungrouped[pick]);
        ungrouped.erase(ungrouped.begin() + static_cast<std::ptrdiff_t>(pick));
      }
      // Related zones start on one shard, as claim-from-pool leaves them when one shard wins
      // the whole group.
      const std::string shard = sim->zones().at(members.front()).shard;
      for (const std::string& m : members) {
        sim->AddZone(m, shard, sim->zones().at(m).players);
      }
      sim->AddGroup("group-" + std::to_string(g), members);
    }
  }
  return sim;
}

// What the planner guarantees at a fixed point where every zone has no players or more than
// margin/2: no unit on the fullest non-draining shard cuts its gap g to the emptiest by more
// than the margin, and a unit of w > margin/2 players cuts min(2w, 2(g - w)) when w < g, so
// every such unit has w >= g - margin/2. Hence g <= (its lightest unit) + margin/2.
int64_t FixedPointSpreadBound(const RebalanceSim& sim) {
  std::map<std::string, int64_t> load;
  for (const auto& [id, draining] : sim.shards()) {
    if (!draining) load[id] = 0;
  }
  for (const auto& [id, zone] : sim.zones()) {
    if (load.contains(zone.shard)) load[zone.shard] += zone.players;
  }
  std::string fullest;
  for (const auto& [id, players] : load) {
    if (fullest.empty() || players > load[fullest]) fullest = id;
  }
  std::map<std::string, int64_t> units;  // unit name -> players, on the fullest shard
  for (const auto& [id, zone] : sim.zones()) {
    if (zone.shard != fullest) continue;
    units[zone.group < 0 ? id : "group " + std::to_string(zone.group)] += zone.players;
  }
  int64_t lightest = 0;
  for (const auto& [name, players] : units) {
    if (players > 0 && (lightest == 0 || players < lightest)) lightest = players;
  }
  return lightest + kMarginPlayers / 2;
}

// Runs a skewed fleet to its fixed point (a rollout may begin in its first ten minutes).
// Returns a failure message, or an empty string.
std::string ConvergeOnce(uint64_t seed, Skew skew, std::unique_ptr<RebalanceSim>* keep = nullptr) {
  std::unique_ptr<RebalanceSim> sim = SkewedFleet(seed, skew);
  if (skew.rollout_midway) {
    const int64_t at_ms = sim->random().Uniform(0, 10 * kMinuteMs);
    while (sim->now_ms() < at_ms && !sim->failure()) sim->Round();
    // The last shard starts draining; world-0 and world-1 stay, so two remain to balance.
    for (int64_t i = 5; i >= 2; --i) {
      if (sim->HasShard(ShardId(i))) {
        sim->SetDraining(ShardId(i), true);
        break;
      }
    }
  }
  const bool fixed = sim->RunToFixedPoint(8 * kHourMs);
  std::string failure;
  if (sim->failure()) {
    failure = *sim->failure();
  } else if (!fixed) {
    failure = "no fixed point within 8 simulated hours; " + sim->last_plan().Describe();
  } else if (const int64_t bound = FixedPointSpreadBound(*sim); sim->Spread() > bound) {
    failure = "spread " + std::to_string(sim->Spread()) + " above the bound " +
              std::to_string(bound) + "; " + sim->last_plan().Describe();
  } else if (!sim->GroupsTogether()) {
    failure = "a colocation group ended split";
  }
  if (keep != nullptr) *keep = std::move(sim);
  return failure;
}

TEST(RebalanceSimulationTest, SkewedStartsConvergeUnderTheThreshold) {
  int64_t moved = 0;
  for (uint64_t seed : Seeds(1'000)) {
    std::unique_ptr<RebalanceSim> sim;
    const std::string failure = ConvergeOnce(seed, Skew{}, &sim);
    ASSERT_TRUE(failure.empty()) << Replay(seed) << ": " << failure;
    moved += sim->moves_started();
  }
  EXPECT_GT(moved, 0);
}

TEST(RebalanceSimulationTest, NeverTargetsADrainingShardEvenMidRollout) {
  for (uint64_t seed : Seeds(400)) {
    const std::string failure =
        ConvergeOnce(seed, Skew{.rolling_shard = true, .rollout_midway = true});
    ASSERT_TRUE(failure.empty()) << Replay(seed) << ": " << failure;
  }
}

TEST(RebalanceSimulationTest, ColocationGroupsStayTogetherEveryRound) {
  // Half the zones in groups of 2-4; the simulation checks after every round that no group
  // came apart, and every move that it carries whole parts.
  int64_t grouped_moves = 0;
  for (uint64_t seed : Seeds(400)) {
    std::unique_ptr<RebalanceSim> sim;
    const std::string failure = ConvergeOnce(seed, Skew{.grouped_pct = 50}, &sim);
    ASSERT_TRUE(failure.empty()) << Replay(seed) << ": " << failure;
    for (const std::string& line : sim->trace()) {
      grouped_moves += line.find("(colocation group") != std::string::npos ? 1 : 0;
    }
  }
  EXPECT_GT(grouped_moves, 0);  // groups did move, whole
}

TEST(RebalanceSimulationTest, TheSameSeedGivesTheSamePlans) {
  for (uint64_t seed : Seeds(150)) {
    std::unique_ptr<RebalanceSim> first;
    std::unique_ptr<RebalanceSim> second;
    const Skew skew{.rolling_shard = true, .rollout_midway = true};
    ASSERT_TRUE(ConvergeOnce(seed, skew, &first).empty()) << Replay(seed);
    ASSERT_TRUE(ConvergeOnce(seed, skew, &second).empty()) << Replay(seed);
    ASSERT_EQ(first->trace(), second->trace()) << Replay(seed);
  }
}

// ---- Oscillating load: players drift between the shards' zones and back.

// An integer triangle wave in [-1000, 1000] with the given period, so that a seed replays
// bit for bit on any machine (no libm rounding in the loop).
int64_t Triangle(int64_t t_ms, int64_t period_ms, int64_t phase_ms) {
  const int64_t x = (t_ms + phase_ms) % period_ms;
  const int64_t half = period_ms / 2;
  return x < half ? -1000 + 2000 * x / half : 1000 - 2000 * (x - half) / half;
}

constexpr int64_t kOscillationRoundMs = 30'000;

struct OscillationRun {
  std::unique_ptr<RebalanceSim> sim;
  std::vector<int64_t> moves_per_hour;
  int64_t zones = 0;
};

// 3-5 shards, 10 zones each, balanced at the start; each shard's zones swing together, out of
// phase with the other shards', over a 15-60 minute period, with a little noise every round.
OscillationRun Oscillate(uint64_t seed, RebalanceConfig config, int64_t amplitude_pct,
                         int64_t hours) {
  Random setup(seed);
  OscillationRun run;
  run.sim = std::make_unique<RebalanceSim>(setup.Next(), config);
  RebalanceSim& sim = *run.sim;
  sim.set_round_ms(kOscillationRoundMs);
  const int64_t shards = setup.Uniform(3, 5);
  const int64_t period_ms = setup.Uniform(15, 60) * kMinuteMs;
  struct Wave {
    std::string zone;
    int64_t base = 0;
    int64_t amplitude = 0;
    int64_t phase_ms = 0;
  };
  std::vector<Wave> waves;
  for (int64_t s = 0; s < shards; ++s) {
    sim.AddShard(ShardId(s));
    for (int64_t z = 0; z < 10; ++z) {
      Wave wave{"zone-" + std::to_string(s) + "-" + std::to_string(z), setup.Uniform(10, 40), 0,
                period_ms * s / shards};
      wave.amplitude = wave.base * amplitude_pct / 100;
      sim.AddZone(wave.zone, ShardId(s), wave.base);
      waves.push_back(wave);
      ++run.zones;
    }
  }
  for (int64_t round = 0; round < hours * kHourMs / kOscillationRoundMs; ++round) {
    for (const Wave& w : waves) {
      const int64_t swing = w.amplitude * Triangle(sim.now_ms(), period_ms, w.phase_ms) / 1000;
      sim.SetPlayers(w.zone, w.base + swing + sim.random().Uniform(-2, 2));
    }
    sim.Round();
    if (sim.failure()) break;
  }
  run.moves_per_hour = sim.moves_per_hour();
  if (std::getenv("TELOS_DIRECTOR_PRINT") != nullptr) {
    std::string line = "seed " + std::to_string(seed) + " margin " +
                       std::to_string(config.margin_players) + " amp " +
                       std::to_string(amplitude_pct) + " shards " + std::to_string(shards) +
                       " period_min " + std::to_string(period_ms / kMinuteMs) + ":";
    for (int64_t m : run.moves_per_hour) line += " " + std::to_string(m);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  return run;
}

// Under swings of 80% every 15-60 minutes a zone moves at most twice an hour on average (the
// cooldown alone would allow twelve), and noise of a few players moves next to nothing once the
// fleet has settled.
constexpr int64_t kOscillationMovesPerZonePerHourMax = 2;
constexpr int64_t kNoiseMovesPerHourMax = 2;

TEST(RebalanceSimulationTest, OscillatingLoadDoesNotThrash) {
  int64_t total = 0;
  for (uint64_t seed : Seeds(25)) {
    OscillationRun run = Oscillate(seed, RebalanceConfig{}, /*amplitude_pct=*/80, /*hours=*/4);
    ASSERT_FALSE(run.sim->failure()) << Replay(seed) << ": " << *run.sim->failure();
    for (size_t hour = 0; hour < run.moves_per_hour.size(); ++hour) {
      ASSERT_LE(run.moves_per_hour[hour], kOscillationMovesPerZonePerHourMax * run.zones)
          << Replay(seed) << " in hour " << hour;
      total += run.moves_per_hour[hour];
    }
  }
  EXPECT_GT(total, 0);  // the swings are big enough that balancing them is worth some moves
}

TEST(RebalanceSimulationTest, NoiseAloneMovesAlmostNothing) {
  for (uint64_t seed : Seeds(25)) {
    OscillationRun run = Oscillate(seed, RebalanceConfig{}, /*amplitude_pct=*/0, /*hours=*/3);
    ASSERT_FALSE(run.sim->failure()) << Replay(seed) << ": " << *run.sim->failure();
    for (size_t hour = 1; hour < run.moves_per_hour.size(); ++hour) {
      ASSERT_LE(run.moves_per_hour[hour], kNoiseMovesPerHourMax)
          << Replay(seed) << " in hour " << hour;
    }
  }
}

TEST(RebalanceSimulationTest, WithoutHysteresisOrCooldownTheSameLoadThrashes) {
  // What the margin and the cooldown buy: the same swings with neither move far more.
  RebalanceConfig loose;
  loose.margin_players = 0;
  loose.zone_cooldown_ms = 0;
  int64_t thrashing_hours = 0;
  int64_t hours = 0;
  for (uint64_t seed : Seeds(20)) {
    OscillationRun run = Oscillate(seed, loose, /*amplitude_pct=*/80, /*hours=*/2);
    ASSERT_FALSE(run.sim->failure()) << Replay(seed) << ": " << *run.sim->failure();
    for (int64_t moves : run.moves_per_hour) {
      ++hours;
      thrashing_hours += moves > kOscillationMovesPerZonePerHourMax * run.zones ? 1 : 0;
    }
  }
  EXPECT_GT(thrashing_hours * 2, hours);
}

}  // namespace
}  // namespace telos::director::sim
