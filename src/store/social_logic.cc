#include "social_logic.h"

#include <optional>
#include <utility>

#include "backend_checks.h"
#include "telos/base/limits.h"
#include "telos/store/character_record.h"

namespace telos::store {
namespace {

std::string Key(std::string_view name) {
  std::string key(name);
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return key;
}

bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int64_t ToInt(const std::string& text) {
  int64_t out = 0;
  bool negative = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 0 && text[i] == '-') {
      negative = true;
      continue;
    }
    if (text[i] < '0' || text[i] > '9') break;
    out = out * 10 + (text[i] - '0');
  }
  return negative ? -out : out;
}

GuildRank RankOf(const std::string& text) {
  const int64_t value = ToInt(text);
  if (value >= 2) return GuildRank::kFounder;
  return value == 1 ? GuildRank::kOfficer : GuildRank::kMember;
}

// ---- the reads every rule starts from

Result<std::optional<std::string>> CharacterNamed(SocialSql& sql, std::string_view name) {
  auto rows = sql.Run("SELECT display_name FROM characters WHERE name_key = $1", {Key(name)}, false,
                      "finding a character");
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows->front().at(0));
}

struct Membership {
  std::string guild_key;
  std::string guild;  // display name
  GuildRank rank = GuildRank::kMember;
};

Result<std::optional<Membership>> MembershipOf(SocialSql& sql, std::string_view character) {
  auto rows = sql.Run(
      "SELECT m.guild_key, g.display_name, m.rank FROM guild_members m "
      "JOIN guilds g ON g.name_key = m.guild_key WHERE m.member_key = $1",
      {Key(character)}, false, "finding a guild membership");
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<Membership>();
  const SocialSql::Row& row = rows->front();
  return std::optional<Membership>(Membership{row.at(0), row.at(1), RankOf(row.at(2))});
}

Result<int64_t> CountOf(SocialSql& sql, std::string_view query, std::string key,
                        std::string_view what) {
  auto rows = sql.Run(query, {std::move(key)}, false, what);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? int64_t{0} : ToInt(rows->front().at(0));
}

// ---- refusals, worded once for both backends

Status NotInAGuild(std::string_view name) {
  return Status::FailedPrecondition(Quoted(name) + " is not in a guild.");
}
Status AlreadyInAGuild(std::string_view name, std::string_view guild) {
  return Status::AlreadyExists(Quoted(name) + " is already in the guild " + Quoted(guild) + ".");
}
Status GuildFull(std::string_view guild) {
  return Status::ResourceExhausted(Quoted(guild) + " is full (" +
                                   std::to_string(limits::kGuildMembersMax) + " members).");
}
Status NotInThisGuild(std::string_view name, std::string_view guild) {
  return Status::NotFound(Quoted(name) + " is not in " + Quoted(guild) + ".");
}

// Runs `body` in a transaction and hands back what it set.
template <typename T>
Result<T> Transact(const SocialTransactionRunner& run,
                   const std::function<Result<T>(SocialSql&)>& body) {
  std::optional<Result<T>> out;
  const Status s = run([&](SocialSql& sql) -> Status {
    out.emplace(body(sql));
    return out->ok() ? Status::Ok() : out->status();
  });
  if (!s.ok()) return s;
  return std::move(*out);
}

}  // namespace

std::string_view GuildRankName(GuildRank rank) {
  switch (rank) {
    case GuildRank::kFounder: return "founder";
    case GuildRank::kOfficer: return "officer";
    case GuildRank::kMember: break;
  }
  return "member";
}

Status ValidateGuildName(std::string_view name) {
  const auto bad = [&](std::string why) {
    return Status::InvalidArgument("guild name " + Quoted(name) + " " + why);
  };
  if (name.size() < limits::kGuildNameBytesMin || name.size() > limits::kGuildNameBytesMax) {
    return bad("must be " + std::to_string(limits::kGuildNameBytesMin) + " to " +
               std::to_string(limits::kGuildNameBytesMax) + " characters long");
  }
  if (!IsLetter(name.front())) return bad("must start with a letter");
  if (name.back() == ' ') return bad("must not end with a space");
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = IsLetter(c) || (c >= '0' && c <= '9') || c == ' ' || c == '\'' || c == '-';
    if (!ok) return bad("may hold only letters, digits, spaces, apostrophes and hyphens");
    if (c == ' ' && i > 0 && name[i - 1] == ' ') return bad("must not hold two spaces in a row");
  }
  return Status::Ok();
}

