#include <string>

#include "telos/directory/directory.h"
#include "validate.h"

namespace telos::directory {

int64_t Occupancy::Total() const {
  int64_t sum = 0;
  for (const ZoneCount& z : zones) sum += z.players;
  return sum;
}

namespace internal {

namespace {
constexpr uint64_t kEpochLimit = uint64_t{1} << 53;
}  // namespace

Status CheckOptionalId(std::string_view what, std::string_view id) {
  if (id.size() > kIdBytesMax) {
    return Status::InvalidArgument(std::string(what) + " is longer than " +
                                   std::to_string(kIdBytesMax) + " bytes");
  }
  for (char c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(what) + " contains a control character");
    }
  }
  return Status::Ok();
}

Status CheckId(std::string_view what, std::string_view id) {
  if (id.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  return CheckOptionalId(what, id);
}

Status CheckTtl(int64_t ttl_ms) {
  if (ttl_ms < kTtlMsMin || ttl_ms > kTtlMsMax) {
    return Status::InvalidArgument("ttl_ms " + std::to_string(ttl_ms) + " is out of range");
  }
  return Status::Ok();
}

Status CheckEpoch(uint64_t epoch) {
  if (epoch == 0 || epoch >= kEpochLimit) {
    return Status::InvalidArgument("epoch " + std::to_string(epoch) + " is out of range");
  }
  return Status::Ok();
}

Status CheckAmount(int64_t amount, bool positive) {
  if (amount < (positive ? 1 : 0) || amount > kReservationAmountMax) {
    return Status::InvalidArgument("amount " + std::to_string(amount) + " is out of range");
  }
  return Status::Ok();
}

Status CheckPlacement(const Placement& placement) {
  TELOS_RETURN_IF_ERROR(CheckId("zone", placement.zone));
  TELOS_RETURN_IF_ERROR(CheckEpoch(placement.epoch));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("nonce", placement.nonce));
  return CheckId("shard", placement.shard);
}

Status CheckOccupancy(std::string_view shard, const std::vector<ZoneCount>& zones) {
  TELOS_RETURN_IF_ERROR(CheckId("shard", shard));
  if (zones.size() > kZonesPerOccupancyReportMax) {
    return Status::InvalidArgument("occupancy report names too many zones");
  }
  for (const ZoneCount& z : zones) {
    TELOS_RETURN_IF_ERROR(CheckId("zone", z.zone));
    if (z.players < 0) return Status::InvalidArgument("a zone count is negative");
  }
  return Status::Ok();
}

Status CheckDrainRequest(const DrainTargetRequest& request) {
  for (const std::string& id : request.exclude) TELOS_RETURN_IF_ERROR(CheckId("exclude", id));
  TELOS_RETURN_IF_ERROR(CheckOptionalId("holder", request.holder));
  TELOS_RETURN_IF_ERROR(CheckAmount(request.amount, /*positive=*/true));
  TELOS_RETURN_IF_ERROR(CheckTtl(request.ttl_ms));
  if (request.ceiling < 0) return Status::InvalidArgument("ceiling is negative");
  return Status::Ok();
}

}  // namespace internal
}  // namespace telos::directory
