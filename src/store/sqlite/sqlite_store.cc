#include "telos/store/sqlite_store.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "backend_checks.h"
#include "social_logic.h"
#include "sqlite/connection.h"
#include "sqlite/migrations.h"
#include "telos/base/limits.h"

namespace telos::store {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::Transaction;

// The connection shared by the four stores of one SqliteStore.
struct Database {
  Database(std::unique_ptr<Connection> c, const Clock& clk, bool record_writes)
      : conn(std::move(c)), clock(clk), record_zone_writes(record_writes) {}

  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
        .count();
  }
  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  int64_t Changes() const { return sqlite3_changes64(conn->db()); }

  // Serializes every use of `conn`. The stores are called from the blocking pool, so several
  // threads may arrive at once; a sqlite3 handle opened NOMUTEX must not be used concurrently,
  // and with a single writer allowed by WAL anyway, one connection under one lock costs little.
  std::mutex mu;
  std::unique_ptr<Connection> conn;
  const Clock& clock;
  const bool record_zone_writes;  // SqliteStoreOptions::record_zone_writes
};

// ---------------------------------------------------------------------------------- characters

constexpr std::string_view kCharacterColumns =
    "display_name, account_id, state_version, owner_epoch, zone_id, room_id, state_json, "
    "created_at_ms, updated_at_ms, writer_shard, zone_lease_epoch";

CharacterRecord ReadCharacter(const Query& q) {
  CharacterRecord r;
  r.name = q.Text(0);
  r.account_id = q.Int(1);
  r.state_version = q.Int(2);
  r.owner_epoch = q.Int(3);
  r.zone_id = q.Text(4);
  r.room_id = q.Text(5);
  r.state_json = q.Text(6);
  r.created_at_ms = q.Int(7);
  r.updated_at_ms = q.Int(8);
  r.writer_shard = q.Text(9);
  r.zone_lease_epoch = q.Int(10);
  return r;
}

// Raises the fence of `zone` to `lease_epoch` when it is lower or missing, recording the shard
// and the time; a fence already at or above it is left alone. REQUIRES: db.mu held.
Status RaiseZoneFenceLocked(Database& db, std::string_view zone, int64_t lease_epoch,
                            std::string_view shard) {
  TELOS_SQL_QUERY(q, *db.conn,
                  "INSERT INTO zone_fences (zone_id, lease_epoch, shard_id, updated_at_ms) "
                  "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (zone_id) DO UPDATE SET "
                  "lease_epoch = excluded.lease_epoch, shard_id = excluded.shard_id, "
                  "updated_at_ms = excluded.updated_at_ms "
                  "WHERE excluded.lease_epoch > zone_fences.lease_epoch");
  q.Bind(1, zone).Bind(2, lease_epoch).Bind(3, shard).Bind(4, db.NowMs());
  return q.Run("raising a zone fence");
}

// The fence of `zone`, 0 when it has none. REQUIRES: db.mu held.
Result<int64_t> ZoneFenceLocked(Database& db, std::string_view zone) {
  TELOS_SQL_QUERY(q, *db.conn, "SELECT lease_epoch FROM zone_fences WHERE zone_id = ?1");
  auto row = q.Bind(1, zone).Step("reading a zone fence");
  if (!row.ok()) return row.status();
  return *row ? q.Int(0) : int64_t{0};
}

class SqliteCharacterStore final : public CharacterStore {
 public:
  explicit SqliteCharacterStore(Database& db) : db_(db) {}

