#include "score.h"

#include <algorithm>
#include <array>

#include "telos/base/assert.h"

namespace telos::placement {
namespace {

constexpr int64_t kPctScale = 100;  // fill levels are compared in percent of the soft cap

size_t Index(Term term) {
  return static_cast<size_t>(term);
}

constexpr size_t kLanes = 4;  // searches interleaved per candidate

}  // namespace

SocialSets::SocialSets(const PlacementRequest& request) {
  members_.reserve(request.party.size() + request.guild.size() + request.friends.size());
  auto add = [&](const std::vector<PlayerId>& ids, uint8_t list) {
    for (PlayerId id : ids) {
      if (id != request.player) members_.push_back(Member{id, list});
    }
  };
  add(request.party, kParty);
  add(request.guild, kGuild);
  add(request.friends, kFriend);
  std::sort(members_.begin(), members_.end(),
            [](const Member& a, const Member& b) { return a.id < b.id; });
  // Merge duplicates, keeping every list each player is on.
  size_t kept = 0;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (kept > 0 && members_[kept - 1].id == members_[i].id) {
      members_[kept - 1].lists |= members_[i].lists;
    } else {
      members_[kept++] = members_[i];
    }
  }
  members_.resize(kept);
}

bool SortedContains(std::span<const PlayerId> sorted, PlayerId id) {
  size_t n = sorted.size();
  if (n == 0) return false;
  const PlayerId* base = sorted.data();
  while (n > 1) {
    const size_t half = n / 2;
    base = (base[half] <= id) ? base + half : base;
    n -= half;
  }
  return *base == id;
}

namespace {

// The bodies of CountSocial and ScoreTerms, here so that both ScoreTerms overloads inline them:
// the director then makes one call per scored candidate on either path.
inline SocialCounts CountSocialInline(const SocialSets& social, const Candidate& candidate) {
  SocialCounts counts;
  auto tally = [&](const SocialSets::Member& member, bool present) {
    const int64_t hit = present ? 1 : 0;
    counts.party += hit & (member.lists & SocialSets::kParty);
    counts.guild += hit & ((member.lists & SocialSets::kGuild) >> 1);
    counts.friends += hit & ((member.lists & SocialSets::kFriend) >> 2);
  };
  // Searches run kLanes at a time in lockstep: each is a chain of dependent loads, and
  // interleaving independent chains keeps the core busy while one waits.
  const std::span<const SocialSets::Member> members = social.members();
  const std::span<const PlayerId> players = candidate.players;
  size_t m = 0;
  if (!players.empty()) {
    for (; m + kLanes <= members.size(); m += kLanes) {
      std::array<const PlayerId*, kLanes> base;
      base.fill(players.data());
      for (size_t n = players.size(); n > 1; n -= n / 2) {
        const size_t half = n / 2;
        for (size_t lane = 0; lane < kLanes; ++lane) {
          base[lane] = (base[lane][half] <= members[m + lane].id) ? base[lane] + half : base[lane];
        }
      }
      for (size_t lane = 0; lane < kLanes; ++lane) {
        tally(members[m + lane], *base[lane] == members[m + lane].id);
      }
    }
  }
  for (; m < members.size(); ++m) tally(members[m], SortedContains(players, members[m].id));
  return counts;
}

inline TermPoints TermsFromCounts(const Weights& weights, const PlacementRequest& request,
                                  const SocialCounts& social, const Candidate& candidate) {
  TermPoints terms{};
  const int64_t party = social.party;
  const int64_t guild = social.guild;
  const int64_t friends = social.friends;
  if (party > 0) terms[Index(Term::kParty)] = weights.party_points;
  terms[Index(Term::kGuild)] =
      weights.guild_points_per_member * std::min(guild, weights.guild_members_max);
  terms[Index(Term::kFriends)] =
      weights.friend_points_per_friend * std::min(friends, weights.friends_max);
  if (!request.locale.empty() && candidate.locale == request.locale) {
    terms[Index(Term::kLocale)] = weights.locale_points;
  }

  // Fill in percent of the soft cap, kept as integers scaled by the soft cap so that the band
  // edges are exact: fill% >= low  <=>  players * 100 >= low * soft_cap.
  const int64_t soft_cap = candidate.soft_cap;
  const int64_t filled = int64_t{candidate.player_count} * kPctScale;
  const int64_t band_low = weights.fill_band_low_pct * soft_cap;
  const int64_t band_high = weights.fill_band_high_pct * soft_cap;
  if (filled >= band_low && filled <= band_high) {
    terms[Index(Term::kFill)] = weights.fill_points;
  } else if (filled > band_high) {
    const int64_t whole_pct_over = (filled - band_high) / soft_cap;
    terms[Index(Term::kOverfull)] = weights.overfull_points_per_pct * whole_pct_over;
  }

  if (candidate.age_ms > weights.age_max_ms) terms[Index(Term::kAge)] = weights.age_points;
  if (!request.moved_off.empty() && candidate.instance_id == request.moved_off) {
    terms[Index(Term::kAntiflap)] = weights.antiflap_points;
  }
  return terms;
}

}  // namespace

SocialCounts CountSocial(const SocialSets& social, const Candidate& candidate) {
  return CountSocialInline(social, candidate);
}

IndexedSocialCounts::IndexedSocialCounts(const SocialSets& social, const RosterIndex& roster) {
  const std::span<const SocialSets::Member> members = social.members();
  hits_.reserve(members.size());
  for (const SocialSets::Member& member : members) {
    for (uint32_t position : roster.PositionsOf(member.id)) {
      hits_.push_back(Hit{position, member.lists});
    }
  }
  std::sort(hits_.begin(), hits_.end(),
            [](const Hit& a, const Hit& b) { return a.position < b.position; });
}

SocialCounts IndexedSocialCounts::Next(size_t position) {
  ASSERT(next_ == 0 || hits_[next_ - 1].position <= position,
         "IndexedSocialCounts::Next needs ascending positions");
  while (next_ < hits_.size() && hits_[next_].position < position) ++next_;
  SocialCounts counts;
  for (; next_ < hits_.size() && hits_[next_].position == position; ++next_) {
    const uint8_t lists = hits_[next_].lists;
    counts.party += lists & SocialSets::kParty;
    counts.guild += (lists & SocialSets::kGuild) >> 1;
    counts.friends += (lists & SocialSets::kFriend) >> 2;
  }
  return counts;
}

TermPoints ScoreTerms(const Weights& weights, const PlacementRequest& request,
                      const SocialCounts& social, const Candidate& candidate) {
  return TermsFromCounts(weights, request, social, candidate);
}

TermPoints ScoreTerms(const Weights& weights, const PlacementRequest& request,
                      const SocialSets& social, const Candidate& candidate) {
  return TermsFromCounts(weights, request, CountSocialInline(social, candidate), candidate);
}

}  // namespace telos::placement