Result<std::string> NormalizeLocale(std::string_view locale) {
  if (locale.size() != 5 || !IsLetter(locale[0]) || !IsLetter(locale[1]) || locale[2] != '-' ||
      !IsLetter(locale[3]) || !IsLetter(locale[4])) {
    return Status::InvalidArgument("locale " + Quoted(locale) +
                                   " is not a language and a region such as en-US or de-DE");
  }
  std::string out(locale);
  for (size_t i = 0; i < 2; ++i) out[i] = Key(std::string_view(&out[i], 1))[0];
  for (size_t i = 3; i < 5; ++i) {
    if (out[i] >= 'a' && out[i] <= 'z') out[i] = static_cast<char>(out[i] - 'a' + 'A');
  }
  return out;
}

// ------------------------------------------------------------------------------------- guilds

Result<std::string> SocialLogic::CreateGuild(std::string_view guild, std::string_view founder) {
  TELOS_RETURN_IF_ERROR(ValidateGuildName(guild));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(founder));
  return Transact<std::string>(run_, [&](SocialSql& sql) -> Result<std::string> {
    TELOS_RETURN_IF_ERROR(sql.Lock("guild:" + Key(guild)));
    auto name = CharacterNamed(sql, founder);
    if (!name.ok()) return name.status();
    if (!name->has_value()) return NoSuchCharacter(founder);
    auto membership = MembershipOf(sql, founder);
    if (!membership.ok()) return membership.status();
    if (membership->has_value()) return AlreadyInAGuild(**name, (*membership)->guild);
    auto taken = sql.Run("SELECT display_name FROM guilds WHERE name_key = $1", {Key(guild)}, false,
                         "finding a guild");
    if (!taken.ok()) return taken.status();
    if (!taken->empty()) {
      return Status::AlreadyExists("A guild called " + Quoted(taken->front().at(0)) +
                                   " already exists.");
    }
    const int64_t now = sql.NowMs();
    auto created =
        sql.Run("INSERT INTO guilds (name_key, display_name, created_at_ms) VALUES ($1, $2, $3)",
                {Key(guild), std::string(guild), now}, true, "founding a guild");
    if (!created.ok()) return created.status();
    auto joined = sql.Run(
        "INSERT INTO guild_members (member_key, guild_key, rank, joined_at_ms) "
        "VALUES ($1, $2, 2, $3)",
        {Key(founder), Key(guild), now}, true, "adding a guild's founder");
    if (!joined.ok()) return joined.status();
    (void)sql.Run("DELETE FROM guild_invites WHERE invitee_key = $1", {Key(founder)}, true,
                  "clearing a founder's invitations");
    return std::string(guild);
  });
}

Result<std::optional<GuildRoster>> SocialLogic::GuildOf(std::string_view character) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(character));
  return Transact<std::optional<GuildRoster>>(
      run_, [&](SocialSql& sql) -> Result<std::optional<GuildRoster>> {
        auto membership = MembershipOf(sql, character);
        if (!membership.ok()) return membership.status();
        if (!membership->has_value()) return std::optional<GuildRoster>();
        GuildRoster roster{
            .guild = (*membership)->guild, .rank = (*membership)->rank, .members = {}};
        auto rows = sql.Run(
            "SELECT c.display_name, m.rank FROM guild_members m "
            "JOIN characters c ON c.name_key = m.member_key WHERE m.guild_key = $1 "
            "ORDER BY m.rank DESC, m.member_key LIMIT $2",
            {(*membership)->guild_key, static_cast<int64_t>(limits::kGuildMembersMax)}, false,
            "listing a guild");
        if (!rows.ok()) return rows.status();
        for (const SocialSql::Row& row : *rows) {
          roster.members.push_back(GuildMember{row.at(0), RankOf(row.at(1))});
        }
        return std::optional<GuildRoster>(std::move(roster));
      });
}