  Result<CharacterRecord> Create(const CharacterRecord& record) override {
    TELOS_RETURN_IF_ERROR(CheckCharacterContent(record));
    const std::string key = NameKey(record.name);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    {
      TELOS_SQL_QUERY(q, conn, "SELECT count(*) FROM characters WHERE account_id = ?1");
      auto row = q.Bind(1, record.account_id).Step("counting an account's characters");
      if (!row.ok()) return row.status();
      if (*row && q.Int(0) >= static_cast<int64_t>(limits::kCharactersPerAccountMax)) {
        return TooManyCharacters(record.account_id);
      }
    }
    CharacterRecord stored = NewCharacterRow(record, db_.NowMs());
    {
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO characters (name_key, display_name, account_id, "
                      "state_version, owner_epoch, zone_id, room_id, state_json, created_at_ms, "
                      "updated_at_ms, writer_shard, zone_lease_epoch) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
      q.Bind(1, key)
          .Bind(2, stored.name)
          .Bind(3, stored.account_id)
          .Bind(4, stored.state_version)
          .Bind(5, stored.owner_epoch)
          .Bind(6, stored.zone_id)
          .Bind(7, stored.room_id)
          .Bind(8, stored.state_json)
          .Bind(9, stored.created_at_ms)
          .Bind(10, stored.updated_at_ms)
          .Bind(11, stored.writer_shard)
          .Bind(12, stored.zone_lease_epoch);
      Status status = q.Run("creating a character");
      status = Relabel(std::move(status), StatusCode::kAlreadyExists,
                       "the character name " + Quoted(record.name) + " is taken");
      status = Relabel(std::move(status), StatusCode::kNotFound,
                       NoSuchAccount(record.account_id).message());
      TELOS_RETURN_IF_ERROR(status);
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return stored;
  }

  Result<CharacterRecord> Load(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    return LoadLocked(NameKey(name), name);
  }

  Result<std::vector<CharacterRecord>> ListByAccount(int64_t account_id) override {
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "SELECT " + std::string(kCharacterColumns) +
                        " FROM characters WHERE account_id = ?1 "
                        "ORDER BY created_at_ms, name_key LIMIT ?2");
    q.Bind(1, account_id).Bind(2, static_cast<int64_t>(limits::kCharactersPerAccountMax));
    std::vector<CharacterRecord> out;
    while (true) {
      auto row = q.Step("listing an account's characters");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back(ReadCharacter(q));
    }
    return out;
  }

  Status Delete(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "DELETE FROM characters WHERE name_key = ?1");
    TELOS_RETURN_IF_ERROR(q.Bind(1, NameKey(name)).Run("deleting a character"));
    if (db_.Changes() == 0) return NoSuchCharacter(name);
    return Status::Ok();
  }

