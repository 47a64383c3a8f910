// Range checks for FleetConfig.
#include <string>

#include "telos/base/limits.h"
#include "telos/placement/map_fleet.h"

namespace telos::placement {
namespace {

constexpr int64_t kFleetDurationMsMax = limits::kFleetDurationMsMax;
constexpr int64_t kPctMax = 100;

Status CheckRange(std::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value < min || value > max) {
    return Status::InvalidArgument("fleet: " + std::string(field) + " = " + std::to_string(value) +
                                   " must be between " + std::to_string(min) + " and " +
                                   std::to_string(max));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateFleetConfig(const FleetConfig& c) {
  TELOS_RETURN_IF_ERROR(CheckRange("spawn_lead_ms", c.spawn_lead_ms, 0, kFleetDurationMsMax));
  TELOS_RETURN_IF_ERROR(
      CheckRange("spawn_debounce_ms", c.spawn_debounce_ms, 0, kFleetDurationMsMax));
  TELOS_RETURN_IF_ERROR(CheckRange("rate_window_ms", c.rate_window_ms, 1, kFleetDurationMsMax));
  TELOS_RETURN_IF_ERROR(
      CheckRange("rate_span_floor_ms", c.rate_span_floor_ms, 1, c.rate_window_ms));
  TELOS_RETURN_IF_ERROR(CheckRange("merge_below_pct", c.merge_below_pct, 0, kPctMax));
  TELOS_RETURN_IF_ERROR(CheckRange("merge_dwell_ms", c.merge_dwell_ms, 0, kFleetDurationMsMax));
  const auto instances_max = static_cast<int64_t>(limits::kInstancesPerMapMax);
  TELOS_RETURN_IF_ERROR(CheckRange("instances_min", c.instances_min, 1, instances_max));
  TELOS_RETURN_IF_ERROR(
      CheckRange("instances_max", c.instances_max, c.instances_min, instances_max));
  return Status::Ok();
}

}  // namespace telos::placement
