// PostgresStore against a real server (label `integration`): the conformance suite plus what is
// specific to PostgreSQL (migrations, concurrent opens, reconnects, timeouts).
//
// The server comes from TELOS_DATABASE_URL (eval "$(scripts/services env)"); without it every
// test FAILS, never skips. Each test works in its own randomly named schema, dropped afterwards,
// so runs never collide on the shared database.

#include "telos/store/postgres_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store_conformance.h"
#include "telos/base/assert.h"

namespace telos::store {
namespace {

constexpr std::string_view kHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";

// The URL of the test server, or "" after recording a failure.
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
  std::string name = "telos_test_";
  for (int i = 0; i < 16; ++i) name += kHex[rng() % 16];
  return name;
}

// A side connection for the tests' own queries, outside the store.
class SideConnection {
 public:
  explicit SideConnection(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    RELEASE_ASSERT(PQstatus(conn_) == CONNECTION_OK, PQerrorMessage(conn_));
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
  }
  ~SideConnection() { PQfinish(conn_); }
  SideConnection(const SideConnection&) = delete;
  SideConnection& operator=(const SideConnection&) = delete;

  // Runs `sql`; returns the first column of the first row ("" when there is none).
  std::string Query(const std::string& sql) {
    PGresult* result = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    EXPECT_TRUE(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
        << sql << ": " << PQresultErrorMessage(result);
    std::string out;
    if (status == PGRES_TUPLES_OK && PQntuples(result) > 0) out = PQgetvalue(result, 0, 0);
    PQclear(result);
    return out;
  }

 private:
  PGconn* conn_;
};

// A schema with a random name that is dropped (with everything in it) on destruction. The store
// creates it on Open.
class ScratchSchema {
 public:
  ScratchSchema() : url_(DatabaseUrl()), name_(RandomSchemaName()) {}
  ~ScratchSchema() {
    if (!url_.empty()) SideConnection(url_).Query("DROP SCHEMA IF EXISTS " + name_ + " CASCADE");
  }
  ScratchSchema(const ScratchSchema&) = delete;
  ScratchSchema& operator=(const ScratchSchema&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }
  PostgresStoreOptions Options() const {
    return {.conninfo = url_, .schema = name_, .application_name = name_};
  }

 private:
  std::string url_;
  std::string name_;
};

// ------------------------------------------------------------------ the conformance suite

class PostgresBackend final : public StoreBackend {
 public:
  // Null (after recording a failure) when the store cannot be opened.
  static std::unique_ptr<StoreBackend> Make(const Clock& clock) {
    auto backend = std::make_unique<PostgresBackend>();
    backend->schema_ = std::make_unique<ScratchSchema>();
    if (backend->schema_->url().empty()) return nullptr;
    if (!backend->Open(backend->schema_->Options(), clock)) return nullptr;
    return backend;
  }
  ~PostgresBackend() override { store_.reset(); }  // disconnect before the schema is dropped

  CharacterStore& characters() override { return store_->characters(); }
  AccountStore& accounts() override { return store_->accounts(); }
  MailStore& mail() override { return store_->mail(); }
  SocialStore& social() override { return store_->social(); }
  RecordsStore& records() override { return store_->records(); }
  AuditStore& audit() override { return store_->audit(); }
  std::unique_ptr<StoreBackend> OpenPeer(const Clock& clock, bool record_zone_writes) override {
    auto peer = std::make_unique<PostgresBackend>();
    PostgresStoreOptions options = options_;
    options.record_zone_writes = record_zone_writes;
    if (!peer->Open(options, clock)) return nullptr;
    return peer;
  }

 private:
  // False (after recording a failure) when the store cannot be opened.
  bool Open(const PostgresStoreOptions& options, const Clock& clock) {
    options_ = options;
    auto opened = PostgresStore::Open(options, clock);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.status().ToString();
      return false;
    }
    store_ = std::move(opened).value();
    return true;
  }

