#include "telos/store/postgres_store.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend_checks.h"
#include "postgres/connection.h"
#include "postgres/migrations.h"
#include "social_logic.h"
#include "telos/base/limits.h"

namespace telos::store {
namespace {

using postgres::Access;
using postgres::Connection;
using postgres::ConnectOptions;
using postgres::Params;
using postgres::Rows;
using postgres::Transaction;

// Fetches the live connection into `var` (a Connection&), or returns the enclosing function's
// error when PostgreSQL cannot be reached. REQUIRES: db_.mu held.
#define TELOS_PG_CONNECTION(var)                            \
  auto var##_acquired = db_.AcquireLocked();                \
  if (!var##_acquired.ok()) return var##_acquired.status(); \
  Connection& var = **var##_acquired

// The connection shared by the three stores of one PostgresStore, and its reconnect state.
//
// Why one connection under a mutex rather than a pool: the callers are the blocking pool and the
// CharacterSaver's single worker, and every call is one or a few short statements, so the
// connection is rarely contended; a fleet of shards times N pooled connections would eat
// max_connections; and one connection keeps the reconnect/backoff state trivially consistent.
// If profiles ever show callers queueing here, a pool of these is a local change.
class Database {
 public:
  Database(ConnectOptions connect, const PostgresStoreOptions& options, const Clock& clock,
           std::unique_ptr<Connection> conn)
      : record_zone_writes(options.record_zone_writes),
        connect_(std::move(connect)),
        backoff_initial_ms_(options.reconnect_backoff_initial_ms),
        backoff_max_ms_(options.reconnect_backoff_max_ms),
        clock_(clock),
        conn_(std::move(conn)) {}

  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.WallNow().time_since_epoch())
        .count();
  }

  // The live connection, reconnecting when the last one died. A connection found dead is
  // replaced at once (the server may simply have restarted); only after a failed connect do
  // further attempts wait out the backoff, so a down server costs one connect timeout per
  // backoff period, not one per call. REQUIRES: mu held.
  Result<Connection*> AcquireLocked() {
    if (conn_ != nullptr && !conn_->broken()) return conn_.get();
    conn_.reset();
    const Instant now = clock_.Now();
    if (retry_at_.has_value() && now < *retry_at_) {
      return Status::Unavailable("PostgreSQL is unreachable (next reconnect attempt in " +
                                 std::to_string(ElapsedMs(now, *retry_at_)) +
                                 " ms): " + last_error_);
    }
    auto opened = Connection::Open(connect_);
    if (!opened.ok()) {
      backoff_ms_ =
          backoff_ms_ == 0 ? backoff_initial_ms_ : std::min(backoff_ms_ * 2, backoff_max_ms_);
      retry_at_ = now + std::chrono::milliseconds(backoff_ms_);
      last_error_ = opened.status().message();
      return Status::Unavailable("PostgreSQL is unreachable: " + last_error_);
    }
    backoff_ms_ = 0;
    retry_at_.reset();
    conn_ = std::move(opened).value();
    return conn_.get();
  }

  // Runs one read-only statement. When the connection turns out to be dead (a server restart
  // leaves an idle connection dead without telling us until it is used), the read is retried
  // once on a new connection: unlike a write, a read is safe to repeat. REQUIRES: mu held.
  Result<Rows> ReadLocked(std::string_view sql, const Params& params, std::string_view what) {
    for (int attempt = 0;; ++attempt) {
      auto conn = AcquireLocked();
      if (!conn.ok()) return conn.status();
      auto rows = (*conn)->Exec(sql, params, Access::kRead, what);
      if (rows.ok() || attempt > 0 || !(*conn)->broken()) return rows;
    }
  }

  // Serializes every use of conn_ and the reconnect state (see the class comment).
  std::mutex mu;
  // PostgresStoreOptions::record_zone_writes.
  const bool record_zone_writes;

