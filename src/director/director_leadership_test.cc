// DirectorLeadership on a ManualClock over MemoryDirectory: campaign, renewal at TTL/3,
// takeover by a standby within TTL + 1 s of the leader's death, stepping down before an
// unconfirmed lease could lapse, and a deposed leader whose term the directory refuses.
#include "telos/director/director_leadership.h"

#include <atomic>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "telos/directory/forwarding_directory.h"
#include "telos/directory/memory_directory.h"

namespace telos::director {
namespace {

constexpr int64_t kTtlMs = directory::kLeaderLeaseTtlMsDefault;

// The leader-lease calls fail as unreachable while `down` is set.
class FlakyDirectory final : public directory::ForwardingDirectory {
 public:
  using ForwardingDirectory::ForwardingDirectory;
  std::atomic<bool> down{false};

  Result<directory::LeaseGrant> Campaign(std::string_view scope, std::string_view candidate,
                                         int64_t ttl_ms) override {
    if (down) return Status::Unavailable("directory down");
    return ForwardingDirectory::Campaign(scope, candidate, ttl_ms);
  }
  Result<directory::LeaseGrant> RenewLeadership(std::string_view scope, std::string_view candidate,
                                                uint64_t term, int64_t ttl_ms) override {
    if (down) return Status::Unavailable("directory down");
    return ForwardingDirectory::RenewLeadership(scope, candidate, term, ttl_ms);
  }
  Result<std::optional<directory::Leader>> LeaderOf(std::string_view scope) override {
    if (down) return Status::Unavailable("directory down");
    return ForwardingDirectory::LeaderOf(scope);
  }
};

class DirectorLeadershipTest : public ::testing::Test {
 protected:
  DirectorLeadershipTest()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)),
        logger_("director", LogLevel::kDebug, sink_),
        memory_(clock_),
        flaky_(memory_) {}

  std::unique_ptr<DirectorLeadership> Director(const std::string& candidate) {
    LeadershipConfig config;
    config.scope = "world";
    config.candidate = candidate;
    return std::make_unique<DirectorLeadership>(flaky_, clock_, logger_, config);
  }

  int64_t NowMs() const { return ElapsedMs(Instant{}, clock_.Now()); }

  // How many log lines carry this message.
  int Lines(std::string_view msg) {
    logger_.Flush();
    std::istringstream in(log_.str());
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"msg\":\"" + std::string(msg) + "\"") != std::string::npos) ++n;
    }
    return n;
  }
  std::string Log() {
    logger_.Flush();
    return log_.str();
  }

  // Steps every live director when it asked to be stepped, advancing the clock between, until
  // `until_ms` on the clock or `stop` says so. A null entry is a dead director.
  struct Driven {
    DirectorLeadership* director;
    int64_t next_ms;
  };
  template <typename Stop>
  void Drive(std::vector<Driven>& directors, int64_t until_ms, Stop stop) {
    while (NowMs() < until_ms && !stop()) {
      int64_t next = until_ms;
      for (const Driven& d : directors) {
        if (d.director != nullptr) next = std::min(next, d.next_ms);
      }
      if (next > NowMs()) clock_.Advance(Millis(next - NowMs()));
      for (Driven& d : directors) {
        if (d.director != nullptr && d.next_ms <= NowMs()) {
          d.next_ms = NowMs() + d.director->Step();
        }
      }
    }
  }

  ManualClock clock_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  Logger logger_;
  directory::MemoryDirectory memory_;
  FlakyDirectory flaky_;
};