  Result<CharacterRecord> ClaimOwnership(std::string_view name, int64_t directory_epoch) override {
    TELOS_RETURN_IF_ERROR(CheckClaimArgs(name, directory_epoch));
    const std::string key = NameKey(name);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    auto current = LoadLocked(key, name);
    if (!current.ok()) return current.status();
    const int64_t floor = std::max(directory_epoch, current->owner_epoch);
    if (floor == std::numeric_limits<int64_t>::max()) {
      return OwnerEpochExhausted(name);
    }
    const int64_t minted = floor + 1;
    {
      TELOS_SQL_QUERY(q, conn, "UPDATE characters SET owner_epoch = ?1 WHERE name_key = ?2");
      TELOS_RETURN_IF_ERROR(q.Bind(1, minted).Bind(2, key).Run("claiming a character"));
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    CharacterRecord claimed = std::move(current).value();
    claimed.owner_epoch = minted;
    return claimed;
  }

  Result<int64_t> Save(const CharacterRecord& record, int64_t expected_state_version,
                       int64_t writer_owner_epoch) override {
    TELOS_RETURN_IF_ERROR(CheckSaveArgs(record, expected_state_version, writer_owner_epoch));
    const std::string key = NameKey(record.name);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    // Read and write under one write lock (BEGIN IMMEDIATE locks the whole file), so the three
    // fences are judged against the row and the zone fence that are then updated: no raise and
    // no other save can come in between.
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    int64_t row_version = 0;
    int64_t row_epoch = 0;
    {
      TELOS_SQL_QUERY(q, conn,
                      "SELECT state_version, owner_epoch FROM characters WHERE name_key = ?1");
      auto row = q.Bind(1, key).Step("reading a character's fences");
      if (!row.ok()) return row.status();
      if (!*row) return NoSuchCharacter(record.name);
      row_version = q.Int(0);
      row_epoch = q.Int(1);
    }
    const bool leased = record.zone_lease_epoch > 0;
    int64_t zone_fence = 0;
    if (leased) {
      auto fence = ZoneFenceLocked(db_, record.zone_id);
      if (!fence.ok()) return fence.status();
      zone_fence = *fence;
    }
    // The fences are judged in the documented order: a zombie owner or a stale zone tenure
    // must be stopped, not invited to rebase past a version check it would then win.
    if (row_epoch > writer_owner_epoch) return Fenced(record.name, row_epoch, writer_owner_epoch);
    if (leased && zone_fence > record.zone_lease_epoch) {
      return ZoneFenced(record.name, record.zone_id, zone_fence, record.zone_lease_epoch);
    }
    if (row_version != expected_state_version) {
      return StaleStateVersion(record.name, row_version, expected_state_version);
    }
    const int64_t next_version = expected_state_version + 1;
    const int64_t now_ms = db_.NowMs();
    {
      TELOS_SQL_QUERY(q, conn,
                      "UPDATE characters SET state_version = ?1, zone_id = ?2, room_id = ?3, "
                      "state_json = ?4, updated_at_ms = ?5, writer_shard = ?6, "
                      "zone_lease_epoch = ?7 WHERE name_key = ?8");
      q.Bind(1, next_version)
          .Bind(2, record.zone_id)
          .Bind(3, record.room_id)
          .Bind(4, record.state_json)
          .Bind(5, now_ms)
          .Bind(6, record.writer_shard)
          .Bind(7, record.zone_lease_epoch)
          .Bind(8, key);
      TELOS_RETURN_IF_ERROR(q.Run("saving a character"));
    }
    if (leased && zone_fence < record.zone_lease_epoch) {
      TELOS_RETURN_IF_ERROR(
          RaiseZoneFenceLocked(db_, record.zone_id, record.zone_lease_epoch, record.writer_shard));
    }
    if (leased && db_.record_zone_writes) {
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO zone_writes (zone_id, lease_epoch, shard_id, name_key, "
                      "state_version, written_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
      q.Bind(1, record.zone_id)
          .Bind(2, record.zone_lease_epoch)
          .Bind(3, record.writer_shard)
          .Bind(4, key)
          .Bind(5, next_version)
          .Bind(6, now_ms);
      TELOS_RETURN_IF_ERROR(q.Run("recording a zone write"));
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return next_version;
  }

  Result<int64_t> RaiseZoneFence(std::string_view zone, int64_t lease_epoch,
                                 std::string_view shard) override {
    TELOS_RETURN_IF_ERROR(CheckRaiseZoneFenceArgs(zone, lease_epoch, shard));
    std::lock_guard lock(db_.mu);
    Transaction txn(*db_.conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    TELOS_RETURN_IF_ERROR(RaiseZoneFenceLocked(db_, zone, lease_epoch, shard));
    auto fence = ZoneFenceLocked(db_, zone);
    if (!fence.ok()) return fence.status();
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return *fence;
  }

  Result<std::vector<ZoneWrite>> ListZoneWrites(int64_t after_id, size_t limit) override {
    auto rows_max = CheckListZoneWritesArgs(after_id, limit);
    if (!rows_max.ok()) return rows_max.status();
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "SELECT id, zone_id, lease_epoch, shard_id, name_key, state_version, "
                    "written_at_ms FROM zone_writes WHERE id > ?1 ORDER BY id LIMIT ?2");
    q.Bind(1, after_id).Bind(2, *rows_max);
    std::vector<ZoneWrite> out;
    while (true) {
      auto row = q.Step("listing zone writes");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back(ZoneWrite{.id = q.Int(0),
                              .zone = q.Text(1),
                              .lease_epoch = q.Int(2),
                              .shard = q.Text(3),
                              .name_key = q.Text(4),
                              .state_version = q.Int(5),
                              .written_at_ms = q.Int(6)});
    }
    return out;
  }

 private:
  // REQUIRES: db_.mu held.
  Result<CharacterRecord> LoadLocked(const std::string& key, std::string_view name) {
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(
        q, conn,
        "SELECT " + std::string(kCharacterColumns) + " FROM characters WHERE name_key = ?1");
    auto row = q.Bind(1, key).Step("loading a character");
    if (!row.ok()) return row.status();
    if (!*row) return NoSuchCharacter(name);
    return ReadCharacter(q);
  }

  Database& db_;
};

// ------------------------------------------------------------------------------------ accounts

constexpr std::string_view kAccountColumns =
    "id, display_name, password_hash, created_at_ms, failed_logins, locked_until_ms, roles";

AccountRecord ReadAccount(const Query& q) {
  AccountRecord r;
  r.id = q.Int(0);
  r.name = q.Text(1);
  r.password_hash = q.Text(2);
  r.created_at_ms = q.Int(3);
  r.failed_logins = q.Int(4);
  r.locked_until_ms = q.Int(5);
  r.roles = static_cast<Roles>(q.Int(6));
  return r;
}

class SqliteAccountStore final : public AccountStore {
 public:
  explicit SqliteAccountStore(Database& db) : db_(db) {}

  Result<AccountRecord> Create(std::string_view name, std::string_view password_hash) override {
    TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
    TELOS_RETURN_IF_ERROR(CheckPasswordHash(password_hash));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    AccountRecord stored = NewAccountRow(name, password_hash, db_.NowMs());
    TELOS_SQL_QUERY(q, conn,
                    "INSERT INTO accounts (name_key, display_name, password_hash, created_at_ms) "
                    "VALUES (?1, ?2, ?3, ?4)");
    q.Bind(1, NameKey(name)).Bind(2, name).Bind(3, password_hash).Bind(4, stored.created_at_ms);
    TELOS_RETURN_IF_ERROR(Relabel(q.Run("creating an account"), StatusCode::kAlreadyExists,
                                  "the account name " + Quoted(name) + " is taken"));
    stored.id = sqlite3_last_insert_rowid(conn.db());
    return stored;
  }

  Result<AccountRecord> Load(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(
        q, conn, "SELECT " + std::string(kAccountColumns) + " FROM accounts WHERE name_key = ?1");
    auto row = q.Bind(1, NameKey(name)).Step("loading an account");
    if (!row.ok()) return row.status();
    if (!*row) return Status::NotFound("no account named " + Quoted(name));
    return ReadAccount(q);
  }

  Result<AccountRecord> LoadById(int64_t id) override {
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "SELECT " + std::string(kAccountColumns) + " FROM accounts WHERE id = ?1");
    auto row = q.Bind(1, id).Step("loading an account");
    if (!row.ok()) return row.status();
    if (!*row) return NoSuchAccount(id);
    return ReadAccount(q);
  }

  Status SetPasswordHash(int64_t id, std::string_view password_hash) override {
    TELOS_RETURN_IF_ERROR(CheckPasswordHash(password_hash));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "UPDATE accounts SET password_hash = ?1 WHERE id = ?2");
    TELOS_RETURN_IF_ERROR(q.Bind(1, password_hash).Bind(2, id).Run("setting a password hash"));
    return db_.Changes() == 0 ? NoSuchAccount(id) : Status::Ok();
  }

  Result<int64_t> RecordLoginFailure(int64_t id) override {
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "UPDATE accounts SET failed_logins = failed_logins + 1 WHERE id = ?1 "
                    "RETURNING failed_logins");
    auto row = q.Bind(1, id).Step("recording a failed login");
    if (!row.ok()) return row.status();
    if (!*row) return NoSuchAccount(id);
    const int64_t count = q.Int(0);
    // Finish the statement so the implicit transaction ends before the Query resets it.
    auto done = q.Step("recording a failed login");
    if (!done.ok()) return done.status();
    return count;
  }