 private:
  const ConnectOptions connect_;
  const int64_t backoff_initial_ms_;
  const int64_t backoff_max_ms_;
  const Clock& clock_;
  std::unique_ptr<Connection> conn_;  // null after a drop until the next successful connect
  int64_t backoff_ms_ = 0;            // 0 while the last connect succeeded
  std::optional<Instant> retry_at_;
  std::string last_error_;
};

// ---------------------------------------------------------------------------------- characters

#define TELOS_PG_CHARACTER_COLUMNS                                                       \
  "display_name, account_id, state_version, owner_epoch, zone_id, room_id, state_json, " \
  "created_at_ms, updated_at_ms, writer_shard, zone_lease_epoch"

// The fence-raising upsert, shared by RaiseZoneFence and a leased Save: stores
// max(stored, $2) as the fence of zone $1, records the shard ($3) and the time ($4) only when the
// fence rises, and returns the fence now stored. Every path (insert, update, or a conflicting
// row left at a higher epoch) leaves the row locked until the end of the transaction, so in a
// Save the returned fence cannot move before the commit.
constexpr std::string_view kRaiseZoneFence =
    "INSERT INTO zone_fences (zone_id, lease_epoch, shard_id, updated_at_ms) "
    "VALUES ($1, $2, $3, $4) ON CONFLICT (zone_id) DO UPDATE SET "
    "lease_epoch = GREATEST(zone_fences.lease_epoch, EXCLUDED.lease_epoch), "
    "shard_id = CASE WHEN EXCLUDED.lease_epoch > zone_fences.lease_epoch "
    "THEN EXCLUDED.shard_id ELSE zone_fences.shard_id END, "
    "updated_at_ms = CASE WHEN EXCLUDED.lease_epoch > zone_fences.lease_epoch "
    "THEN EXCLUDED.updated_at_ms ELSE zone_fences.updated_at_ms END "
    "RETURNING lease_epoch";

CharacterRecord ReadCharacter(const Rows& rows, int row) {
  CharacterRecord r;
  r.name = rows.Text(row, 0);
  r.account_id = rows.Int(row, 1);
  r.state_version = rows.Int(row, 2);
  r.owner_epoch = rows.Int(row, 3);
  r.zone_id = rows.Text(row, 4);
  r.room_id = rows.Text(row, 5);
  r.state_json = rows.Text(row, 6);
  r.created_at_ms = rows.Int(row, 7);
  r.updated_at_ms = rows.Int(row, 8);
  r.writer_shard = rows.Text(row, 9);
  r.zone_lease_epoch = rows.Int(row, 10);
  return r;
}

class PostgresCharacterStore final : public CharacterStore {
 public:
  explicit PostgresCharacterStore(Database& db) : db_(db) {}

  Result<CharacterRecord> Create(const CharacterRecord& record) override {
    TELOS_RETURN_IF_ERROR(CheckCharacterContent(record));
    const std::string key = NameKey(record.name);
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // Locking the account row serializes the creates of one account, so the per-account cap
    // cannot be overrun by two creates that both counted below it.
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    {
      auto account =
          conn.Exec("SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
                    Params().Add(record.account_id), Access::kRead, "locking an account");
      if (!account.ok()) return account.status();
      if (account->empty()) return NoSuchAccount(record.account_id);
      auto count = conn.Exec("SELECT count(*) FROM characters WHERE account_id = $1",
                             Params().Add(record.account_id), Access::kRead,
                             "counting an account's characters");
      if (!count.ok()) return count.status();
      if (count->Int(0, 0) >= static_cast<int64_t>(limits::kCharactersPerAccountMax)) {
        return TooManyCharacters(record.account_id);
      }
    }
    CharacterRecord stored = NewCharacterRow(record, db_.NowMs());
    auto inserted = conn.Exec(
        "INSERT INTO characters (name_key, display_name, account_id, state_version, owner_epoch, "
        "zone_id, room_id, state_json, created_at_ms, updated_at_ms, writer_shard, "
        "zone_lease_epoch) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        Params()
            .Add(key)
            .Add(stored.name)
            .Add(stored.account_id)
            .Add(stored.state_version)
            .Add(stored.owner_epoch)
            .Add(stored.zone_id)
            .Add(stored.room_id)
            .Add(stored.state_json)
            .Add(stored.created_at_ms)
            .Add(stored.updated_at_ms)
            .Add(stored.writer_shard)
            .Add(stored.zone_lease_epoch),
        Access::kRead, "creating a character");
    if (!inserted.ok()) {
      return Relabel(inserted.status(), StatusCode::kAlreadyExists,
                     "the character name " + Quoted(record.name) + " is taken");
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return stored;
  }

  Result<CharacterRecord> Load(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    auto rows =
        db_.ReadLocked("SELECT " TELOS_PG_CHARACTER_COLUMNS " FROM characters WHERE name_key = $1",
                       Params().Add(NameKey(name)), "loading a character");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchCharacter(name);
    return ReadCharacter(*rows, 0);
  }

  Result<std::vector<CharacterRecord>> ListByAccount(int64_t account_id) override {
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked(
        "SELECT " TELOS_PG_CHARACTER_COLUMNS
        " FROM characters WHERE account_id = $1 "
        "ORDER BY created_at_ms, name_key LIMIT $2",
        Params().Add(account_id).Add(static_cast<int64_t>(limits::kCharactersPerAccountMax)),
        "listing an account's characters");
    if (!rows.ok()) return rows.status();
    std::vector<CharacterRecord> out;
    for (int i = 0; i < rows->size(); ++i) out.push_back(ReadCharacter(*rows, i));
    return out;
  }

  Status Delete(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // The character's mail goes with it (ON DELETE CASCADE).
    auto rows = conn.Exec("DELETE FROM characters WHERE name_key = $1 RETURNING 1",
                          Params().Add(NameKey(name)), Access::kWrite, "deleting a character");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchCharacter(name);
    return Status::Ok();
  }

  Result<CharacterRecord> ClaimOwnership(std::string_view name, int64_t directory_epoch) override {
    TELOS_RETURN_IF_ERROR(CheckClaimArgs(name, directory_epoch));
    const std::string key = NameKey(name);
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // One statement: the row lock taken by the UPDATE makes read-max-and-raise atomic against
    // every other claim and save, so two claims always mint two different epochs.
    auto rows = conn.Exec(
        "UPDATE characters SET owner_epoch = GREATEST(owner_epoch, $2::bigint) + 1 "
        "WHERE name_key = $1 AND GREATEST(owner_epoch, $2::bigint) < $3::bigint "
        "RETURNING " TELOS_PG_CHARACTER_COLUMNS,
        Params().Add(key).Add(directory_epoch).Add(std::numeric_limits<int64_t>::max()),
        Access::kWrite, "claiming a character");
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) return ReadCharacter(*rows, 0);
    // Nothing was written; tell a missing row from an exhausted epoch.
    auto exists = conn.Exec("SELECT 1 FROM characters WHERE name_key = $1", Params().Add(key),
                            Access::kRead, "claiming a character");
    if (!exists.ok()) return exists.status();
    if (exists->empty()) return NoSuchCharacter(name);
    return OwnerEpochExhausted(name);
  }

