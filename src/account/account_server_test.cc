// AccountServer and RemoteAccountDesk end to end (label `integration`): a real PostgreSQL store
// under AccountService, the gRPC server on port 0, and the gate's remote desk talking to it.
//
// The server comes from TELOS_DATABASE_URL (eval "$(scripts/services env)"); without it every
// test FAILS, never skips. Each test works in its own randomly named schema, dropped afterwards.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "telos/account/account_desk.h"
#include "telos/account/account_server.h"
#include "telos/account/account_service.h"
#include "telos/account/remote_account_desk.h"
#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/limits.h"
#include "telos/rpc/channels.h"
#include "telos/store/postgres_store.h"
#include "telos/v1/fleet.grpc.pb.h"
#include "telos/world/character_state.h"

namespace telos::account {
namespace {

using namespace std::chrono_literals;

constexpr const char* kCallerToken = "test-caller-token";
constexpr int64_t kAssertionTtlMs = 60'000;
constexpr const char* kAddress = "10.0.0.1";  // the player's address the gate passes on
constexpr const char* kGateId = "gate-1";

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

// Drops `schema` (and everything in it) over a side connection.
void DropSchema(const std::string& url, const std::string& schema) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) == CONNECTION_OK) {
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);
    PQclear(PQexec(conn, ("DROP SCHEMA IF EXISTS " + schema + " CASCADE").c_str()));
  } else {
    ADD_FAILURE() << "cannot drop schema " << schema << ": " << PQerrorMessage(conn);
  }
  PQfinish(conn);
}

// A small fixed pool standing in for main's blocking pool: the server must not run its work on
// gRPC's threads. Join() runs every queued task first.
class TestPool {
 public:
  explicit TestPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~TestPool() { Join(); }

  BlockingRunner Runner() {
    return [this](std::function<void()> task) {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
      cv_.notify_one();
    };
  }

  void Join() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

class AccountServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = DatabaseUrl();
    ASSERT_FALSE(url_.empty());
    schema_ = RandomSchemaName();
    auto opened = store::PostgresStore::Open(
        {.conninfo = url_, .schema = schema_, .application_name = schema_}, clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
    service_ = std::make_unique<AccountService>(store_->accounts(), store_->characters(), hasher_,
                                                throttle_, clock_, log_, metrics_);
    desk_ = std::make_unique<LocalAccountDesk>(*service_, key_, clock_,
                                               LocalAccountDeskOptions{kAssertionTtlMs});
    server_ = MakeServer("127.0.0.1:0");
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    ASSERT_NE(*port, 0);
    port_ = *port;
    remote_ = MakeRemote(kCallerToken);
  }

  void TearDown() override {
    remote_.reset();
    if (server_) server_->Stop();
    server_.reset();
    pool_.Join();
    desk_.reset();
    service_.reset();
    store_.reset();  // disconnect before the schema is dropped
    if (!url_.empty() && !schema_.empty()) DropSchema(url_, schema_);
  }

  std::unique_ptr<AccountServer> MakeServer(const std::string& listen_address,
                                            BlockingRunner runner = nullptr,
                                            size_t calls_in_flight_max = 256) {
    AccountServerOptions options;
    options.listen_address = listen_address;
    options.caller_token = kCallerToken;
    options.calls_in_flight_max = calls_in_flight_max;
    return std::make_unique<AccountServer>(
        options, *desk_, runner ? std::move(runner) : pool_.Runner(), log_, metrics_);
  }

  std::unique_ptr<RemoteAccountDesk> MakeRemote(const std::string& caller_token) {
    RemoteAccountDeskOptions options;
    options.target = "127.0.0.1:" + std::to_string(port_);
    options.caller_token = caller_token;
    return std::make_unique<RemoteAccountDesk>(options);
  }