Status SocialLogic::InviteToGuild(std::string_view by, std::string_view invitee) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(by));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(invitee));
  return run_([&](SocialSql& sql) -> Status {
    auto inviter = MembershipOf(sql, by);
    if (!inviter.ok()) return inviter.status();
    if (!inviter->has_value()) return NotInAGuild(by);
    const Membership& guild = **inviter;
    if (guild.rank == GuildRank::kMember) {
      return Status::PermissionDenied("Only the founder and officers of " + Quoted(guild.guild) +
                                      " can invite.");
    }
    TELOS_RETURN_IF_ERROR(sql.Lock("guild:" + guild.guild_key));
    auto name = CharacterNamed(sql, invitee);
    if (!name.ok()) return name.status();
    if (!name->has_value()) return NoSuchCharacter(invitee);
    auto theirs = MembershipOf(sql, invitee);
    if (!theirs.ok()) return theirs.status();
    if (theirs->has_value()) return AlreadyInAGuild(**name, (*theirs)->guild);
    auto members = CountOf(sql, "SELECT count(*) FROM guild_members WHERE guild_key = $1",
                           guild.guild_key, "counting a guild");
    if (!members.ok()) return members.status();
    if (*members >= static_cast<int64_t>(limits::kGuildMembersMax)) return GuildFull(guild.guild);
    auto invited = sql.Run(
        "INSERT INTO guild_invites (guild_key, invitee_key, invited_at_ms) VALUES ($1, $2, $3) "
        "ON CONFLICT (guild_key, invitee_key) DO UPDATE SET invited_at_ms = excluded.invited_at_ms",
        {guild.guild_key, Key(invitee), sql.NowMs()}, true, "inviting into a guild");
    return invited.ok() ? Status::Ok() : invited.status();
  });
}

Result<std::string> SocialLogic::JoinGuild(std::string_view character, std::string_view guild) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(character));
  TELOS_RETURN_IF_ERROR(ValidateGuildName(guild));
  return Transact<std::string>(run_, [&](SocialSql& sql) -> Result<std::string> {
    TELOS_RETURN_IF_ERROR(sql.Lock("guild:" + Key(guild)));
    auto name = CharacterNamed(sql, character);
    if (!name.ok()) return name.status();
    if (!name->has_value()) return NoSuchCharacter(character);
    auto found = sql.Run("SELECT display_name FROM guilds WHERE name_key = $1", {Key(guild)}, false,
                         "finding a guild");
    if (!found.ok()) return found.status();
    if (found->empty()) return Status::NotFound("There is no guild called " + Quoted(guild) + ".");
    const std::string display = found->front().at(0);
    auto theirs = MembershipOf(sql, character);
    if (!theirs.ok()) return theirs.status();
    if (theirs->has_value()) return AlreadyInAGuild(**name, (*theirs)->guild);
    auto invitation =
        sql.Run("DELETE FROM guild_invites WHERE guild_key = $1 AND invitee_key = $2 RETURNING 1",
                {Key(guild), Key(character)}, true, "using a guild invitation");
    if (!invitation.ok()) return invitation.status();
    if (invitation->empty()) {
      return Status::PermissionDenied(Quoted(**name) + " has not been invited to " +
                                      Quoted(display) + ".");
    }
    auto members = CountOf(sql, "SELECT count(*) FROM guild_members WHERE guild_key = $1",
                           Key(guild), "counting a guild");
    if (!members.ok()) return members.status();
    if (*members >= static_cast<int64_t>(limits::kGuildMembersMax)) return GuildFull(display);
    auto joined = sql.Run(
        "INSERT INTO guild_members (member_key, guild_key, rank, joined_at_ms) "
        "VALUES ($1, $2, 0, $3)",
        {Key(character), Key(guild), sql.NowMs()}, true, "joining a guild");
    if (!joined.ok()) return joined.status();
    return display;
  });
}

