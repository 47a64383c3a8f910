// GameEventTally on the embedded backends (SqliteEventLog and SqliteStore on one file, as
// `telos serve` runs them): every boss kill counts exactly once, through duplicated publishes,
// a repeated publish past the dedupe id, a poisoned message and a restart of the consumer.
#include "telos/director/game_event_tally.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/store/game_events.h"
#include "telos/store/sqlite_event_log.h"
#include "telos/store/sqlite_store.h"

namespace telos::director {
namespace {

template <typename F>
bool WaitUntil(F pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class GameEventTallyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("telos-tally-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const std::string path = (dir_ / "telos.db").string();
    auto store = store::SqliteStore::Open({.path = path, .synchronous_full = false}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auto log = store::SqliteEventLog::Open({.path = path, .synchronous_full = false}, clock_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
    ASSERT_TRUE(EnsureGameEventStream(*log_).ok());
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void Publish(const store::GameEvent& event, const std::string& msg_id) {
    auto ack = log_->Publish(store::GameEventSubject(event.kind, event.source),
                             store::EncodeGameEvent(event), msg_id);
    ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  }
  int64_t Kills() {
    auto tallies = store_->records().Tallies();
    EXPECT_TRUE(tallies.ok());
    return tallies.ok() && !tallies->empty() ? tallies->front().count : 0;
  }

  static store::GameEvent Kill(const std::string& source, int64_t sequence) {
    return {source, sequence, "boss_kill", "dungeon:lich", "Aldric", 1'000 * sequence};
  }

  SystemClock clock_;
  Logger logger_{"tally-test", LogLevel::kError};
  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<store::SqliteEventLog> log_;
};

TEST_F(GameEventTallyTest, EachKillCountsOnceWhateverArrivesTwice) {
  const GameEventTallyOptions options{.retry_delay_ms = 10};
  auto tally = GameEventTally::Start(*log_, store_->records(), logger_, options);
  ASSERT_TRUE(tally.ok()) << tally.status().ToString();
  Publish(Kill("world-1", 1), store::GameEventMsgId(Kill("world-1", 1)));
  // The same publish again: the stream stores it once.
  Publish(Kill("world-1", 1), store::GameEventMsgId(Kill("world-1", 1)));
  // A publisher that lost its answer and tried again past the dedupe window: stored twice,
  // applied once, by the watermark.
  Publish(Kill("world-1", 1), "retried-later");
  Publish(Kill("world-2", 1), store::GameEventMsgId(Kill("world-2", 1)));
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() + (*tally)->duplicates() == 3; }));
  EXPECT_EQ((*tally)->applied(), 2u);
  EXPECT_EQ((*tally)->duplicates(), 1u);
  EXPECT_EQ(Kills(), 2);

  // A malformed message is dropped and counted; the consumer goes on.
  ASSERT_TRUE(log_->Publish(store::GameEventSubject("boss_kill", "world-1"), "not json", "").ok());
  Publish(Kill("world-1", 2), store::GameEventMsgId(Kill("world-1", 2)));
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() == 3; }));
  EXPECT_EQ((*tally)->poisoned(), 1u);
  EXPECT_EQ(Kills(), 3);
}

// A world (or anyone allowed to publish game events) naming another world as the source, with
// a sequence ahead of it: applied, it would make that world's genuine events duplicates.
TEST_F(GameEventTallyTest, AnEventWhosePayloadNamesAnotherSourceThanItsSubjectIsRefused) {
  Metrics metrics;
  GameEventTallyOptions options{.retry_delay_ms = 10};
  options.metrics = &metrics;
  auto tally = GameEventTally::Start(*log_, store_->records(), logger_, options);
  ASSERT_TRUE(tally.ok()) << tally.status().ToString();
  // world-2, on its own subject, speaking for world-1; then the tokenless subject of earlier
  // releases, which names no source at all.
  ASSERT_TRUE(log_->Publish(store::GameEventSubject("boss_kill", "world-2"),
                            store::EncodeGameEvent(Kill("world-1", 50)), "forged")
                  .ok());
  ASSERT_TRUE(log_->Publish("game.event.boss_5fkill", store::EncodeGameEvent(Kill("world-1", 60)),
                            "tokenless")
                  .ok());
  // The genuine events of world-1 still count.
  Publish(Kill("world-1", 1), "genuine-1");
  Publish(Kill("world-1", 2), "genuine-2");
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() + (*tally)->poisoned() == 4; }));
  EXPECT_EQ((*tally)->applied(), 2u);
  EXPECT_EQ((*tally)->source_mismatches(), 2u);
  EXPECT_EQ((*tally)->duplicates(), 0u);
  EXPECT_EQ(Kills(), 2);
  EXPECT_EQ(*store_->records().Watermark("director-tally", "world-1"), 2);
  EXPECT_EQ(*store_->records().Watermark("director-tally", "world-2"), 0);
  const std::string text = metrics.RenderText();
  EXPECT_NE(text.find("telos_game_events_refused_total{reason=\"source_mismatch\"} 2"),
            std::string::npos)
      << text;
}

