#include "telos/store/postgres_ledger.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "postgres/connection.h"
#include "postgres/migrations.h"
#include "telos/arcade/batch_plan.h"
#include "telos/base/limits.h"

namespace telos::store {
namespace {

using arcade::AccountBalance;
using arcade::Leg;
using arcade::Posting;
using arcade::PostingResult;
using postgres::Access;
using postgres::Connection;
using postgres::ConnectOptions;
using postgres::Params;
using postgres::Rows;

// A PostgreSQL array literal of text elements, each quoted so that any byte of a key or name
// ('"', '\\', ',', '{') stays inside its element.
std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string IntArray(const std::vector<int64_t>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(items[i]);
  }
  out += '}';
  return out;
}

constexpr std::string_view kCreateAccounts =
    "INSERT INTO arcade_accounts (account, balance) SELECT a, 0 FROM unnest($1::text[]) AS t(a) "
    "ON CONFLICT (account) DO NOTHING";
constexpr std::string_view kLockAccounts =
    "SELECT a.account, a.balance, c.escrow IS NOT NULL FROM arcade_accounts a "
    "LEFT JOIN arcade_escrow_closures c ON c.escrow = a.account "
    "WHERE a.account = ANY($1::text[]) ORDER BY a.account FOR UPDATE OF a";
constexpr std::string_view kReadKeys =
    "SELECT idem_key, fingerprint, posting_id FROM arcade_postings "
    "WHERE idem_key = ANY($1::text[])";
constexpr std::string_view kInsertPostings =
    "INSERT INTO arcade_postings (idem_key, fingerprint, posted_at_ms) "
    "SELECT k, f, $3 FROM unnest($1::text[], $2::text[]) AS t(k, f) RETURNING idem_key, posting_id";
constexpr std::string_view kInsertLegs =
    "INSERT INTO arcade_legs (posting_id, account, amount) "
    "SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])";
constexpr std::string_view kApplyDeltas =
    "UPDATE arcade_accounts a SET balance = a.balance + d.delta "
    "FROM unnest($1::text[], $2::bigint[]) AS d(account, delta) WHERE a.account = d.account";
constexpr std::string_view kInsertClosures =
    "INSERT INTO arcade_escrow_closures (escrow, posting_id) "
    "SELECT * FROM unnest($1::text[], $2::bigint[])";

class PostgresLedgerImpl final : public arcade::Ledger {
 public:
  PostgresLedgerImpl(ConnectOptions connect, std::unique_ptr<Connection> conn, const Clock& clock)
      : connect_(std::move(connect)), conn_(std::move(conn)), clock_(clock) {}

  Result<std::vector<Result<PostingResult>>> PostBatch(std::span<const Posting> postings) override {
    if (postings.size() > limits::kArcadeBatchPostingsMax) {
      return Status::InvalidArgument("a batch of " + std::to_string(postings.size()) +
                                     " postings is over kArcadeBatchPostingsMax");
    }
    std::lock_guard lock(mu_);
    auto conn = Live();
    if (!conn.ok()) return conn.status();
    auto answers = PostBatchOn(**conn, postings);
    if (!answers.ok() && answers.status().code() == StatusCode::kAlreadyExists) {
      // Another instance inserted one of these keys between our read and our insert.
      return Status::Conflict("a concurrent posting used one of the keys; retry to replay it: " +
                              answers.status().message());
    }
    return answers;
  }

  Result<int64_t> Balance(std::string_view account) override {
    std::lock_guard lock(mu_);
    auto rows = Query("SELECT balance FROM arcade_accounts WHERE account = $1",
                      Params().Add(account), "reading a balance");
    if (!rows.ok()) return rows.status();
    return rows->empty() ? 0 : rows->Int(0, 0);
  }

  Result<std::vector<AccountBalance>> Balances() override {
    std::lock_guard lock(mu_);
    auto rows =
        Query("SELECT account, balance FROM arcade_accounts WHERE balance <> 0 ORDER BY account",
              Params(), "listing balances");
    if (!rows.ok()) return rows.status();
    std::vector<AccountBalance> out;
    for (int i = 0; i < rows->size(); ++i) out.push_back({rows->Text(i, 0), rows->Int(i, 1)});
    return out;
  }