Status SocialLogic::LeaveGuild(std::string_view character) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(character));
  return run_([&](SocialSql& sql) -> Status {
    auto membership = MembershipOf(sql, character);
    if (!membership.ok()) return membership.status();
    if (!membership->has_value()) return NotInAGuild(character);
    const Membership& guild = **membership;
    TELOS_RETURN_IF_ERROR(sql.Lock("guild:" + guild.guild_key));
    if (guild.rank == GuildRank::kFounder) {
      auto members = CountOf(sql, "SELECT count(*) FROM guild_members WHERE guild_key = $1",
                             guild.guild_key, "counting a guild");
      if (!members.ok()) return members.status();
      if (*members > 1) {
        return Status::FailedPrecondition("The founder leaves " + Quoted(guild.guild) + " last; " +
                                          std::to_string(*members - 1) +
                                          " other members are still in it.");
      }
      // The founder alone: the guild ends (its invitations go with it).
      auto ended = sql.Run("DELETE FROM guilds WHERE name_key = $1", {guild.guild_key}, true,
                           "ending a guild");
      return ended.ok() ? Status::Ok() : ended.status();
    }
    auto left = sql.Run("DELETE FROM guild_members WHERE member_key = $1", {Key(character)}, true,
                        "leaving a guild");
    return left.ok() ? Status::Ok() : left.status();
  });
}

Status SocialLogic::RemoveFromGuild(std::string_view by, std::string_view member) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(by));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(member));
  return run_([&](SocialSql& sql) -> Status {
    auto remover = MembershipOf(sql, by);
    if (!remover.ok()) return remover.status();
    if (!remover->has_value()) return NotInAGuild(by);
    auto target = MembershipOf(sql, member);
    if (!target.ok()) return target.status();
    if (!target->has_value() || (*target)->guild_key != (*remover)->guild_key) {
      return NotInThisGuild(member, (*remover)->guild);
    }
    if (static_cast<int>((*remover)->rank) <= static_cast<int>((*target)->rank)) {
      return Status::PermissionDenied("Only someone who outranks " + Quoted(member) +
                                      " can remove them.");
    }
    auto removed = sql.Run("DELETE FROM guild_members WHERE member_key = $1", {Key(member)}, true,
                           "removing a guild member");
    return removed.ok() ? Status::Ok() : removed.status();
  });
}

Status SocialLogic::SetGuildRank(std::string_view by, std::string_view member, GuildRank rank) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(by));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(member));
  if (rank == GuildRank::kFounder) {
    return Status::InvalidArgument("A founder is made only by founding a guild.");
  }
  return run_([&](SocialSql& sql) -> Status {
    auto setter = MembershipOf(sql, by);
    if (!setter.ok()) return setter.status();
    if (!setter->has_value()) return NotInAGuild(by);
    if ((*setter)->rank != GuildRank::kFounder) {
      return Status::PermissionDenied("Only the founder of " + Quoted((*setter)->guild) +
                                      " can change ranks.");
    }
    if (Key(by) == Key(member)) {
      return Status::InvalidArgument("The founder's rank does not change.");
    }
    auto target = MembershipOf(sql, member);
    if (!target.ok()) return target.status();
    if (!target->has_value() || (*target)->guild_key != (*setter)->guild_key) {
      return NotInThisGuild(member, (*setter)->guild);
    }
    auto set = sql.Run("UPDATE guild_members SET rank = $1 WHERE member_key = $2",
                       {static_cast<int64_t>(rank), Key(member)}, true, "changing a rank");
    return set.ok() ? Status::Ok() : set.status();
  });
}

// ------------------------------------------------------------------------------------ friends

