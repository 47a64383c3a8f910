// GameEventPublisher against a recording DurableStreams and a real RecordsStore (SQLite in
// memory) for the sequences: events go out in order with one sequence each, a retry after a
// failure reuses the sequence (so the stream's dedupe and the watermark keep it once), a new
// publisher on the same store goes on past the old one's sequences, the queue is bounded with
// the loss counted, and an event the stream refuses for good does not stop the ones after it.
// Blocking work runs inline on the test's thread; retries wait on an io_context the test runs.
#include "telos/shard/game_event_publisher.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/store/game_events.h"
#include "telos/store/sqlite_store.h"

namespace telos::shard {
namespace {

class RecordingStreams final : public bus::DurableStreams {
 public:
  struct Attempt {
    std::string subject, data, msg_id;
  };
  Status EnsureStream(const bus::StreamSpec& spec) override {
    std::lock_guard lock(mu);
    ensured.push_back(spec.name);
    return ensure_status;
  }
  Result<bus::PublishAck> Publish(std::string_view subject, std::string_view data,
                                  std::string_view msg_id) override {
    std::lock_guard lock(mu);
    attempts.push_back({std::string(subject), std::string(data), std::string(msg_id)});
    if (down) return Status::Unavailable("the broker is away");
    if (refuse_next) {
      refuse_next = false;
      return Status::InvalidArgument("the broker refuses it");
    }
    stored.push_back(attempts.back());
    return bus::PublishAck{stored.size(), false};
  }
  Result<std::unique_ptr<bus::DurableConsumer>> Consume(
      const bus::ConsumerSpec&,
      std::function<bus::Disposition(const bus::DurableEvent&)>) override {
    return Status::FailedPrecondition("not in this test");
  }

  std::vector<std::string> msg_ids() {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (const Attempt& a : stored) out.push_back(a.msg_id);
    return out;
  }

