// redis::Connection with ACL credentials, against the real Redis of scripts/services
// (TELOS_REDIS, which has no password of its own). Each test makes an ACL user of its own with
// ACL SETUSER and deletes it at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/redis/connection.h"

namespace telos::redis {
namespace {

ConnectionOptions OptionsFor(const Address& a) {
  return ConnectionOptions{.host = a.host,
                           .port = a.port,
                           .username = a.username,
                           .password = a.password,
                           .connect_timeout_ms = 1'000,
                           .command_timeout_ms = 2'000,
                           .reconnect_backoff_min_ms = 100,
                           .reconnect_backoff_max_ms = 1'000};
}

// A Redis URL's characters a password may not hold as they are.
std::string PercentEncoded(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

class RedisAclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("TELOS_REDIS");
    if (url == nullptr || *url == '\0') {
      GTEST_FAIL()
          << "TELOS_REDIS is not set: start the services and run eval \"$(scripts/services "
             "env)\"";
    }
    Result<Address> server = ParseUrl(url);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = *server;
    admin_ = std::make_unique<Connection>(OptionsFor(server_), clock_);
    std::random_device rd;
    user_ = "telos-acl-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
    // Characters a URL must encode, so that decoding is tested end to end.
    password_ = "p@ss:w/rd% " + std::to_string(rd());
    Result<Reply> made = admin_->Command(
        {"ACL", "SETUSER", user_, "on", ">" + password_, "~*", "+@all"}, /*mutating=*/true);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_EQ(made->type, Reply::Type::kStatus) << made->str;
    made_user_ = true;
  }

  void TearDown() override {
    if (!made_user_) return;
    Result<Reply> gone = admin_->Command({"ACL", "DELUSER", user_}, /*mutating=*/true);
    EXPECT_TRUE(gone.ok() && gone->type == Reply::Type::kInteger && gone->integer == 1)
        << "could not delete ACL user " << user_;
  }

  std::string UrlWith(const std::string& user, const std::string& password) const {
    return "redis://" + PercentEncoded(user) + ":" + PercentEncoded(password) + "@" + server_.host +
           ":" + std::to_string(server_.port);
  }

  // Who the server thinks `conn` is.
  static std::string WhoAmI(Connection& conn) {
    Result<Reply> r = conn.Command({"ACL", "WHOAMI"}, /*mutating=*/false);
    if (!r.ok()) return "error: " + r.status().ToString();
    return r->str;
  }

  ManualClock clock_;
  Address server_;
  std::unique_ptr<Connection> admin_;
  std::string user_;
  std::string password_;
  bool made_user_ = false;
};

TEST_F(RedisAclTest, UserAndPasswordFromTheUrlLogIn) {
  Result<Address> a = ParseUrl(UrlWith(user_, password_));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->password, password_);
  Connection conn(OptionsFor(*a), clock_);
  EXPECT_EQ(WhoAmI(conn), user_);
  Result<Reply> pong = conn.Command({"PING"}, /*mutating=*/false);
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->str, "PONG");
}

TEST_F(RedisAclTest, EveryReconnectLogsInAgain) {
  Result<Address> a = ParseUrl(UrlWith(user_, password_));
  ASSERT_TRUE(a.ok());
  Connection conn(OptionsFor(*a), clock_);
  ASSERT_EQ(WhoAmI(conn), user_);
  // The server drops every connection of the user; the next call finds the connection dead
  // and drops it, and the one after reconnects, which must authenticate again.
  Result<Reply> killed = admin_->Command({"CLIENT", "KILL", "USER", user_}, /*mutating=*/true);
  ASSERT_TRUE(killed.ok() && killed->type == Reply::Type::kInteger && killed->integer >= 1)
      << (killed.ok() ? killed->str : killed.status().ToString());
  (void)conn.Command({"PING"}, /*mutating=*/false);
  EXPECT_EQ(WhoAmI(conn), user_);
}

TEST_F(RedisAclTest, WrongPasswordIsPermissionDeniedAtOnce) {
  Result<Address> a = ParseUrl(UrlWith(user_, "not-" + password_));
  ASSERT_TRUE(a.ok());
  Connection conn(OptionsFor(*a), clock_);
  const Instant before = SystemClock().Now();
  Result<Reply> r = conn.Command({"PING"}, /*mutating=*/false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
  EXPECT_NE(r.status().message().find("user " + user_), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("WRONGPASS"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find(password_), std::string::npos) << "password leaked";
  // Well inside the command timeout: the refusal is an answer, not a hang.
  EXPECT_LT(ElapsedMs(before, SystemClock().Now()), 1'000);

  // Until the backoff has passed (the manual clock stands still) the refusal is repeated
  // without a new AUTH, still as PermissionDenied rather than an outage.
  Result<Reply> again = conn.Command({"PING"}, /*mutating=*/false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kPermissionDenied) << again.status().ToString();
  EXPECT_NE(again.status().message().find("next attempt in"), std::string::npos);
}

TEST_F(RedisAclTest, PasswordAloneIsSentAsAuthPassword) {
  // This server's default user has no password, so "AUTH <password>" is refused with its own
  // words: proof that the one-argument form went out.
  Result<Address> a =
      ParseUrl("redis://:whatever@" + server_.host + ":" + std::to_string(server_.port));
  ASSERT_TRUE(a.ok());
  Connection conn(OptionsFor(*a), clock_);
  Result<Reply> r = conn.Command({"PING"}, /*mutating=*/false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
  EXPECT_NE(r.status().message().find("refused the password"), std::string::npos)
      << r.status().message();
}

TEST_F(RedisAclTest, ScriptRefusedByTheAclIsPermissionDenied) {
  // A user without +@scripting: SCRIPT LOAD answers NOPERM, which is the URL's user lacking
  // rights, not a bug in the script.
  Result<Reply> limited =
      admin_->Command({"ACL", "SETUSER", user_, "-@scripting"}, /*mutating=*/true);
  ASSERT_TRUE(limited.ok() && limited->type == Reply::Type::kStatus);
  Result<Address> a = ParseUrl(UrlWith(user_, password_));
  ASSERT_TRUE(a.ok());
  Connection conn(OptionsFor(*a), clock_);
  static constexpr LuaScript kScript{"acl_test_ping", "return redis.call('PING')"};
  Result<Reply> r = conn.Script(kScript, {}, {}, /*mutating=*/false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
}

}  // namespace
}  // namespace telos::redis
