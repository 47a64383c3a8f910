// Staff orders (issue 30): what an admin's command asks of a player who may be in any zone of
// any world of the fleet, and what comes back.
//
// The issuing zone checks the issuer's role (the dispatcher, CommandSpec::role) and hands the
// order to its router; the host applies it in the target's zone when the target plays here,
// else sends it to the world they play on (RemoteComms::Staff) whose host applies it the same
// way. The outcome goes back to the issuer as one notice (and, for kLocate, moves the issuer
// to the target's room: goto). Every order, with its outcome, is one audit record
// (AuditRecord) on the issuing host: a JSON log line and a durable row through AuditPort. An
// order that came from another world is audited on the target's world too, applied or refused.
//
// An order for another world carries its issuer's signed login assertion (issuer_assertion),
// which that world verifies (the signature, the issuer's name, the role StaffRoleFor names)
// before it believes anything else in the order; issuer_roles is what the issuing world saw
// and is never trusted across worlds. See src/shard/fleet_comms.cc.
//
// Thread safety: values; AuditPort implementations are called from zone executors and must not
// block.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/roles.h"
#include "telos/base/status.h"
#include "telos/world/content.h"

namespace telos::world {

enum class StaffKind {
  kKick,  // out of the game, saved, connection closed
  kMute,  // say, emote, tell, reply and channels refused until mute_until_unix_ms
  kUnmute,
  kTransfer,  // brought to `room` (the issuer's)
  kStat,      // the target's state, as text for the issuer
  kLocate,    // the target's room, for goto
};

// "kick", "mute", ... as they appear in the audit log.
std::string_view StaffKindName(StaffKind kind);

struct StaffOrder {
  StaffKind kind = StaffKind::kStat;
  std::string issuer;  // display name of the staff member
  Roles issuer_roles = kRolePlayer;
  std::string target;  // as typed
  Ref room;            // kTransfer: where the target is brought
  int64_t mute_until_unix_ms = 0;
  std::string reason;  // shown to the target and kept in the audit record
  // Across worlds only: the issuer's serialized signed assertion (opaque to the world module)
  // and the issuing world's id (for the target world's audit row; not proof of anything).
  std::string issuer_assertion;
  std::string origin_world;
};

// The role an order of this kind needs, at the issuer's dispatcher and at the target's world.
Roles StaffRoleFor(StaffKind kind);

// Whole minutes from now until `until_unix_ms`, rounded up; 0 once it has passed. Never
// overflows, whatever the instant (a mute read from a row may say INT64_MAX).
int64_t MinutesLeft(int64_t until_unix_ms, int64_t now_unix_ms);

struct StaffOutcome {
  Status status;            // NotFound: no such player online anywhere reachable
  std::string text;         // what the issuer is told (one or more lines joined by '\n')
  Ref room;                 // kLocate: where the target stands
  std::string target_name;  // display name when found
};

// One staff action as the audit trail keeps it.
struct AuditRecord {
  int64_t at_unix_ms = 0;
  std::string actor;   // who (display name), or "operator" for `telos ctl`
  std::string action;  // what: "kick", "mute", "goto", "ban", ...
  std::string target;  // whom or what (a player, a room, an address)
  std::string detail;  // reason, duration, the outcome
  std::string world;   // the world (shard id) the action was taken on
};

class AuditPort {
 public:
  virtual ~AuditPort() = default;
  // Queues the record for the durable trail and returns at once.
  virtual void Record(AuditRecord record) = 0;
};

}  // namespace telos::world
