// Proves the test environment reaches a real Redis: write, read back, delete.
#include <hiredis/hiredis.h>

#include <memory>

#include "services_env.h"

namespace telos {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

TEST(RedisReachable, WriteReadBack) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(testing::SplitHostPort(testing::RequireEnv("TELOS_REDIS"), host, port));
  const timeval timeout{2, 0};
  std::unique_ptr<redisContext, void (*)(redisContext*)> ctx(
      redisConnectWithTimeout(host.c_str(), port, timeout), redisFree);
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(ctx->err, 0) << ctx->errstr;
  const std::string key = testing::UniqueName("telos:test:reachable");
  Reply set(static_cast<redisReply*>(redisCommand(ctx.get(), "SET %s %s", key.c_str(), "zone")));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(std::string(set->str, set->len), "OK");
  Reply get(static_cast<redisReply*>(redisCommand(ctx.get(), "GET %s", key.c_str())));
  ASSERT_NE(get, nullptr);
  ASSERT_EQ(get->type, REDIS_REPLY_STRING);
  EXPECT_EQ(std::string(get->str, get->len), "zone");
  Reply del(static_cast<redisReply*>(redisCommand(ctx.get(), "DEL %s", key.c_str())));
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(del->integer, 1);
}

}  // namespace
}  // namespace telos