  ManualClock clock_;
  PasswordHasher hasher_{PasswordCost::ForTests()};
  AddressThrottle throttle_{clock_, 100, 60s};
  Logger log_{"account_server_test", LogLevel::kError};
  Metrics metrics_;
  const auth::SigningKey key_ = auth::SigningKey::Generate();
  TestPool pool_{2};
  std::string url_;
  std::string schema_;
  std::unique_ptr<store::PostgresStore> store_;
  std::unique_ptr<AccountService> service_;
  std::unique_ptr<LocalAccountDesk> desk_;
  std::unique_ptr<AccountServer> server_;
  uint16_t port_ = 0;
  std::unique_ptr<RemoteAccountDesk> remote_;
};

TEST_F(AccountServerTest, AccountsRoundTrip) {
  auto exists = remote_->AccountExists("ada", kAddress);
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_FALSE(*exists);

  auto account = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(account.ok()) << account.status().ToString();
  EXPECT_GT(account->id, 0);
  EXPECT_EQ(account->name, "ada");
  EXPECT_TRUE(*remote_->AccountExists("ADA", kAddress));
  EXPECT_EQ(remote_->CreateAccount("Ada", "another password", kAddress).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(remote_->CreateAccount("x", "long enough pw", kAddress).status().code(),
            StatusCode::kInvalidArgument);

  auto login = remote_->Authenticate("ada", "difference engine", "127.0.0.1");
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  EXPECT_EQ(login->id, account->id);
  auto wrong = remote_->Authenticate("ada", "wrong guess", "127.0.0.1");
  EXPECT_EQ(wrong.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(wrong.status().message(), "Wrong account name or password.");
}

TEST_F(AccountServerTest, CharactersAndTheSignedClaim) {
  auto account = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(account.ok()) << account.status().ToString();
  EXPECT_FALSE(account->ticket.empty());
  auto empty = remote_->Characters(account->ticket);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());

  ASSERT_TRUE(remote_->CreateCharacter(account->ticket, "lovelace", "lobby", "atrium").ok());
  EXPECT_EQ(remote_->CreateCharacter(account->ticket, "Lovelace", "lobby", "atrium").code(),
            StatusCode::kAlreadyExists);
  auto list = remote_->Characters(account->ticket);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "Lovelace");
  EXPECT_EQ((*list)[0].zone_id, "lobby");
  EXPECT_GT((*list)[0].updated_at_ms, 0);

  auto claim = remote_->ClaimCharacter(account->ticket, "LOVELACE", kGateId);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(claim->name, "Lovelace");
  EXPECT_EQ(claim->account_id, account->id);
  EXPECT_EQ(claim->record.name, "Lovelace");
  EXPECT_EQ(claim->record.account_id, account->id);
  EXPECT_TRUE(claim->record.state_json.empty());
  ASSERT_FALSE(claim->assertion.empty());

  auto assertion = auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_);
  ASSERT_TRUE(assertion.ok()) << assertion.status().ToString();
  EXPECT_EQ(assertion->account_id, account->id);
  EXPECT_EQ(assertion->character, "Lovelace");
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  EXPECT_EQ(assertion->expires_unix_ms, now_ms + kAssertionTtlMs);
  EXPECT_EQ(claim->assertion_expires_unix_ms, assertion->expires_unix_ms);
  EXPECT_FALSE(assertion->nonce.empty());
  EXPECT_EQ(assertion->gate_id, kGateId);

  // Signed by this server's key only, and only until it expires.
  const auth::SigningKey stranger = auth::SigningKey::Generate();
  EXPECT_EQ(auth::VerifyAssertion(stranger.verify_key(), claim->assertion, clock_).status().code(),
            StatusCode::kPermissionDenied);
  clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs + 1));
  EXPECT_EQ(auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_).status().code(),
            StatusCode::kPermissionDenied);

  // The account service only vouches for the player: the world that admits the character
  // claims it, so the row's owner epoch is untouched here.
  auto row = store_->characters().Load("lovelace");
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->owner_epoch, 0);
  // The first state was made by the service, not sent by the gate.
  auto state = world::DecodeCharacter(row->state_json);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(*state, world::NewCharacter("Lovelace", world::Ref{"lobby", "atrium"}));
}