  Status RecordLoginSuccess(int64_t id) override {
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "UPDATE accounts SET failed_logins = 0, locked_until_ms = 0 WHERE id = ?1");
    TELOS_RETURN_IF_ERROR(q.Bind(1, id).Run("recording a login"));
    return db_.Changes() == 0 ? NoSuchAccount(id) : Status::Ok();
  }

  Status LockUntil(int64_t id, int64_t until_ms) override {
    TELOS_RETURN_IF_ERROR(CheckLockUntil(until_ms));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "UPDATE accounts SET locked_until_ms = ?1 WHERE id = ?2");
    TELOS_RETURN_IF_ERROR(q.Bind(1, until_ms).Bind(2, id).Run("locking an account"));
    return db_.Changes() == 0 ? NoSuchAccount(id) : Status::Ok();
  }

  Result<Roles> UpdateRoles(int64_t id, Roles grant, Roles revoke) override {
    TELOS_RETURN_IF_ERROR(CheckRoleUpdate(grant, revoke));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "UPDATE accounts SET roles = (roles | ?1) & ~?2 WHERE id = ?3 RETURNING roles");
    auto row = q.Bind(1, static_cast<int64_t>(grant))
                   .Bind(2, static_cast<int64_t>(revoke))
                   .Bind(3, id)
                   .Step("updating an account's roles");
    if (!row.ok()) return row.status();
    if (!*row) return NoSuchAccount(id);
    const auto roles = static_cast<Roles>(q.Int(0));
    // Finish the statement so the implicit transaction ends before the Query resets it.
    auto done = q.Step("updating an account's roles");
    if (!done.ok()) return done.status();
    return roles;
  }

 private:
  Database& db_;
};

