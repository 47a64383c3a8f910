#include "telos/base/dependency_health.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>

namespace telos {
namespace {

class DependencyHealthTest : public ::testing::Test {
 protected:
  std::ostringstream lines_;
  Logger log_{"test", LogLevel::kInfo, std::make_shared<spdlog::sinks::ostream_sink_mt>(lines_)};
  Metrics metrics_;
  DependencyHealth health_{log_, metrics_};

  size_t Count(const std::string& needle) {
    size_t n = 0;
    const std::string text = lines_.str();
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }
};

TEST_F(DependencyHealthTest, EachTransitionIsLoggedOnceWithItsStableLine) {
  health_.Declare("redis", "single-shard mode");
  EXPECT_TRUE(health_.up("redis"));
  EXPECT_TRUE(health_.Report("redis", false, "connection refused"));
  EXPECT_FALSE(health_.Report("redis", false, "connection refused"));
  EXPECT_FALSE(health_.up("redis"));
  EXPECT_EQ(Count("redis unavailable; single-shard mode"), 1u);
  EXPECT_TRUE(health_.Report("redis", true));
  EXPECT_FALSE(health_.Report("redis", true));
  EXPECT_EQ(Count("redis ready"), 1u);
  EXPECT_TRUE(health_.up("redis"));
}

TEST_F(DependencyHealthTest, ListenersSeeEveryChangeAndOnlyChanges) {
  health_.Declare("nats", "comms disabled");
  std::vector<std::pair<std::string, bool>> seen;
  health_.OnChange([&](const std::string& name, bool up) { seen.emplace_back(name, up); });
  health_.Report("nats", true);
  health_.Report("nats", false);
  health_.Report("nats", false);
  health_.Report("nats", true);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("nats"), false));
  EXPECT_EQ(seen[1], std::make_pair(std::string("nats"), true));
}

TEST_F(DependencyHealthTest, HealthMembersNameEachStateAndTheDegradedModes) {
  health_.Declare("redis", "single-shard mode");
  health_.Declare("postgres", "new characters are ephemeral");
  health_.Report("postgres", false);
  boost::json::object value;
  health_.AddHealthMembers(value);
  EXPECT_EQ(value["dependencies"].as_object()["redis"].as_string(), "up");
  EXPECT_EQ(value["dependencies"].as_object()["postgres"].as_string(), "down");
  ASSERT_EQ(value["degraded"].as_array().size(), 1u);
  EXPECT_EQ(value["degraded"].as_array()[0].as_string(), "new characters are ephemeral");
  EXPECT_FALSE(health_.all_up());
  EXPECT_NE(metrics_.RenderText().find("dependency_up{dependency=\"postgres\"} 0"),
            std::string::npos);
}

TEST_F(DependencyHealthTest, ProbesDecideTheStateAndRunAtStart) {
  health_.Declare("postgres", "new characters are ephemeral");
  std::atomic<bool> reachable{false};
  health_.AddProbe("postgres", [&] {
    return reachable ? Status::Ok() : Status::Unavailable("connection refused");
  });
  health_.Start(std::chrono::milliseconds(5));
  EXPECT_FALSE(health_.up("postgres"));  // the first round runs inside Start
  reachable = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!health_.up("postgres") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(health_.up("postgres"));
  health_.Stop();
}

}  // namespace
}  // namespace telos