  Result<std::vector<Leg>> EscrowFlows(std::string_view escrow) override {
    std::lock_guard lock(mu_);
    auto rows = Query(
        "SELECT o.account, sum(o.amount) FROM arcade_legs e JOIN arcade_legs o "
        "ON o.posting_id = e.posting_id AND o.account <> e.account "
        "WHERE e.account = $1 GROUP BY o.account HAVING sum(o.amount) <> 0 ORDER BY o.account",
        Params().Add(escrow), "reading escrow flows");
    if (!rows.ok()) return rows.status();
    std::vector<Leg> out;
    for (int i = 0; i < rows->size(); ++i) out.push_back({rows->Text(i, 0), rows->Int(i, 1)});
    return out;
  }

  Result<bool> EscrowClosed(std::string_view escrow) override {
    std::lock_guard lock(mu_);
    auto rows = Query("SELECT 1 FROM arcade_escrow_closures WHERE escrow = $1",
                      Params().Add(escrow), "reading an escrow closure");
    if (!rows.ok()) return rows.status();
    return !rows->empty();
  }

  Result<std::vector<std::string>> OpenEscrows(std::string_view prefix, size_t limit) override {
    if (!arcade::IsEscrow(prefix)) {
      return Status::InvalidArgument("an escrow prefix starts with escrow:");
    }
    std::lock_guard lock(mu_);
    // starts_with instead of LIKE: a prefix may hold '%' or '_'.
    auto rows = Query(
        "SELECT account FROM arcade_accounts a WHERE starts_with(account, $2) AND balance <> 0 "
        "AND NOT EXISTS (SELECT 1 FROM arcade_escrow_closures c WHERE c.escrow = a.account) "
        "ORDER BY account LIMIT $1",
        Params().Add(static_cast<int64_t>(limit)).Add(prefix), "listing open escrows");
    if (!rows.ok()) return rows.status();
    std::vector<std::string> out;
    for (int i = 0; i < rows->size(); ++i) out.push_back(rows->Text(i, 0));
    return out;
  }

  Result<int64_t> ClaimChainPosition(std::string_view chain) override {
    std::lock_guard lock(mu_);
    auto rows = Query(
        "INSERT INTO arcade_chain_positions AS p (chain, next_position) VALUES ($1, 1) "
        "ON CONFLICT (chain) DO UPDATE SET next_position = p.next_position + 1 "
        "RETURNING p.next_position - 1",
        Params().Add(chain), "claiming a chain position", Access::kWrite);
    if (!rows.ok()) return rows.status();
    return rows->Int(0, 0);
  }

 private:
  // The connection, reopened when the last one died.
  Result<Connection*> Live() {
    if (conn_ == nullptr || conn_->broken()) {
      conn_.reset();
      auto opened = Connection::Open(connect_);
      if (!opened.ok()) return opened.status();
      conn_ = std::move(opened).value();
    }
    return conn_.get();
  }

  Result<Rows> Query(std::string_view sql, const Params& params, std::string_view what,
                     Access access = Access::kRead) {
    auto conn = Live();
    if (!conn.ok()) return conn.status();
    return (*conn)->Exec(sql, params, access, what);
  }

