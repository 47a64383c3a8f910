// The ledger conformance suite on PostgresLedger against a real server (label `integration`).
//
// The server comes from TELOS_DATABASE_URL (eval "$(scripts/services env)"); without it every
// test FAILS, never skips. Each test works in its own randomly named schema, dropped afterwards.

#include "telos/store/postgres_ledger.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "ledger_conformance.h"
#include "telos/base/assert.h"

namespace telos::store {
namespace {

std::string DatabaseUrl() {
  const char* url = std::getenv("TELOS_DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "TELOS_DATABASE_URL is not set: run eval \"$(scripts/services env)\" "
                     "(PostgreSQL integration tests fail rather than skip without a server)";
    return "";
  }
  return url;
}

std::string RandomSchemaName() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "telos_ledger_";
  for (int i = 0; i < 16; ++i) name += kHex[rng() % 16];
  return name;
}

class PostgresBackend final : public LedgerBackend {
 public:
  static std::unique_ptr<LedgerBackend> Make(const Clock& clock) {
    auto backend = std::make_unique<PostgresBackend>();
    backend->url_ = DatabaseUrl();
    if (backend->url_.empty()) return nullptr;
    backend->schema_ = RandomSchemaName();
    backend->ledger_ = backend->Open(clock);
    if (backend->ledger_ == nullptr) return nullptr;
    return backend;
  }
  ~PostgresBackend() override {
    ledger_.reset();  // disconnect before the schema is dropped
    if (url_.empty() || schema_.empty()) return;
    PGconn* conn = PQconnectdb(url_.c_str());
    PQclear(PQexec(conn, ("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE").c_str()));
    PQfinish(conn);
  }

  arcade::Ledger& ledger() override { return *ledger_; }
  std::unique_ptr<arcade::Ledger> OpenPeer(const Clock& clock) override { return Open(clock); }

 private:
  std::unique_ptr<arcade::Ledger> Open(const Clock& clock) {
    auto opened = PostgresLedger::Open({.conninfo = url_, .schema = schema_}, clock);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.status().ToString();
      return nullptr;
    }
    return std::move(opened).value();
  }

  std::string url_;
  std::string schema_;
  std::unique_ptr<arcade::Ledger> ledger_;
};

LedgerBackendFactory PostgresFactory() {
  return {.name = "Postgres", .make = &PostgresBackend::Make};
}

INSTANTIATE_TEST_SUITE_P(Postgres, LedgerConformanceTest, ::testing::Values(PostgresFactory()),
                         LedgerBackendName);

TEST(PostgresLedgerTest, ABadSchemaNameIsRefused) {
  ManualClock clock;
  auto opened =
      PostgresLedger::Open({.conninfo = "postgresql://127.0.0.1:1/x", .schema = "A-b"}, clock);
  EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace telos::store