  Result<int64_t> Save(const CharacterRecord& record, int64_t expected_state_version,
                       int64_t writer_owner_epoch) override {
    TELOS_RETURN_IF_ERROR(CheckSaveArgs(record, expected_state_version, writer_owner_epoch));
    const std::string key = NameKey(record.name);
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    if (record.zone_lease_epoch == 0) {
      // An unleased save: the two per-character fences in one autocommit UPDATE.
      auto saved = UpdateRow(conn, key, record, expected_state_version, writer_owner_epoch,
                             db_.NowMs(), Access::kWrite);
      if (!saved.ok()) return saved.status();
      if (saved->has_value()) return **saved;
      return ExplainRefusal(conn, key, record, expected_state_version, writer_owner_epoch, 0);
    }

    // A leased save: the zone fence and the row are judged and written in one transaction.
    // The fence row is locked first and held until the commit, so a raise either lands before
    // this save judges the fence or waits for its commit: a save of an older tenure never lands
    // after a newer tenure has begun. Every leased save of every zone locks its
    // fence before its character, and a claim or a raise locks only one row, so the order of
    // locks never forms a cycle.
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    const int64_t now_ms = db_.NowMs();
    // The common case, a fence already at this save's epoch (the tenure raised it before its
    // zone ran): a shared lock, which concurrent saves of the tenure take together and only a
    // raise has to wait for. Its WHERE leaves a lower fence unlocked, so the raise below never
    // has to upgrade a shared lock (two savers doing that would deadlock).
    auto held = conn.Exec(
        "SELECT lease_epoch FROM zone_fences WHERE zone_id = $1 AND lease_epoch >= $2 FOR SHARE",
        Params().Add(record.zone_id).Add(record.zone_lease_epoch), Access::kRead,
        "locking a zone fence");
    if (!held.ok()) return held.status();
    int64_t zone_fence = 0;
    if (!held->empty()) {
      zone_fence = held->Int(0, 0);
    } else {
      // A lower fence or none: raise it to this save's epoch. The upsert reports the fence it
      // left, which a raise committed since the SELECT may have put above this save.
      auto raised = conn.Exec(kRaiseZoneFence,
                              Params()
                                  .Add(record.zone_id)
                                  .Add(record.zone_lease_epoch)
                                  .Add(record.writer_shard)
                                  .Add(now_ms),
                              Access::kRead, "raising a zone fence");
      if (!raised.ok()) return raised.status();
      zone_fence = raised->Int(0, 0);
    }
    const int64_t zone_refusal = zone_fence > record.zone_lease_epoch ? zone_fence : 0;
    if (zone_refusal == 0) {
      auto saved = UpdateRow(conn, key, record, expected_state_version, writer_owner_epoch, now_ms,
                             Access::kRead);
      if (!saved.ok()) return saved.status();
      if (saved->has_value()) {
        const int64_t next_version = **saved;
        if (db_.record_zone_writes) {
          auto recorded = conn.Exec(
              "INSERT INTO zone_writes (zone_id, lease_epoch, shard_id, name_key, "
              "state_version, written_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
              Params()
                  .Add(record.zone_id)
                  .Add(record.zone_lease_epoch)
                  .Add(record.writer_shard)
                  .Add(key)
                  .Add(next_version)
                  .Add(now_ms),
              Access::kRead, "recording a zone write");
          if (!recorded.ok()) return recorded.status();
        }
        TELOS_RETURN_IF_ERROR(txn.Commit());
        return next_version;
      }
    }
    // Refused; leaving the scope rolls back a fence this save raised.
    return ExplainRefusal(conn, key, record, expected_state_version, writer_owner_epoch,
                          zone_refusal);
  }