// ---------------------------------------------------------------------------------------- mail

class SqliteMailStore final : public MailStore {
 public:
  explicit SqliteMailStore(Database& db) : db_(db) {}

  Result<int64_t> Send(std::string_view from, std::string_view to, std::string_view subject,
                       std::string_view body) override {
    TELOS_RETURN_IF_ERROR(CheckMailArgs(from, to, subject, body));
    const std::string key = NameKey(to);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    {
      TELOS_SQL_QUERY(q, conn, "SELECT count(*) FROM mail WHERE recipient_key = ?1");
      auto row = q.Bind(1, key).Step("counting a mailbox");
      if (!row.ok()) return row.status();
      if (*row && q.Int(0) >= static_cast<int64_t>(limits::kMailboxMessagesMax)) {
        return MailboxFull(to);
      }
    }
    {
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO mail (recipient_key, sender, subject, body, sent_at_ms) "
                      "VALUES (?1, ?2, ?3, ?4, ?5)");
      q.Bind(1, key).Bind(2, from).Bind(3, subject).Bind(4, body).Bind(5, db_.NowMs());
      TELOS_RETURN_IF_ERROR(
          Relabel(q.Run("sending mail"), StatusCode::kNotFound, NoSuchCharacter(to).message()));
    }
    const int64_t id = sqlite3_last_insert_rowid(conn.db());
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return id;
  }

  Result<std::vector<MailHeader>> List(std::string_view recipient) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "SELECT id, sender, subject, sent_at_ms, is_read FROM mail "
                    "WHERE recipient_key = ?1 ORDER BY id LIMIT ?2");
    q.Bind(1, NameKey(recipient)).Bind(2, static_cast<int64_t>(limits::kMailboxMessagesMax));
    std::vector<MailHeader> out;
    while (true) {
      auto row = q.Step("listing mail");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back(MailHeader{.id = q.Int(0),
                               .from = q.Text(1),
                               .subject = q.Text(2),
                               .sent_at_ms = q.Int(3),
                               .read = q.Int(4) != 0});
    }
    return out;
  }

  Result<int64_t> CountUnread(std::string_view recipient) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "SELECT count(*) FROM mail WHERE recipient_key = ?1 AND is_read = 0");
    auto row = q.Bind(1, NameKey(recipient)).Step("counting unread mail");
    if (!row.ok()) return row.status();
    return *row ? q.Int(0) : int64_t{0};
  }

  Result<MailMessage> Read(std::string_view recipient, int64_t id) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    const std::string key = NameKey(recipient);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    MailMessage message;
    {
      TELOS_SQL_QUERY(q, conn,
                      "SELECT m.id, m.sender, c.display_name, m.subject, m.body, m.sent_at_ms "
                      "FROM mail m JOIN characters c ON c.name_key = m.recipient_key "
                      "WHERE m.id = ?1 AND m.recipient_key = ?2");
      auto row = q.Bind(1, id).Bind(2, key).Step("reading mail");
      if (!row.ok()) return row.status();
      if (!*row) return NoSuchLetter(recipient, id);
      message = MailMessage{.id = q.Int(0),
                            .from = q.Text(1),
                            .to = q.Text(2),
                            .subject = q.Text(3),
                            .body = q.Text(4),
                            .sent_at_ms = q.Int(5),
                            .read = true};
    }
    {
      TELOS_SQL_QUERY(q, conn, "UPDATE mail SET is_read = 1 WHERE id = ?1");
      TELOS_RETURN_IF_ERROR(q.Bind(1, id).Run("marking mail read"));
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return message;
  }

  Status Delete(std::string_view recipient, int64_t id) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "DELETE FROM mail WHERE id = ?1 AND recipient_key = ?2");
    TELOS_RETURN_IF_ERROR(q.Bind(1, id).Bind(2, NameKey(recipient)).Run("deleting mail"));
    return db_.Changes() == 0 ? NoSuchLetter(recipient, id) : Status::Ok();
  }

 private:
  Database& db_;
};

// --------------------------------------------------------------------------------- checkpoints

class SqliteCheckpointStore final : public CheckpointStore {
 public:
  explicit SqliteCheckpointStore(Database& db) : db_(db) {}