  Result<std::vector<Result<PostingResult>>> PostBatchOn(Connection& conn,
                                                         std::span<const Posting> postings) {
    postgres::Transaction txn(conn);
    TELOS_RETURN_IF_ERROR(txn.Begin());
    const std::vector<std::string> accounts = arcade::BatchAccounts(postings);
    const std::vector<std::string> keys = arcade::BatchKeys(postings);
    arcade::LedgerSnapshot snapshot;
    if (!accounts.empty()) {
      // Creating first means every named row exists to be locked, so even a brand-new escrow
      // serializes its first stake against a concurrent closure.
      const std::string account_array = TextArray(accounts);
      auto created = conn.Exec(kCreateAccounts, Params().Add(account_array), Access::kWrite,
                               "creating accounts");
      if (!created.ok()) return created.status();
      auto locked =
          conn.Exec(kLockAccounts, Params().Add(account_array), Access::kRead, "locking accounts");
      if (!locked.ok()) return locked.status();
      for (int i = 0; i < locked->size(); ++i) {
        snapshot.balances[locked->Text(i, 0)] = locked->Int(i, 1);
        if (locked->Bool(i, 2)) snapshot.closed.insert(locked->Text(i, 0));
      }
      auto applied =
          conn.Exec(kReadKeys, Params().Add(TextArray(keys)), Access::kRead, "reading keys");
      if (!applied.ok()) return applied.status();
      for (int i = 0; i < applied->size(); ++i) {
        snapshot.applied[applied->Text(i, 0)] = {.fingerprint = applied->Text(i, 1),
                                                 .posting_id = applied->Int(i, 2)};
      }
    }
    const arcade::BatchPlan plan = arcade::PlanBatch(postings, snapshot);
    std::vector<int64_t> ids;
    if (!plan.applied.empty()) {
      std::vector<std::string> new_keys;
      std::vector<std::string> fingerprints;
      for (size_t index : plan.applied) {
        new_keys.push_back(postings[index].key);
        fingerprints.push_back(plan.postings[index].fingerprint);
      }
      const int64_t now_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
              .count();
      auto inserted =
          conn.Exec(kInsertPostings,
                    Params().Add(TextArray(new_keys)).Add(TextArray(fingerprints)).Add(now_ms),
                    Access::kWrite, "recording postings");
      if (!inserted.ok()) return inserted.status();
      std::unordered_map<std::string, int64_t> id_of;
      for (int i = 0; i < inserted->size(); ++i) id_of[inserted->Text(i, 0)] = inserted->Int(i, 1);
      std::vector<int64_t> leg_ids;
      std::vector<std::string> leg_accounts;
      std::vector<int64_t> leg_amounts;
      std::vector<std::string> closed_escrows;
      std::vector<int64_t> closing_ids;
      for (size_t index : plan.applied) {
        const Posting& posting = postings[index];
        const int64_t id = id_of.at(posting.key);
        ids.push_back(id);
        for (const Leg& leg : posting.legs) {
          leg_ids.push_back(id);
          leg_accounts.push_back(leg.account);
          leg_amounts.push_back(leg.amount);
        }
        if (!posting.closes_escrow.empty()) {
          closed_escrows.push_back(posting.closes_escrow);
          closing_ids.push_back(id);
        }
      }
      auto legs = conn.Exec(
          kInsertLegs,
          Params().Add(IntArray(leg_ids)).Add(TextArray(leg_accounts)).Add(IntArray(leg_amounts)),
          Access::kWrite, "recording legs");
      if (!legs.ok()) return legs.status();
      std::vector<std::string> delta_accounts;
      std::vector<int64_t> deltas;
      for (const auto& [account, delta] : plan.deltas) {
        delta_accounts.push_back(account);
        deltas.push_back(delta);
      }
      if (!deltas.empty()) {
        auto updated =
            conn.Exec(kApplyDeltas, Params().Add(TextArray(delta_accounts)).Add(IntArray(deltas)),
                      Access::kWrite, "updating balances");
        if (!updated.ok()) return updated.status();
      }
      if (!closed_escrows.empty()) {
        auto closures = conn.Exec(
            kInsertClosures, Params().Add(TextArray(closed_escrows)).Add(IntArray(closing_ids)),
            Access::kWrite, "closing escrows");
        if (!closures.ok()) return closures.status();
      }
    }
    TELOS_RETURN_IF_ERROR(txn.Commit());
    return arcade::PlanAnswers(plan, ids);
  }

  std::mutex mu_;  // serializes every use of conn_
  const ConnectOptions connect_;
  std::unique_ptr<Connection> conn_;
  const Clock& clock_;
};

}  // namespace

Result<std::unique_ptr<arcade::Ledger>> PostgresLedger::Open(const PostgresLedgerOptions& options,
                                                             const Clock& clock) {
  if (options.conninfo.empty()) return Status::InvalidArgument("the PostgreSQL conninfo is empty");
  if (options.connect_timeout_ms <= 0 || options.statement_timeout_ms < 0) {
    return Status::InvalidArgument(
        "connect_timeout_ms must be positive and statement_timeout_ms not negative");
  }
  ConnectOptions connect{.conninfo = options.conninfo,
                         .schema = options.schema,
                         .application_name = options.application_name,
                         .connect_timeout_ms = options.connect_timeout_ms,
                         .statement_timeout_ms = options.statement_timeout_ms};
  auto opened = postgres::OpenMigrated(connect, clock);
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<arcade::Ledger>(
      new PostgresLedgerImpl(std::move(connect), std::move(opened->conn), clock));
}

}  // namespace telos::store