TEST_F(DirectorLeadershipTest, ACandidateAloneLeadsAndRenewsAtAThirdOfTheTtl) {
  auto d1 = Director("d1");
  EXPECT_FALSE(d1->is_leader());
  EXPECT_EQ(d1->Step(), kTtlMs / 3);
  EXPECT_TRUE(d1->is_leader());
  EXPECT_EQ(d1->epoch(), 1u);
  EXPECT_EQ(d1->observed_leader(), "d1");
  EXPECT_EQ(Lines("director leadership changed"), 1);
  EXPECT_NE(Log().find("\"scope\":\"world\""), std::string::npos) << Log();
  EXPECT_NE(Log().find("\"leader\":\"d1\""), std::string::npos) << Log();
  EXPECT_NE(Log().find("\"epoch\":1"), std::string::npos) << Log();

  // An hour of renewals: the term never changes and the lease never runs low.
  for (int i = 0; i < 720; ++i) {
    clock_.Advance(Millis(kTtlMs / 3));
    EXPECT_EQ(d1->Step(), kTtlMs / 3);
    ASSERT_TRUE(d1->is_leader());
    auto leader = memory_.LeaderOf("world");
    ASSERT_TRUE(leader.ok() && leader->has_value());
    EXPECT_EQ((*leader)->term, 1u);
    EXPECT_EQ((*leader)->ttl_ms, kTtlMs);
  }
  EXPECT_EQ(Lines("director leadership changed"), 1);
  EXPECT_EQ(Lines("stepping down"), 0);
}