// A sequence far past its source's watermark would drop every genuine event below it.
TEST_F(GameEventTallyTest, ASequenceJumpPastTheLimitIsParkedAndTheWatermarkStays) {
  Metrics metrics;
  GameEventTallyOptions options{.retry_delay_ms = 10};
  options.metrics = &metrics;
  auto tally = GameEventTally::Start(*log_, store_->records(), logger_, options);
  ASSERT_TRUE(tally.ok()) << tally.status().ToString();
  constexpr int64_t kMax = limits::kGameEventSequenceJumpMax;
  Publish(Kill("world-1", 1), "k1");
  Publish(Kill("world-1", 1 + kMax + 1), "too-far");  // from watermark 1: one past the bound
  Publish(Kill("world-1", 2), "k2");
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() + (*tally)->poisoned() == 3; }));
  EXPECT_EQ((*tally)->applied(), 2u);
  EXPECT_EQ((*tally)->sequence_jumps(), 1u);
  EXPECT_EQ(*store_->records().Watermark("director-tally", "world-1"), 2);
  // A jump of exactly the bound is a gap a publisher may leave (events dropped after their
  // sequence was reserved): applied.
  Publish(Kill("world-1", 2 + kMax), "at-the-bound");
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() == 3; }));
  EXPECT_EQ(*store_->records().Watermark("director-tally", "world-1"), 2 + kMax);
  EXPECT_EQ(Kills(), 3);
  const std::string text = metrics.RenderText();
  EXPECT_NE(text.find("telos_game_events_refused_total{reason=\"sequence_jump\"} 1"),
            std::string::npos)
      << text;
}

TEST_F(GameEventTallyTest, TheAppliedHookRunsOncePerEventAppliedAndNeverForADuplicate) {
  std::mutex mu;
  std::vector<store::GameEvent> seen;
  GameEventTallyOptions options{.retry_delay_ms = 10};
  options.on_applied = [&](const store::GameEvent& event) {
    std::lock_guard lock(mu);
    seen.push_back(event);
  };
  auto tally = GameEventTally::Start(*log_, store_->records(), logger_, options);
  ASSERT_TRUE(tally.ok()) << tally.status().ToString();
  Publish(Kill("world-1", 1), "kill-1");
  Publish(Kill("world-1", 1), "kill-1-again");  // past the dedupe id: the watermark drops it
  Publish(Kill("world-1", 2), "kill-2");
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() + (*tally)->duplicates() == 3; }));
  std::lock_guard lock(mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].sequence, 1);
  EXPECT_EQ(seen[1].sequence, 2);
  EXPECT_EQ(seen[1].subject, "dungeon:lich");
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST_F(GameEventTallyTest, ABacklogCountsAsCatchUpLiveEventsAsLagAndPoisonByItsStream) {
  Metrics metrics;
  Publish(Kill("world-1", 1), "kill-1");
  Publish(Kill("world-1", 2), "kill-2");
  // The tally starts strictly after the backlog was stamped (both clocks count milliseconds).
  const int64_t published = NowMs();
  ASSERT_TRUE(WaitUntil([&] { return NowMs() > published; }));
  GameEventTallyOptions options{.retry_delay_ms = 10};
  options.metrics = &metrics;
  auto tally = GameEventTally::Start(*log_, store_->records(), logger_, options);
  ASSERT_TRUE(tally.ok()) << tally.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() == 2; }));
  std::string text = metrics.RenderText();
  EXPECT_TRUE(Contains(
      text, "telos_bus_catchup_events_total{subject=\"game.event.boss_5fkill.world_2d1\"} 2"))
      << text;
  EXPECT_TRUE(Contains(
      text, "telos_bus_catchup_age_ms_count{subject=\"game.event.boss_5fkill.world_2d1\"} 2"))
      << text;
  EXPECT_TRUE(Contains(text, "telos_bus_deliver_lag_ms_count 0")) << text;

  // Published while it runs: live, so the lag moves and the catch-up pair does not.
  Publish(Kill("world-1", 3), "kill-3");
  ASSERT_TRUE(log_->Publish(store::GameEventSubject("boss_kill", "world-1"), "not json", "").ok());
  ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() == 3 && (*tally)->poisoned() == 1; }));
  text = metrics.RenderText();
  EXPECT_TRUE(Contains(text, "telos_bus_deliver_lag_ms_count 2")) << text;
  EXPECT_TRUE(Contains(
      text, "telos_bus_catchup_events_total{subject=\"game.event.boss_5fkill.world_2d1\"} 2"))
      << text;
  EXPECT_TRUE(Contains(text, "telos_commbus_durable_poisoned_total{stream=\"GAME_EVENTS\"} 1"))
      << text;
}