TEST_F(AccountServerTest, ClaimingAnotherAccountsCharacterIsDenied) {
  auto ada = remote_->CreateAccount("ada", "difference engine", kAddress);
  auto charles = remote_->CreateAccount("babbage", "analytical engine", kAddress);
  ASSERT_TRUE(ada.ok() && charles.ok());
  ASSERT_TRUE(remote_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto stolen = remote_->ClaimCharacter(charles->ticket, "lovelace", kGateId);
  EXPECT_EQ(stolen.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(stolen.status().message(), "That character belongs to another account.");
  EXPECT_EQ(remote_->ClaimCharacter(ada->ticket, "nobody", kGateId).status().code(),
            StatusCode::kNotFound);
}

// Issue 23 item 2: before login tickets, a request named its account, account ids are
// sequential, and the caller token was all it took to get an assertion for any character. These
// calls go over the raw stub with the caller token and the victim's account id in field 1,
// where older gates sent it: the service must act only on a ticket of the account that logged
// in, never on an id the caller names.
TEST_F(AccountServerTest, ACallerTokenAloneCannotActForAnAccount) {
  auto ada = remote_->CreateAccount("ada", "difference engine", kAddress);
  auto charles = remote_->CreateAccount("babbage", "analytical engine", kAddress);
  ASSERT_TRUE(ada.ok() && charles.ok());
  ASSERT_TRUE(remote_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());

  auto stub = v1::Accounts::NewStub(rpc::MakeChannel("127.0.0.1:" + std::to_string(port_)));
  auto call = [](grpc::ClientContext& context) { rpc::PrepareCall(context, 5s, kCallerToken); };
  const auto victim_id = static_cast<uint64_t>(ada->id);
  for (const std::string& ticket : {std::string(), charles->ticket, std::string("0123abcd")}) {
    SCOPED_TRACE("ticket '" + ticket + "'");
    {
      v1::ClaimRequest request;
      request.GetReflection()->MutableUnknownFields(&request)->AddVarint(1, victim_id);
      request.set_name("lovelace");
      request.set_ticket(ticket);
      request.set_gate_id(kGateId);
      v1::ClaimReply reply;
      grpc::ClientContext context;
      call(context);
      const grpc::Status status = stub->ClaimCharacter(&context, request, &reply);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
      EXPECT_TRUE(reply.assertion().empty());
    }
    {
      v1::AccountRef request;
      request.GetReflection()->MutableUnknownFields(&request)->AddVarint(1, victim_id);
      request.set_ticket(ticket);
      v1::CharacterList reply;
      grpc::ClientContext context;
      call(context);
      const grpc::Status status = stub->ListCharacters(&context, request, &reply);
      if (ticket == charles->ticket) {
        // Charles's own (empty) list, never Ada's.
        EXPECT_TRUE(status.ok()) << status.error_message();
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
      }
      EXPECT_EQ(reply.characters_size(), 0);
    }
    {
      v1::NewCharacter request;
      request.GetReflection()->MutableUnknownFields(&request)->AddVarint(1, victim_id);
      request.set_name("usurper" + std::to_string(ticket.size()));
      request.set_zone_id("lobby");
      request.set_room_id("atrium");
      request.set_ticket(ticket);
      v1::Empty reply;
      grpc::ClientContext context;
      call(context);
      (void)stub->CreateCharacter(&context, request, &reply);
    }
  }
  // Ada still has exactly her one character: nothing was created under her account.
  auto list = remote_->Characters(ada->ticket);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "Lovelace");
  // And her own ticket still claims.
  EXPECT_TRUE(remote_->ClaimCharacter(ada->ticket, "lovelace", kGateId).ok());
}

TEST_F(AccountServerTest, AnExpiredTicketIsRefused) {
  auto ada = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(ada.ok());
  ASSERT_TRUE(remote_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  clock_.Advance(std::chrono::milliseconds(limits::kLoginTicketIdleMs));
  auto late = remote_->ClaimCharacter(ada->ticket, "lovelace", kGateId);
  EXPECT_EQ(late.status().code(), StatusCode::kLoginExpired);
  EXPECT_EQ(late.status().message(), kTicketRefusedMessage);
  EXPECT_EQ(remote_->Characters(ada->ticket).status().code(), StatusCode::kLoginExpired);
  // Logging in again gives a ticket that works.
  auto again = remote_->Authenticate("ada", "difference engine", kAddress);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(again->ticket, ada->ticket);
  EXPECT_TRUE(remote_->ClaimCharacter(again->ticket, "lovelace", kGateId).ok());
}

TEST_F(AccountServerTest, RenewalKeepsTheSessionAndNeedsTheTicketThatClaimedIt) {
  auto ada = remote_->CreateAccount("ada", "difference engine", kAddress);
  auto charles = remote_->CreateAccount("babbage", "analytical engine", kAddress);
  ASSERT_TRUE(ada.ok() && charles.ok());
  ASSERT_TRUE(remote_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto claim = remote_->ClaimCharacter(ada->ticket, "lovelace", kGateId);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  auto first = auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_);
  ASSERT_TRUE(first.ok());

  // Renewed at half its life, again and again, the session outlives every single assertion and
  // the ticket's idle life.
  std::string current = claim->assertion;
  for (int round = 0; round < 4; ++round) {
    clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs / 2));
    auto renewed = remote_->RenewAssertion(ada->ticket, current);
    ASSERT_TRUE(renewed.ok()) << round << ": " << renewed.status().ToString();
    auto next = auth::VerifyAssertion(key_.verify_key(), renewed->assertion, clock_);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->nonce, first->nonce);
    EXPECT_EQ(next->gate_id, kGateId);
    EXPECT_EQ(next->account_id, ada->id);
    EXPECT_EQ(next->character, "Lovelace");
    EXPECT_EQ(renewed->assertion_expires_unix_ms, next->expires_unix_ms);
    current = renewed->assertion;
  }
  EXPECT_EQ(auth::VerifyAssertion(key_.verify_key(), claim->assertion, clock_).status().code(),
            StatusCode::kPermissionDenied);

  // Another account's ticket, or no ticket, renews nothing; nor does a lapsed assertion.
  EXPECT_EQ(remote_->RenewAssertion(charles->ticket, current).status().code(),
            StatusCode::kLoginExpired);
  EXPECT_EQ(remote_->RenewAssertion("", current).status().code(), StatusCode::kLoginExpired);
  EXPECT_EQ(remote_->RenewAssertion(ada->ticket, claim->assertion).status().code(),
            StatusCode::kLoginExpired);
}