  Result<int64_t> RaiseZoneFence(std::string_view zone, int64_t lease_epoch,
                                 std::string_view shard) override {
    TELOS_RETURN_IF_ERROR(CheckRaiseZoneFenceArgs(zone, lease_epoch, shard));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // One statement: the upsert holds the row lock while it takes the maximum, so two raises
    // (or a raise and a leased save) never interleave, and it returns the fence it left.
    auto rows =
        conn.Exec(kRaiseZoneFence, Params().Add(zone).Add(lease_epoch).Add(shard).Add(db_.NowMs()),
                  Access::kWrite, "raising a zone fence");
    if (!rows.ok()) return rows.status();
    return rows->Int(0, 0);
  }

  Result<std::vector<ZoneWrite>> ListZoneWrites(int64_t after_id, size_t limit) override {
    auto rows_max = CheckListZoneWritesArgs(after_id, limit);
    if (!rows_max.ok()) return rows_max.status();
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked(
        "SELECT id, zone_id, lease_epoch, shard_id, name_key, state_version, written_at_ms "
        "FROM zone_writes WHERE id > $1 ORDER BY id LIMIT $2",
        Params().Add(after_id).Add(*rows_max), "listing zone writes");
    if (!rows.ok()) return rows.status();
    std::vector<ZoneWrite> out;
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back(ZoneWrite{.id = rows->Int(i, 0),
                              .zone = rows->Text(i, 1),
                              .lease_epoch = rows->Int(i, 2),
                              .shard = rows->Text(i, 3),
                              .name_key = rows->Text(i, 4),
                              .state_version = rows->Int(i, 5),
                              .written_at_ms = rows->Int(i, 6)});
    }
    return out;
  }

 private:
  // The conditional write of the row: both per-character fences are conjuncts of one UPDATE.
  // PostgreSQL takes the row lock and, under READ COMMITTED, re-evaluates the WHERE clause
  // against the newest committed row version once it holds the lock, so the write happens if
  // and only if both fences hold on the row it replaces: there is no window between "check" and
  // "write" for another saver or a claim. Returns the new state_version, or nullopt when the
  // fences refused it (or the row is gone). REQUIRES: db_.mu held.
  static Result<std::optional<int64_t>> UpdateRow(Connection& conn, const std::string& key,
                                                  const CharacterRecord& record,
                                                  int64_t expected_state_version,
                                                  int64_t writer_owner_epoch, int64_t now_ms,
                                                  Access access) {
    auto saved = conn.Exec(
        "UPDATE characters SET state_version = state_version + 1, zone_id = $4, room_id = $5, "
        "state_json = $6, updated_at_ms = $7, writer_shard = $8, zone_lease_epoch = $9 "
        "WHERE name_key = $1 AND state_version = $2 AND owner_epoch <= $3 "
        "RETURNING state_version",
        Params()
            .Add(key)
            .Add(expected_state_version)
            .Add(writer_owner_epoch)
            .Add(record.zone_id)
            .Add(record.room_id)
            .Add(record.state_json)
            .Add(now_ms)
            .Add(record.writer_shard)
            .Add(record.zone_lease_epoch),
        access, "saving a character");
    if (!saved.ok()) return saved.status();
    if (saved->empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(saved->Int(0, 0));
  }

  // Says why a save did not happen; this read cannot change that outcome. `zone_fence` is the
  // zone fence that refused the save (then the UPDATE never ran), or 0. The read may see a later
  // row than the save judged, which is still race-free for the verdict:
  //   - owner_epoch never decreases, so an epoch above the writer's now is above it forever.
  //     Reporting "fenced" is right even if the save actually failed on the zone or the
  //     version: the writer could never get past the owner fence, and it is reported first.
  //   - a zone fence that refused the save stays above it (fences only rise).
  //   - otherwise neither fence was above the writer's at the UPDATE either (monotonic again),
  //     so the UPDATE failed on the version: kConflict.
  //   - no row: the character was deleted.
  // A row deleted and re-created in between is judged like any other row; either verdict is a
  // refusal, and the caller re-reads before trying again. REQUIRES: db_.mu held.
  static Status ExplainRefusal(Connection& conn, const std::string& key,
                               const CharacterRecord& record, int64_t expected_state_version,
                               int64_t writer_owner_epoch, int64_t zone_fence) {
    auto fences = conn.Exec("SELECT state_version, owner_epoch FROM characters WHERE name_key = $1",
                            Params().Add(key), Access::kRead, "reading a character's fences");
    if (!fences.ok()) return fences.status();
    if (fences->empty()) return NoSuchCharacter(record.name);
    const int64_t row_version = fences->Int(0, 0);
    const int64_t row_epoch = fences->Int(0, 1);
    if (row_epoch > writer_owner_epoch) return Fenced(record.name, row_epoch, writer_owner_epoch);
    if (zone_fence > 0) {
      return ZoneFenced(record.name, record.zone_id, zone_fence, record.zone_lease_epoch);
    }
    return StaleStateVersion(record.name, row_version, expected_state_version);
  }

  Database& db_;
};

// ------------------------------------------------------------------------------------ accounts

#define TELOS_PG_ACCOUNT_COLUMNS \
  "id, display_name, password_hash, created_at_ms, failed_logins, locked_until_ms, roles"

AccountRecord ReadAccount(const Rows& rows) {
  AccountRecord r;
  r.id = rows.Int(0, 0);
  r.name = rows.Text(0, 1);
  r.password_hash = rows.Text(0, 2);
  r.created_at_ms = rows.Int(0, 3);
  r.failed_logins = rows.Int(0, 4);
  r.locked_until_ms = rows.Int(0, 5);
  r.roles = static_cast<Roles>(rows.Int(0, 6));
  return r;
}

class PostgresAccountStore final : public AccountStore {
 public:
  explicit PostgresAccountStore(Database& db) : db_(db) {}

