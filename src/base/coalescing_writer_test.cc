// CoalescingWriter on a ManualClock: coalescing and order, the merge hook, retries paused on
// the clock and only while an operation is the newest for its key, giving up, the key bound,
// flush deadlines and Stop. Most tests drive the writer without a worker (RunOnce); those that
// need a blocked flusher or a stop run the worker and move the clock by hand.
#include "telos/base/coalescing_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "telos/base/clock.h"

namespace telos {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Writer = CoalescingWriter<std::string, std::string>;

constexpr milliseconds kPatience{10'000};  // real time; reached only when a test is failing

// Polls `done` (real time) until it holds or kPatience passes.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A backend that records every attempt and answers with the next scripted outcome (Done once
// the script is used up). Called on the worker thread.
class Backend {
 public:
  Writer::Hooks Hooks() {
    return {
        .write = [this](const std::string& key, const std::string& op) { return Write(key, op); }};
  }
  WriteOutcome Write(const std::string& key, const std::string& op) {
    std::function<void()> during;
    WriteOutcome outcome = WriteOutcome::Done();
    {
      std::lock_guard lock(mu_);
      attempts_.push_back(key + "=" + op);
      if (always_retry_) {
        outcome = WriteOutcome::Retry(Status::Unavailable("down"));
      } else if (!script_.empty()) {
        outcome = script_.front();
        script_.erase(script_.begin());
      }
      during = std::exchange(during_next_, nullptr);
    }
    if (during) during();  // as if another thread acted while the write was on the wire
    return outcome;
  }
  void Script(std::vector<WriteOutcome> outcomes) {
    std::lock_guard lock(mu_);
    script_ = std::move(outcomes);
  }
  void AlwaysRetry() {
    std::lock_guard lock(mu_);
    always_retry_ = true;
  }
  void DuringNextWrite(std::function<void()> f) {
    std::lock_guard lock(mu_);
    during_next_ = std::move(f);
  }
  std::vector<std::string> attempts() const {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  size_t attempt_count() const {
    std::lock_guard lock(mu_);
    return attempts_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> attempts_;
  std::vector<WriteOutcome> script_;
  bool always_retry_ = false;
  std::function<void()> during_next_;
};

CoalescingWriterOptions Opts(size_t keys_max = 100, milliseconds initial = milliseconds(10),
                             milliseconds max = milliseconds(40), int attempts_max = 0) {
  return {.keys_max = keys_max,
          .retry_backoff_initial = initial,
          .retry_backoff_max = max,
          .attempts_max = attempts_max};
}

WriteOutcome Down() {
  return WriteOutcome::Retry(Status::Unavailable("down"));
}

TEST(CoalescingWriterTest, ALaterOperationReplacesTheQueuedOneWhichKeepsItsPlaceInLine) {
  ManualClock clock;
  Backend backend;
  Writer writer(clock, Opts(), backend.Hooks());
  EXPECT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  EXPECT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  EXPECT_EQ(writer.Enqueue("a", "2"), EnqueueResult::kCoalesced);
  EXPECT_EQ(writer.queued(), 2u);
  while (writer.RunOnce()) {
  }
  EXPECT_EQ(backend.attempts(), (std::vector<std::string>{"a=2", "b=1"}));
  EXPECT_EQ(writer.queued(), 0u);
}

TEST(CoalescingWriterTest, TheMergeHookFoldsTheNewOperationIntoTheQueuedOne) {
  ManualClock clock;
  Backend backend;
  Writer::Hooks hooks = backend.Hooks();
  // A tombstone ("-") queued after a registration keeps the registration's zone, the
  // placement writer's rule in miniature.
  hooks.merge = [](std::string queued, std::string incoming) {
    if (incoming == "-" && queued != "-") return "-" + queued;
    return incoming;
  };
  Writer writer(clock, Opts(), std::move(hooks));
  ASSERT_EQ(writer.Enqueue("ada", "town"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("ada", "-"), EnqueueResult::kCoalesced);
  ASSERT_EQ(writer.Enqueue("bob", "-"), EnqueueResult::kQueued);
  while (writer.RunOnce()) {
  }
  EXPECT_EQ(backend.attempts(), (std::vector<std::string>{"ada=-town", "bob=-"}));
}

TEST(CoalescingWriterTest, AFailedWriteIsRetriedAfterAPauseThatDoublesOnTheClock) {
  ManualClock clock;
  Backend backend;
  backend.Script({Down(), Down(), Down(), Down()});
  Writer writer(clock, Opts(100, milliseconds(10), milliseconds(40)), backend.Hooks());
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  // Pauses of 10, 20, 40, 40 ms: the failing write stays at the front of the line, and no one
  // is written while the clock has not reached the pause's end.
  for (const int pause_ms : {10, 20, 40, 40}) {
    ASSERT_TRUE(writer.RunOnce());
    ASSERT_TRUE(writer.paused_until().has_value());
    EXPECT_EQ(*writer.paused_until() - clock.Now(), milliseconds(pause_ms));
    clock.Advance(milliseconds(pause_ms - 1));
    EXPECT_FALSE(writer.RunOnce()) << "wrote during a pause of " << pause_ms << " ms";
    clock.Advance(milliseconds(1));
  }
  ASSERT_TRUE(writer.RunOnce());  // a=1 at last
  EXPECT_FALSE(writer.paused_until().has_value());
  ASSERT_TRUE(writer.RunOnce());  // b, without a pause: the backend answers again
  EXPECT_EQ(backend.attempts(),
            (std::vector<std::string>{"a=1", "a=1", "a=1", "a=1", "a=1", "b=1"}));
  // The next failure starts again from the initial pause.
  backend.Script({Down()});
  ASSERT_EQ(writer.Enqueue("c", "1"), EnqueueResult::kQueued);
  ASSERT_TRUE(writer.RunOnce());
  EXPECT_EQ(*writer.paused_until() - clock.Now(), milliseconds(10));
}

TEST(CoalescingWriterTest, AFailedWriteSupersededWhileOnTheWireIsNotRetried) {
  ManualClock clock;
  Backend backend;
  Writer::Hooks hooks = backend.Hooks();
  hooks.merge = [](std::string queued, std::string incoming) { return queued + "+" + incoming; };
  Writer writer(clock, Opts(), std::move(hooks));
  ASSERT_EQ(writer.Enqueue("a", "old"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  backend.Script({Down()});
  // "new" arrives while "old" is being written (and then fails): it supersedes "old", merged
  // over it, and takes over its place ahead of b.
  backend.DuringNextWrite([&] { EXPECT_EQ(writer.Enqueue("a", "new"), EnqueueResult::kQueued); });
  ASSERT_TRUE(writer.RunOnce());
  EXPECT_EQ(writer.queued(), 2u);
  clock.Advance(milliseconds(10));
  while (writer.RunOnce()) {
  }
  EXPECT_EQ(backend.attempts(), (std::vector<std::string>{"a=old", "a=old+new", "b=1"}));
}

TEST(CoalescingWriterTest, AnOperationIsGivenUpAfterItsAttempts) {
  ManualClock clock;
  Backend backend;
  backend.AlwaysRetry();
  std::vector<std::string> given_up;
  Writer::Hooks hooks = backend.Hooks();
  hooks.give_up = [&](const std::string& key, const std::string& op, const Status& status) {
    EXPECT_EQ(status.code(), StatusCode::kUnavailable);
    given_up.push_back(key + "=" + op);
  };
  Writer writer(clock, Opts(100, milliseconds(10), milliseconds(10), 3), std::move(hooks));
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(writer.RunOnce());
    clock.Advance(milliseconds(10));
  }
  EXPECT_EQ(given_up, (std::vector<std::string>{"a=1"}));
  EXPECT_EQ(writer.queued(), 0u);
  EXPECT_FALSE(writer.RunOnce());
  EXPECT_EQ(backend.attempt_count(), 3u);
}

TEST(CoalescingWriterTest, ANewKeyIsRefusedAtTheBoundWhileAHeldKeyStillCoalesces) {
  ManualClock clock;
  Backend backend;
  Writer writer(clock, Opts(/*keys_max=*/2), backend.Hooks());
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  EXPECT_EQ(writer.Enqueue("c", "1"), EnqueueResult::kFull);
  EXPECT_EQ(writer.refused(), 1u);
  EXPECT_EQ(writer.Enqueue("a", "2"), EnqueueResult::kCoalesced);
  // The key being written is held too: a new key still does not fit, the same key does.
  backend.DuringNextWrite([&] {
    EXPECT_EQ(writer.Enqueue("c", "1"), EnqueueResult::kFull);
    EXPECT_EQ(writer.Enqueue("a", "3"), EnqueueResult::kQueued);
  });
  ASSERT_TRUE(writer.RunOnce());
  EXPECT_EQ(writer.refused(), 2u);
  while (writer.RunOnce()) {
  }
  EXPECT_EQ(writer.Enqueue("c", "1"), EnqueueResult::kQueued);  // room again
  EXPECT_EQ(backend.attempts(), (std::vector<std::string>{"a=2", "b=1", "a=3"}));
}

TEST(CoalescingWriterTest, FlushAllGivesUpAtItsDeadlineOnTheClock) {
  ManualClock clock;
  Backend backend;
  backend.AlwaysRetry();
  Writer writer(clock, Opts(100, hours(10), hours(10)), backend.Hooks());
  writer.Start();
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  ASSERT_TRUE(Eventually([&] { return backend.attempt_count() == 1; }));
  // An hour on the clock, a moment in real time: the flusher waits on the clock.
  const Instant deadline = clock.Now() + hours(1);
  auto flushed = std::async(std::launch::async, [&] { return writer.FlushAll(deadline, false); });
  clock.Advance(hours(1));
  writer.Wake();
  ASSERT_EQ(flushed.wait_for(kPatience), std::future_status::ready);
  EXPECT_FALSE(flushed.get());
  EXPECT_EQ(backend.attempt_count(), 1u);  // the ten hours' pause is not over
  EXPECT_EQ(writer.queued(), 1u);
  const auto left = writer.Stop(clock.Now());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0], (std::pair<std::string, std::string>{"a", "1"}));
}

TEST(CoalescingWriterTest, FlushKeyReturnsTheWritesStatusAndCanEndAPause) {
  ManualClock clock;
  Backend backend;
  Writer writer(clock, Opts(100, hours(10), hours(10)), backend.Hooks());
  EXPECT_TRUE(writer.FlushKey("nobody", clock.Now(), false)->ok());  // nothing held: at once
  backend.Script({Down(), WriteOutcome::Done(Status::Conflict("lost a race"))});
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  writer.Start();
  ASSERT_TRUE(Eventually([&] { return writer.paused_until().has_value(); }));
  // Without `retry_now` the ten hours' pause holds, and the deadline passes.
  const Instant deadline = clock.Now() + hours(1);
  auto waited =
      std::async(std::launch::async, [&] { return writer.FlushKey("a", deadline, false); });
  clock.Advance(hours(1));
  writer.Wake();
  ASSERT_EQ(waited.wait_for(kPatience), std::future_status::ready);
  EXPECT_FALSE(waited.get().has_value());
  // With it the worker tries again at once, and the flusher hears how that went.
  const Instant later = clock.Now() + hours(1);
  auto hurried = std::async(std::launch::async, [&] { return writer.FlushKey("a", later, true); });
  const bool in_time = hurried.wait_for(kPatience) == std::future_status::ready;
  if (!in_time) {  // let the flusher go before failing
    clock.Advance(hours(1));
    writer.Wake();
  }
  ASSERT_TRUE(in_time) << "the pause did not end for a flusher in a hurry";
  const std::optional<Status> flushed = hurried.get();
  ASSERT_TRUE(flushed.has_value());
  EXPECT_EQ(flushed->code(), StatusCode::kConflict);
  EXPECT_EQ(backend.attempt_count(), 2u);
  EXPECT_TRUE(writer.Stop(clock.Now()).empty());
}

TEST(CoalescingWriterTest, StopWritesWhatIsQueuedThenRefuses) {
  ManualClock clock;
  Backend backend;
  Writer writer(clock, Opts(), backend.Hooks());
  for (const char* key : {"a", "b", "c"})
    ASSERT_EQ(writer.Enqueue(key, "bye"), EnqueueResult::kQueued);
  writer.Start();
  EXPECT_TRUE(writer.Stop(clock.Now() + seconds(1)).empty());
  EXPECT_EQ(backend.attempts(), (std::vector<std::string>{"a=bye", "b=bye", "c=bye"}));
  EXPECT_EQ(writer.Enqueue("a", "late"), EnqueueResult::kStopped);
  EXPECT_TRUE(writer.FlushAll(clock.Now(), false));
}

TEST(CoalescingWriterTest, StopGivesUpAtItsDeadlineAndReturnsTheRestToItsCaller) {
  ManualClock clock;
  Backend backend;
  backend.AlwaysRetry();
  Writer writer(clock, Opts(100, milliseconds(300), milliseconds(300)), backend.Hooks());
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  writer.Start();
  ASSERT_TRUE(Eventually([&] { return backend.attempt_count() == 1; }));
  auto waiting = std::async(std::launch::async,
                            [&] { return writer.FlushKey("b", clock.Now() + hours(1), false); });
  ASSERT_TRUE(Eventually([&] { return writer.flushers() == 1; }));
  const Instant deadline = clock.Now() + seconds(1);
  auto stopped = std::async(std::launch::async, [&] { return writer.Stop(deadline); });
  // Retries go on while the stop waits: the pauses end as the clock moves.
  clock.Advance(milliseconds(300));
  writer.Wake();
  ASSERT_TRUE(Eventually([&] { return backend.attempt_count() == 2; }));
  clock.Advance(seconds(1));
  writer.Wake();
  ASSERT_EQ(stopped.wait_for(kPatience), std::future_status::ready);
  const auto left = stopped.get();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].first, "a");  // the failing one kept its place at the front
  EXPECT_EQ(left[1].first, "b");
  ASSERT_EQ(waiting.wait_for(kPatience), std::future_status::ready);
  const std::optional<Status> flushed = waiting.get();
  ASSERT_TRUE(flushed.has_value());
  EXPECT_EQ(flushed->code(), StatusCode::kCancelled);
  EXPECT_EQ(writer.Enqueue("c", "1"), EnqueueResult::kStopped);
}

TEST(CoalescingWriterTest, WithoutAWorkerStopReturnsEverythingAtOnce) {
  ManualClock clock;
  Backend backend;
  Writer writer(clock, Opts(), backend.Hooks());
  ASSERT_EQ(writer.Enqueue("a", "1"), EnqueueResult::kQueued);
  ASSERT_EQ(writer.Enqueue("b", "1"), EnqueueResult::kQueued);
  const auto left = writer.Stop(clock.Now() + hours(1));
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(backend.attempt_count(), 0u);
  EXPECT_EQ(writer.queued(), 0u);
}

}  // namespace
}  // namespace telos