// Issue 23: the gate stops renewing a session only when the session's own login is gone, and
// tells that from a refusal of its caller token by the code alone (gate.cc
// RefusedForTheSession). Over the real server and remote desk: every refusal of the ticket or
// the assertion arrives as LoginExpired, whatever its words, and a caller-token refusal of the
// very same call as PermissionDenied.
TEST_F(AccountServerTest, ARenewalRefusedForTheSessionIsLoginExpiredAndOneForTheCallerIsNot) {
  auto ada = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(ada.ok());
  ASSERT_TRUE(remote_->CreateCharacter(ada->ticket, "lovelace", "lobby", "atrium").ok());
  auto claim = remote_->ClaimCharacter(ada->ticket, "lovelace", kGateId);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();

  for (const std::string token : {"wrong-token", ""}) {
    const Status caller = MakeRemote(token)->RenewAssertion(ada->ticket, claim->assertion).status();
    EXPECT_EQ(caller.code(), StatusCode::kPermissionDenied) << "token '" << token << "'";
  }
  // The refused callers changed nothing: the session still renews.
  auto renewed = remote_->RenewAssertion(ada->ticket, claim->assertion);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();

  auto second_login = remote_->Authenticate("ada", "difference engine", kAddress);
  ASSERT_TRUE(second_login.ok());
  const Status no_ticket = remote_->RenewAssertion("", renewed->assertion).status();
  EXPECT_EQ(no_ticket.code(), StatusCode::kLoginExpired) << no_ticket.ToString();
  EXPECT_EQ(no_ticket.message(), kTicketRefusedMessage);
  EXPECT_EQ(remote_->RenewAssertion(second_login->ticket, renewed->assertion).status().code(),
            StatusCode::kLoginExpired);
  const Status forged = remote_->RenewAssertion(ada->ticket, "not an assertion").status();
  EXPECT_EQ(forged.code(), StatusCode::kLoginExpired) << forged.ToString();
  clock_.Advance(std::chrono::milliseconds(kAssertionTtlMs + 1));
  const Status lapsed = remote_->RenewAssertion(ada->ticket, renewed->assertion).status();
  EXPECT_EQ(lapsed.code(), StatusCode::kLoginExpired) << lapsed.ToString();
  // A ticket revoked by a password change, with an assertion that is still good.
  auto fresh = remote_->ClaimCharacter(second_login->ticket, "lovelace", kGateId);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  ASSERT_TRUE(remote_->ChangePassword("lovelace", "difference engine", "new password here").ok());
  EXPECT_EQ(remote_->RenewAssertion(second_login->ticket, fresh->assertion).status().code(),
            StatusCode::kLoginExpired);
}