// The real store behind a first answer of the caller's choosing, as a slow or failing database
// gives it (a PostgreSQL statement timeout is kDeadlineExceeded).
class FailingOnce final : public store::RecordsStore {
 public:
  FailingOnce(store::RecordsStore& real, Status first) : real_(real), first_(std::move(first)) {}
  Result<store::Applied> Apply(std::string_view consumer, const store::GameEvent& event) override {
    if (!failed_.exchange(true)) return first_;
    return real_.Apply(consumer, event);
  }
  Result<std::vector<store::Tally>> Tallies() override { return real_.Tallies(); }
  Result<int64_t> Watermark(std::string_view consumer, std::string_view source) override {
    return real_.Watermark(consumer, source);
  }
  Result<int64_t> ReserveSequence(std::string_view source) override {
    return real_.ReserveSequence(source);
  }

 private:
  store::RecordsStore& real_;
  const Status first_;
  std::atomic<bool> failed_{false};
};

TEST_F(GameEventTallyTest, AStoreErrorThatIsNotTheEventsFaultIsRetriedNotDropped) {
  Publish(Kill("world-1", 1), "kill-1");
  const std::vector<Status> errors{Status::DeadlineExceeded("statement timeout"),
                                   Status::Internal("the database misbehaved")};
  for (size_t i = 0; i < errors.size(); ++i) {
    SCOPED_TRACE(errors[i].ToString());
    // Each error meets the event afresh: a consumer of its own, with its own watermark.
    FailingOnce records(store_->records(), errors[i]);
    const GameEventTallyOptions options{.durable = "tally-" + std::to_string(i),
                                        .retry_delay_ms = 10};
    auto tally = GameEventTally::Start(*log_, records, logger_, options);
    ASSERT_TRUE(tally.ok()) << tally.status().ToString();
    ASSERT_TRUE(WaitUntil([&] { return (*tally)->applied() + (*tally)->poisoned() == 1; }));
    EXPECT_EQ((*tally)->poisoned(), 0u);
    EXPECT_EQ((*tally)->applied(), 1u);
    EXPECT_EQ(Kills(), static_cast<int64_t>(i) + 1);
  }
}

TEST_F(GameEventTallyTest, ANewLeaderResumesWithoutCountingAgain) {
  {
    auto first = GameEventTally::Start(*log_, store_->records(), logger_);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    Publish(Kill("world-1", 1), "a");
    Publish(Kill("world-1", 2), "b");
    ASSERT_TRUE(WaitUntil([&] { return (*first)->applied() == 2; }));
  }  // stepped down
  Publish(Kill("world-1", 3), "c");
  auto second = GameEventTally::Start(*log_, store_->records(), logger_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return (*second)->applied() == 1; }));
  EXPECT_EQ((*second)->duplicates(), 0u);
  EXPECT_EQ(Kills(), 3);
  EXPECT_EQ(*store_->records().Watermark("director-tally", "world-1"), 3);
}

}  // namespace
}  // namespace telos::director
