// The rules of SocialStore (guilds, friends, locale) written once, over a minimal SQL seam that
// each backend implements in a few lines (private to src/store).
//
// Why one implementation: the two backends must refuse the same input with the same code and
// message (the conformance suite checks it), and the rules here are a sequence of small reads
// and writes in one transaction that read the same in either SQL dialect. The SQL is written
// with PostgreSQL's $1.. placeholders; the SQLite seam rewrites them to ?1... Every statement
// used is plain SQL both engines accept (RETURNING included: SQLite >= 3.35).
//
// Concurrency: each public call runs in one transaction of the backend. SQLite's BEGIN
// IMMEDIATE serializes writers; on PostgreSQL, Lock() takes a transaction-scoped advisory lock
// on the guild or owner whose bound is being checked, and the primary keys refuse a second
// membership or a duplicate friend outright.
//
// Thread safety: as the backend's store (its transaction runner takes the backend's lock).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "telos/base/status.h"
#include "telos/store/social_store.h"

namespace telos::store {

class SocialSql {
 public:
  using Value = std::variant<int64_t, std::string>;
  using Row = std::vector<std::string>;  // every column as text
  virtual ~SocialSql() = default;
  // Runs one statement; `write` says whether it changes anything (a write whose outcome is
  // unknown must not be reported as a plain failure). Rows as text; NULL reads as "".
  virtual Result<std::vector<Row>> Run(std::string_view sql, const std::vector<Value>& params,
                                       bool write, std::string_view what) = 0;
  // Serializes, until the transaction ends, every other transaction that locks `key`.
  virtual Status Lock(std::string_view key) = 0;
  virtual int64_t NowMs() const = 0;
};

// Runs `body` in one transaction: commits when it returns OK, rolls back otherwise.
using SocialTransactionRunner = std::function<Status(const std::function<Status(SocialSql&)>&)>;

class SocialLogic final : public SocialStore {
 public:
  explicit SocialLogic(SocialTransactionRunner run) : run_(std::move(run)) {}

  Result<std::string> CreateGuild(std::string_view guild, std::string_view founder) override;
  Result<std::optional<GuildRoster>> GuildOf(std::string_view character) override;
  Status InviteToGuild(std::string_view by, std::string_view invitee) override;
  Result<std::string> JoinGuild(std::string_view character, std::string_view guild) override;
  Status LeaveGuild(std::string_view character) override;
  Status RemoveFromGuild(std::string_view by, std::string_view member) override;
  Status SetGuildRank(std::string_view by, std::string_view member, GuildRank rank) override;
  Status AddFriend(std::string_view owner, std::string_view friend_name) override;
  Status RemoveFriend(std::string_view owner, std::string_view friend_name) override;
  Result<std::vector<std::string>> Friends(std::string_view owner) override;
  Status SetLocale(std::string_view character, std::string_view locale) override;
  Result<std::string> LocaleOf(std::string_view character) override;

 private:
  SocialTransactionRunner run_;
};

}  // namespace telos::store
