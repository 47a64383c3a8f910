#include "telos/store/character_saver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store_test_util.h"
#include "telos/store/sqlite_store.h"

namespace telos::store {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPatience{10'000};  // generous: only reached when a test is failing

// Collects the saver's reports; the callback runs on the worker thread.
class Reports {
 public:
  CharacterSaver::ReportFn Sink() {
    return [this](const SaveReport& report) {
      std::lock_guard lock(mu_);
      reports_.push_back(report);
    };
  }
  std::vector<SaveReport> Snapshot() const {
    std::lock_guard lock(mu_);
    return reports_;
  }
  size_t CountWith(StatusCode code) const {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& r : reports_) n += r.status.code() == code ? 1 : 0;
    return n;
  }
  // Polls until `count` reports carry `code` or `timeout` passes.
  bool WaitForCount(StatusCode code, size_t count, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (CountWith(code) < count) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return CountWith(code) == count;
  }

 private:
  mutable std::mutex mu_;
  std::vector<SaveReport> reports_;
};

class CharacterSaverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto account = sqlite_->accounts().Create("alice", "$argon2id$x");
    ASSERT_TRUE(account.ok());
    account_id_ = account->id;
  }

  static std::unique_ptr<SqliteStore> OpenOrDie(const TempDir& dir, const Clock& clock) {
    auto opened =
        SqliteStore::Open({.path = dir.File("telos.db"), .synchronous_full = false}, clock);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    return std::move(opened).value();
  }

  std::unique_ptr<CharacterSaver> MakeSaver(CharacterSaver::Options options = FastOptions()) {
    return std::make_unique<CharacterSaver>(faulty_, metrics_, logger_, reports_.Sink(), options);
  }

  static CharacterSaver::Options FastOptions() {
    CharacterSaver::Options options;
    options.retry_backoff_initial_ms = 1;
    options.retry_backoff_max_ms = 4;
    return options;
  }

  // Creates and claims a character; returns the claimed row.
  CharacterRecord Claimed(const std::string& name, int64_t account_id = 0) {
    CharacterRecord draft{
        .name = name, .account_id = account_id != 0 ? account_id : account_id_, .state_json = "{}"};
    EXPECT_TRUE(sqlite_->characters().Create(draft).ok());
    auto claimed = sqlite_->characters().ClaimOwnership(name, 0);
    EXPECT_TRUE(claimed.ok());
    return claimed.ok() ? *claimed : CharacterRecord{};
  }

  static CharacterSnapshot Snap(const CharacterRecord& base, std::string state) {
    CharacterSnapshot s{.record = base,
                        .expected_state_version = base.state_version,
                        .writer_owner_epoch = base.owner_epoch};
    s.record.state_json = std::move(state);
    return s;
  }

  std::string Stored(const std::string& name) {
    return sqlite_->characters().Load(name)->state_json;
  }

  double Metric(const std::string& needle) {
    const std::string text = metrics_.RenderText();
    const auto pos = text.find("\ntelos_" + needle + " ");
    if (pos == std::string::npos) return -1;
    return std::stod(text.substr(pos + needle.size() + 8));
  }

  ManualClock clock_;
  TempDir dir_;
  std::unique_ptr<SqliteStore> sqlite_ = OpenOrDie(dir_, clock_);
  FaultInjectingCharacterStore faulty_{sqlite_->characters()};
  int64_t account_id_ = 0;
  Metrics metrics_;
  Logger logger_{"store-test", LogLevel::kError};
  Reports reports_;
};

TEST_F(CharacterSaverTest, WritesASnapshotAndReportsTheNewVersion) {
  const CharacterRecord aldric = Claimed("Aldric");
  auto saver = MakeSaver();
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, R"({"gold":1})")).ok());
  ASSERT_TRUE(saver->Flush("aldric", kPatience).ok());
  EXPECT_EQ(Stored("Aldric"), R"({"gold":1})");
  const auto reports = reports_.Snapshot();  // Flush returns only after the callback ran
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].status.ok());
  EXPECT_EQ(reports[0].name, "Aldric");
  EXPECT_EQ(reports[0].new_state_version, 2);
  EXPECT_EQ(Metric("saves_total"), 1);
  saver->Stop();
}

TEST_F(CharacterSaverTest, SnapshotsQueuedBeforeStartCoalesceToOneWrite) {
  const CharacterRecord aldric = Claimed("Aldric");
  auto saver = MakeSaver();
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(saver->Submit(Snap(aldric, std::to_string(i))).ok());
  EXPECT_EQ(saver->pending(), 1u);
  EXPECT_EQ(Metric("save_queue_depth"), 1);
  saver->Start();
  ASSERT_TRUE(saver->FlushAll(kPatience).ok());
  EXPECT_EQ(faulty_.save_calls(), 1);
  EXPECT_EQ(Stored("Aldric"), "499");
  EXPECT_EQ(Metric("save_queue_depth"), 0);
}

