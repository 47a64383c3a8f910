// Director on a ManualClock over MemoryDirectory: a leader issues directives fenced by its
// epoch and starts the zones' cooldowns; a deposed leader issues nothing; a zone cooling down
// is not moved; directives are counted completed or expired; the tally runs only while leading;
// drain targets skip the requester and draining shards, and a standby refuses to answer.
#include "telos/director/director.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "telos/base/limits.h"
#include "telos/bus/in_process_bus.h"
#include "telos/director/director_service.h"
#include "telos/directory/memory_directory.h"
#include "telos/store/sqlite_event_log.h"
#include "telos/store/sqlite_store.h"

namespace telos::director {
namespace {

constexpr int64_t kLongTtlMs = 24LL * 3'600'000;
constexpr int64_t kLeaseTtlMs = directory::kLeaderLeaseTtlMsDefault;

class DirectorTest : public ::testing::Test {
 protected:
  DirectorTest()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)),
        logger_("director", LogLevel::kDebug, sink_),
        directory_(clock_) {}

  DirectorOptions Options(const std::string& candidate) {
    DirectorOptions options;
    options.leadership.scope = "fleet";
    options.leadership.candidate = candidate;
    options.rebalance.margin_players = 10;
    return options;
  }

  std::unique_ptr<Director> Make(const std::string& candidate,
                                 bus::DurableStreams* streams = nullptr,
                                 store::RecordsStore* records = nullptr) {
    return std::make_unique<Director>(directory_, clock_, logger_, metrics_, Options(candidate),
                                      streams, records);
  }

  // A live shard holding `zones` (leased to it) with these player counts.
  void Shard(const std::string& id, const std::vector<directory::ZoneCount>& zones) {
    ASSERT_TRUE(directory_.RegisterShard(id, id + ":7200", kLongTtlMs).ok());
    for (const directory::ZoneCount& zone : zones) {
      ASSERT_TRUE(directory_.ClaimZone(zone.zone, id, kLongTtlMs).ok());
    }
    ASSERT_TRUE(directory_.ReportOccupancy(id, zones).ok());
  }

  std::vector<directory::Directive> Directives(const std::string& from) {
    auto live = directory_.ListDirectives(from);
    EXPECT_TRUE(live.ok());
    return live.ok() ? *live : std::vector<directory::Directive>{};
  }

  // Steps `director` as it asks until the clock reaches `until_ms` from now.
  void Drive(Director& director, int64_t for_ms) {
    const Instant until = clock_.Now() + Millis(for_ms);
    while (clock_.Now() < until) {
      const int64_t next = director.Step();
      clock_.Advance(Millis(std::clamp<int64_t>(next, 1, ElapsedMs(clock_.Now(), until) + 1)));
    }
  }

  int Lines(std::string_view msg) {
    logger_.Flush();
    std::istringstream in(log_.str());
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"msg\":\"" + std::string(msg) + "\"") != std::string::npos) ++n;
    }
    return n;
  }

  ManualClock clock_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  Logger logger_;
  Metrics metrics_;
  directory::MemoryDirectory directory_;
};

TEST_F(DirectorTest, LeaderIssuesDirectivesFencedByItsEpochAndStartsCooldowns) {
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 0}});
  auto director = Make("d1");
  director->Step();
  ASSERT_TRUE(director->is_leader());

  const std::vector<directory::Directive> issued = Directives("a");
  ASSERT_EQ(issued.size(), 1u);  // 60 vs 0: one zone of 30 evens it
  EXPECT_EQ(issued[0].zone, "z1");
  EXPECT_EQ(issued[0].to, "b");
  EXPECT_EQ(issued[0].scope, "fleet");
  EXPECT_EQ(issued[0].epoch, director->epoch());
  auto cooling = directory_.CooldownRemainingMs("z1");
  ASSERT_TRUE(cooling.ok());
  EXPECT_EQ(*cooling, kRebalanceZoneCooldownMsDefault);
  EXPECT_EQ(Lines("placement: rebalance drain recommended"), 1);
  EXPECT_EQ(director->Snapshot().moves_issued, 1u);
  ASSERT_EQ(director->Snapshot().directives.size(), 1u);
  EXPECT_TRUE(director->Snapshot().directives[0].ours);

  // The next plans see the move in flight and do not double it.
  Drive(*director, 3 * kDirectorPlanIntervalMsDefault);
  EXPECT_EQ(Directives("a").size(), 1u);
  EXPECT_EQ(director->Snapshot().moves_issued, 1u);
}