  std::mutex mu;
  std::vector<std::string> ensured;
  std::vector<Attempt> attempts;
  std::vector<Attempt> stored;
  bool down = false;
  bool refuse_next = false;
  // What managing the stream answers: a world's NATS user may not (deploy/nats/permissions.conf).
  Status ensure_status = Status::PermissionDenied("a world may not manage streams");
};

class GameEventPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open({.path = ":memory:"}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  std::unique_ptr<GameEventPublisher> Make(size_t queue_max = limits::kGameEventQueueMax) {
    return std::make_unique<GameEventPublisher>(
        GameEventPublisherOptions{.source = "world-1", .queue_max = queue_max, .retry_delay_ms = 1},
        streams_, store_->records(), io_, [](std::function<void()> task) { task(); }, clock_,
        logger_, metrics_);
  }

  // Runs the retry timers until `pred` holds (or 10 s pass).
  template <typename F>
  bool RunUntil(F pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  ManualClock clock_;
  Logger logger_{"publisher-test", LogLevel::kError};
  Metrics metrics_;
  boost::asio::io_context io_;
  RecordingStreams streams_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(GameEventPublisherTest, EventsGoOutInOrderEachWithTheNextSequence) {
  auto publisher = Make();
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:1", "world-1:2"}));
  ASSERT_EQ(streams_.stored.size(), 2u);
  // The subject names the source, escaped as one token, so the broker can bind it to this world.
  EXPECT_EQ(streams_.stored[0].subject, "game.event.boss_5fkill.world_2d1");
  auto first = store::DecodeGameEvent(streams_.stored[0].data);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->source, "world-1");
  EXPECT_EQ(first->sequence, 1);
  EXPECT_EQ(first->subject, "dungeon:hollow_abbot");
  EXPECT_EQ(first->actor, "Aldric");
  EXPECT_EQ(first->at_ms, std::chrono::duration_cast<std::chrono::milliseconds>(
                              clock_.WallNow().time_since_epoch())
                              .count());
  EXPECT_TRUE(streams_.ensured.empty());  // the stream is the director's to manage
  EXPECT_EQ(publisher->published(), 2u);
  EXPECT_EQ(publisher->queued(), 0u);
}

TEST_F(GameEventPublisherTest, WhileTheStreamIsDownEventsWaitAndEveryRetryKeepsTheSequence) {
  auto publisher = Make();
  streams_.down = true;
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  ASSERT_TRUE(RunUntil([&] { return streams_.attempts.size() >= 3; }));
  EXPECT_EQ(publisher->queued(), 2u);
  {
    std::lock_guard lock(streams_.mu);
    // Only the head is tried, and always as the same event: the second waits its turn.
    for (const auto& attempt : streams_.attempts) EXPECT_EQ(attempt.msg_id, "world-1:1");
    streams_.down = false;
  }
  ASSERT_TRUE(RunUntil([&] { return publisher->published() == 2; }));
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:1", "world-1:2"}));
  EXPECT_EQ(publisher->queued(), 0u);
  EXPECT_EQ(publisher->dropped(), 0u);
}

TEST_F(GameEventPublisherTest, ARestartedWorldGoesOnPastEverySequenceItUsed) {
  Make()->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  Make()->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:1", "world-1:2"}));
}

TEST_F(GameEventPublisherTest, TheQueueIsBoundedAndWhatFallsPastItIsCounted) {
  auto publisher = Make(/*queue_max=*/2);
  streams_.down = true;
  for (const char* actor : {"Aldric", "Brenna", "Cato"}) {
    publisher->Publish("boss_kill", "dungeon:hollow_abbot", actor);
  }
  EXPECT_EQ(publisher->queued(), 2u);
  EXPECT_EQ(publisher->dropped(), 1u);
  {
    std::lock_guard lock(streams_.mu);
    streams_.down = false;
  }
  ASSERT_TRUE(RunUntil([&] { return publisher->published() == 2; }));
  // The oldest were kept: they happened first.
  ASSERT_EQ(streams_.stored.size(), 2u);
  EXPECT_EQ(store::DecodeGameEvent(streams_.stored[1].data)->actor, "Brenna");
}

TEST_F(GameEventPublisherTest, AnEventTheStreamRefusesForGoodIsDroppedAndTheNextGoesOut) {
  auto publisher = Make();
  streams_.refuse_next = true;
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  EXPECT_EQ(publisher->dropped(), 1u);
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:2"}));
}

TEST_F(GameEventPublisherTest, AWorldThatMayNotManageStreamsStillPublishes) {
  auto publisher = Make();
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:1"}));
  EXPECT_EQ(publisher->published(), 1u);
}

TEST_F(GameEventPublisherTest, StopTriesWhatIsQueuedOnceMoreAndLosesOnlyFromAFailureOn) {
  auto publisher = Make();
  streams_.down = true;
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  EXPECT_EQ(publisher->queued(), 2u);
  {
    std::lock_guard lock(streams_.mu);
    streams_.down = false;  // back just before the world stops; no retry timer has run
  }
  publisher->Stop();
  EXPECT_EQ(streams_.msg_ids(), (std::vector<std::string>{"world-1:1", "world-1:2"}));
  EXPECT_EQ(publisher->published(), 2u);
  EXPECT_EQ(publisher->queued(), 0u);
}

TEST_F(GameEventPublisherTest, NothingIsPublishedAfterStop) {
  auto publisher = Make();
  streams_.down = true;
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Aldric");
  publisher->Stop();  // the stream is still down: the one last try fails, the event is lost
  EXPECT_EQ(publisher->queued(), 0u);
  EXPECT_EQ(publisher->published(), 0u);
  streams_.down = false;
  publisher->Publish("boss_kill", "dungeon:hollow_abbot", "Brenna");
  io_.restart();
  io_.run_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(streams_.stored.empty());
}

}  // namespace
}  // namespace telos::shard
