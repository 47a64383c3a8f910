// Range checks for Weights, and the party-dominance rule.
#include <string>

#include "telos/base/limits.h"
#include "telos/placement/weights.h"

namespace telos::placement {
namespace {

constexpr int64_t kSocialCountCapMax = limits::kPlacementSocialCountCapMax;
constexpr int64_t kPctMax = 100;

Status OutOfRange(std::string_view field, int64_t value, std::string_view wanted) {
  return Status::InvalidArgument("weights: " + std::string(field) + " = " + std::to_string(value) +
                                 " is out of range: " + std::string(wanted));
}

Status CheckReward(std::string_view field, int64_t value) {
  if (value < 0 || value > limits::kPlacementWeightPointsAbsMax) {
    return OutOfRange(
        field, value,
        "a reward must be between 0 and " + std::to_string(limits::kPlacementWeightPointsAbsMax));
  }
  return Status::Ok();
}

Status CheckPenalty(std::string_view field, int64_t value) {
  if (value > 0 || value < -limits::kPlacementWeightPointsAbsMax) {
    return OutOfRange(field, value,
                      "a penalty must be between -" +
                          std::to_string(limits::kPlacementWeightPointsAbsMax) + " and 0");
  }
  return Status::Ok();
}

Status CheckCount(std::string_view field, int64_t value) {
  if (value < 0 || value > kSocialCountCapMax) {
    return OutOfRange(field, value, "must be between 0 and " + std::to_string(kSocialCountCapMax));
  }
  return Status::Ok();
}

}  // namespace

int64_t MaxNonPartyPoints(const Weights& w) {
  return w.guild_points_per_member * w.guild_members_max +
         w.friend_points_per_friend * w.friends_max + w.locale_points + w.fill_points;
}

Status ValidateWeights(const Weights& w) {
  TELOS_RETURN_IF_ERROR(CheckReward("party_points", w.party_points));
  TELOS_RETURN_IF_ERROR(CheckReward("guild_points_per_member", w.guild_points_per_member));
  TELOS_RETURN_IF_ERROR(CheckCount("guild_members_max", w.guild_members_max));
  TELOS_RETURN_IF_ERROR(CheckReward("friend_points_per_friend", w.friend_points_per_friend));
  TELOS_RETURN_IF_ERROR(CheckCount("friends_max", w.friends_max));
  TELOS_RETURN_IF_ERROR(CheckReward("locale_points", w.locale_points));
  TELOS_RETURN_IF_ERROR(CheckReward("fill_points", w.fill_points));
  if (w.fill_band_low_pct < 0 || w.fill_band_low_pct >= w.fill_band_high_pct) {
    return OutOfRange("fill_band_low_pct", w.fill_band_low_pct,
                      "must be at least 0 and below fill_band_high_pct (" +
                          std::to_string(w.fill_band_high_pct) + ")");
  }
  if (w.fill_band_high_pct > kPctMax) {
    return OutOfRange("fill_band_high_pct", w.fill_band_high_pct, "must be at most 100");
  }
  TELOS_RETURN_IF_ERROR(CheckPenalty("overfull_points_per_pct", w.overfull_points_per_pct));
  TELOS_RETURN_IF_ERROR(CheckPenalty("age_points", w.age_points));
  if (w.age_max_ms <= 0) return OutOfRange("age_max_ms", w.age_max_ms, "must be positive");
  TELOS_RETURN_IF_ERROR(CheckPenalty("antiflap_points", w.antiflap_points));
  const int64_t others = MaxNonPartyPoints(w);
  if (w.party_points <= others) {
    return OutOfRange("party_points", w.party_points,
                      "must exceed every other reward at its maximum put together (" +
                          std::to_string(others) + "), or a party could be split");
  }
  return Status::Ok();
}

}  // namespace telos::placement
