// Weights: the points each named score term is worth, as data.
//
// The defaults are the house tuning (see the constants below). A deployment may override any of
// them with a small TOML file whose keys are the field names of Weights, for example:
//
//   party_points = 12000
//   guild_members_max = 4
//
// Keys that are absent keep their defaults. An unknown key, a value that is not an integer, or a
// value out of range is an InvalidArgument naming the source, the line and the key.
//
// One rule is enforced rather than merely defaulted: the party term must be worth more than every
// other positive term at its maximum put together. The party pull is how "join your friend"
// works; a party that could lose to a full guild would need a separate join feature.
//
// Thread safety: plain values; ParseWeights and LoadWeightsFile are safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::placement {

// The named terms of the score, in the order explanations list them.
enum class Term : uint8_t { kParty, kGuild, kFriends, kLocale, kFill, kOverfull, kAge, kAntiflap };
inline constexpr size_t kTermCount = 8;

// "party", "guild", "friends", "locale", "fill", "overfull", "age", "antiflap".
std::string_view TermName(Term term);

inline constexpr int64_t kDefaultPartyPoints = 10'000;
inline constexpr int64_t kDefaultGuildPointsPerMember = 400;
inline constexpr int64_t kDefaultGuildMembersMax = 5;
inline constexpr int64_t kDefaultFriendPointsPerFriend = 200;
inline constexpr int64_t kDefaultFriendsMax = 5;
inline constexpr int64_t kDefaultLocalePoints = 300;
inline constexpr int64_t kDefaultFillPoints = 250;
inline constexpr int64_t kDefaultFillBandLowPct = 40;
inline constexpr int64_t kDefaultFillBandHighPct = 80;
inline constexpr int64_t kDefaultOverfullPointsPerPct = -40;
inline constexpr int64_t kDefaultAgePoints = -100;
inline constexpr int64_t kDefaultAgeMaxMs = 6LL * 60 * 60 * 1000;  // six hours
inline constexpr int64_t kDefaultAntiflapPoints = -5'000;

struct Weights {
  int64_t party_points = kDefaultPartyPoints;  // a party member is on the instance
  int64_t guild_points_per_member = kDefaultGuildPointsPerMember;
  int64_t guild_members_max = kDefaultGuildMembersMax;  // members beyond this add nothing
  int64_t friend_points_per_friend = kDefaultFriendPointsPerFriend;
  int64_t friends_max = kDefaultFriendsMax;
  int64_t locale_points = kDefaultLocalePoints;  // the instance speaks the player's language
  // Awarded while player_count is within [low, high] percent of the soft cap: preferring
  // instances that are already half full is what leaves emptying ones to be merged.
  int64_t fill_points = kDefaultFillPoints;
  int64_t fill_band_low_pct = kDefaultFillBandLowPct;
  int64_t fill_band_high_pct = kDefaultFillBandHighPct;
  // Per whole percentage point of the soft cap above fill_band_high_pct. Not positive.
  int64_t overfull_points_per_pct = kDefaultOverfullPointsPerPct;
  int64_t age_points = kDefaultAgePoints;  // once age_ms exceeds age_max_ms. Not positive.
  int64_t age_max_ms = kDefaultAgeMaxMs;
  int64_t antiflap_points = kDefaultAntiflapPoints;  // the instance in moved_off. Not positive.

  bool operator==(const Weights&) const = default;
};

// OK, or InvalidArgument naming the first field that is out of range.
Status ValidateWeights(const Weights& weights);

// The sum of every positive term other than party at its maximum; the party term must exceed it.
int64_t MaxNonPartyPoints(const Weights& weights);

// Parses TOML text over the defaults and validates the result. `source` names the text in
// error messages (a file name, or "<string>").
Result<Weights> ParseWeights(std::string_view toml_text, std::string_view source);

// Reads and parses a weights file. NotFound if it cannot be read; InvalidArgument if it is larger
// than limits::kPlacementWeightsFileBytesMax or does not parse.
Result<Weights> LoadWeightsFile(const std::filesystem::path& path);

}  // namespace telos::placement