TEST_F(DirectorTest, AStandbyIssuesNothing) {
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 0}});
  auto leader = Make("d1");
  auto standby = Make("d2");
  leader->Step();
  ASSERT_TRUE(leader->is_leader());
  ASSERT_TRUE(directory_.CompleteDirective("z1", "a").ok());  // forget the leader's move
  standby->Step();
  EXPECT_FALSE(standby->is_leader());
  EXPECT_TRUE(Directives("a").empty());
  EXPECT_EQ(standby->Snapshot().moves_issued, 0u);
}

TEST_F(DirectorTest, ADeposedLeaderIssuesNothing) {
  Shard("a", {{"z1", 0}});
  Shard("b", {{"b1", 0}});
  auto old_leader = Make("d1");
  old_leader->Step();
  ASSERT_TRUE(old_leader->is_leader());
  const uint64_t old_epoch = old_leader->epoch();

  // d1 is paused past its lease; d2 takes the scope over.
  clock_.Advance(Millis(kLeaseTtlMs + 1));
  auto new_leader = Make("d2");
  new_leader->Step();
  ASSERT_TRUE(new_leader->is_leader());
  ASSERT_GT(new_leader->epoch(), old_epoch);

  // Now there is something to move, and d1 wakes up: it steps down and issues nothing.
  ASSERT_TRUE(directory_.ReportOccupancy("a", {{"z1", 30}, {"z2", 30}}).ok());
  old_leader->Step();
  EXPECT_FALSE(old_leader->is_leader());
  EXPECT_TRUE(Directives("a").empty());
  EXPECT_EQ(old_leader->Snapshot().moves_issued, 0u);
  EXPECT_EQ(Lines("stepping down"), 1);
  // And the directory itself refuses the old term.
  EXPECT_EQ(directory_.IssueDirective("fleet", old_epoch, "z1", "a", "b", 90'000).code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(DirectorTest, AZoneCoolingDownIsNotMoved) {
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 0}});
  // z1 moved a minute ago (another tenure): the planner must take z2 instead.
  ASSERT_TRUE(directory_.StartCooldown("z1", 4 * 60'000).ok());
  auto director = Make("d1");
  director->Step();
  const std::vector<directory::Directive> issued = Directives("a");
  ASSERT_EQ(issued.size(), 1u);
  EXPECT_EQ(issued[0].zone, "z2");
}

TEST_F(DirectorTest, DirectivesAreCountedCompletedOrExpired) {
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 0}});
  auto director = Make("d1");
  director->Step();
  ASSERT_EQ(Directives("a").size(), 1u);

  // The shard carries it out: the lease flips to b, the reports follow, the directive retires.
  auto owner = directory_.OwnerOfZone("z1");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  ASSERT_TRUE(directory_.TransferZone("z1", "a", (*owner)->epoch, "b", kLongTtlMs).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("a", {{"z2", 30}}).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("b", {{"b1", 0}, {"z1", 30}}).ok());
  ASSERT_TRUE(directory_.CompleteDirective("z1", "a").ok());
  Drive(*director, kDirectorPlanIntervalMsDefault + 1);
  EXPECT_EQ(director->Snapshot().moves_completed, 1u);
  EXPECT_EQ(director->Snapshot().moves_expired, 0u);

  // Skewed again; this directive is left alone until its TTL runs out.
  ASSERT_TRUE(directory_.ReportOccupancy("a", {{"z2", 30}, {"z3", 30}}).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("b", {{"b1", 0}}).ok());
  Drive(*director, kDirectorPlanIntervalMsDefault + 1);
  ASSERT_EQ(director->Snapshot().moves_issued, 2u);
  Drive(*director, directory::kDirectiveTtlMsDefault + kDirectorPlanIntervalMsDefault);
  EXPECT_EQ(director->Snapshot().moves_expired, 1u);
  EXPECT_EQ(director->Snapshot().moves_completed, 1u);
  // The zone is still cooling, so the expired move is not simply issued again (z3 may go).
  for (const directory::Directive& live : Directives("a")) EXPECT_NE(live.zone, "z2");
  EXPECT_EQ(Lines("director directive expired"), 1);
}