TEST_F(CharacterSaverTest, SnapshotsArrivingDuringAWriteCoalesceAndChainOntoIt) {
  const CharacterRecord aldric = Claimed("Aldric");
  auto saver = MakeSaver();
  saver->Start();
  faulty_.HoldSaves();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "first")).ok());
  ASSERT_TRUE(faulty_.WaitForParkedSaves(1, kPatience));
  // The world has not heard back yet, so every later snapshot still names version 1.
  for (int i = 0; i < 1'000; ++i) ASSERT_TRUE(saver->Submit(Snap(aldric, std::to_string(i))).ok());
  faulty_.ReleaseSaves();
  ASSERT_TRUE(saver->Flush("Aldric", kPatience).ok());

  EXPECT_EQ(faulty_.save_calls(), 2);
  EXPECT_EQ(Stored("Aldric"), "999");
  EXPECT_EQ(sqlite_->characters().Load("Aldric")->state_version, 3);
  EXPECT_EQ(reports_.CountWith(StatusCode::kConflict), 0u);
  const auto reports = reports_.Snapshot();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].new_state_version, 3);
}

TEST_F(CharacterSaverTest, FlushHonoursItsDeadlineAndLeavesTheSnapshotQueued) {
  const CharacterRecord aldric = Claimed("Aldric");
  auto saver = MakeSaver();
  saver->Start();
  faulty_.HoldSaves();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "late")).ok());
  ASSERT_TRUE(faulty_.WaitForParkedSaves(1, kPatience));
  EXPECT_EQ(saver->Flush("Aldric", milliseconds(20)).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(saver->FlushAll(milliseconds(20)).code(), StatusCode::kDeadlineExceeded);
  faulty_.ReleaseSaves();
  EXPECT_TRUE(saver->Flush("Aldric", kPatience).ok());
  EXPECT_EQ(Stored("Aldric"), "late");
  // Nothing queued: returns at once.
  EXPECT_TRUE(saver->Flush("Nobody", milliseconds(0)).ok());
}

TEST_F(CharacterSaverTest, ALostVersionRaceIsReportedAsAConflict) {
  const CharacterRecord aldric = Claimed("Aldric");
  // Another writer (same epoch: a rebase race, not a zombie) gets in first.
  ASSERT_TRUE(sqlite_->characters().Save(Snap(aldric, "other").record, 1, aldric.owner_epoch).ok());
  auto saver = MakeSaver();
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "mine")).ok());
  // Flush reports the write it waited for; a worker quick enough to write before Flush looked
  // leaves nothing to wait for (OK), so the report is what says how the write went.
  const Status flushed = saver->Flush("Aldric", kPatience);
  EXPECT_TRUE(flushed.ok() || flushed.code() == StatusCode::kConflict) << flushed.ToString();
  ASSERT_TRUE(reports_.WaitForCount(StatusCode::kConflict, 1, kPatience));
  EXPECT_EQ(Metric("save_conflicts_total"), 1);
  EXPECT_EQ(Stored("Aldric"), "other");
  EXPECT_EQ(saver->pending(), 0u);

  // The owner rebases onto the current version and the next save lands.
  CharacterSnapshot rebased = Snap(aldric, "mine");
  rebased.expected_state_version = sqlite_->characters().Load("Aldric")->state_version;
  ASSERT_TRUE(saver->Submit(rebased).ok());
  EXPECT_TRUE(saver->Flush("Aldric", kPatience).ok());
  EXPECT_EQ(Stored("Aldric"), "mine");
}

TEST_F(CharacterSaverTest, AFencedWriterIsReportedAndDropped) {
  const CharacterRecord aldric = Claimed("Aldric");
  ASSERT_TRUE(sqlite_->characters().ClaimOwnership("Aldric", 0).ok());  // handed off elsewhere
  auto saver = MakeSaver();
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "zombie")).ok());
  const Status flushed = saver->Flush("Aldric", kPatience);  // as above: fenced, or already done
  EXPECT_TRUE(flushed.ok() || IsFenced(flushed)) << flushed.ToString();
  ASSERT_TRUE(reports_.WaitForCount(StatusCode::kFailedPrecondition, 1, kPatience));
  EXPECT_EQ(Metric("save_fenced_total"), 1);
  EXPECT_EQ(Stored("Aldric"), "{}");
  EXPECT_EQ(saver->pending(), 0u);
  EXPECT_EQ(faulty_.save_calls(), 1);  // not retried
}

TEST_F(CharacterSaverTest, SurvivesAnUnavailableStoreAndRetries) {
  const CharacterRecord aldric = Claimed("Aldric");
  faulty_.FailNextSaves(3, Status::Unavailable("disk on fire"));
  auto saver = MakeSaver();
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "patient")).ok());
  ASSERT_TRUE(saver->Flush("Aldric", kPatience).ok());
  EXPECT_EQ(faulty_.save_calls(), 4);
  EXPECT_EQ(Metric("save_retries_total"), 3);
  EXPECT_EQ(Stored("Aldric"), "patient");
  const auto reports = reports_.Snapshot();
  ASSERT_EQ(reports.size(), 1u);  // failures that will be retried are not reported
  EXPECT_TRUE(reports[0].status.ok());
}

