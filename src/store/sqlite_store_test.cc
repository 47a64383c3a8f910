#include "telos/store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <string>
#include <vector>

#include "sqlite/connection.h"
#include "sqlite/migrations.h"
#include "store_conformance.h"
#include "store_test_util.h"

namespace telos::store {
namespace {

// ------------------------------------------------------------------ the conformance suite

class SqliteBackend final : public StoreBackend {
 public:
  // A fresh database in a new temporary directory.
  explicit SqliteBackend(const Clock& clock) : dir_(std::make_unique<TempDir>()) {
    Open(dir_->File("telos.db"), clock, false);
  }
  // A peer: another connection to the file at `path`, which some other backend owns.
  SqliteBackend(const std::string& path, const Clock& clock, bool record_zone_writes) {
    Open(path, clock, record_zone_writes);
  }

  CharacterStore& characters() override { return store_->characters(); }
  AccountStore& accounts() override { return store_->accounts(); }
  MailStore& mail() override { return store_->mail(); }
  SocialStore& social() override { return store_->social(); }
  RecordsStore& records() override { return store_->records(); }
  AuditStore& audit() override { return store_->audit(); }
  std::unique_ptr<StoreBackend> OpenPeer(const Clock& clock, bool record_zone_writes) override {
    return std::make_unique<SqliteBackend>(path_, clock, record_zone_writes);
  }

 private:
  void Open(const std::string& path, const Clock& clock, bool record_zone_writes) {
    path_ = path;
    auto opened =
        SqliteStore::Open({.path = path, .record_zone_writes = record_zone_writes}, clock);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    store_ = std::move(opened).value();
  }

  std::unique_ptr<TempDir> dir_;  // null in a peer
  std::string path_;
  std::unique_ptr<SqliteStore> store_;
};

StoreBackendFactory SqliteFactory() {
  return {.name = "Sqlite", .make = [](const Clock& clock) -> std::unique_ptr<StoreBackend> {
            return std::make_unique<SqliteBackend>(clock);
          }};
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest, ::testing::Values(SqliteFactory()),
                         BackendName);

// ------------------------------------------------------------------ SQLite specifics

// Runs one query on a side connection and returns the first column of the first row as text.
std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

void ExecOn(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

bool TableExists(sqlite::Connection& conn, const std::string& table) {
  auto stmt = conn.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  EXPECT_TRUE(stmt.ok());
  sqlite::Query q(conn, *stmt);
  auto row = q.Bind(1, table).Step("test");
  return row.ok() && *row && q.Int(0) == 1;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<SqliteStore>> Open() { return SqliteStore::Open({.path = path_}, clock_); }

  ManualClock clock_;
  TempDir dir_;
  std::string path_ = dir_.File("telos.db");
};

TEST_F(SqliteStoreTest, MigratesAnEmptyFileToTheLatestSchema) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), SqliteSchemaVersionKnown());
  EXPECT_GE(SqliteSchemaVersionKnown(), 2);
  EXPECT_EQ(QueryText(path_, "SELECT count(*) FROM schema_migrations"),
            std::to_string(SqliteSchemaVersionKnown()));
  EXPECT_EQ(QueryText(path_, "SELECT name FROM schema_migrations WHERE version = 1"),
            "0001_accounts_and_characters.sql");
  EXPECT_EQ(QueryText(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(path_, "SELECT strict FROM pragma_table_list WHERE name = 'characters'"),
            "1");
}

TEST_F(SqliteStoreTest, ReopeningKeepsDataAndAppliesNothingTwice) {
  int64_t account_id = 0;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok());
    auto account = (*store)->accounts().Create("alice", "$argon2id$x");
    ASSERT_TRUE(account.ok());
    account_id = account->id;
    CharacterRecord draft{.name = "Aldric", .account_id = account_id, .state_json = "{}"};
    ASSERT_TRUE((*store)->characters().Create(draft).ok());
    const int64_t epoch = (*store)->characters().ClaimOwnership("Aldric", 0)->owner_epoch;
    draft.state_json = R"({"gold":7})";
    ASSERT_TRUE((*store)->characters().Save(draft, 1, epoch).ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto loaded = (*store)->characters().Load("aldric");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->state_json, R"({"gold":7})");
  EXPECT_EQ(loaded->state_version, 2);
  EXPECT_EQ(loaded->owner_epoch, 1);
  EXPECT_EQ((*store)->accounts().LoadById(account_id)->name, "alice");
  EXPECT_EQ(QueryText(path_, "SELECT count(*) FROM schema_migrations"),
            std::to_string(SqliteSchemaVersionKnown()));
}