  Status Put(const Checkpoint& checkpoint) override {
    TELOS_RETURN_IF_ERROR(ValidateCheckpoint(checkpoint));
    const std::string key = NameKey(checkpoint.name);
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    {
      // One statement, so the comparison and the write are atomic even against another
      // process on the same file. The WHERE of the upsert is the freshness rule: an equal
      // (owner_epoch, state_version) replaces, a lower one changes nothing.
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO checkpoints (name_key, display_name, account_id, "
                      "state_version, owner_epoch, zone_id, room_id, state_json, written_at_ms) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                      "ON CONFLICT (name_key) DO UPDATE SET display_name = excluded.display_name, "
                      "account_id = excluded.account_id, state_version = excluded.state_version, "
                      "owner_epoch = excluded.owner_epoch, zone_id = excluded.zone_id, "
                      "room_id = excluded.room_id, state_json = excluded.state_json, "
                      "written_at_ms = excluded.written_at_ms "
                      "WHERE (excluded.owner_epoch, excluded.state_version) >= "
                      "(checkpoints.owner_epoch, checkpoints.state_version)");
      q.Bind(1, key)
          .Bind(2, checkpoint.name)
          .Bind(3, checkpoint.account_id)
          .Bind(4, checkpoint.state_version)
          .Bind(5, checkpoint.owner_epoch)
          .Bind(6, checkpoint.zone_id)
          .Bind(7, checkpoint.room_id)
          .Bind(8, checkpoint.state_json)
          .Bind(9, db_.NowMs());
      TELOS_RETURN_IF_ERROR(q.Run("writing a checkpoint"));
    }
    if (db_.Changes() > 0) return Status::Ok();
    // Refused: read the stored pair only to say what beat this writer.
    TELOS_SQL_QUERY(q, conn,
                    "SELECT owner_epoch, state_version FROM checkpoints WHERE name_key = ?1");
    auto row = q.Bind(1, key).Step("reading a checkpoint's fences");
    if (!row.ok()) return row.status();
    std::string stored = "a fresher one";
    if (*row) {
      stored =
          "owner_epoch " + std::to_string(q.Int(0)) + ", state_version " + std::to_string(q.Int(1));
    }
    return Status::FailedPrecondition(
        "stale checkpoint of " + Quoted(checkpoint.name) + " at owner_epoch " +
        std::to_string(checkpoint.owner_epoch) + ", state_version " +
        std::to_string(checkpoint.state_version) + "; the stored one is at " + stored);
  }

  Result<Checkpoint> Get(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "SELECT display_name, account_id, state_version, owner_epoch, zone_id, "
                    "room_id, state_json, written_at_ms FROM checkpoints WHERE name_key = ?1");
    auto row = q.Bind(1, NameKey(name)).Step("reading a checkpoint");
    if (!row.ok()) return row.status();
    if (!*row) return Status::NotFound("no checkpoint of " + Quoted(name));
    return Checkpoint{.name = q.Text(0),
                      .account_id = q.Int(1),
                      .state_version = q.Int(2),
                      .owner_epoch = q.Int(3),
                      .zone_id = q.Text(4),
                      .room_id = q.Text(5),
                      .state_json = q.Text(6),
                      .written_at_ms = q.Int(7)};
  }

  Status Delete(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn, "DELETE FROM checkpoints WHERE name_key = ?1");
    return q.Bind(1, NameKey(name)).Run("deleting a checkpoint");
  }

 private:
  Database& db_;
};

// --------------------------------------------------------------------------------------- store

class SqliteRecordsStore final : public RecordsStore {
 public:
  explicit SqliteRecordsStore(Database& db) : db_(db) {}

