// Argument checks shared by every Directory backend, so that both refuse exactly the same input.
// Private to the directory module.
#pragma once

#include <cstdint>
#include <string_view>

#include "telos/base/status.h"
#include "telos/directory/directory.h"

namespace telos::directory::internal {

// kInvalidArgument unless id is 1..kIdBytesMax bytes with no control characters. `what` names
// the argument in the message.
Status CheckId(std::string_view what, std::string_view id);
// Like CheckId, but an empty value is allowed (an optional nonce or zone).
Status CheckOptionalId(std::string_view what, std::string_view id);
// kInvalidArgument unless kTtlMsMin <= ttl_ms <= kTtlMsMax.
Status CheckTtl(int64_t ttl_ms);
// kInvalidArgument unless 0 < epoch < 2^53 (the range a Lua number holds exactly).
Status CheckEpoch(uint64_t epoch);
// kInvalidArgument unless 0 <= amount <= kReservationAmountMax (and > 0 when `positive`).
Status CheckAmount(int64_t amount, bool positive);
Status CheckPlacement(const Placement& placement);
Status CheckOccupancy(std::string_view shard, const std::vector<ZoneCount>& zones);
Status CheckDrainRequest(const DrainTargetRequest& request);

}  // namespace telos::directory::internal