  Result<AccountRecord> Create(std::string_view name, std::string_view password_hash) override {
    TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
    TELOS_RETURN_IF_ERROR(CheckPasswordHash(password_hash));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    AccountRecord stored = NewAccountRow(name, password_hash, db_.NowMs());
    auto rows = conn.Exec(
        "INSERT INTO accounts (name_key, display_name, password_hash, created_at_ms) "
        "VALUES ($1, $2, $3, $4) RETURNING id",
        Params().Add(NameKey(name)).Add(name).Add(password_hash).Add(stored.created_at_ms),
        Access::kWrite, "creating an account");
    if (!rows.ok()) {
      return Relabel(rows.status(), StatusCode::kAlreadyExists,
                     "the account name " + Quoted(name) + " is taken");
    }
    stored.id = rows->Int(0, 0);
    return stored;
  }

  Result<AccountRecord> Load(std::string_view name) override {
    TELOS_RETURN_IF_ERROR(ValidateAccountName(name));
    std::lock_guard lock(db_.mu);
    auto rows =
        db_.ReadLocked("SELECT " TELOS_PG_ACCOUNT_COLUMNS " FROM accounts WHERE name_key = $1",
                       Params().Add(NameKey(name)), "loading an account");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status::NotFound("no account named " + Quoted(name));
    return ReadAccount(*rows);
  }

  Result<AccountRecord> LoadById(int64_t id) override {
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked("SELECT " TELOS_PG_ACCOUNT_COLUMNS " FROM accounts WHERE id = $1",
                               Params().Add(id), "loading an account");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchAccount(id);
    return ReadAccount(*rows);
  }

  Status SetPasswordHash(int64_t id, std::string_view password_hash) override {
    TELOS_RETURN_IF_ERROR(CheckPasswordHash(password_hash));
    return UpdateOne("UPDATE accounts SET password_hash = $2 WHERE id = $1 RETURNING id",
                     Params().Add(id).Add(password_hash), id, "setting a password hash");
  }

  Result<int64_t> RecordLoginFailure(int64_t id) override {
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // One statement, so concurrent failures each count.
    auto rows = conn.Exec(
        "UPDATE accounts SET failed_logins = failed_logins + 1 WHERE id = $1 "
        "RETURNING failed_logins",
        Params().Add(id), Access::kWrite, "recording a failed login");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchAccount(id);
    return rows->Int(0, 0);
  }

  Status RecordLoginSuccess(int64_t id) override {
    return UpdateOne(
        "UPDATE accounts SET failed_logins = 0, locked_until_ms = 0 WHERE id = $1 RETURNING id",
        Params().Add(id), id, "recording a login");
  }

  Status LockUntil(int64_t id, int64_t until_ms) override {
    TELOS_RETURN_IF_ERROR(CheckLockUntil(until_ms));
    return UpdateOne("UPDATE accounts SET locked_until_ms = $2 WHERE id = $1 RETURNING id",
                     Params().Add(id).Add(until_ms), id, "locking an account");
  }

  Result<Roles> UpdateRoles(int64_t id, Roles grant, Roles revoke) override {
    TELOS_RETURN_IF_ERROR(CheckRoleUpdate(grant, revoke));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // One statement, so two grants at once both stick.
    auto rows = conn.Exec(
        "UPDATE accounts SET roles = (roles | $2::bigint) & ~($3::bigint) WHERE id = $1 "
        "RETURNING roles",
        Params().Add(id).Add(static_cast<int64_t>(grant)).Add(static_cast<int64_t>(revoke)),
        Access::kWrite, "updating an account's roles");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchAccount(id);
    return static_cast<Roles>(rows->Int(0, 0));
  }

 private:
  // Runs an UPDATE ... RETURNING of one account; NotFound when it matched no row.
  Status UpdateOne(std::string_view sql, const Params& params, int64_t id, std::string_view what) {
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    auto rows = conn.Exec(sql, params, Access::kWrite, what);
    if (!rows.ok()) return rows.status();
    return rows->empty() ? NoSuchAccount(id) : Status::Ok();
  }