  std::unique_ptr<ScratchSchema> schema_;  // null in a peer, which borrows another's schema
  PostgresStoreOptions options_;
  std::unique_ptr<PostgresStore> store_;
};

StoreBackendFactory PostgresFactory() {
  return {.name = "Postgres", .make = &PostgresBackend::Make};
}

INSTANTIATE_TEST_SUITE_P(Postgres, StoreConformanceTest, ::testing::Values(PostgresFactory()),
                         BackendName);

// ------------------------------------------------------------------ a TCP proxy to cut

// Forwards 127.0.0.1:port() to a target port until Stop(), which closes every connection as a
// server crash would; Start() again listens on the same port, as a restarted server would.
class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {}
  ~TcpProxy() { Stop(); }

  void Start() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    RELEASE_ASSERT(listener_ >= 0, "socket failed");
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    RELEASE_ASSERT(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0,
                   "bind failed");
    RELEASE_ASSERT(::listen(listener_, 16) == 0, "listen failed");
    socklen_t len = sizeof(addr);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    stopping_ = false;
    threads_.emplace_back([this] { AcceptLoop(); });
  }

  void Stop() {
    stopping_ = true;
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    if (listener_ >= 0) ::close(listener_);
    listener_ = -1;
  }

  int port() const { return port_; }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      pollfd fd{.fd = listener_, .events = POLLIN, .revents = 0};
      if (::poll(&fd, 1, 20) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      std::lock_guard lock(mu_);
      pumps_.emplace_back([this, client, server] { Pump(client, server); });
    }
    std::lock_guard lock(mu_);
    for (auto& pump : pumps_) pump.join();
    pumps_.clear();
  }

  void Pump(int a, int b) {
    char buffer[16384];
    while (!stopping_) {
      pollfd fds[2] = {{.fd = a, .events = POLLIN, .revents = 0},
                       {.fd = b, .events = POLLIN, .revents = 0}};
      if (::poll(fds, 2, 20) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
        closed = n <= 0 || ::write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) != n;
      }
      if (closed) break;
    }
    ::close(a);
    ::close(b);
  }

  const int target_port_;
  int port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::vector<std::thread> pumps_;
};

// TELOS_DATABASE_URL with its host and port replaced, as a key=value conninfo.
std::string ConninfoVia(const std::string& url, int port) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  RELEASE_ASSERT(options != nullptr, error != nullptr ? error : "bad url");
  std::string out;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    const std::string key = o->keyword;
    if (o->val == nullptr || key == "host" || key == "hostaddr" || key == "port") continue;
    out += key + "='" + o->val + "' ";
  }
  PQconninfoFree(options);
  return out + "host=127.0.0.1 port=" + std::to_string(port);
}

int ServerPort(const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  RELEASE_ASSERT(options != nullptr, error != nullptr ? error : "bad url");
  int port = 5432;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string(o->keyword) == "port" && o->val != nullptr) port = std::atoi(o->val);
  }
  PQconninfoFree(options);
  return port;
}

// ------------------------------------------------------------------ PostgreSQL specifics

class PostgresStoreTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<PostgresStore>> Open() {
    return PostgresStore::Open(schema_.Options(), clock_);
  }
  std::string Query(const std::string& sql) { return SideConnection(schema_.url()).Query(sql); }
  std::string InSchema(const std::string& table) const { return schema_.name() + "." + table; }

  ManualClock clock_;
  ScratchSchema schema_;
};

TEST(PostgresEnvironmentTest, DatabaseUrlIsSet) {
  EXPECT_FALSE(DatabaseUrl().empty());
}

TEST_F(PostgresStoreTest, MigratesAnEmptySchemaToTheLatest) {
  ASSERT_FALSE(schema_.url().empty());
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), PostgresSchemaVersionKnown());
  EXPECT_GE(PostgresSchemaVersionKnown(), 2);
  EXPECT_EQ(Query("SELECT count(*) FROM " + InSchema("schema_migrations")),
            std::to_string(PostgresSchemaVersionKnown()));
  EXPECT_EQ(Query("SELECT name FROM " + InSchema("schema_migrations") + " WHERE version = 1"),
            "0001_accounts_and_characters.sql");
  // The tables live in the store's schema, not in public.
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" +
                  schema_.name() +
                  "' AND table_name IN ('accounts', 'characters', 'mail', 'zone_fences', "
                  "'zone_writes')"),
            "5");
}

