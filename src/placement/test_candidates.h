// Builders for requests and candidates shared by the placement unit tests.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "telos/placement/types.h"

namespace telos::placement::testing {

inline constexpr int32_t kTestSoftCap = 100;
inline constexpr int32_t kTestHardCap = 120;
inline constexpr PlayerId kAsker = 1;

// A request that every MatchingCandidate passes.
inline PlacementRequest BaseRequest() {
  PlacementRequest request;
  request.player = kAsker;
  request.map = "arena";
  request.region = "eu-west";
  request.build = "b100";
  request.content = "c7";
  request.locale = "en";
  return request;
}

// A ready, public instance of the request's map with no term applying: empty (below the fill
// band), young, another locale.
inline Candidate MatchingCandidate(std::string id, int32_t players = 0) {
  Candidate c;
  c.instance_id = id;
  c.endpoint = "10.0.0.9:" + std::to_string(7000 + static_cast<int>(id.size()));
  c.map = "arena";
  c.region = "eu-west";
  c.build = "b100";
  c.content = "c7";
  c.locale = "fr";
  c.state = InstanceState::kReady;
  c.player_count = players;
  c.soft_cap = kTestSoftCap;
  c.hard_cap = kTestHardCap;
  c.age_ms = 0;
  return c;
}

// Adds players to a candidate, keeping `players` sorted and `player_count` in step.
inline void AddPlayers(Candidate& c, std::vector<PlayerId> ids) {
  c.players.insert(c.players.end(), ids.begin(), ids.end());
  std::sort(c.players.begin(), c.players.end());
  c.players.erase(std::unique(c.players.begin(), c.players.end()), c.players.end());
  c.player_count = std::max<int32_t>(c.player_count, static_cast<int32_t>(c.players.size()));
}

}  // namespace telos::placement::testing