  Result<Applied> Apply(std::string_view consumer, const GameEvent& event) override {
    TELOS_RETURN_IF_ERROR(CheckGameEvent(consumer, event));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    {
      // Raises the watermark only past it; no row back means the event was applied before.
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO event_watermarks (consumer, source, sequence) VALUES (?1, ?2, "
                      "?3) ON CONFLICT (consumer, source) DO UPDATE SET sequence = "
                      "excluded.sequence WHERE excluded.sequence > event_watermarks.sequence "
                      "RETURNING sequence");
      auto row = q.Bind(1, consumer)
                     .Bind(2, event.source)
                     .Bind(3, event.sequence)
                     .Step("raising an event watermark");
      if (!row.ok()) return row.status();
      if (!*row) return Applied::kDuplicate;  // the transaction rolls back, changing nothing
    }
    {
      TELOS_SQL_QUERY(q, conn,
                      "INSERT INTO game_tallies (kind, subject, count, first_actor, first_at_ms, "
                      "last_actor, last_at_ms) VALUES (?1, ?2, 1, ?3, ?4, ?3, ?4) ON CONFLICT "
                      "(kind, subject) DO UPDATE SET count = game_tallies.count + 1, "
                      "last_actor = excluded.last_actor, last_at_ms = excluded.last_at_ms");
      q.Bind(1, event.kind).Bind(2, event.subject).Bind(3, event.actor).Bind(4, event.at_ms);
      TELOS_RETURN_IF_ERROR(q.Run("counting a game event"));
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return Applied::kApplied;
  }

  Result<std::vector<Tally>> Tallies() override {
    std::lock_guard lock(db_.mu);
    TELOS_SQL_QUERY(q, *db_.conn,
                    "SELECT kind, subject, count, first_actor, first_at_ms, last_actor, "
                    "last_at_ms FROM game_tallies ORDER BY kind, subject");
    std::vector<Tally> out;
    while (true) {
      auto row = q.Step("reading the tallies");
      if (!row.ok()) return row.status();
      if (!*row) return out;
      out.push_back({q.Text(0), q.Text(1), q.Int(2), q.Text(3), q.Int(4), q.Text(5), q.Int(6)});
    }
  }

  Result<int64_t> Watermark(std::string_view consumer, std::string_view source) override {
    std::lock_guard lock(db_.mu);
    TELOS_SQL_QUERY(q, *db_.conn,
                    "SELECT sequence FROM event_watermarks WHERE consumer = ?1 AND source = ?2");
    auto row = q.Bind(1, consumer).Bind(2, source).Step("reading an event watermark");
    if (!row.ok()) return row.status();
    return *row ? q.Int(0) : int64_t{0};
  }

  Result<int64_t> ReserveSequence(std::string_view source) override {
    TELOS_RETURN_IF_ERROR(CheckSequenceSource(source));
    std::lock_guard lock(db_.mu);
    TELOS_SQL_QUERY(q, *db_.conn,
                    "INSERT INTO event_sequences (source, sequence) VALUES (?1, 1) ON CONFLICT "
                    "(source) DO UPDATE SET sequence = event_sequences.sequence + 1 RETURNING "
                    "sequence");
    auto row = q.Bind(1, source).Step("reserving an event sequence");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("reserving an event sequence: no row back");
    return q.Int(0);
  }

 private:
  Database& db_;
};

// ------------------------------------------------------------------------------------ audit

class SqliteAuditStore final : public AuditStore {
 public:
  explicit SqliteAuditStore(Database& db) : db_(db) {}

  Result<int64_t> Append(const AuditRow& row) override {
    TELOS_RETURN_IF_ERROR(CheckAuditRow(row));
    std::lock_guard lock(db_.mu);
    Connection& conn = *db_.conn;
    TELOS_SQL_QUERY(q, conn,
                    "INSERT INTO staff_audit (at_unix_ms, actor, action, target, detail, world) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    q.Bind(1, row.at_unix_ms)
        .Bind(2, row.actor)
        .Bind(3, row.action)
        .Bind(4, row.target)
        .Bind(5, row.detail)
        .Bind(6, row.world);
    TELOS_RETURN_IF_ERROR(q.Run("appending an audit row"));
    return static_cast<int64_t>(sqlite3_last_insert_rowid(conn.db()));
  }

  Result<std::vector<AuditRow>> List(size_t limit, const std::string& actor,
                                     const std::string& target) override {
    TELOS_RETURN_IF_ERROR(CheckAuditListLimit(limit));
    std::lock_guard lock(db_.mu);
    TELOS_SQL_QUERY(q, *db_.conn,
                    "SELECT id, at_unix_ms, actor, action, target, detail, world FROM staff_audit "
                    "WHERE (?1 = '' OR lower(actor) = lower(?1)) AND "
                    "(?2 = '' OR lower(target) = lower(?2)) ORDER BY id DESC LIMIT ?3");
    q.Bind(1, actor).Bind(2, target).Bind(3, static_cast<int64_t>(limit));
    std::vector<AuditRow> out;
    while (true) {
      auto row = q.Step("listing the audit trail");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back(
          AuditRow{q.Int(0), q.Int(1), q.Text(2), q.Text(3), q.Text(4), q.Text(5), q.Text(6)});
    }
    return out;
  }

 private:
  Database& db_;
};

// ------------------------------------------------------------------------------------ social

// SocialLogic's SQL seam on this connection (social_logic.h): $N placeholders become ?N.
class SqliteSocialSql final : public SocialSql {
 public:
  explicit SqliteSocialSql(Database& db) : db_(db) {}