TEST_F(SqliteStoreTest, RefusesADatabaseFromANewerSchema) {
  ASSERT_TRUE(Open().ok());
  const int64_t future = SqliteSchemaVersionKnown() + 1;
  ExecOn(path_, "INSERT INTO schema_migrations VALUES (" + std::to_string(future) + ", '" +
                    std::to_string(future) + "_from_the_future.sql', 0)");
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer than this binary"), std::string::npos)
      << store.status().ToString();
}

TEST_F(SqliteStoreTest, AnUnopenablePathIsUnavailable) {
  auto store = SqliteStore::Open({.path = dir_.File("missing/dir/telos.db")}, clock_);
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
}

TEST_F(SqliteStoreTest, InMemoryDatabaseWorks) {
  auto store = SqliteStore::Open({.path = ":memory:"}, clock_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE((*store)->accounts().Create("alice", "$argon2id$x").ok());
}

TEST_F(SqliteStoreTest, RunnerAppliesPendingMigrationsInOrder) {
  const auto all = sqlite::EmbeddedMigrations();
  ASSERT_GE(all.size(), 2u);
  auto conn = sqlite::Connection::Open(path_, 1'000, false);
  ASSERT_TRUE(conn.ok());
  auto v1 = sqlite::ApplyMigrations(**conn, all.first(1), 1);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(*v1, 1);
  EXPECT_TRUE(TableExists(**conn, "characters"));
  EXPECT_FALSE(TableExists(**conn, "mail"));
  ASSERT_TRUE((*conn)
                  ->Exec("INSERT INTO accounts (name_key, display_name, password_hash, "
                         "created_at_ms) VALUES ('alice', 'alice', '$argon2id$x', 0)",
                         "test")
                  .ok());

  auto latest = sqlite::ApplyMigrations(**conn, all, 2);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(*latest, static_cast<int64_t>(all.size()));
  EXPECT_TRUE(TableExists(**conn, "mail"));
  // The first migration was applied at time 1, every later one (however many) at time 2.
  std::string applied_at = "1";
  for (size_t i = 1; i < all.size(); ++i) applied_at += ",2";
  EXPECT_EQ(QueryText(path_,
                      "SELECT group_concat(applied_at_ms) FROM "
                      "(SELECT applied_at_ms FROM schema_migrations ORDER BY version)"),
            applied_at);
  EXPECT_EQ(QueryText(path_, "SELECT display_name FROM accounts"), "alice");
}

TEST_F(SqliteStoreTest, AFailedMigrationLeavesNoTrace) {
  std::vector<sqlite::Migration> known(sqlite::EmbeddedMigrations().begin(),
                                       sqlite::EmbeddedMigrations().end());
  const int64_t good = static_cast<int64_t>(known.size());
  known.push_back(
      {.version = good + 1,
       .name = "broken.sql",
       .sql = "CREATE TABLE half_done (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);"});
  auto conn = sqlite::Connection::Open(path_, 1'000, false);
  ASSERT_TRUE(conn.ok());
  auto result = sqlite::ApplyMigrations(**conn, known, 0);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("broken.sql"), std::string::npos);
  EXPECT_EQ(*sqlite::AppliedSchemaVersion(**conn), good);
  EXPECT_FALSE(TableExists(**conn, "half_done"));
}

TEST_F(SqliteStoreTest, MigrationsMustBeNumberedWithoutGaps) {
  const std::vector<sqlite::Migration> gap = {{.version = 1, .name = "0001_a.sql", .sql = ""},
                                              {.version = 3, .name = "0003_c.sql", .sql = ""}};
  auto conn = sqlite::Connection::Open(path_, 1'000, false);
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ(sqlite::ApplyMigrations(**conn, gap, 0).status().code(), StatusCode::kInternal);
}

TEST_F(SqliteStoreTest, RowsFromBeforeTheZoneFenceReadAsUnleasedWrites) {
  // A database at schema 3, before migration 0004 added the zone fence, holding one character.
  {
    auto conn = sqlite::Connection::Open(path_, 1'000, false);
    ASSERT_TRUE(conn.ok());
    auto v3 = sqlite::ApplyMigrations(**conn, sqlite::EmbeddedMigrations().first(3), 1);
    ASSERT_TRUE(v3.ok()) << v3.status().ToString();
    ASSERT_TRUE((*conn)
                    ->Exec("INSERT INTO accounts (name_key, display_name, password_hash, "
                           "created_at_ms) VALUES ('alice', 'alice', '$argon2id$x', 0);"
                           "INSERT INTO characters (name_key, display_name, account_id, "
                           "state_version, owner_epoch, zone_id, room_id, state_json, "
                           "created_at_ms, updated_at_ms) VALUES ('aldric', 'Aldric', 1, 4, 2, "
                           "'town', 'town.bank', '{}', 10, 20)",
                           "test")
                    .ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), SqliteSchemaVersionKnown());
  auto loaded = (*store)->characters().Load("Aldric");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->state_version, 4);
  EXPECT_EQ(loaded->zone_id, "town");
  EXPECT_EQ(loaded->writer_shard, "");
  EXPECT_EQ(loaded->zone_lease_epoch, 0);
  // And it saves under the new fence like any other row.
  CharacterRecord next = *loaded;
  next.writer_shard = "shard-a";
  next.zone_lease_epoch = 3;
  EXPECT_EQ(*(*store)->characters().Save(next, 4, 2), 5);
  EXPECT_EQ(QueryText(path_, "SELECT lease_epoch FROM zone_fences WHERE zone_id = 'town'"), "3");
}

TEST_F(SqliteStoreTest, AZoneFenceRecordsWhoRaisedItAndWhen) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  CharacterStore& characters = (*store)->characters();
  ASSERT_EQ(*characters.RaiseZoneFence("town", 3, "shard-a"), 3);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_EQ(*characters.RaiseZoneFence("town", 5, "shard-b"), 5);
  const std::string raised_ms =
      QueryText(path_, "SELECT updated_at_ms FROM zone_fences WHERE zone_id = 'town'");
  clock_.Advance(std::chrono::seconds(1));
  // Neither a stale raise nor a repeated one changes who raised it last.
  ASSERT_EQ(*characters.RaiseZoneFence("town", 4, "shard-c"), 5);
  ASSERT_EQ(*characters.RaiseZoneFence("town", 5, "shard-d"), 5);
  EXPECT_EQ(QueryText(path_, "SELECT shard_id FROM zone_fences WHERE zone_id = 'town'"), "shard-b");
  EXPECT_EQ(QueryText(path_, "SELECT updated_at_ms FROM zone_fences WHERE zone_id = 'town'"),
            raised_ms);
}

TEST_F(SqliteStoreTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  auto account = (*a)->accounts().Create("alice", "$argon2id$x");
  ASSERT_TRUE(account.ok());
  ASSERT_TRUE((*a)->characters().Create({.name = "Aldric", .account_id = account->id}).ok());
  const int64_t epoch_a = (*a)->characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  const int64_t epoch_b = (*b)->characters().ClaimOwnership("Aldric", 0)->owner_epoch;
  EXPECT_EQ(epoch_b, epoch_a + 1);
  EXPECT_TRUE(IsFenced(
      (*a)->characters().Save({.name = "Aldric", .account_id = account->id}, 1, epoch_a).status()));
}

}  // namespace
}  // namespace telos::store
