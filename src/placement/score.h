// The score: a sum of named terms. Private to the placement library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "telos/placement/decision.h"
#include "telos/placement/roster_index.h"
#include "telos/placement/types.h"
#include "telos/placement/weights.h"

namespace telos::placement {

// The request's party, guild and friends as one sorted list of distinct players, each tagged
// with the lists it came from, without the requester. Built once per placement so that a player
// named on several lists costs one search per candidate (plain path) or one roster lookup in
// all (indexed path).
class SocialSets {
 public:
  static constexpr uint8_t kParty = 1 << 0;
  static constexpr uint8_t kGuild = 1 << 1;
  static constexpr uint8_t kFriend = 1 << 2;

  struct Member {
    PlayerId id;
    uint8_t lists;  // kParty | kGuild | kFriend
  };

  explicit SocialSets(const PlacementRequest& request);

  std::span<const Member> members() const { return members_; }

 private:
  std::vector<Member> members_;  // sorted by id
};

// Whether `id` is in `sorted`. A branch-free binary search: the loop runs log2(n) times for
// every id, so it does not stall on mispredicted comparisons.
bool SortedContains(std::span<const PlayerId> sorted, PlayerId id);

// How many of the request's social players are on one candidate, per list. A player on two
// lists counts in both.
struct SocialCounts {
  int64_t party = 0;
  int64_t guild = 0;
  int64_t friends = 0;

  bool operator==(const SocialCounts&) const = default;
};

// The plain path: searches `candidate.players` for every social player.
SocialCounts CountSocial(const SocialSets& social, const Candidate& candidate);

// The indexed path: the social counts of every candidate at once, from one roster lookup per
// social player. Built once per placement; the director then asks for each candidate in turn.
// The counts equal CountSocial's whenever `roster` was built from the candidates (and they have
// not changed since).
class IndexedSocialCounts {
 public:
  IndexedSocialCounts(const SocialSets& social, const RosterIndex& roster);

  // The counts of the candidate at `position`.
  // REQUIRES: positions are asked for in ascending order (skipping some is fine).
  SocialCounts Next(size_t position);

 private:
  struct Hit {
    uint32_t position;
    uint8_t lists;  // SocialSets::kParty | kGuild | kFriend
  };
  std::vector<Hit> hits_;  // sorted by position
  size_t next_ = 0;        // the first hit not yet consumed
};

// The points of every term for a candidate that passed the filters, given its social counts.
TermPoints ScoreTerms(const Weights& weights, const PlacementRequest& request,
                      const SocialCounts& social, const Candidate& candidate);

// As above, counting the social players by the plain path (CountSocial).
TermPoints ScoreTerms(const Weights& weights, const PlacementRequest& request,
                      const SocialSets& social, const Candidate& candidate);

inline int64_t SumPoints(const TermPoints& terms) {
  int64_t sum = 0;
  for (int64_t points : terms) sum += points;
  return sum;
}

// The director's ranking of two scored candidates: true when `a` beats `b`. Higher score, then
// the fuller instance, then the smaller instance id. Independent of the order candidates came in.
inline bool RanksBefore(const Verdict& verdict_a, const Candidate& a, const Verdict& verdict_b,
                        const Candidate& b) {
  if (verdict_a.score != verdict_b.score) return verdict_a.score > verdict_b.score;
  if (a.player_count != b.player_count) return a.player_count > b.player_count;
  return a.instance_id < b.instance_id;
}

}  // namespace telos::placement