  Result<std::vector<Row>> Run(std::string_view sql, const std::vector<Value>& params,
                               bool /*write*/, std::string_view what) override {
    std::string text(sql);
    for (char& c : text) {
      if (c == '$') c = '?';
    }
    auto stmt = db_.conn->Prepare(text);
    if (!stmt.ok()) return stmt.status();
    Query q(*db_.conn, *stmt);
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const int64_t* number = std::get_if<int64_t>(&params[i])) {
        q.Bind(index, *number);
      } else {
        q.Bind(index, std::string_view(std::get<std::string>(params[i])));
      }
    }
    const int columns = sqlite3_column_count(*stmt);
    std::vector<Row> out;
    while (true) {
      auto row = q.Step(what);
      if (!row.ok()) return row.status();
      if (!*row) return out;
      Row values;
      for (int c = 0; c < columns; ++c) values.push_back(q.Text(c));
      out.push_back(std::move(values));
    }
  }
  // BEGIN IMMEDIATE already keeps every other writer out until the transaction ends.
  Status Lock(std::string_view /*key*/) override { return Status::Ok(); }
  int64_t NowMs() const override { return db_.NowMs(); }

 private:
  Database& db_;
};

SocialTransactionRunner SqliteSocialRunner(Database& db) {
  return [&db](const std::function<Status(SocialSql&)>& body) -> Status {
    std::lock_guard lock(db.mu);
    Transaction txn(*db.conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    SqliteSocialSql sql(db);
    TELOS_RETURN_IF_ERROR(body(sql));
    return txn.Commit();
  };
}

class SqliteStoreImpl final : public SqliteStore {
 public:
  SqliteStoreImpl(std::unique_ptr<Connection> conn, const Clock& clock, int64_t schema_version,
                  bool record_zone_writes)
      : db_(std::move(conn), clock, record_zone_writes),
        characters_(db_),
        accounts_(db_),
        mail_(db_),
        checkpoints_(db_),
        records_(db_),
        audit_(db_),
        social_(SqliteSocialRunner(db_)),
        schema_version_(schema_version) {}

  CharacterStore& characters() override { return characters_; }
  AccountStore& accounts() override { return accounts_; }
  MailStore& mail() override { return mail_; }
  SocialStore& social() override { return social_; }
  CheckpointStore& checkpoints() override { return checkpoints_; }
  RecordsStore& records() override { return records_; }
  AuditStore& audit() override { return audit_; }
  int64_t schema_version() const override { return schema_version_; }

 private:
  Database db_;
  SqliteCharacterStore characters_;
  SqliteAccountStore accounts_;
  SqliteMailStore mail_;
  SqliteCheckpointStore checkpoints_;
  SqliteRecordsStore records_;
  SqliteAuditStore audit_;
  SocialLogic social_;
  const int64_t schema_version_;
};

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const SqliteStoreOptions& options,
                                                       const Clock& clock) {
  if (options.path.empty()) return Status::InvalidArgument("the SQLite path is empty");
  if (options.busy_timeout_ms < 0) return Status::InvalidArgument("busy_timeout_ms is negative");
  auto conn = Connection::Open(options.path, options.busy_timeout_ms, options.synchronous_full);
  if (!conn.ok()) return conn.status();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
          .count();
  auto version = sqlite::ApplyMigrations(**conn, sqlite::EmbeddedMigrations(), now_ms);
  if (!version.ok()) {
    return Status(version.status().code(), options.path + ": " + version.status().message());
  }
  return std::unique_ptr<SqliteStore>(
      new SqliteStoreImpl(std::move(conn).value(), clock, *version, options.record_zone_writes));
}

int64_t SqliteSchemaVersionKnown() {
  return static_cast<int64_t>(sqlite::EmbeddedMigrations().size());
}

}  // namespace telos::store