TEST_F(PostgresStoreTest, AZoneFenceRecordsWhoRaisedItAndWhen) {
  ASSERT_FALSE(schema_.url().empty());
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CharacterStore& characters = (*store)->characters();
  ASSERT_EQ(*characters.RaiseZoneFence("town", 3, "shard-a"), 3);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_EQ(*characters.RaiseZoneFence("town", 5, "shard-b"), 5);
  const std::string fence_sql = "SELECT shard_id || '@' || updated_at_ms FROM " +
                                InSchema("zone_fences") + " WHERE zone_id = 'town'";
  const std::string raised = Query(fence_sql);
  clock_.Advance(std::chrono::seconds(1));
  // Neither a stale raise nor a repeated one changes who raised it last.
  ASSERT_EQ(*characters.RaiseZoneFence("town", 4, "shard-c"), 5);
  ASSERT_EQ(*characters.RaiseZoneFence("town", 5, "shard-d"), 5);
  EXPECT_EQ(Query(fence_sql), raised);
  EXPECT_EQ(raised.substr(0, 8), "shard-b@");
}

TEST_F(PostgresStoreTest, ALeasedSaveInFlightHoldsOffARaise) {
  ASSERT_FALSE(schema_.url().empty());
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CharacterStore& characters = (*store)->characters();
  ASSERT_EQ(*characters.RaiseZoneFence("town", 5, "shard-a"), 5);
  // A side session stands for a leased save of tenure 5 between its fence check and its
  // commit: it holds the fence row as the store's save does.
  SideConnection save_in_flight(schema_.url());
  save_in_flight.Query("BEGIN");
  EXPECT_EQ(save_in_flight.Query("SELECT lease_epoch FROM " + InSchema("zone_fences") +
                                 " WHERE zone_id = 'town' AND lease_epoch >= 5 FOR SHARE"),
            "5");
  std::atomic<bool> raised{false};
  std::thread raiser([&] {
    auto fence = characters.RaiseZoneFence("town", 6, "shard-b");
    EXPECT_TRUE(fence.ok()) << fence.status().ToString();
    if (fence.ok()) {
      EXPECT_EQ(*fence, 6);
    }
    raised = true;
  });
  // The raise waits for the save to finish: poll until the server shows it blocked on the lock.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool waiting = false;
  while (!waiting && std::chrono::steady_clock::now() < deadline) {
    waiting = Query("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" +
                    schema_.name() + "' AND wait_event_type = 'Lock'") == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(waiting);
  EXPECT_FALSE(raised.load());
  save_in_flight.Query("COMMIT");
  raiser.join();
  EXPECT_TRUE(raised.load());
}

TEST_F(PostgresStoreTest, ReopeningKeepsDataAndAppliesNothingTwice) {
  ASSERT_FALSE(schema_.url().empty());
  int64_t account_id = 0;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto account = (*store)->accounts().Create("alice", kHash);
    ASSERT_TRUE(account.ok()) << account.status().ToString();
    account_id = account->id;
    CharacterRecord draft{.name = "Aldric", .account_id = account_id, .state_json = "{}"};
    ASSERT_TRUE((*store)->characters().Create(draft).ok());
    const int64_t epoch = (*store)->characters().ClaimOwnership("Aldric", 0)->owner_epoch;
    draft.state_json = R"({"gold":7})";
    ASSERT_TRUE((*store)->characters().Save(draft, 1, epoch).ok());
    ASSERT_TRUE((*store)->mail().Send("Postmaster", "Aldric", "hi", "there").ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto loaded = (*store)->characters().Load("aldric");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->state_json, R"({"gold":7})");
  EXPECT_EQ(loaded->state_version, 2);
  EXPECT_EQ(loaded->owner_epoch, 1);
  EXPECT_EQ((*store)->accounts().LoadById(account_id)->name, "alice");
  EXPECT_EQ(*(*store)->mail().CountUnread("Aldric"), 1);
  EXPECT_EQ(Query("SELECT count(*) FROM " + InSchema("schema_migrations")),
            std::to_string(PostgresSchemaVersionKnown()));
}

TEST_F(PostgresStoreTest, RefusesASchemaNewerThanTheBinary) {
  ASSERT_FALSE(schema_.url().empty());
  ASSERT_TRUE(Open().ok());
  const int64_t future = PostgresSchemaVersionKnown() + 1;
  Query("INSERT INTO " + InSchema("schema_migrations") + " VALUES (" + std::to_string(future) +
        ", '" + std::to_string(future) + "_from_the_future.sql', 0)");
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer than this binary"), std::string::npos)
      << store.status().ToString();
  EXPECT_NE(store.status().message().find(schema_.name()), std::string::npos)
      << store.status().ToString();
}

TEST_F(PostgresStoreTest, ConcurrentOpensApplyEachMigrationOnce) {
  ASSERT_FALSE(schema_.url().empty());
  // Each Open has its own connection, exactly as two processes would; they race from a common
  // start line on an empty schema.
  constexpr int kOpeners = 4;
  std::atomic<int> ready{0};
  std::vector<Status> results(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kOpeners) std::this_thread::yield();
      auto store = Open();
      results[static_cast<size_t>(i)] = store.ok() ? Status::Ok() : store.status();
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Status& status : results) EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Query("SELECT count(*) FROM " + InSchema("schema_migrations")),
            std::to_string(PostgresSchemaVersionKnown()));
  EXPECT_EQ(Query("SELECT count(DISTINCT version) FROM " + InSchema("schema_migrations")),
            std::to_string(PostgresSchemaVersionKnown()));
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsUnavailableQuickly) {
  ASSERT_FALSE(schema_.url().empty());
  // A port that was just free: connection refused.
  TcpProxy closed(0);
  closed.Start();
  const int port = closed.port();
  closed.Stop();
  PostgresStoreOptions options = schema_.Options();
  options.conninfo = ConninfoVia(schema_.url(), port);
  options.connect_timeout_ms = 2'000;
  const auto start = std::chrono::steady_clock::now();
  auto store = PostgresStore::Open(options, clock_);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
  EXPECT_LT(took, std::chrono::milliseconds(1'500));

  // A reachable server that refuses us (no such database) is Unavailable too, and says why.
  options.conninfo =
      ConninfoVia(schema_.url(), ServerPort(schema_.url())) + " dbname=telos_no_such_database";
  auto refused = PostgresStore::Open(options, clock_);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("telos_no_such_database"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(PostgresStoreTest, ASilentServerTimesOutAtTheConnectTimeout) {
  ASSERT_FALSE(schema_.url().empty());
  // Listens (the kernel completes the TCP handshake) but never says a word.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  PostgresStoreOptions options = schema_.Options();
  options.conninfo = ConninfoVia(schema_.url(), ntohs(addr.sin_port));
  options.connect_timeout_ms = 300;
  const auto start = std::chrono::steady_clock::now();
  auto store = PostgresStore::Open(options, clock_);
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(listener);
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
  EXPECT_GE(took, std::chrono::milliseconds(250));
  EXPECT_LT(took, std::chrono::milliseconds(1'500));
}

TEST_F(PostgresStoreTest, MalformedOptionsAreInvalidArguments) {
  ASSERT_FALSE(schema_.url().empty());
  PostgresStoreOptions options = schema_.Options();
  options.conninfo = "postgresql://telos@127.0.0.1:notaport/telos?bogus_option=1";
  EXPECT_EQ(PostgresStore::Open(options, clock_).status().code(), StatusCode::kInvalidArgument);
  options.conninfo = "";
  EXPECT_EQ(PostgresStore::Open(options, clock_).status().code(), StatusCode::kInvalidArgument);
  options = schema_.Options();
  options.schema = "Robert'); DROP TABLE students;--";
  EXPECT_EQ(PostgresStore::Open(options, clock_).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PostgresStoreTest, ADroppedConnectionIsReplacedOnTheNextCall) {
  ASSERT_FALSE(schema_.url().empty());
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->accounts().Create("alice", kHash).ok());
  // The server ends our session, as a restart or an administrator would.
  EXPECT_EQ(Query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                  "WHERE application_name = '" +
                  schema_.name() + "'"),
            "1");
  // A read is safe to repeat, so the store retries it on a new connection: the caller never
  // notices.
  auto reread = (*store)->accounts().Load("alice");
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->name, "alice");

  // A write is not: it reports the lost connection (Unavailable, or UnknownResult when it may
  // have been applied), and the next call runs on a new connection.
  Query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" +
        schema_.name() + "'");
  auto lost = (*store)->accounts().RecordLoginFailure(reread->id);
  if (!lost.ok()) {
    EXPECT_TRUE(lost.status().code() == StatusCode::kUnknownResult ||
                lost.status().code() == StatusCode::kUnavailable)
        << lost.status().ToString();
  }
  auto counted = (*store)->accounts().RecordLoginFailure(reread->id);
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
}

TEST_F(PostgresStoreTest, WhileTheServerIsDownCallsAreUnavailableAndThenRecover) {
  ASSERT_FALSE(schema_.url().empty());
  TcpProxy proxy(ServerPort(schema_.url()));
  proxy.Start();
  PostgresStoreOptions options = schema_.Options();
  options.conninfo = ConninfoVia(schema_.url(), proxy.port());
  options.connect_timeout_ms = 1'000;
  options.reconnect_backoff_initial_ms = 100;
  options.reconnect_backoff_max_ms = 400;
  auto opened = PostgresStore::Open(options, clock_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PostgresStore& store = **opened;
  auto account = store.accounts().Create("alice", kHash);
  ASSERT_TRUE(account.ok());
  ASSERT_TRUE(
      store.characters().Create(CharacterRecord{.name = "Aldric", .account_id = account->id}).ok());
  const int64_t epoch = store.characters().ClaimOwnership("Aldric", 0)->owner_epoch;

  proxy.Stop();  // "PostgreSQL is down"
  // The write in flight when the connection dies may or may not have landed.
  auto lost = store.characters().Save(CharacterRecord{.name = "Aldric"}, 1, epoch);
  ASSERT_FALSE(lost.ok());
  EXPECT_TRUE(lost.status().code() == StatusCode::kUnknownResult ||
              lost.status().code() == StatusCode::kUnavailable)
      << lost.status().ToString();
  // From then on every call says Unavailable, promptly, whether it tries to reconnect or is
  // inside the backoff.
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto load = store.characters().Load("Aldric");
    EXPECT_EQ(load.status().code(), StatusCode::kUnavailable) << load.status().ToString();
    EXPECT_NE(load.status().message().find("PostgreSQL is unreachable"), std::string::npos)
        << load.status().ToString();
    EXPECT_EQ(store.mail().CountUnread("Aldric").status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(store.accounts().RecordLoginFailure(account->id).status().code(),
              StatusCode::kUnavailable);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1'500));
    clock_.Advance(std::chrono::milliseconds(150));
  }

  proxy.Start();                            // back on the same port
  clock_.Advance(std::chrono::seconds(1));  // past any backoff
  auto load = store.characters().Load("Aldric");
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  // The fences still hold: a save at the loaded version succeeds exactly once.
  EXPECT_TRUE(store.characters().Save(*load, load->state_version, epoch).ok());
  EXPECT_EQ(store.characters().Save(*load, load->state_version, epoch).status().code(),
            StatusCode::kConflict);
}

}  // namespace
}  // namespace telos::store
