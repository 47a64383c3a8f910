// libFuzzer target for the drain-targets exchange (drain_target_messages.h): the request a
// draining shard sends its leader director and the reply it gets. Anyone who can publish on the
// fleet's subjects controls these bytes. Besides "never crashes": whatever decodes re-encodes to
// bytes that decode to the same value, a decoded value keeps the layouts' bounds, and an error
// reply quoting the bytes is valid UTF-8 that keeps its code.
//
// Run locally:  build/dev/tests/fuzz/drain_targets_fuzz tests/fuzz/corpus/drain_targets \
//                 -dict=tests/fuzz/dict/drain_targets.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/director/drain_target_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  namespace director = telos::director;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  const telos::Result<director::DrainTargetsRequest> request =
      director::DecodeDrainTargetsRequest(bytes);
  if (request.ok()) {
    Check(!request->shard.empty() && !request->zones.empty());
    Check(request->zones.size() <= telos::limits::kDirectorDrainZonesPerRequestMax);
    Check(request->ttl_ms >= 1);
    for (const director::DrainZoneNeed& need : request->zones) Check(need.players >= 0);
    const telos::Result<director::DrainTargetsRequest> again =
        director::DecodeDrainTargetsRequest(director::EncodeDrainTargetsRequest(*request));
    Check(again.ok() && *again == *request);
  } else {
    Check(request.status().code() == telos::StatusCode::kInvalidArgument);
  }

  const telos::Result<director::DrainTargetsReply> reply = director::DecodeDrainTargetsReply(bytes);
  if (reply.ok()) {
    Check(!reply->leader.empty() && reply->epoch >= 1);
    const telos::Result<director::DrainTargetsReply> again =
        director::DecodeDrainTargetsReply(director::EncodeDrainTargetsReply(*reply));
    Check(again.ok() && *again == *reply);
  } else {
    // An error reply re-encodes to the same code.
    const telos::Result<director::DrainTargetsReply> again =
        director::DecodeDrainTargetsReply(director::EncodeDrainTargetsError(reply.status()));
    Check(!again.ok() && again.status().code() == reply.status().code());
  }

  // An error text may quote any bytes (ids are byte strings): the reply is valid UTF-8 and
  // decodes to its own code whatever they were.
  const std::string error = director::EncodeDrainTargetsError(
      telos::Status(telos::StatusCode::kFailedPrecondition, std::string(bytes)));
  Check(telos::IsValidUtf8(error));
  const telos::Result<director::DrainTargetsReply> refused =
      director::DecodeDrainTargetsReply(error);
  Check(!refused.ok() && refused.status().code() == telos::StatusCode::kFailedPrecondition);
  return 0;
}
