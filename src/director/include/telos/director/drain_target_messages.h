// The drain-targets exchange: a draining shard asks its scope's leader director where each of its
// zones should go, and the leader answers, one request at a time.
//
// Subject: DrainTargetsSubject(prefix, scope) = "<prefix>.director.<token of scope>.drain-targets",
// where <prefix> is the fleet's subject prefix (FleetCommsOptions::subject_prefix, e.g.
// "telos.telos") and the scope goes through bus::SubjectToken. Only the scope's leader
// subscribes; a standby never answers, so "no responders" means no director leads right now
// and the shard falls back to its own choice (balancing is an optimizer, never a dependency).
//
// Layouts (JSON objects; unknown fields are ignored, so either side may add some):
//   request  {"shard":S,"zones":[{"zone":Z,"players":N},...],"ttl_ms":T}
//              S    the draining shard (never chosen as a target)
//              N    the zone's players about to move, in [0, kDirectorZonePlayersMax]
//              T    how long each reservation must hold, in [1, kDirectoryTtlMsMax]
//              zones: 1 to kDirectorDrainZonesPerRequestMax, each zone once
//   reply    {"leader":L,"epoch":E,"targets":[{"zone":Z,"target":SHARD,"reservation":ID,
//              "over_ceiling":B},...]}
//              L, E the leader that answered and its term (E >= 1), for logs and fencing
//              one entry per zone the leader could place, each zone of the request at most
//              once; a zone left out got no target (no live, non-draining peer had room)
//              and the shard chooses for it itself. "over_ceiling" is optional (false).
//   error    {"error":CODE,"message":TEXT}
//              CODE a StatusCodeName ("failed_precondition" when the answering director no
//              longer leads, "invalid_argument" for a request it could not read,
//              "unavailable" when the directory could not be reached, ...).
//
// Decoding never throws and never aborts: anyone who can publish on the fleet's NATS subjects
// can send these bytes. Input that is not one of the layouts above (not JSON, a field missing
// or of the wrong type, a number out of range or not an integer, an id empty, longer than
// kDirectoryIdBytesMax or holding control characters, a duplicate zone, too many entries,
// more than kDirectorDrainMessageBytesMax bytes) reads as kInvalidArgument with a message
// naming the problem. An error reply decodes to its own code (an unknown or "ok" code reads as
// kInternal) and message. Encoding validates nothing: encode only what the decoder accepts.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::director {

struct DrainZoneNeed {
  std::string zone;
  int64_t players = 0;
  bool operator==(const DrainZoneNeed&) const = default;
};

struct DrainTargetsRequest {
  std::string shard;
  std::vector<DrainZoneNeed> zones;
  int64_t ttl_ms = 0;
  bool operator==(const DrainTargetsRequest&) const = default;
};

struct DrainZoneTarget {
  std::string zone;
  std::string target;
  std::string reservation;  // the id of the reservation taken on `target` for this zone
  bool over_ceiling = false;
  bool operator==(const DrainZoneTarget&) const = default;
};

struct DrainTargetsReply {
  std::string leader;
  uint64_t epoch = 0;
  std::vector<DrainZoneTarget> targets;
  bool operator==(const DrainTargetsReply&) const = default;
};

// "<subject_prefix>.director.<SubjectToken(scope)>.drain-targets".
std::string DrainTargetsSubject(std::string_view subject_prefix, std::string_view scope);

std::string EncodeDrainTargetsRequest(const DrainTargetsRequest& request);
Result<DrainTargetsRequest> DecodeDrainTargetsRequest(std::string_view data);

std::string EncodeDrainTargetsReply(const DrainTargetsReply& reply);
// The error layout for `status`. REQUIRES: !status.ok(). The message is repaired to valid UTF-8
// (SanitizeUtf8: it may quote untrusted bytes) and cut to kDirectorErrorTextBytesMax bytes on a
// character boundary, so the reply always parses.
std::string EncodeDrainTargetsError(const Status& status);
// A reply, or the error it carries, or kInvalidArgument for anything else.
Result<DrainTargetsReply> DecodeDrainTargetsReply(std::string_view data);

}  // namespace telos::director
