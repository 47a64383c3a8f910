#include "telos/store/sqlite_ledger.h"

#include <chrono>
#include <mutex>

#include "sqlite/connection.h"
#include "sqlite/migrations.h"
#include "telos/arcade/batch_plan.h"

namespace telos::store {
namespace {

using arcade::AccountBalance;
using arcade::Leg;
using arcade::Posting;
using arcade::PostingResult;
using sqlite::Connection;
using sqlite::Query;

class SqliteLedgerImpl final : public arcade::Ledger {
 public:
  SqliteLedgerImpl(std::unique_ptr<Connection> conn, const Clock& clock)
      : conn_(std::move(conn)), clock_(clock) {}

  Result<std::vector<Result<PostingResult>>> PostBatch(std::span<const Posting> postings) override {
    if (postings.size() > limits::kArcadeBatchPostingsMax) {
      return Status::InvalidArgument("a batch of " + std::to_string(postings.size()) +
                                     " postings is over kArcadeBatchPostingsMax");
    }
    std::lock_guard lock(mu_);
    sqlite::Transaction txn(*conn_);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    arcade::LedgerSnapshot snapshot;
    {
      TELOS_SQL_QUERY(q, *conn_,
                      "SELECT fingerprint, posting_id FROM arcade_postings WHERE idem_key = ?1");
      for (const std::string& key : arcade::BatchKeys(postings)) {
        q.Bind(1, key);
        auto row = q.Step("reading an idempotency key");
        if (!row.ok()) return row.status();
        if (*row) snapshot.applied[key] = {.fingerprint = q.Text(0), .posting_id = q.Int(1)};
        sqlite3_reset(q_stmt.value());
      }
    }
    {
      TELOS_SQL_QUERY(q, *conn_,
                      "SELECT balance, EXISTS (SELECT 1 FROM arcade_escrow_closures WHERE "
                      "escrow = ?1) FROM arcade_accounts WHERE account = ?1");
      for (const std::string& account : arcade::BatchAccounts(postings)) {
        q.Bind(1, account);
        auto row = q.Step("reading a balance");
        if (!row.ok()) return row.status();
        if (*row) {
          snapshot.balances[account] = q.Int(0);
          if (q.Int(1) != 0) snapshot.closed.insert(account);
        }
        sqlite3_reset(q_stmt.value());
      }
    }
    const arcade::BatchPlan plan = arcade::PlanBatch(postings, snapshot);
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
            .count();
    std::vector<int64_t> ids;
    ids.reserve(plan.applied.size());
    for (size_t index : plan.applied) {
      const Posting& posting = postings[index];
      {
        TELOS_SQL_QUERY(q, *conn_,
                        "INSERT INTO arcade_postings (idem_key, fingerprint, posted_at_ms) "
                        "VALUES (?1, ?2, ?3)");
        q.Bind(1, posting.key).Bind(2, plan.postings[index].fingerprint).Bind(3, now_ms);
        TELOS_RETURN_IF_ERROR(q.Run("recording a posting"));
      }
      const int64_t id = sqlite3_last_insert_rowid(conn_->db());
      ids.push_back(id);
      TELOS_SQL_QUERY(leg_q, *conn_,
                      "INSERT INTO arcade_legs (posting_id, account, amount) VALUES (?1, ?2, ?3)");
      for (const Leg& leg : posting.legs) {
        leg_q.Bind(1, id).Bind(2, leg.account).Bind(3, leg.amount);
        TELOS_RETURN_IF_ERROR(leg_q.Run("recording a leg"));
        sqlite3_reset(leg_q_stmt.value());
      }
      if (!posting.closes_escrow.empty()) {
        TELOS_SQL_QUERY(q, *conn_,
                        "INSERT INTO arcade_escrow_closures (escrow, posting_id) VALUES (?1, ?2)");
        q.Bind(1, posting.closes_escrow).Bind(2, id);
        TELOS_RETURN_IF_ERROR(q.Run("closing an escrow"));
      }
    }
    {
      // Create at zero, then add: an upsert would have SQLite check the CHECK constraint on
      // the row it proposes to insert (a negative delta) before it finds the conflict.
      for (const auto& [account, delta] : plan.deltas) {
        TELOS_SQL_QUERY(create, *conn_,
                        "INSERT INTO arcade_accounts (account, balance) VALUES (?1, 0) "
                        "ON CONFLICT (account) DO NOTHING");
        create.Bind(1, account);
        TELOS_RETURN_IF_ERROR(create.Run("creating an account"));
        TELOS_SQL_QUERY(add, *conn_,
                        "UPDATE arcade_accounts SET balance = balance + ?2 WHERE account = ?1");
        add.Bind(1, account).Bind(2, delta);
        TELOS_RETURN_IF_ERROR(add.Run("updating a balance"));
      }
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return arcade::PlanAnswers(plan, ids);
  }

  Result<int64_t> Balance(std::string_view account) override {
    std::lock_guard lock(mu_);
    TELOS_SQL_QUERY(q, *conn_, "SELECT balance FROM arcade_accounts WHERE account = ?1");
    q.Bind(1, account);
    auto row = q.Step("reading a balance");
    if (!row.ok()) return row.status();
    return *row ? q.Int(0) : 0;
  }

  Result<std::vector<AccountBalance>> Balances() override {
    std::lock_guard lock(mu_);
    TELOS_SQL_QUERY(q, *conn_,
                    "SELECT account, balance FROM arcade_accounts WHERE balance <> 0 "
                    "ORDER BY account");
    std::vector<AccountBalance> out;
    while (true) {
      auto row = q.Step("listing balances");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back({q.Text(0), q.Int(1)});
    }
    return out;
  }

  Result<std::vector<Leg>> EscrowFlows(std::string_view escrow) override {
    std::lock_guard lock(mu_);
    TELOS_SQL_QUERY(q, *conn_,
                    "SELECT o.account, sum(o.amount) FROM arcade_legs e JOIN arcade_legs o "
                    "ON o.posting_id = e.posting_id AND o.account <> e.account "
                    "WHERE e.account = ?1 GROUP BY o.account HAVING sum(o.amount) <> 0 "
                    "ORDER BY o.account");
    q.Bind(1, escrow);
    std::vector<Leg> out;
    while (true) {
      auto row = q.Step("reading escrow flows");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back({q.Text(0), q.Int(1)});
    }
    return out;
  }

  Result<bool> EscrowClosed(std::string_view escrow) override {
    std::lock_guard lock(mu_);
    TELOS_SQL_QUERY(q, *conn_, "SELECT 1 FROM arcade_escrow_closures WHERE escrow = ?1");
    q.Bind(1, escrow);
    auto row = q.Step("reading an escrow closure");
    if (!row.ok()) return row.status();
    return *row;
  }

  Result<std::vector<std::string>> OpenEscrows(std::string_view prefix, size_t limit) override {
    if (!arcade::IsEscrow(prefix)) {
      return Status::InvalidArgument("an escrow prefix starts with escrow:");
    }
    std::lock_guard lock(mu_);
    // substr instead of LIKE: a prefix may hold '%' or '_'.
    TELOS_SQL_QUERY(q, *conn_,
                    "SELECT account FROM arcade_accounts a WHERE substr(account, 1, ?2) = ?3 "
                    "AND balance <> 0 AND NOT EXISTS (SELECT 1 FROM arcade_escrow_closures c "
                    "WHERE c.escrow = a.account) ORDER BY account LIMIT ?1");
    q.Bind(1, static_cast<int64_t>(limit))
        .Bind(2, static_cast<int64_t>(prefix.size()))
        .Bind(3, prefix);
    std::vector<std::string> out;
    while (true) {
      auto row = q.Step("listing open escrows");
      if (!row.ok()) return row.status();
      if (!*row) break;
      out.push_back(q.Text(0));
    }
    return out;
  }

  Result<int64_t> ClaimChainPosition(std::string_view chain) override {
    std::lock_guard lock(mu_);
    TELOS_SQL_QUERY(q, *conn_,
                    "INSERT INTO arcade_chain_positions (chain, next_position) VALUES (?1, 1) "
                    "ON CONFLICT (chain) DO UPDATE SET next_position = next_position + 1 "
                    "RETURNING next_position - 1");
    q.Bind(1, chain);
    auto row = q.Step("claiming a chain position");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("claiming a chain position returned no row");
    return q.Int(0);
  }

 private:
  std::mutex mu_;  // serializes every use of conn_ (opened NOMUTEX)
  std::unique_ptr<Connection> conn_;
  const Clock& clock_;
};

}  // namespace

Result<std::unique_ptr<arcade::Ledger>> SqliteLedger::Open(const SqliteLedgerOptions& options,
                                                           const Clock& clock) {
  if (options.path.empty()) return Status::InvalidArgument("the SQLite ledger path is empty");
  auto conn = Connection::Open(options.path, options.busy_timeout_ms, options.synchronous_full);
  if (!conn.ok()) return conn.status();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
          .count();
  auto version = sqlite::ApplyMigrations(**conn, sqlite::EmbeddedMigrations(), now_ms);
  if (!version.ok()) {
    return Status(version.status().code(), options.path + ": " + version.status().message());
  }
  return std::unique_ptr<arcade::Ledger>(new SqliteLedgerImpl(std::move(conn).value(), clock));
}

}  // namespace telos::store