TEST_F(AccountServerTest, ChangePasswordNeedsTheOldOne) {
  auto account = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(account.ok());
  ASSERT_TRUE(remote_->CreateCharacter(account->ticket, "lovelace", "lobby", "atrium").ok());
  EXPECT_EQ(remote_->ChangePassword("lovelace", "wrong", "new password here").code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(remote_->ChangePassword("lovelace", "difference engine", "new password here").ok());
  EXPECT_FALSE(remote_->Authenticate("ada", "difference engine", "1.1.1.1").ok());
  EXPECT_TRUE(remote_->Authenticate("ada", "new password here", "1.1.1.1").ok());
}

TEST_F(AccountServerTest, WrongOrMissingCallerTokenIsDenied) {
  for (const std::string token : {"wrong-token", ""}) {
    auto remote = MakeRemote(token);
    auto exists = remote->AccountExists("ada", kAddress);
    EXPECT_EQ(exists.status().code(), StatusCode::kPermissionDenied) << "token '" << token << "'";
    EXPECT_EQ(exists.status().message(), "caller token missing or wrong");
    EXPECT_EQ(remote->CreateAccount("ada", "difference engine", kAddress).status().code(),
              StatusCode::kPermissionDenied);
  }
  // Nothing was created by the refused calls.
  EXPECT_FALSE(*remote_->AccountExists("ada", kAddress));
}

TEST_F(AccountServerTest, OversizedFieldsAreInvalidArgument) {
  auto account = remote_->CreateAccount("ada", "difference engine", kAddress);
  ASSERT_TRUE(account.ok());
  const std::string long_name(kRpcNameBytesMax + 1, 'a');
  auto exists = remote_->AccountExists(long_name, kAddress);
  EXPECT_EQ(exists.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(exists.status().message().find("name"), std::string::npos);
  EXPECT_EQ(remote_->Authenticate("ada", std::string(kRpcPasswordBytesMax + 1, 'p'), "1.1.1.1")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  const Status huge = remote_->CreateCharacter(account->ticket, "lovelace",
                                               std::string(kRpcZoneIdBytesMax + 1, 'z'), "atrium");
  EXPECT_EQ(huge.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("zone_id"), std::string::npos) << huge.message();
  EXPECT_EQ(remote_->ClaimCharacter(account->ticket, long_name, kGateId).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(remote_->ChangePassword(long_name, "a", "b").code(), StatusCode::kInvalidArgument);
}

TEST_F(AccountServerTest, StoppedServerIsUnavailableQuickly) {
  ASSERT_TRUE(remote_->AccountExists("ada", kAddress).ok());  // the channel is connected
  server_->Stop();
  const auto start = std::chrono::steady_clock::now();
  auto exists = remote_->AccountExists("ada", kAddress);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(exists.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(exists.status().message().rfind("account service unreachable: ", 0), 0u)
      << exists.status().message();
  EXPECT_LT(elapsed, 2s) << "a stopped service must fail fast, not wait for the deadline";

  // A desk that never reached the service fails the same way.
  auto never = MakeRemote(kCallerToken);
  EXPECT_EQ(never->Authenticate("ada", "difference engine", "1.1.1.1").status().code(),
            StatusCode::kUnavailable);
}

TEST_F(AccountServerTest, CallsBeyondTheInFlightBoundAreRefused) {
  // A runner that holds its tasks until released, so the first call stays in flight.
  std::mutex mu;
  std::vector<std::function<void()>> held;
  BlockingRunner holding = [&](std::function<void()> task) {
    std::lock_guard lock(mu);
    held.push_back(std::move(task));
  };
  auto server = MakeServer("127.0.0.1:0", holding, 1);
  auto port = server->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  RemoteAccountDeskOptions options;
  options.target = "127.0.0.1:" + std::to_string(*port);
  options.caller_token = kCallerToken;
  RemoteAccountDesk remote(options);

  Result<bool> first = Status::Internal("not run");
  std::thread caller([&] { first = remote.AccountExists("ada", kAddress); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (!held.empty()) break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the first call never arrived";
    std::this_thread::sleep_for(1ms);
  }
  auto second = remote.AccountExists("ada", kAddress);
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted);

  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(mu);
    tasks.swap(held);
  }
  for (auto& task : tasks) task();
  caller.join();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(*first);
  server->Stop();
}

// The gate's address crosses the wire with CreateAccount and AccountExists, so the service
// throttles the player, not the gate: before, the remote desk sent no address and every
// creation came from "".
TEST_F(AccountServerTest, CreationAndUnknownNamesAreThrottledByThePlayersAddress) {
  for (size_t i = 0; i < limits::kAccountCreationsPerAddressMax; ++i) {
    auto created = remote_->CreateAccount("flood" + std::string(1, char('a' + i)),
                                          "difference engine", "10.9.9.9");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  auto refused = remote_->CreateAccount("floodz", "difference engine", "10.9.9.9");
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(
      refused.status().message().rfind("Too many new accounts from your address; try again in", 0),
      0u)
      << refused.status().message();
  EXPECT_TRUE(remote_->CreateAccount("charles", "difference engine", "10.8.8.8").ok());

  // The fixture's throttle allows 100 failures a minute per address; each "no" is one.
  for (int i = 0; i < 100; ++i) {
    auto exists = remote_->AccountExists("nobody" + std::to_string(i), "10.7.7.7");
    ASSERT_TRUE(exists.ok()) << i << ": " << exists.status().ToString();
    EXPECT_FALSE(*exists);
  }
  EXPECT_EQ(remote_->AccountExists("charles", "10.7.7.7").status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(*remote_->AccountExists("charles", "10.6.6.6"));
}

TEST_F(AccountServerTest, PortInUseIsUnavailable) {
  auto second = MakeServer("127.0.0.1:" + std::to_string(port_));
  auto bound = second->Start();
  ASSERT_FALSE(bound.ok()) << "bound port " << *bound;
  EXPECT_EQ(bound.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bound.status().message().find("127.0.0.1:" + std::to_string(port_)), std::string::npos)
      << bound.status().message();
}

}  // namespace
}  // namespace telos::account