  Database& db_;
};

// ---------------------------------------------------------------------------------------- mail

class PostgresMailStore final : public MailStore {
 public:
  PostgresMailStore(Database& db, std::string schema) : db_(db), schema_(std::move(schema)) {}

  Result<int64_t> Send(std::string_view from, std::string_view to, std::string_view subject,
                       std::string_view body) override {
    TELOS_RETURN_IF_ERROR(CheckMailArgs(from, to, subject, body));
    const std::string key = NameKey(to);
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // A per-mailbox advisory lock serializes deliveries to one recipient, so the size bound
    // holds against concurrent senders in other processes, without locking the character row
    // that saves update.
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    {
      auto locked = conn.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                              Params().Add("telos.mailbox:" + schema_ + ":" + key), Access::kRead,
                              "locking a mailbox");
      if (!locked.ok()) return locked.status();
      auto count = conn.Exec("SELECT count(*) FROM mail WHERE recipient_key = $1",
                             Params().Add(key), Access::kRead, "counting a mailbox");
      if (!count.ok()) return count.status();
      if (count->Int(0, 0) >= static_cast<int64_t>(limits::kMailboxMessagesMax)) {
        return MailboxFull(to);
      }
    }
    auto inserted = conn.Exec(
        "INSERT INTO mail (recipient_key, sender, subject, body, sent_at_ms) "
        "VALUES ($1, $2, $3, $4, $5) RETURNING id",
        Params().Add(key).Add(from).Add(subject).Add(body).Add(db_.NowMs()), Access::kRead,
        "sending mail");
    if (!inserted.ok()) {
      return Relabel(inserted.status(), StatusCode::kNotFound, NoSuchCharacter(to).message());
    }
    const int64_t id = inserted->Int(0, 0);
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return id;
  }

  Result<std::vector<MailHeader>> List(std::string_view recipient) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked(
        "SELECT id, sender, subject, sent_at_ms, is_read FROM mail "
        "WHERE recipient_key = $1 ORDER BY id LIMIT $2",
        Params().Add(NameKey(recipient)).Add(static_cast<int64_t>(limits::kMailboxMessagesMax)),
        "listing mail");
    if (!rows.ok()) return rows.status();
    std::vector<MailHeader> out;
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back(MailHeader{.id = rows->Int(i, 0),
                               .from = rows->Text(i, 1),
                               .subject = rows->Text(i, 2),
                               .sent_at_ms = rows->Int(i, 3),
                               .read = rows->Bool(i, 4)});
    }
    return out;
  }

  Result<int64_t> CountUnread(std::string_view recipient) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked("SELECT count(*) FROM mail WHERE recipient_key = $1 AND NOT is_read",
                               Params().Add(NameKey(recipient)), "counting unread mail");
    if (!rows.ok()) return rows.status();
    return rows->Int(0, 0);
  }

  Result<MailMessage> Read(std::string_view recipient, int64_t id) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    // Marks it read and returns it in one statement; the recipient_key conjunct keeps one
    // character from reading another's letter by guessing its id.
    auto rows = conn.Exec(
        "UPDATE mail m SET is_read = TRUE FROM characters c "
        "WHERE m.id = $1 AND m.recipient_key = $2 AND c.name_key = m.recipient_key "
        "RETURNING m.id, m.sender, c.display_name, m.subject, m.body, m.sent_at_ms",
        Params().Add(id).Add(NameKey(recipient)), Access::kWrite, "reading mail");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return NoSuchLetter(recipient, id);
    return MailMessage{.id = rows->Int(0, 0),
                       .from = rows->Text(0, 1),
                       .to = rows->Text(0, 2),
                       .subject = rows->Text(0, 3),
                       .body = rows->Text(0, 4),
                       .sent_at_ms = rows->Int(0, 5),
                       .read = true};
  }

  Status Delete(std::string_view recipient, int64_t id) override {
    TELOS_RETURN_IF_ERROR(ValidateCharacterName(recipient));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    auto rows =
        conn.Exec("DELETE FROM mail WHERE id = $1 AND recipient_key = $2 RETURNING id",
                  Params().Add(id).Add(NameKey(recipient)), Access::kWrite, "deleting mail");
    if (!rows.ok()) return rows.status();
    return rows->empty() ? NoSuchLetter(recipient, id) : Status::Ok();
  }

 private:
  Database& db_;
  const std::string schema_;
};

// --------------------------------------------------------------------------------------- store

class PostgresRecordsStore final : public RecordsStore {
 public:
  explicit PostgresRecordsStore(Database& db) : db_(db) {}

