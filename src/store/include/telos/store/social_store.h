// SocialStore: the durable half of playing together — guilds (with their members, ranks and
// outstanding invitations), each character's friends list, and each account's locale.
//
// Parties are not here: they are short-lived and live in their members (telos/world/party.h).
// A guild outlives sessions and worlds, so it is rows beside the characters, in the same
// database (SQLite embedded, PostgreSQL in a fleet): every world of a fleet sees the same guild.
//
// Identity: characters and guilds are named in any letter case and keyed by their lower-case
// form; answers give display names. A character belongs to at most one guild (the schema holds
// it: one membership row per character). Deleting a character deletes its memberships,
// invitations and friends rows, in both directions.
//
// Ranks: the founder (exactly one, the guild's creator) promotes members to officer and demotes
// officers; the founder and officers invite; a member may be removed by anyone who outranks
// them. The founder leaves last: alone, leaving ends the guild.
//
// Errors, the same code and message on every backend (store_conformance.h runs them on both):
// InvalidArgument for a malformed name or locale; NotFound for a character or guild that does
// not exist (or a member not in the guild); AlreadyExists for a taken guild name, a character
// already in a guild, a friend already listed; PermissionDenied for a rank too low or a join
// without an invitation; FailedPrecondition for an action that needs a guild the caller is not
// in, or a founder leaving others behind; ResourceExhausted at limits::kGuildMembersMax and
// limits::kFriendsMax.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the blocking pool, never from a zone executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::store {

enum class GuildRank : int { kMember = 0, kOfficer = 1, kFounder = 2 };
std::string_view GuildRankName(GuildRank rank);  // "member", "officer", "founder"

struct GuildMember {
  std::string name;  // display name
  GuildRank rank = GuildRank::kMember;
  bool operator==(const GuildMember&) const = default;
};

// A character's guild as they see it: its name, their rank, and every member (founder first,
// then officers, then members, each by name).
struct GuildRoster {
  std::string guild;  // display name
  GuildRank rank = GuildRank::kMember;
  std::vector<GuildMember> members;
  bool operator==(const GuildRoster&) const = default;
};

// InvalidArgument unless `name` is kGuildNameBytesMin..kGuildNameBytesMax bytes of ASCII
// letters, digits, single spaces, apostrophes and hyphens, starting with a letter.
Status ValidateGuildName(std::string_view name);
// InvalidArgument unless `locale` is a language and a region, "xx-YY" (ASCII letters; the case
// is forgiven: NormalizeLocale("EN-gb") is "en-GB"). Returns the normalized form.
Result<std::string> NormalizeLocale(std::string_view locale);

class SocialStore {
 public:
  virtual ~SocialStore() = default;

  // ---- guilds
  // Founds `guild` with `founder` as its founder; returns the guild's display name.
  virtual Result<std::string> CreateGuild(std::string_view guild, std::string_view founder) = 0;
  // The character's guild, or nullopt when they are in none.
  virtual Result<std::optional<GuildRoster>> GuildOf(std::string_view character) = 0;
  // `by` (founder or officer) invites `invitee` into `by`'s guild. Inviting again is OK.
  virtual Status InviteToGuild(std::string_view by, std::string_view invitee) = 0;
  // Joins `guild` on an invitation, which it uses up; returns the guild's display name.
  virtual Result<std::string> JoinGuild(std::string_view character, std::string_view guild) = 0;
  virtual Status LeaveGuild(std::string_view character) = 0;
  virtual Status RemoveFromGuild(std::string_view by, std::string_view member) = 0;
  // Founder only; `rank` is kMember or kOfficer (InvalidArgument for kFounder).
  virtual Status SetGuildRank(std::string_view by, std::string_view member, GuildRank rank) = 0;

  // ---- friends (one-way: adding someone asks nothing of them)
  virtual Status AddFriend(std::string_view owner, std::string_view friend_name) = 0;
  virtual Status RemoveFriend(std::string_view owner, std::string_view friend_name) = 0;
  // Display names, sorted by key.
  virtual Result<std::vector<std::string>> Friends(std::string_view owner) = 0;

  // ---- locale of the character's account ("" until set)
  virtual Status SetLocale(std::string_view character, std::string_view locale) = 0;
  virtual Result<std::string> LocaleOf(std::string_view character) = 0;
};

}  // namespace telos::store