TEST_F(DirectorTest, TheTallyRunsOnlyWhileLeading) {
  SystemClock store_clock;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("telos-director-tally-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "telos.db").string();
  {
    auto store = store::SqliteStore::Open({.path = path, .synchronous_full = false}, store_clock);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto events =
        store::SqliteEventLog::Open({.path = path, .synchronous_full = false}, store_clock);
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    Shard("a", {{"z1", 0}});

    auto leader = Make("d1", events->get(), &(*store)->records());
    auto standby = Make("d2", events->get(), &(*store)->records());
    leader->Step();
    standby->Step();
    ASSERT_TRUE(leader->is_leader());
    EXPECT_TRUE(leader->Snapshot().tally_running);
    EXPECT_FALSE(standby->Snapshot().tally_running);

    // The leader is paused past its lease: on its next step the tally is gone with the lead.
    clock_.Advance(Millis(kLeaseTtlMs + 1));
    leader->Step();
    EXPECT_FALSE(leader->is_leader());
    EXPECT_FALSE(leader->Snapshot().tally_running);
    standby->Step();
    EXPECT_TRUE(standby->is_leader());
    EXPECT_TRUE(standby->Snapshot().tally_running);
    standby->Stop();
    EXPECT_FALSE(standby->Snapshot().tally_running);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

TEST_F(DirectorTest, DrainTargetsSkipTheRequesterAndDrainingShards) {
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 50}});
  Shard("c", {{"c1", 0}});
  ASSERT_TRUE(directory_.MarkShardDraining("c", "c:7200", 60'000).ok());
  auto director = Make("d1");
  auto standby = Make("d2");
  director->Step();
  standby->Step();
  ASSERT_TRUE(director->is_leader());

  const DrainTargetsRequest request{"a", {{"z1", 30}, {"z2", 30}}, 60'000};
  Result<DrainTargetsReply> reply = director->AnswerDrainTargets(request);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->leader, "d1");
  EXPECT_EQ(reply->epoch, director->epoch());
  ASSERT_EQ(reply->targets.size(), 2u);
  for (const DrainZoneTarget& target : reply->targets) {
    EXPECT_EQ(target.target, "b");  // a asks, c drains
    EXPECT_FALSE(target.reservation.empty());
  }
  auto reserved = directory_.ReservedSum("b");
  ASSERT_TRUE(reserved.ok());
  EXPECT_EQ(*reserved, 60);

  Result<DrainTargetsReply> refused = standby->AnswerDrainTargets(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);

  // b asking in turn gets a: the requester is the only one excluded besides the draining c.
  Result<DrainTargetsReply> from_b = director->AnswerDrainTargets({"b", {{"b1", 50}}, 60'000});
  ASSERT_TRUE(from_b.ok()) << from_b.status().ToString();
  ASSERT_EQ(from_b->targets.size(), 1u);
  EXPECT_EQ(from_b->targets[0].target, "a");
}

// The request is not trusted: a shard that is not live and registered gets nothing reserved in
// its name, a day-long TTL is cut to a drain's, and one drainer cannot pile up reservations.
TEST_F(DirectorTest, DrainTargetsAreOnlyForALiveShardWithinBounds) {
  Shard("a", {{"z1", 30}});
  Shard("b", {{"b1", 0}});
  auto director = Make("d1");
  director->Step();
  ASSERT_TRUE(director->is_leader());

  Result<DrainTargetsReply> ghost = director->AnswerDrainTargets({"ghost", {{"z1", 30}}, 60'000});
  ASSERT_FALSE(ghost.ok());
  EXPECT_EQ(ghost.status().code(), StatusCode::kFailedPrecondition);
  auto reserved = directory_.ReservedSum("b");
  ASSERT_TRUE(reserved.ok());
  EXPECT_EQ(*reserved, 0);

  // A whole day asked for, and a zone fuller than any zone can be: both cut.
  Result<DrainTargetsReply> greedy =
      director->AnswerDrainTargets({"a", {{"z1", limits::kDirectorZonePlayersMax}}, kLongTtlMs});
  ASSERT_TRUE(greedy.ok()) << greedy.status().ToString();
  reserved = directory_.ReservedSum("b");
  ASSERT_TRUE(reserved.ok());
  EXPECT_EQ(*reserved, limits::kDirectorDrainZoneAmountMax);
  Drive(*director, limits::kDirectorDrainReservationTtlMsMax + 1);
  reserved = directory_.ReservedSum("b");
  ASSERT_TRUE(reserved.ok());
  EXPECT_EQ(*reserved, 0);
  ASSERT_TRUE(director->is_leader());

  // Asked again and again, the drainer's reservations stop at its cap.
  int64_t placed = 0;
  bool exhausted = false;
  for (int i = 0; i < 100 && !exhausted; ++i) {
    Result<DrainTargetsReply> more = director->AnswerDrainTargets(
        {"a", {{"x" + std::to_string(i), limits::kDirectorDrainZoneAmountMax}}, 60'000});
    if (!more.ok()) {
      EXPECT_EQ(more.status().code(), StatusCode::kResourceExhausted);
      exhausted = true;
      continue;
    }
    placed += static_cast<int64_t>(more->targets.size());
  }
  EXPECT_TRUE(exhausted);
  EXPECT_EQ(placed,
            limits::kDirectorDrainerReservedPlayersMax / limits::kDirectorDrainZoneAmountMax);
  reserved = directory_.ReservedSum("b");
  ASSERT_TRUE(reserved.ok());
  EXPECT_LE(*reserved, limits::kDirectorDrainerReservedPlayersMax);
  // Once its grants have run out the drainer may ask again.
  Drive(*director, limits::kDirectorDrainReservationTtlMsMax + 1);
  ASSERT_TRUE(director->is_leader());
  Result<DrainTargetsReply> later = director->AnswerDrainTargets({"a", {{"z1", 30}}, 60'000});
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_EQ(later->targets.size(), 1u);
}

// Each counter counts what its help says: an answer that placed nothing is not "answered with
// targets"; a tracked directive replaced by another for its zone is judged, not dropped; the
// oldest directive's age grows between plans.
TEST_F(DirectorTest, MetricsCountWhatTheyClaim) {
  const MetricLabels scope{{"scope", "fleet"}};
  auto counter = [&](const std::string& name) { return metrics_.Counter(name, "", scope).Value(); };
  Shard("a", {{"z1", 30}, {"z2", 30}});
  auto director = Make("d1");
  director->Step();
  ASSERT_TRUE(director->is_leader());

  // Alone in the fleet, the requester gets an empty answer: no target named.
  Result<DrainTargetsReply> empty = director->AnswerDrainTargets({"a", {{"z1", 30}}, 60'000});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->targets.empty());
  EXPECT_EQ(counter("director_drain_targets_answered_total"), 0);
  Shard("b", {{"b1", 0}});
  Result<DrainTargetsReply> placed = director->AnswerDrainTargets({"a", {{"z1", 30}}, 60'000});
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ(placed->targets.size(), 1u);
  EXPECT_EQ(counter("director_drain_targets_answered_total"), 1);

  Drive(*director, kDirectorPlanIntervalMsDefault + 1);
  std::vector<directory::Directive> issued = Directives("a");
  ASSERT_EQ(issued.size(), 1u);
  EXPECT_EQ(counter("director_moves_issued_total"), 1);
  // Between plans the oldest directive keeps ageing on the gauge.
  prometheus::Gauge& age = metrics_.Gauge("director_directive_age_max_ms", "", scope);
  const double age_at_issue = age.Value();
  Drive(*director, kDirectorPlanIntervalMsDefault / 2);
  EXPECT_GE(age.Value(), age_at_issue + kDirectorPlanIntervalMsDefault / 2 - 1);

  // The directive is retired and another for the same zone takes its place (a shard, then
  // the leader, acting between two plans): the first is counted once, as expired.
  const directory::Directive first = issued[0];
  ASSERT_TRUE(directory_.CompleteDirective(first.zone, "a").ok());
  Shard("c", {{"c1", 0}});
  ASSERT_TRUE(directory_
                  .IssueDirective("fleet", director->epoch(), first.zone, "a", "c",
                                  directory::kDirectiveTtlMsDefault)
                  .ok());
  Drive(*director, kDirectorPlanIntervalMsDefault + 1);
  EXPECT_EQ(counter("director_moves_expired_total") + counter("director_moves_completed_total"), 1);
  EXPECT_EQ(director->Snapshot().moves_expired, 1u);
}

// The director section of /api/cluster: the leader, its epoch and lease time left, the pending
// directives, and when this director last issued; and the directive age histogram, observed
// once when the leader sees a directive executed (the zone on its target), on its own clock.
TEST_F(DirectorTest, TheDirectorSectionAndTheDirectiveAgeSayWhatTheLeaderDid) {
  const MetricLabels scope{{"scope", "fleet"}};
  Shard("a", {{"z1", 30}, {"z2", 30}});
  Shard("b", {{"b1", 0}});
  auto director = Make("d1");
  EXPECT_EQ(director->Snapshot().last_issued_ago_ms, -1);
  director->Step();
  ASSERT_TRUE(director->is_leader());

  Result<DirectorSection> section = ReadDirectorSection(directory_, "fleet");
  ASSERT_TRUE(section.ok()) << section.status().ToString();
  ASSERT_TRUE(section->leader.has_value());
  EXPECT_EQ(section->leader->holder, "d1");
  EXPECT_EQ(section->leader->term, director->epoch());
  EXPECT_GT(section->leader->ttl_ms, 0);
  ASSERT_EQ(section->directives.size(), 1u);
  const directory::Directive issued = section->directives[0];
  EXPECT_EQ(director->Snapshot().last_issued_ago_ms, 0);

  // The shard carries it out 7 s later: the zone is on its target and the directive retired.
  clock_.Advance(std::chrono::seconds(7));
  auto owner = directory_.OwnerOfZone(issued.zone);
  ASSERT_TRUE(owner.ok() && owner->has_value());
  ASSERT_TRUE(
      directory_.TransferZone(issued.zone, issued.from, (*owner)->epoch, issued.to, kLongTtlMs)
          .ok());
  ASSERT_TRUE(directory_.CompleteDirective(issued.zone, issued.from).ok());
  ASSERT_TRUE(directory_.ReportOccupancy("a", {{"z2", 30}}).ok());  // even now: nothing more
  ASSERT_TRUE(directory_.ReportOccupancy("b", {{"b1", 0}, {issued.zone, 30}}).ok());
  Drive(*director, kDirectorPlanIntervalMsDefault);
  EXPECT_EQ(director->Snapshot().moves_completed, 1u);
  EXPECT_GE(director->Snapshot().last_issued_ago_ms, 7'000);

  prometheus::Histogram& age = metrics_.Histogram(
      "director_directive_age_seconds", "", {1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120}, scope);
  const prometheus::ClientMetric seen = age.Collect();
  EXPECT_EQ(seen.histogram.sample_count, 1u);
  // Seen at the first plan after the shard acted: at least the 7 s, at most a plan later.
  EXPECT_GE(seen.histogram.sample_sum, 7.0);
  EXPECT_LE(seen.histogram.sample_sum, 7.0 + kDirectorPlanIntervalMsDefault / 1000.0 + 1);

  section = ReadDirectorSection(directory_, "fleet");
  ASSERT_TRUE(section.ok());
  for (const directory::Directive& d : section->directives) EXPECT_NE(d.zone, issued.zone);
}

// The service answers on the bus only while its director leads; a malformed request gets an
// error reply, never silence.
class DirectorServiceTest : public DirectorTest {
 protected:
  // The bus's answer to `data` on `subject`, waited for with a deadline.
  Result<std::string> Ask(bus::Bus& bus, const std::string& subject, const std::string& data) {
    std::promise<Result<std::string>> answer;
    auto future = answer.get_future();
    bus.Request(subject, data, std::chrono::milliseconds(5'000),
                [&answer](Result<std::string> r) { answer.set_value(std::move(r)); });
    return future.get();
  }
  template <typename F>
  static bool Eventually(F condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
};

TEST_F(DirectorServiceTest, TheLeaderAnswersDrainTargetsOnTheBus) {
  Shard("a", {{"z1", 5}});
  Shard("b", {{"b1", 0}});
  bus::InProcessBus bus(bus::InProcessBus::NewHub());
  const std::string subject = DrainTargetsSubject("telos.test", "fleet");
  // Nobody leads yet: no responders, which a shard reads as "choose yourself".
  Result<std::string> nobody = Ask(bus, subject, "{}");
  ASSERT_FALSE(nobody.ok());
  EXPECT_EQ(nobody.status().code(), StatusCode::kNotFound);

  auto director = Make("d1");
  DirectorService service(*director, &bus, "telos.test", logger_);
  EXPECT_EQ(service.subject(), subject);
  service.Start();
  ASSERT_TRUE(Eventually([&service] { return service.answering(); }));

  Result<std::string> answer =
      Ask(bus, subject, EncodeDrainTargetsRequest({"a", {{"z1", 5}}, 60'000}));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  Result<DrainTargetsReply> reply = DecodeDrainTargetsReply(*answer);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->targets.size(), 1u);
  EXPECT_EQ(reply->targets[0].target, "b");

  Result<std::string> bad = Ask(bus, subject, "not json");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_EQ(DecodeDrainTargetsReply(*bad).status().code(), StatusCode::kInvalidArgument);

  service.Stop();
  EXPECT_FALSE(service.answering());
  EXPECT_FALSE(director->is_leader());  // resigned on a clean stop
  Result<std::string> after = Ask(bus, subject, "{}");
  EXPECT_EQ(after.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace telos::director
