// The inputs of a placement: who is asking (PlacementRequest) and the public instances of the
// map they asked for (Candidate).
//
// Both are plain values filled in by the caller (the map's owner), which reads them from the
// directory and the instances' own reports. Nothing here holds a reference to live state, so a
// request and its candidates can be built on one thread and placed on another.
//
// Player identity is a PlayerId (the character's numeric id). Lists of players are kept
// sorted ascending so that the director can test membership without building an index for every
// call; the REQUIRES lines below say which.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace telos::placement {

using PlayerId = uint64_t;

// The life of an instance. Only kReady accepts players; kStarting is still loading (it counts as
// capacity on its way for MapFleet), kDraining is handing its players off, kGone has stopped.
enum class InstanceState : uint8_t { kStarting, kReady, kDraining, kGone };

// "starting", "ready", "draining", "gone".
std::string_view InstanceStateName(InstanceState state);

// One public instance of a map, as the map's owner last saw it.
//
// REQUIRES: soft_cap > 0 and hard_cap >= soft_cap.
// REQUIRES: `players` and `access_list` are sorted ascending without duplicates.
struct Candidate {
  std::string instance_id;
  std::string endpoint;  // host:port the gate hands to the client
  std::string map;
  std::string region;   // latency zone, e.g. "eu-west"
  std::string build;    // server build; must equal the client's
  std::string content;  // content catalog version; must equal the client's
  std::string locale;   // the language the instance is speaking, e.g. "de"
  InstanceState state = InstanceState::kStarting;
  // Authoritative occupancy for the caps. It may exceed players.size() when arrivals are in
  // flight; `players` is only used for the social terms.
  int32_t player_count = 0;
  int32_t soft_cap = 0;  // the intended population; the fill band and overfull are relative to it
  int32_t hard_cap = 0;  // never placed beyond
  int64_t age_ms = 0;    // time since the instance became ready
  std::vector<PlayerId> access_list;  // who may enter; empty means the instance is public
  std::vector<PlayerId> players;      // who is on it now
};

// A player asking to enter a map. The social lists may be in any order and may overlap (a
// party member who is also a friend counts for both terms).
struct PlacementRequest {
  PlayerId player = 0;
  std::string map;
  std::string region;
  std::string build;    // client build
  std::string content;  // content catalog version the client has
  std::string locale;   // the player's language
  std::vector<PlayerId> party;
  std::vector<PlayerId> guild;    // online guild members
  std::vector<PlayerId> friends;  // online friends
  // The instance the player was just moved off (a drain or a merge), empty if none. Sending
  // them straight back would undo the move, so it carries the anti-flap penalty.
  std::string moved_off;
};

}  // namespace telos::placement