Status SocialLogic::AddFriend(std::string_view owner, std::string_view friend_name) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(owner));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(friend_name));
  if (Key(owner) == Key(friend_name)) {
    return Status::InvalidArgument(Quoted(owner) + " cannot be their own friend.");
  }
  return run_([&](SocialSql& sql) -> Status {
    TELOS_RETURN_IF_ERROR(sql.Lock("friends:" + Key(owner)));
    auto me = CharacterNamed(sql, owner);
    if (!me.ok()) return me.status();
    if (!me->has_value()) return NoSuchCharacter(owner);
    auto them = CharacterNamed(sql, friend_name);
    if (!them.ok()) return them.status();
    if (!them->has_value()) return NoSuchCharacter(friend_name);
    auto listed = sql.Run("SELECT 1 FROM friends WHERE owner_key = $1 AND friend_key = $2",
                          {Key(owner), Key(friend_name)}, false, "finding a friend");
    if (!listed.ok()) return listed.status();
    if (!listed->empty()) {
      return Status::AlreadyExists(Quoted(**them) + " is already on " + Quoted(**me) +
                                   "'s friends list.");
    }
    auto count = CountOf(sql, "SELECT count(*) FROM friends WHERE owner_key = $1", Key(owner),
                         "counting friends");
    if (!count.ok()) return count.status();
    if (*count >= static_cast<int64_t>(limits::kFriendsMax)) {
      return Status::ResourceExhausted(Quoted(**me) + "'s friends list is full (" +
                                       std::to_string(limits::kFriendsMax) + ").");
    }
    auto added =
        sql.Run("INSERT INTO friends (owner_key, friend_key, added_at_ms) VALUES ($1, $2, $3)",
                {Key(owner), Key(friend_name), sql.NowMs()}, true, "adding a friend");
    return added.ok() ? Status::Ok() : added.status();
  });
}

Status SocialLogic::RemoveFriend(std::string_view owner, std::string_view friend_name) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(owner));
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(friend_name));
  return run_([&](SocialSql& sql) -> Status {
    auto removed =
        sql.Run("DELETE FROM friends WHERE owner_key = $1 AND friend_key = $2 RETURNING 1",
                {Key(owner), Key(friend_name)}, true, "removing a friend");
    if (!removed.ok()) return removed.status();
    if (removed->empty()) {
      return Status::NotFound(Quoted(friend_name) + " is not on " + Quoted(owner) +
                              "'s friends list.");
    }
    return Status::Ok();
  });
}

Result<std::vector<std::string>> SocialLogic::Friends(std::string_view owner) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(owner));
  return Transact<std::vector<std::string>>(
      run_, [&](SocialSql& sql) -> Result<std::vector<std::string>> {
        auto rows = sql.Run(
            "SELECT c.display_name FROM friends f JOIN characters c ON c.name_key = f.friend_key "
            "WHERE f.owner_key = $1 ORDER BY f.friend_key LIMIT $2",
            {Key(owner), static_cast<int64_t>(limits::kFriendsMax)}, false, "listing friends");
        if (!rows.ok()) return rows.status();
        std::vector<std::string> out;
        for (const SocialSql::Row& row : *rows) out.push_back(row.at(0));
        return out;
      });
}

// ------------------------------------------------------------------------------------- locale

Status SocialLogic::SetLocale(std::string_view character, std::string_view locale) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(character));
  auto normalized = NormalizeLocale(locale);
  if (!normalized.ok()) return normalized.status();
  return run_([&](SocialSql& sql) -> Status {
    auto set = sql.Run(
        "UPDATE accounts SET locale = $1 WHERE id = "
        "(SELECT account_id FROM characters WHERE name_key = $2) RETURNING 1",
        {*normalized, Key(character)}, true, "setting a locale");
    if (!set.ok()) return set.status();
    return set->empty() ? NoSuchCharacter(character) : Status::Ok();
  });
}

Result<std::string> SocialLogic::LocaleOf(std::string_view character) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(character));
  return Transact<std::string>(run_, [&](SocialSql& sql) -> Result<std::string> {
    auto rows = sql.Run(
        "SELECT a.locale FROM accounts a JOIN characters c ON c.account_id = a.id "
        "WHERE c.name_key = $1",
        {Key(character)}, false, "reading a locale");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchCharacter(character);
    return rows->front().at(0);
  });
}

}  // namespace telos::store
