// The drain-targets client over an InProcessBus: a stand-in leader director answers (or not),
// and the drain's ask gets the targets, or an error that makes the drain choose alone.
#include "telos/shard/drain_target_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "telos/bus/in_process_bus.h"
#include "telos/director/drain_target_messages.h"

namespace telos::shard {
namespace {

constexpr char kPrefix[] = "telos.test";
constexpr char kScope[] = "director";

class DrainTargetClientTest : public ::testing::Test {
 protected:
  DrainTargetAsk Ask(int64_t timeout_ms = 1'000) {
    return MakeDrainTargetAsk(
        DrainTargetClientOptions{
            .shard_id = "A", .subject_prefix = kPrefix, .scope = kScope, .timeout_ms = timeout_ms},
        shard_bus_, log_);
  }
  // The leader: answers every request with `reply(request)`.
  void Lead(std::function<std::string(const director::DrainTargetsRequest&)> reply) {
    auto sub = director_bus_.Subscribe(director::DrainTargetsSubject(kPrefix, kScope),
                                       [this, reply](const bus::Message& m) {
                                         auto request = director::DecodeDrainTargetsRequest(m.data);
                                         ASSERT_TRUE(request.ok()) << request.status().ToString();
                                         seen_ = *request;
                                         (void)director_bus_.Reply(m, reply(*request));
                                       });
    ASSERT_TRUE(sub.ok());
    subscription_ = std::move(*sub);
  }

  std::shared_ptr<bus::InProcessBus::Hub> hub_ = bus::InProcessBus::NewHub();
  bus::InProcessBus shard_bus_{hub_};
  bus::InProcessBus director_bus_{hub_};
  Logger log_{"drain_target_client_test", LogLevel::kWarn};
  director::DrainTargetsRequest seen_;
  std::unique_ptr<bus::Subscription> subscription_;
};

TEST_F(DrainTargetClientTest, TheLeadersTargetsComeBackAndNeverTheDrainerItself) {
  Lead([](const director::DrainTargetsRequest&) {
    return director::EncodeDrainTargetsReply(director::DrainTargetsReply{
        .leader = "d1",
        .epoch = 4,
        .targets = {{"town", "B", "7", false}, {"forest", "A", "8", false}}});
  });
  auto targets = Ask()({{"town", 3}, {"forest", 1}}, 60'000);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_EQ((*targets)[0].zone, "town");
  EXPECT_EQ((*targets)[0].target, "B");
  EXPECT_EQ((*targets)[0].reservation, "7");
  EXPECT_EQ(seen_.shard, "A");
  EXPECT_EQ(seen_.ttl_ms, 60'000);
  ASSERT_EQ(seen_.zones.size(), 2u);
  EXPECT_EQ(seen_.zones[0].players, 3);
}

TEST_F(DrainTargetClientTest, NoDirectorIsAnErrorNotAWait) {
  auto targets = Ask()({{"town", 3}}, 60'000);
  EXPECT_FALSE(targets.ok());
}

TEST_F(DrainTargetClientTest, AnErrorReplyIsAnError) {
  Lead([](const director::DrainTargetsRequest&) {
    return director::EncodeDrainTargetsError(Status::FailedPrecondition("no longer leads"));
  });
  auto targets = Ask()({{"town", 3}}, 60'000);
  ASSERT_FALSE(targets.ok());
  EXPECT_EQ(targets.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace telos::shard
