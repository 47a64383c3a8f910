#include "telos/shard/drain_target_client.h"

#include <chrono>
#include <future>
#include <memory>
#include <utility>

#include "telos/director/drain_target_messages.h"

namespace telos::shard {

DrainTargetAsk MakeDrainTargetAsk(DrainTargetClientOptions options, bus::Bus& bus, Logger& log) {
  return [options = std::move(options), &bus, &log](
             const std::vector<DrainZoneLoad>& zones,
             int64_t reservation_ttl_ms) -> Result<std::vector<DirectedTarget>> {
    director::DrainTargetsRequest request;
    request.shard = options.shard_id;
    request.ttl_ms = reservation_ttl_ms;
    for (const auto& zone : zones) request.zones.push_back({zone.zone, zone.players});
    // The promise outlives this call: a reply that comes after the timeout finds it still there.
    auto answer = std::make_shared<std::promise<Result<std::string>>>();
    std::future<Result<std::string>> reply = answer->get_future();
    bus.Request(director::DrainTargetsSubject(options.subject_prefix, options.scope),
                director::EncodeDrainTargetsRequest(request),
                std::chrono::milliseconds(options.timeout_ms),
                [answer](Result<std::string> r) { answer->set_value(std::move(r)); });
    // The bus itself times the request out; the extra margin only guards against a bus that
    // never calls back.
    if (reply.wait_for(std::chrono::milliseconds(2 * options.timeout_ms + 100)) !=
        std::future_status::ready) {
      return Status::DeadlineExceeded("no drain targets from the director in time");
    }
    Result<std::string> data = reply.get();
    if (!data.ok()) return data.status();
    auto decoded = director::DecodeDrainTargetsReply(*data);
    if (!decoded.ok()) return decoded.status();
    std::vector<DirectedTarget> out;
    for (auto& target : decoded->targets) {
      if (target.target == options.shard_id) continue;
      out.push_back(
          {std::move(target.zone), std::move(target.target), std::move(target.reservation)});
    }
    log.Info("drain: the director named targets", {{"leader", decoded->leader},
                                                   {"epoch", decoded->epoch},
                                                   {"targets", static_cast<int64_t>(out.size())}});
    return out;
  };
}

}  // namespace telos::shard