  Result<Applied> Apply(std::string_view consumer, const GameEvent& event) override {
    TELOS_RETURN_IF_ERROR(CheckGameEvent(consumer, event));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    // Raises the watermark only past it (the row lock orders concurrent consumers); no row
    // back means the event was applied before.
    auto raised = conn.Exec(
        "INSERT INTO event_watermarks (consumer, source, sequence) VALUES ($1, $2, $3) "
        "ON CONFLICT (consumer, source) DO UPDATE SET sequence = excluded.sequence "
        "WHERE excluded.sequence > event_watermarks.sequence RETURNING sequence",
        Params().Add(consumer).Add(event.source).Add(event.sequence), Access::kRead,
        "raising an event watermark");
    if (!raised.ok()) return raised.status();
    if (raised->empty()) return Applied::kDuplicate;  // rolled back: nothing changes
    auto counted = conn.Exec(
        "INSERT INTO game_tallies (kind, subject, count, first_actor, first_at_ms, last_actor, "
        "last_at_ms) VALUES ($1, $2, 1, $3, $4, $3, $4) ON CONFLICT (kind, subject) DO UPDATE "
        "SET count = game_tallies.count + 1, last_actor = excluded.last_actor, "
        "last_at_ms = excluded.last_at_ms",
        Params().Add(event.kind).Add(event.subject).Add(event.actor).Add(event.at_ms),
        Access::kRead, "counting a game event");
    if (!counted.ok()) return counted.status();
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return Applied::kApplied;
  }

  Result<std::vector<Tally>> Tallies() override {
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked(
        "SELECT kind, subject, count, first_actor, first_at_ms, last_actor, last_at_ms "
        "FROM game_tallies ORDER BY kind, subject",
        Params(), "reading the tallies");
    if (!rows.ok()) return rows.status();
    std::vector<Tally> out;
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back({rows->Text(i, 0), rows->Text(i, 1), rows->Int(i, 2), rows->Text(i, 3),
                     rows->Int(i, 4), rows->Text(i, 5), rows->Int(i, 6)});
    }
    return out;
  }

  Result<int64_t> Watermark(std::string_view consumer, std::string_view source) override {
    std::lock_guard lock(db_.mu);
    auto rows =
        db_.ReadLocked("SELECT sequence FROM event_watermarks WHERE consumer = $1 AND source = $2",
                       Params().Add(consumer).Add(source), "reading an event watermark");
    if (!rows.ok()) return rows.status();
    return rows->empty() ? int64_t{0} : rows->Int(0, 0);
  }

  Result<int64_t> ReserveSequence(std::string_view source) override {
    TELOS_RETURN_IF_ERROR(CheckSequenceSource(source));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    auto rows = conn.Exec(
        "INSERT INTO event_sequences (source, sequence) VALUES ($1, 1) ON CONFLICT (source) "
        "DO UPDATE SET sequence = event_sequences.sequence + 1 RETURNING sequence",
        Params().Add(source), Access::kWrite, "reserving an event sequence");
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status::Internal("reserving an event sequence: no row back");
    return rows->Int(0, 0);
  }

 private:
  Database& db_;
};

// ---------------------------------------------------------------------------------------- audit

class PostgresAuditStore final : public AuditStore {
 public:
  explicit PostgresAuditStore(Database& db) : db_(db) {}

  Result<int64_t> Append(const AuditRow& row) override {
    TELOS_RETURN_IF_ERROR(CheckAuditRow(row));
    std::lock_guard lock(db_.mu);
    TELOS_PG_CONNECTION(conn);
    auto rows = conn.Exec(
        "INSERT INTO staff_audit (at_unix_ms, actor, action, target, detail, world) "
        "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        Params()
            .Add(row.at_unix_ms)
            .Add(row.actor)
            .Add(row.action)
            .Add(row.target)
            .Add(row.detail)
            .Add(row.world),
        Access::kWrite, "appending an audit row");
    if (!rows.ok()) return rows.status();
    return rows->Int(0, 0);
  }

  Result<std::vector<AuditRow>> List(size_t limit, const std::string& actor,
                                     const std::string& target) override {
    TELOS_RETURN_IF_ERROR(CheckAuditListLimit(limit));
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked(
        "SELECT id, at_unix_ms, actor, action, target, detail, world FROM staff_audit "
        "WHERE ($1 = '' OR lower(actor) = lower($1)) AND ($2 = '' OR lower(target) = lower($2)) "
        "ORDER BY id DESC LIMIT $3",
        Params().Add(actor).Add(target).Add(static_cast<int64_t>(limit)),
        "listing the audit trail");
    if (!rows.ok()) return rows.status();
    std::vector<AuditRow> out;
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back(AuditRow{rows->Int(i, 0), rows->Int(i, 1), rows->Text(i, 2), rows->Text(i, 3),
                             rows->Text(i, 4), rows->Text(i, 5), rows->Text(i, 6)});
    }
    return out;
  }

 private:
  Database& db_;
};

// ------------------------------------------------------------------------------------ social

// SocialLogic's SQL seam on this connection (social_logic.h), inside the runner's transaction.
class PostgresSocialSql final : public SocialSql {
 public:
  PostgresSocialSql(Database& db, Connection& conn, const std::string& schema)
      : db_(db), conn_(conn), schema_(schema) {}

