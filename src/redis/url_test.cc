// redis::ParseUrl: what a TELOS_REDIS URL may say, and that a refusal never repeats a password.
#include <gtest/gtest.h>

#include <string>

#include "telos/redis/connection.h"

namespace telos::redis {
namespace {

TEST(RedisUrlTest, HostAndPort) {
  Result<Address> a = ParseUrl("redis://127.0.0.1:16379");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 16379);
  EXPECT_EQ(a->username, "");
  EXPECT_EQ(a->password, "");
  EXPECT_TRUE(ParseUrl("redis://db.internal:6379/").ok());
  EXPECT_TRUE(ParseUrl("REDIS://db.internal:6379/0").ok());  // schemes are case-insensitive
}

TEST(RedisUrlTest, Ipv6HostLosesItsBrackets) {
  Result<Address> a = ParseUrl("redis://[::1]:6379");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "::1");  // as hiredis wants it
  EXPECT_EQ(a->port, 6379);
}

TEST(RedisUrlTest, UserAndPassword) {
  Result<Address> a = ParseUrl("redis://telos-world:hunter2@redis.internal:6380/0");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "redis.internal");
  EXPECT_EQ(a->port, 6380);
  EXPECT_EQ(a->username, "telos-world");
  EXPECT_EQ(a->password, "hunter2");
}

TEST(RedisUrlTest, PasswordAloneForTheDefaultUser) {
  Result<Address> a = ParseUrl("redis://:hunter2@h:1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->username, "");
  EXPECT_EQ(a->password, "hunter2");
}

TEST(RedisUrlTest, CredentialsArePercentDecoded) {
  // A password may hold any byte once encoded: '@', ':', '/', '%' and a space here.
  Result<Address> a = ParseUrl("redis://us%3Aer:p%40ss%3Aw%2Frd%25%20x@h:1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->username, "us:er");
  EXPECT_EQ(a->password, "p@ss:w/rd% x");
  EXPECT_EQ(a->host, "h");
}

TEST(RedisUrlTest, BadUrlsAreRefused) {
  for (const char* bad : {
           "",
           "127.0.0.1:6379",        // no scheme
           "http://x:1",            // another scheme
           "redis://x",             // no port
           "redis://x:",            // empty port
           "redis://:1",            // no host
           "redis://x:0",           // port out of range
           "redis://x:99999",       //
           "redis://x:65536",       //
           "redis://x:1/3",         // a database other than 0
           "redis://x:1/0/extra",   //
           "redis://x:1?db=0",      // a query
           "redis://x:1#frag",      // a fragment
           "redis://secret@x:1",    // a user alone: ambiguous
           "redis://us er:pw@x:1",  // an unencoded space
           "redis://u:p%zz@x:1",    // a broken percent-escape
       }) {
    Result<Address> a = ParseUrl(bad);
    EXPECT_FALSE(a.ok()) << "'" << bad << "' was accepted";
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(RedisUrlTest, TlsIsRefusedWithAPointerToTheDoc) {
  Result<Address> a = ParseUrl("rediss://user:pw@redis.internal:6380");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("rediss://"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("docs/operating.md"), std::string::npos)
      << a.status().message();
}

TEST(RedisUrlTest, RefusalsNeverRepeatThePassword) {
  for (const char* bad : {"redis://u:Sekr1t@x:1/5", "rediss://u:Sekr1t@x:1",
                          "redis://u:Sekr1t@x:99999", "redis://u:Sekr1t@@x:1"}) {
    Result<Address> a = ParseUrl(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().message().find("Sekr1t"), std::string::npos) << a.status().message();
    EXPECT_NE(a.status().message().find("***"), std::string::npos) << a.status().message();
  }
}

}  // namespace
}  // namespace telos::redis