TEST_F(CharacterSaverTest, ANewerSnapshotReplacesOneThatFailedToWrite) {
  const CharacterRecord aldric = Claimed("Aldric");
  auto saver = MakeSaver();
  faulty_.FailNextSaves(1, Status::Unavailable("blip"));
  faulty_.HoldSaves();
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "old")).ok());
  ASSERT_TRUE(faulty_.WaitForParkedSaves(1, kPatience));
  ASSERT_TRUE(saver->Submit(Snap(aldric, "new")).ok());
  faulty_.ReleaseSaves();
  ASSERT_TRUE(saver->FlushAll(kPatience).ok());
  EXPECT_EQ(Stored("Aldric"), "new");
  EXPECT_EQ(faulty_.save_calls(), 2);
}

TEST_F(CharacterSaverTest, StopWritesEverythingQueued) {
  std::vector<CharacterRecord> characters;
  for (const char* name : {"Aldric", "Brenna", "Corvin"}) characters.push_back(Claimed(name));
  auto saver = MakeSaver();
  for (const auto& c : characters) ASSERT_TRUE(saver->Submit(Snap(c, "bye " + c.name)).ok());
  saver->Start();
  saver->Stop();
  for (const auto& c : characters) EXPECT_EQ(Stored(c.name), "bye " + c.name);
  EXPECT_EQ(saver->Submit(Snap(characters[0], "too late")).code(), StatusCode::kCancelled);
}

TEST_F(CharacterSaverTest, StopGivesUpOnADeadStoreAfterItsDeadline) {
  const CharacterRecord aldric = Claimed("Aldric");
  faulty_.FailNextSaves(1'000'000, Status::Unavailable("gone"));
  CharacterSaver::Options options = FastOptions();
  options.stop_flush_deadline_ms = 30;
  auto saver = MakeSaver(options);
  saver->Start();
  ASSERT_TRUE(saver->Submit(Snap(aldric, "lost")).ok());
  saver->Stop();
  EXPECT_EQ(reports_.CountWith(StatusCode::kCancelled), 1u);
  EXPECT_EQ(Stored("Aldric"), "{}");
  EXPECT_GE(faulty_.save_calls(), 1);
}

TEST_F(CharacterSaverTest, TheQueueIsBoundedByCharacterNotBySnapshot) {
  CharacterSaver::Options options = FastOptions();
  options.pending_max = 2;
  auto saver = MakeSaver(options);
  const CharacterRecord a = Claimed("Aldric");
  const CharacterRecord b = Claimed("Brenna");
  const CharacterRecord c = Claimed("Corvin");
  ASSERT_TRUE(saver->Submit(Snap(a, "1")).ok());
  ASSERT_TRUE(saver->Submit(Snap(b, "1")).ok());
  EXPECT_EQ(saver->Submit(Snap(c, "1")).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(saver->Submit(Snap(a, "2")).ok());  // coalesces; takes no new room
  EXPECT_EQ(saver->Submit(Snap(CharacterRecord{.name = "bad name"}, "")).code(),
            StatusCode::kInvalidArgument);
  saver->Start();
  ASSERT_TRUE(saver->FlushAll(kPatience).ok());
  EXPECT_EQ(Stored("Aldric"), "2");
}

TEST_F(CharacterSaverTest, ManyThreadsManyCharactersLastSnapshotWins) {
  constexpr int kThreads = 4;
  constexpr int kCharactersEach = 10;
  constexpr int kSnapshotsEach = 50;
  std::vector<CharacterRecord> characters;
  for (int t = 0; t < kThreads; ++t) {
    auto account = sqlite_->accounts().Create("player" + std::to_string(t), "$argon2id$x");
    ASSERT_TRUE(account.ok());
    for (int c = 0; c < kCharactersEach; ++c) {
      characters.push_back(Claimed("Hero" + std::to_string(t * kCharactersEach + c), account->id));
    }
  }
  auto saver = MakeSaver();
  saver->Start();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kSnapshotsEach; ++n) {
        for (int c = 0; c < kCharactersEach; ++c) {
          const CharacterRecord& base = characters[t * kCharactersEach + c];
          ASSERT_TRUE(saver->Submit(Snap(base, std::to_string(n))).ok());
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE(saver->FlushAll(kPatience).ok());
  for (const auto& c : characters) EXPECT_EQ(Stored(c.name), std::to_string(kSnapshotsEach - 1));
  EXPECT_EQ(reports_.CountWith(StatusCode::kConflict), 0u);
  EXPECT_LE(faulty_.save_calls(), kThreads * kCharactersEach * kSnapshotsEach);
  saver->Stop();
}

}  // namespace
}  // namespace telos::store