  Result<std::vector<Row>> Run(std::string_view sql, const std::vector<Value>& params, bool write,
                               std::string_view what) override {
    Params bound;
    for (const Value& value : params) {
      if (const int64_t* number = std::get_if<int64_t>(&value)) {
        bound.Add(*number);
      } else {
        bound.Add(std::string_view(std::get<std::string>(value)));
      }
    }
    auto rows = conn_.Exec(sql, bound, write ? Access::kWrite : Access::kRead, what);
    if (!rows.ok()) return rows.status();
    std::vector<Row> out;
    for (int i = 0; i < rows->size(); ++i) {
      Row values;
      for (int c = 0; c < rows->columns(); ++c) values.push_back(rows->Text(i, c));
      out.push_back(std::move(values));
    }
    return out;
  }
  // A transaction-scoped advisory lock: the bound checked next (a guild's size, a friends
  // list's length) holds against other processes until the commit.
  Status Lock(std::string_view key) override {
    auto locked = conn_.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                             Params().Add("telos.social:" + schema_ + ":" + std::string(key)),
                             Access::kRead, "locking a guild or friends list");
    return locked.ok() ? Status::Ok() : locked.status();
  }
  int64_t NowMs() const override { return db_.NowMs(); }

 private:
  Database& db_;
  Connection& conn_;
  const std::string& schema_;
};

SocialTransactionRunner PostgresSocialRunner(Database& db, const std::string& schema) {
  return [&db, &schema](const std::function<Status(SocialSql&)>& body) -> Status {
    std::lock_guard lock(db.mu);
    auto acquired = db.AcquireLocked();
    if (!acquired.ok()) return acquired.status();
    Connection& conn = **acquired;
    Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    PostgresSocialSql sql(db, conn, schema);
    TELOS_RETURN_IF_ERROR(body(sql));
    return txn.Commit();
  };
}

class PostgresStoreImpl final : public PostgresStore {
 public:
  PostgresStoreImpl(ConnectOptions connect, const PostgresStoreOptions& options, const Clock& clock,
                    std::unique_ptr<Connection> conn, int64_t schema_version)
      : db_(std::move(connect), options, clock, std::move(conn)),
        characters_(db_),
        accounts_(db_),
        mail_(db_, options.schema),
        records_(db_),
        audit_(db_),
        schema_(options.schema),
        social_(PostgresSocialRunner(db_, schema_)),
        schema_version_(schema_version) {}

  CharacterStore& characters() override { return characters_; }
  AccountStore& accounts() override { return accounts_; }
  MailStore& mail() override { return mail_; }
  SocialStore& social() override { return social_; }
  RecordsStore& records() override { return records_; }
  AuditStore& audit() override { return audit_; }
  int64_t schema_version() const override { return schema_version_; }

  Status Ping() override {
    std::lock_guard lock(db_.mu);
    auto rows = db_.ReadLocked("SELECT 1", Params(), "pinging the server");
    return rows.ok() ? Status::Ok() : rows.status();
  }

 private:
  Database db_;
  PostgresCharacterStore characters_;
  PostgresAccountStore accounts_;
  PostgresMailStore mail_;
  PostgresRecordsStore records_;
  PostgresAuditStore audit_;
  const std::string schema_;
  SocialLogic social_;
  const int64_t schema_version_;
};

}  // namespace

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const PostgresStoreOptions& options,
                                                           const Clock& clock) {
  if (options.conninfo.empty()) return Status::InvalidArgument("the PostgreSQL conninfo is empty");
  if (options.connect_timeout_ms <= 0) {
    return Status::InvalidArgument("connect_timeout_ms must be positive");
  }
  if (options.statement_timeout_ms < 0 || options.reconnect_backoff_initial_ms < 0 ||
      options.reconnect_backoff_max_ms < options.reconnect_backoff_initial_ms) {
    return Status::InvalidArgument(
        "statement_timeout_ms and reconnect_backoff_initial_ms must be >= 0, and "
        "reconnect_backoff_max_ms >= reconnect_backoff_initial_ms");
  }
  ConnectOptions connect{.conninfo = options.conninfo,
                         .schema = options.schema,
                         .application_name = options.application_name,
                         .connect_timeout_ms = options.connect_timeout_ms,
                         .statement_timeout_ms = options.statement_timeout_ms};
  auto opened = postgres::OpenMigrated(connect, clock);
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<PostgresStore>(new PostgresStoreImpl(
      std::move(connect), options, clock, std::move(opened->conn), opened->schema_version));
}

int64_t PostgresSchemaVersionKnown() {
  return static_cast<int64_t>(postgres::EmbeddedMigrations().size());
}

}  // namespace telos::store

#undef TELOS_PG_CONNECTION
#undef TELOS_PG_CHARACTER_COLUMNS
#undef TELOS_PG_ACCOUNT_COLUMNS
