// SqliteEventLog: the DurableStreams conformance suite on a SQLite file, plus what only the
// embedded backend promises (it shares a file with SqliteStore).
#include "telos/store/sqlite_event_log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "store_test_util.h"
#include "telos/base/clock.h"
#include "telos/bus/durable_conformance.h"
#include "telos/store/sqlite_store.h"

namespace telos::store {
namespace {

class SqliteEventLogBackend {
 public:
  SqliteEventLogBackend() { Reopen(); }
  Status Ready() { return log_ != nullptr ? Status::Ok() : Status::Unavailable("not open"); }
  bus::DurableStreams& Streams() { return *log_; }
  void Reopen() {
    log_.reset();
    auto log =
        SqliteEventLog::Open({.path = dir_.File("events.db"), .synchronous_full = false}, clock_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
  }
  std::string Prefix() { return "t"; }  // each test has its own file

 private:
  SystemClock clock_;
  TempDir dir_;
  std::unique_ptr<SqliteEventLog> log_;
};

}  // namespace
}  // namespace telos::store

namespace telos::bus::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, DurableConformance, store::SqliteEventLogBackend);
}  // namespace telos::bus::testing

namespace telos::store {
namespace {

TEST(SqliteEventLog, SharesItsFileWithTheStore) {
  SystemClock clock;
  TempDir dir;
  auto store = SqliteStore::Open({.path = dir.File("telos.db"), .synchronous_full = false}, clock);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto log = SqliteEventLog::Open({.path = dir.File("telos.db"), .synchronous_full = false}, clock);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_TRUE((*log)->EnsureStream({.name = "EVENTS", .subjects = "events.>"}).ok());
  auto ack = (*log)->Publish("events.boss", "{}", "");
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->stream_sequence, 1u);
}

TEST(SqliteEventLog, StreamsKeepTheirSizeBound) {
  SystemClock clock;
  TempDir dir;
  auto log = SqliteEventLog::Open({.path = dir.File("e.db"), .synchronous_full = false}, clock);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_TRUE(
      (*log)->EnsureStream({.name = "EVENTS", .subjects = "events.>", .max_messages = 3}).ok());
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE((*log)->Publish("events.x", std::to_string(i), "").ok());
  bus::testing::Recorder got;
  auto consumer = (*log)->Consume({.stream = "EVENTS", .durable = "c"}, got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(3));
  EXPECT_EQ(got.datas(), (std::vector<std::string>{"3", "4", "5"}));
  EXPECT_EQ(got.seen().front().stream_sequence, 3u);
}

TEST(SqliteEventLog, EachStreamKeepsItsAgeBoundWhateverTheOthersDo) {
  ManualClock clock;
  TempDir dir;
  auto log = SqliteEventLog::Open({.path = dir.File("e.db"), .synchronous_full = false}, clock);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  for (const char* name : {"BUSY", "QUIET"}) {
    const std::string subjects = std::string(name) + ".>";
    const bus::StreamSpec spec{
        .name = name, .subjects = subjects, .max_age_ms = 5'000, .duplicate_window_ms = 1'000};
    ASSERT_TRUE((*log)->EnsureStream(spec).ok());
  }
  ASSERT_TRUE((*log)->Publish("QUIET.x", "old", "").ok());
  // The busy stream is published to more often than the prune interval, for longer than the
  // quiet stream's age bound.
  for (int i = 0; i < 20; ++i) {
    clock.Advance(std::chrono::milliseconds(500));
    ASSERT_TRUE((*log)->Publish("BUSY.x", std::to_string(i), "").ok());
  }
  ASSERT_TRUE((*log)->Publish("QUIET.x", "new", "").ok());  // "old" is 10 s old by now
  bus::testing::Recorder got;
  auto consumer = (*log)->Consume({.stream = "QUIET", .durable = "c"}, got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(1));
  EXPECT_EQ(got.datas().front(), "new");
}

TEST(SqliteEventLog, AStreamCannotChangeItsSubjects) {
  SystemClock clock;
  TempDir dir;
  auto log = SqliteEventLog::Open({.path = dir.File("e.db"), .synchronous_full = false}, clock);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_TRUE((*log)->EnsureStream({.name = "EVENTS", .subjects = "events.>"}).ok());
  EXPECT_TRUE((*log)->EnsureStream({.name = "EVENTS", .subjects = "events.>"}).ok());
  EXPECT_EQ((*log)->EnsureStream({.name = "EVENTS", .subjects = "other.>"}).code(),
            StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace telos::store
