// Parties: a small group of players who chat together, follow each other and (later) are placed
// together. This header holds the value types and the messages members send each other; the
// rules are in the zone (commands/party_commands.cc) and the routing in WorldHost.
//
// Where a party lives. There is no party server and no directory record: every member carries a
// copy of the roster in their CharacterState (PartyState), so it travels wherever the member
// goes — a walk into another zone, a cross-shard handoff, a drain, a checkpoint read back after
// their world crashed — through the paths that already carry the rest of the character. The
// leader is the only writer: every change of membership is made by the leader's zone, which
// bumps `version` and sends the whole roster to every member; a member keeps a roster only when
// it is newer than the one it has. Chat goes from the speaker's zone to each member's player
// subject directly (at most kPartyMembersMax - 1 lines), so a party with members on three worlds
// costs no more than three tells. A party is small (kPartyMembersMax) and lives only as long as
// its members play, so replicating it is cheaper and has fewer ways to fail than a shared
// record that would need its own leases and expiry.
//
// Failures, and how a copy heals:
//  - A member quits: their zone sends `leave` to the leader first (a quitting leader hands the
//    party to the next member, or disbands a party of two).
//  - A member's world crashes: their copy comes back with them from the checkpoint (or the row)
//    on whichever world they log in on next; at that login their zone asks the leader
//    (`hello`). The leader answers with the roster when the member is still in it, `gone`
//    otherwise; a leader nobody hosts any more answers nothing, and the member's copy is
//    dropped with a notice. Messages in flight at the crash are lost (the bus is at-most-once),
//    as tells are.
//  - The leader's world crashes and the leader does not come back: a member finds out at the
//    next action that needs the leader (accept, leave, hello) and drops the copy.
//
// Thread safety: values and pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/limits.h"

namespace telos::world {

// One member's copy of the party. Empty id: not in a party.
struct PartyState {
  std::string id;                    // minted by the founder: "<leader key>.<ms>"
  std::string leader;                // display name
  std::vector<std::string> members;  // display names, leader included, in joining order
  std::vector<std::string> invited;  // display names the leader invited (the leader's copy)
  int64_t version = 0;               // raised by every change the leader makes

  bool empty() const { return id.empty(); }
  bool Has(std::string_view name) const;
  bool operator==(const PartyState&) const = default;
};

// An invitation held by the invitee until it is accepted, declined or expires.
struct PartyInvite {
  std::string party_id;
  std::string from;        // the leader's display name
  int64_t expires_ms = 0;  // wall-clock instant (ms since the Unix epoch)
  bool operator==(const PartyInvite&) const = default;
};

// What one member's zone sends another member's zone.
struct PartyMessage {
  enum class Op {
    kUnknown,
    kInvite,       // leader -> invitee: `roster` is the party (id, leader)
    kJoin,         // invitee -> leader: accept `party_id`
    kHello,        // member -> leader at login: am I still in `party_id`?
    kLeave,        // member -> leader: take me out
    kRoster,       // leader -> members: the whole party now (`text`: what changed, in words)
    kRefused,      // leader -> would-be member: not joined (`text` says why)
    kGone,         // leader -> member: you are not in `party_id` (any more)
    kKicked,       // leader -> member: removed by the leader
    kDisband,      // leader -> members: the party is no more
    kChat,         // member -> members: a line of party chat (`text`)
    kUnreachable,  // the host -> a sender: `from` could not be reached (`text`: why; `failed`)
    kNotice,       // anyone -> a player: one line to show (a guild invitation), nothing else
  };
  Op op = Op::kUnknown;
  std::string party_id;
  std::string from;  // the sender's display name (kUnreachable: whom it was for)
  std::string text;
  PartyState roster;         // kInvite, kRoster
  Op failed = Op::kUnknown;  // kUnreachable: what could not be delivered
};

// JSON text, the form it crosses the bus in.
std::string EncodePartyMessage(const PartyMessage& message);
// Never fails: anything that is not a well-formed message (a stray publisher, a newer build's
// op) reads as Op::kUnknown, which a zone ignores. Names, lists and text are bounded by
// limits (kPartyMembersMax, kCharacterNameBytesMax, kInputLineBytesMax); longer ones make the
// message unknown.
PartyMessage DecodePartyMessage(std::string_view data);

std::string_view PartyOpName(PartyMessage::Op op);

}  // namespace telos::world
