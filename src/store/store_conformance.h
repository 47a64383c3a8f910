// The store conformance suite: what every backend of CharacterStore, AccountStore, MailStore and
// RecordsStore
// must do, written once and run against each backend (SQLite in store_test, PostgreSQL in
// store_postgres_test).
//
// A backend joins by providing a StoreBackendFactory and instantiating the suite:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
//                            ::testing::Values(SqliteBackendFactory()), BackendName);
// Each test gets a fresh, empty backend from the factory (zone-write recording off) and a
// ManualClock it must use for timestamps. A test that needs a second writer, or the write
// history, opens a peer: another store on the same database with its own connection.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/base/clock.h"
#include "telos/store/account_store.h"
#include "telos/store/audit_store.h"
#include "telos/store/character_store.h"
#include "telos/store/mail_store.h"
#include "telos/store/records_store.h"
#include "telos/store/social_store.h"

namespace telos::store {

// One fresh backend; owns whatever it needs (a temp dir, a database, a server schema).
class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  virtual CharacterStore& characters() = 0;
  virtual AccountStore& accounts() = 0;
  virtual MailStore& mail() = 0;
  virtual RecordsStore& records() = 0;
  virtual SocialStore& social() = 0;
  virtual AuditStore& audit() = 0;
  // Another store on the same database with its own connection, as a second process would open
  // it, with zone-write recording on or off. It borrows this backend's database, so it must be
  // destroyed before this backend. Null (after recording a failure) when it cannot be opened.
  virtual std::unique_ptr<StoreBackend> OpenPeer(const Clock& clock, bool record_zone_writes) = 0;
};

struct StoreBackendFactory {
  std::string name;  // a test-name suffix: letters and digits only
  std::function<std::unique_ptr<StoreBackend>(const Clock& clock)> make;
};

// Prints the factory as its name, so that gtest (and the ctest names gtest_discover_tests
// derives) show "GetParam() = Sqlite" rather than the struct's bytes, which change per build.
inline void PrintTo(const StoreBackendFactory& factory, std::ostream* os) {
  *os << factory.name;
}

inline std::string BackendName(const ::testing::TestParamInfo<StoreBackendFactory>& info) {
  return info.param.name;
}

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make(clock_);
    ASSERT_NE(backend_, nullptr);
  }

  CharacterStore& characters() { return backend_->characters(); }
  AccountStore& accounts() { return backend_->accounts(); }
  MailStore& mail() { return backend_->mail(); }
  SocialStore& social() { return backend_->social(); }
  RecordsStore& records() { return backend_->records(); }
  AuditStore& audit() { return backend_->audit(); }

  static constexpr std::string_view kHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";

  int64_t NewAccount(std::string_view name) {
    auto account = accounts().Create(name, kHash);
    EXPECT_TRUE(account.ok()) << account.status().ToString();
    return account.ok() ? account->id : 0;
  }

  // A character that is not stored yet.
  static CharacterRecord Draft(std::string name, int64_t account_id) {
    CharacterRecord r;
    r.name = std::move(name);
    r.account_id = account_id;
    r.zone_id = "lobby";
    r.room_id = "lobby.start";
    r.state_json = R"({"hp":20,"gold":5})";
    return r;
  }

  CharacterRecord MustCreate(std::string name, int64_t account_id) {
    auto created = characters().Create(Draft(std::move(name), account_id));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : CharacterRecord{};
  }

  // A peer of the backend (see StoreBackend::OpenPeer), destroyed with the fixture before it.
  StoreBackend* Peer(bool record_zone_writes) {
    peers_.push_back(backend_->OpenPeer(clock_, record_zone_writes));
    return peers_.back().get();
  }

  void TearDown() override { peers_.clear(); }

  ManualClock clock_;
  std::unique_ptr<StoreBackend> backend_;
  std::vector<std::unique_ptr<StoreBackend>> peers_;  // declared after backend_: destroyed first
};

}  // namespace telos::store
