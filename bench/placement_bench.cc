// Placement throughput: PlacementDirector::Place over a map with N public instances, through
// both paths: plain (each candidate's `players` searched for each social player) and indexed (a
// RosterIndex built once per map update, each social player looked up once), plus the cost of
// building that index.
//
// Each instance lists kPlayersPerInstance players, dealt at random from one pool; the request
// names party members, online guild members and friends from that pool (three profiles, below),
// so the social terms do real lookups. One instance in
// ten runs another content catalog, one in twenty is full and one in twenty is still starting,
// so the filters exclude some. items_per_second is placements per second on one core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "telos/base/random.h"
#include "telos/placement/director.h"
#include "telos/placement/explain.h"
#include "telos/placement/roster_index.h"

namespace telos::placement {
namespace {

constexpr uint64_t kSeed = 0xbe9c'0009;
constexpr int32_t kSoftCap = 100;
constexpr int32_t kHardCap = 120;
constexpr int32_t kPlayersPerInstance = 60;
// How many of the player's party, online guild and online friends the request names.
struct SocialProfile {
  const char* name;
  size_t party;
  size_t guild;
  size_t friends;
};
constexpr SocialProfile kProfiles[] = {
    {"alone", 0, 0, 0},    // no party, no guild or friends online
    {"light", 2, 5, 5},    // a small party and a few guildmates and friends online
    {"heavy", 4, 12, 10},  // a full social graph online: 26 players to look for
};
constexpr int kContentMismatchEvery = 10;
constexpr int kFullEvery = 20;
constexpr int kStartingEvery = 20;

struct Map {
  PlacementRequest request;
  std::vector<Candidate> candidates;
};

Map BuildMap(int instances, const SocialProfile& profile) {
  Random random(kSeed);
  Map map;
  // Character ids are not clustered by instance: deal a shuffled pool out to the instances.
  std::vector<PlayerId> everyone;
  for (int i = 0; i < instances * kPlayersPerInstance; ++i) {
    everyone.push_back(static_cast<PlayerId>(random.Uniform(1, int64_t{1} << 40)));
  }
  size_t dealt = 0;
  for (int i = 0; i < instances; ++i) {
    Candidate c;
    c.instance_id = "3a44f180-0000-4000-8000-" + std::to_string(100'000'000'000 + i);
    c.endpoint = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":7777";
    c.map = "arena";
    c.region = "eu-west";
    c.build = "b100";
    c.content = (i % kContentMismatchEvery == 3) ? "c6" : "c7";
    c.locale = (i % 3 == 0) ? "en" : "de";
    c.state = (i % kStartingEvery == 7) ? InstanceState::kStarting : InstanceState::kReady;
    c.soft_cap = kSoftCap;
    c.hard_cap = kHardCap;
    c.age_ms = random.Uniform(0, kDefaultAgeMaxMs * 2);
    c.players.assign(everyone.begin() + static_cast<std::ptrdiff_t>(dealt),
                     everyone.begin() + static_cast<std::ptrdiff_t>(dealt + kPlayersPerInstance));
    dealt += kPlayersPerInstance;
    std::sort(c.players.begin(), c.players.end());
    c.players.erase(std::unique(c.players.begin(), c.players.end()), c.players.end());
    // The count the caps see; the listed players are those the social terms can find.
    c.player_count =
        (i % kFullEvery == 11) ? kHardCap : static_cast<int32_t>(random.Uniform(10, 110));
    map.candidates.push_back(std::move(c));
  }
  auto pick = [&](size_t count) {
    std::vector<PlayerId> out;
    for (size_t k = 0; k < count; ++k) {
      out.push_back(everyone[static_cast<size_t>(
          random.Uniform(0, static_cast<int64_t>(everyone.size()) - 1))]);
    }
    return out;
  };
  map.request.player = 1;
  map.request.map = "arena";
  map.request.region = "eu-west";
  map.request.build = "b100";
  map.request.content = "c7";
  map.request.locale = "en";
  map.request.party = pick(profile.party);
  map.request.guild = pick(profile.guild);
  map.request.friends = pick(profile.friends);
  map.request.moved_off = map.candidates[0].instance_id;
  return map;
}

const SocialProfile& ProfileOf(const benchmark::State& state) {
  return kProfiles[static_cast<size_t>(state.range(1))];
}

// Args: candidates, social profile (0 alone, 1 light, 2 heavy).
void PlacementArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"candidates", "social"});
  for (int64_t profile = 0; profile < 3; ++profile) b->Args({100, profile});
  b->Args({10, 1});
  b->Args({256, 1});
}

// ---- The plain path: no roster index.

// A fresh decision per call, as a map's owner would make it.
void BM_Place(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const PlacementDirector director;
  for (auto _ : state) {
    PlacementDecision decision = director.Place(map.request, map.candidates);
    benchmark::DoNotOptimize(decision);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_Place)->Apply(PlacementArgs);

// Reusing one decision's storage.
void BM_PlaceReusingDecision(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const PlacementDirector director;
  PlacementDecision decision;
  for (auto _ : state) {
    director.Place(map.request, map.candidates, decision);
    benchmark::DoNotOptimize(decision);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_PlaceReusingDecision)->Args({100, 1});

// Placing and keeping the explanation, as the decision memory does for every placement.
void BM_PlaceAndExplain(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const PlacementDirector director;
  for (auto _ : state) {
    const PlacementDecision decision = director.Place(map.request, map.candidates);
    Explanation explanation = Explain(map.request, map.candidates, decision);
    benchmark::DoNotOptimize(explanation);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_PlaceAndExplain)->Args({100, 1});

// ---- The indexed path: the roster index is built once, as the map's owner does per update.

void BM_PlaceIndexed(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const RosterIndex roster(map.candidates);
  const PlacementDirector director;
  for (auto _ : state) {
    PlacementDecision decision = director.Place(map.request, map.candidates, roster);
    benchmark::DoNotOptimize(decision);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_PlaceIndexed)->Apply(PlacementArgs);

void BM_PlaceIndexedReusingDecision(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const RosterIndex roster(map.candidates);
  const PlacementDirector director;
  PlacementDecision decision;
  for (auto _ : state) {
    director.Place(map.request, map.candidates, roster, decision);
    benchmark::DoNotOptimize(decision);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_PlaceIndexedReusingDecision)->Args({100, 1});

void BM_PlaceIndexedAndExplain(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), ProfileOf(state));
  const RosterIndex roster(map.candidates);
  const PlacementDirector director;
  for (auto _ : state) {
    const PlacementDecision decision = director.Place(map.request, map.candidates, roster);
    Explanation explanation = Explain(map.request, map.candidates, decision);
    benchmark::DoNotOptimize(explanation);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(ProfileOf(state).name);
}
BENCHMARK(BM_PlaceIndexedAndExplain)->Args({100, 1});

// Building the index from the candidates: the owner's cost per map update. items_per_second is
// index builds per second; every instance lists kPlayersPerInstance players.
void BM_BuildRosterIndex(benchmark::State& state) {
  const Map map = BuildMap(static_cast<int>(state.range(0)), kProfiles[0]);
  for (auto _ : state) {
    RosterIndex roster(map.candidates);
    benchmark::DoNotOptimize(roster);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuildRosterIndex)->ArgName("candidates")->Arg(10)->Arg(100)->Arg(256);

}  // namespace
}  // namespace telos::placement

BENCHMARK_MAIN();