TEST_F(DirectorLeadershipTest, AStandbyTakesOverWithinTheTtlPlusOneSecondOfTheLeadersDeath) {
  // The leader dies at every offset within its renewal interval, with the standby's own steps
  // at every phase against the leader's renewals.
  for (int64_t phase_ms = 1; phase_ms < kTtlMs / 3; phase_ms += 1'100) {
    for (int64_t offset_ms = 0; offset_ms < kTtlMs / 3; offset_ms += 700) {
      SCOPED_TRACE("standby phase " + std::to_string(phase_ms) + " ms, death " +
                   std::to_string(offset_ms) + " ms after a renewal");
      auto d1 = Director("d1");
      auto d2 = Director("d2");
      std::vector<Driven> fleet{{d1.get(), NowMs()}, {d2.get(), NowMs() + phase_ms}};
      Drive(fleet, NowMs() + 2 * kTtlMs, [] { return false; });
      ASSERT_TRUE(d1->is_leader());
      ASSERT_FALSE(d2->is_leader());
      EXPECT_EQ(d2->observed_leader(), "d1");
      const uint64_t first_term = d1->epoch();

      // Run to the next renewal, then on to the death.
      const int64_t renewed_at = fleet[0].next_ms;
      Drive(fleet, renewed_at + 1, [] { return false; });
      Drive(fleet, renewed_at + offset_ms, [] { return false; });
      const int64_t death_ms = NowMs();
      fleet[0].director = nullptr;  // kill -9: no resign, no more renewals

      Drive(fleet, death_ms + 3 * kTtlMs, [&] { return d2->is_leader(); });
      ASSERT_TRUE(d2->is_leader());
      EXPECT_LE(NowMs() - death_ms, kTtlMs + 1'000);
      EXPECT_EQ(d2->epoch(), first_term + 1);
      EXPECT_FALSE(d1->is_leader());  // its own deadline passed long ago

      // Leave the scope free for the next round.
      d2->Resign();
    }
  }
}

TEST_F(DirectorLeadershipTest, StepsDownBeforeAnUnconfirmedLeaseCouldHaveExpired) {
  auto d1 = Director("d1");
  std::vector<Driven> fleet{{d1.get(), NowMs()}};
  Drive(fleet, NowMs() + kTtlMs, [] { return false; });
  ASSERT_TRUE(d1->is_leader());

  // The directory becomes unreachable; the lease itself lives on in it until it lapses.
  flaky_.down = true;
  Drive(fleet, NowMs() + 2 * kTtlMs, [&] { return !d1->is_leader(); });
  ASSERT_FALSE(d1->is_leader());
  auto leader = memory_.LeaderOf("world");
  ASSERT_TRUE(leader.ok());
  ASSERT_TRUE(leader->has_value()) << "stepped down only after the lease had lapsed";
  EXPECT_GE((*leader)->ttl_ms, kLeaderStepDownMarginMsDefault);
  EXPECT_GE(Lines("director lease renewal failed"), 1);
  EXPECT_EQ(Lines("stepping down"), 1);
  EXPECT_EQ(d1->epoch(), 0u);

  // While it stays down, campaigns fail and are logged; once it is back, it leads again.
  Drive(fleet, NowMs() + 2'000, [] { return false; });
  EXPECT_GE(Lines("director lease campaign failed"), 1);
  flaky_.down = false;
  Drive(fleet, NowMs() + kTtlMs, [&] { return d1->is_leader(); });
  EXPECT_TRUE(d1->is_leader());
}

TEST_F(DirectorLeadershipTest, StopsLeadingAtItsDeadlineEvenWhenNotStepped) {
  auto d1 = Director("d1");
  ASSERT_GT(d1->Step(), 0);
  ASSERT_TRUE(d1->is_leader());
  // The process is paused (SIGSTOP) past its deadline: whoever asks before acting is told no,
  // before any Step runs again.
  clock_.Advance(Millis(kTtlMs - kLeaderStepDownMarginMsDefault - 1));
  EXPECT_TRUE(d1->is_leader());
  clock_.Advance(Millis(1));
  EXPECT_FALSE(d1->is_leader());
  EXPECT_EQ(d1->epoch(), 0u);
}

TEST_F(DirectorLeadershipTest, ADeposedLeadersTermIsRefusedByTheDirectory) {
  auto d1 = Director("d1");
  auto d2 = Director("d2");
  ASSERT_GT(d1->Step(), 0);
  const uint64_t old_term = d1->epoch();
  ASSERT_EQ(old_term, 1u);

  // d1 is paused past its lease; d2 takes the scope.
  clock_.Advance(Millis(kTtlMs + 1));
  d2->Step();
  ASSERT_TRUE(d2->is_leader());
  EXPECT_EQ(d2->epoch(), old_term + 1);
  EXPECT_FALSE(d1->is_leader());

  // d1 resumes: the directory refuses its old term, and it steps down and stands by.
  EXPECT_EQ(memory_.ConfirmLeadership("world", "d1", old_term).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(memory_.RenewLeadership("world", "d1", old_term, kTtlMs).status().code(),
            StatusCode::kFailedPrecondition);
  d1->Step();  // its deadline has passed: steps down without asking
  d1->Step();  // campaigns: d2 leads
  EXPECT_FALSE(d1->is_leader());
  EXPECT_EQ(d1->observed_leader(), "d2");
  EXPECT_EQ(Lines("stepping down"), 1);
  EXPECT_TRUE(d2->is_leader());
}

TEST_F(DirectorLeadershipTest, ALeaderWhoseRenewalIsRefusedStepsDownAtOnce) {
  auto d1 = Director("d1");
  ASSERT_GT(d1->Step(), 0);
  // An operator (or a bug) took the lease from under it: the next renewal is refused.
  ASSERT_TRUE(memory_.Resign("world", "d1", d1->epoch()).ok());
  ASSERT_TRUE(memory_.Campaign("world", "other", kTtlMs).ok());
  clock_.Advance(Millis(kTtlMs / 3));
  EXPECT_EQ(d1->Step(), 0);
  EXPECT_FALSE(d1->is_leader());
  EXPECT_NE(Log().find("lease lost"), std::string::npos) << Log();
}

TEST_F(DirectorLeadershipTest, ResigningHandsTheScopeToAStandbyAtOnce) {
  auto d1 = Director("d1");
  auto d2 = Director("d2");
  ASSERT_GT(d1->Step(), 0);
  d2->Step();
  ASSERT_FALSE(d2->is_leader());
  d1->Resign();
  EXPECT_FALSE(d1->is_leader());
  d2->Step();
  EXPECT_TRUE(d2->is_leader());
  EXPECT_EQ(d2->epoch(), 2u);
}

TEST(LeadershipConfigTest, RejectsSettingsUnderWhichAHealthyLeaderWouldStepDown) {
  LeadershipConfig config;
  config.scope = "world";
  config.candidate = "d1";
  EXPECT_TRUE(ValidateLeadershipConfig(config).ok());
  config.renew_interval_ms = config.lease_ttl_ms - config.step_down_margin_ms;
  EXPECT_FALSE(ValidateLeadershipConfig(config).ok());
  config.renew_interval_ms = 5'000;
  config.scope.clear();
  EXPECT_FALSE(ValidateLeadershipConfig(config).ok());
}

}  // namespace
}  // namespace telos::director
