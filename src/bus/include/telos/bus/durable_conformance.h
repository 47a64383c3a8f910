// The DurableStreams conformance suite (durable.h): one set of rules, run against every
// backend. Include from tests only (it needs GoogleTest).
//
// A backend test file defines a Backend type and instantiates the suite:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, DurableConformance, SqliteBackend);
// A Backend provides:
//   Status Ready();                 the backend can store and deliver (checked in SetUp)
//   bus::DurableStreams& Streams(); the backend under test
//   void Reopen();                  drops it and opens it again on the same storage, as a
//                                   restarted process would (no consumer is running)
//   std::string Prefix();           a token (letters, digits) no other test or run uses, for
//                                   stream names and subjects
//
// Nothing sleeps to wait: conditions are polled with a deadline, and "nothing more arrived" is
// claimed only after a later event on the same consumer did arrive (delivery is in order).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "telos/base/status.h"
#include "telos/bus/bus.h"
#include "telos/bus/durable.h"

namespace telos::bus::testing {

inline constexpr std::chrono::milliseconds kDurablePatience{15'000};

template <typename F>
bool WaitUntil(F pred, std::chrono::milliseconds within = kDurablePatience) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Records what a consumer is handed and answers by a rule (ack unless told otherwise).
class Recorder {
 public:
  using Rule = std::function<Disposition(const DurableEvent&)>;
  explicit Recorder(Rule rule = nullptr) : rule_(std::move(rule)) {}

  std::function<Disposition(const DurableEvent&)> Handler() {
    return [this](const DurableEvent& e) {
      std::lock_guard lock(mu_);
      seen_.push_back(e);
      return rule_ ? rule_(e) : Disposition::kAck;
    };
  }
  std::vector<DurableEvent> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }
  std::vector<std::string> datas() const {
    std::vector<std::string> out;
    for (const DurableEvent& e : seen()) out.push_back(e.data);
    return out;
  }
  bool WaitForCount(size_t n) const {
    return WaitUntil([&] { return seen().size() >= n; });
  }

 private:
  mutable std::mutex mu_;
  Rule rule_;
  std::vector<DurableEvent> seen_;
};

template <typename Backend>
class DurableConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    Status ready = backend_.Ready();
    ASSERT_TRUE(ready.ok()) << ready.ToString();
    prefix_ = backend_.Prefix();
    stream_ = "S" + prefix_;
    StreamSpec spec;
    spec.name = stream_;
    spec.subjects = "ev" + prefix_ + ".>";
    Status s = Streams().EnsureStream(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  DurableStreams& Streams() { return backend_.Streams(); }
  std::string Subject(const std::string& leaf) { return "ev" + prefix_ + "." + leaf; }

  ConsumerSpec Consumer(const std::string& durable) {
    ConsumerSpec spec;
    spec.stream = stream_;
    spec.durable = durable + prefix_;
    spec.ack_wait_ms = 2'000;
    spec.retry_delay_ms = 20;
    spec.max_deliveries = 5;
    return spec;
  }

  void PublishN(const std::string& leaf, int from, int to) {
    for (int i = from; i <= to; ++i) {
      auto ack = Streams().Publish(Subject(leaf), "e" + std::to_string(i), "");
      ASSERT_TRUE(ack.ok()) << ack.status().ToString();
    }
  }

  static std::vector<std::string> Names(int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i <= to; ++i) out.push_back("e" + std::to_string(i));
    return out;
  }

  Backend backend_;
  std::string prefix_;
  std::string stream_;
};

TYPED_TEST_SUITE_P(DurableConformance);

TYPED_TEST_P(DurableConformance, EventsPublishedBeforeAConsumerExistsReachItInOrder) {
  this->PublishN("a", 1, 20);
  Recorder got;
  auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(20));
  EXPECT_EQ(got.datas(), this->Names(1, 20));
  uint64_t last = 0;
  for (const DurableEvent& e : got.seen()) {
    EXPECT_GT(e.stream_sequence, last);
    last = e.stream_sequence;
    EXPECT_EQ(e.deliveries, 1u);
    EXPECT_EQ(e.subject, this->Subject("a"));
    EXPECT_GT(e.published_unix_ms, 0);
  }
  this->PublishN("a", 21, 21);  // and live ones after
  ASSERT_TRUE(got.WaitForCount(21));
  EXPECT_EQ(got.datas().back(), "e21");
  EXPECT_TRUE(WaitUntil([&] { return (*consumer)->counts().acked == 21; }));
}

TYPED_TEST_P(DurableConformance, AConsumerResumesAfterItsLastAnswer) {
  this->PublishN("a", 1, 5);
  {
    Recorder got;
    auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    ASSERT_TRUE(got.WaitForCount(5));
  }
  this->PublishN("a", 6, 8);  // while nobody consumes
  Recorder again;
  auto consumer = this->Streams().Consume(this->Consumer("c"), again.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(again.WaitForCount(3));
  this->PublishN("a", 9, 9);
  ASSERT_TRUE(again.WaitForCount(4));
  EXPECT_EQ(again.datas(), this->Names(6, 9));
}

TYPED_TEST_P(DurableConformance, EventsAndPositionsSurviveAReopen) {
  this->PublishN("a", 1, 3);
  {
    Recorder got;
    auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    ASSERT_TRUE(got.WaitForCount(3));
  }
  this->PublishN("a", 4, 6);
  this->backend_.Reopen();
  Recorder again;
  auto consumer = this->Streams().Consume(this->Consumer("c"), again.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(again.WaitForCount(3));
  this->PublishN("a", 7, 7);
  ASSERT_TRUE(again.WaitForCount(4));
  EXPECT_EQ(again.datas(), this->Names(4, 7));
}

TYPED_TEST_P(DurableConformance, ARetryIsDeliveredAgainBeforeAnythingLater) {
  this->PublishN("a", 1, 3);
  Recorder got([](const DurableEvent& e) {
    return e.data == "e1" && e.deliveries < 3 ? Disposition::kRetry : Disposition::kAck;
  });
  auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(5));
  const auto seen = got.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ((std::vector<std::string>{seen[0].data, seen[1].data, seen[2].data, seen[3].data,
                                      seen[4].data}),
            (std::vector<std::string>{"e1", "e1", "e1", "e2", "e3"}));
  EXPECT_EQ(seen[0].deliveries, 1u);
  EXPECT_EQ(seen[1].deliveries, 2u);
  EXPECT_EQ(seen[2].deliveries, 3u);
  EXPECT_EQ(seen[2].stream_sequence, seen[0].stream_sequence);
  EXPECT_EQ(seen[3].deliveries, 1u);
  EXPECT_EQ((*consumer)->counts().redelivered, 2u);  // counted before the handler runs
}

TYPED_TEST_P(DurableConformance, AnEventRetriedMaxDeliveriesTimesIsParked) {
  this->PublishN("a", 1, 2);
  Recorder got([](const DurableEvent& e) {
    return e.data == "e1" ? Disposition::kRetry : Disposition::kAck;
  });
  ConsumerSpec spec = this->Consumer("c");
  spec.max_deliveries = 3;
  auto consumer = this->Streams().Consume(spec, got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(4));
  EXPECT_EQ(got.datas(), (std::vector<std::string>{"e1", "e1", "e1", "e2"}));
  ASSERT_TRUE(WaitUntil([&] { return (*consumer)->counts().parked == 1; }));
  consumer->reset();
  // Parked means gone for this consumer: a resumed one starts after it.
  this->PublishN("a", 3, 3);
  Recorder again;
  auto resumed = this->Streams().Consume(spec, again.Handler());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_TRUE(again.WaitForCount(1));
  EXPECT_EQ(again.datas(), (std::vector<std::string>{"e3"}));
}

TYPED_TEST_P(DurableConformance, ARejectedEventIsDroppedAndCounted) {
  this->PublishN("a", 1, 2);
  Recorder got([](const DurableEvent& e) {
    return e.data == "e1" ? Disposition::kReject : Disposition::kAck;
  });
  auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(2));
  EXPECT_EQ(got.datas(), this->Names(1, 2));
  EXPECT_TRUE(WaitUntil(
      [&] { return (*consumer)->counts().rejected == 1 && (*consumer)->counts().acked == 1; }));
}

TYPED_TEST_P(DurableConformance, AMsgIdIsStoredOnceWithinTheWindow) {
  auto first = this->Streams().Publish(this->Subject("a"), "boss", "src-1:7");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->duplicate);
  auto again = this->Streams().Publish(this->Subject("a"), "boss", "src-1:7");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->stream_sequence, first->stream_sequence);
  auto other = this->Streams().Publish(this->Subject("a"), "sentinel", "src-1:8");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_FALSE(other->duplicate);
  Recorder got;
  auto consumer = this->Streams().Consume(this->Consumer("c"), got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(2));
  EXPECT_EQ(got.datas(), (std::vector<std::string>{"boss", "sentinel"}));
}

TYPED_TEST_P(DurableConformance, AFilterSubjectSelectsAndEachDurableGetsItsOwnCopy) {
  this->PublishN("kill", 1, 2);
  this->PublishN("chat", 3, 4);
  this->PublishN("kill", 5, 5);
  Recorder kills;
  ConsumerSpec spec = this->Consumer("kills");
  spec.filter_subject = this->Subject("kill");
  auto a = this->Streams().Consume(spec, kills.Handler());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Recorder all;
  auto b = this->Streams().Consume(this->Consumer("all"), all.Handler());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(kills.WaitForCount(3));
  ASSERT_TRUE(all.WaitForCount(5));
  EXPECT_EQ(kills.datas(), (std::vector<std::string>{"e1", "e2", "e5"}));
  EXPECT_EQ(all.datas(), this->Names(1, 5));
}

TYPED_TEST_P(DurableConformance, AnAgeBoundShorterThanTheDuplicateWindowIsAccepted) {
  // The default duplicate window (two minutes) with a shorter age bound: the window is cut to
  // the age, on every backend, and the stream goes on deduplicating.
  StreamSpec spec;
  spec.name = this->stream_;
  spec.subjects = "ev" + this->prefix_ + ".>";
  spec.max_age_ms = 60'000;
  Status s = this->Streams().EnsureStream(spec);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto first = this->Streams().Publish(this->Subject("a"), "d", "id-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = this->Streams().Publish(this->Subject("a"), "d", "id-1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->duplicate);
}

TYPED_TEST_P(DurableConformance, BadCallsAreRefusedWithClearErrors) {
  StreamSpec bad;
  bad.name = "no spaces";
  bad.subjects = "x.>";
  EXPECT_EQ(this->Streams().EnsureStream(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(this->Streams().Publish("nobody" + this->prefix_ + ".x", "d", "").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(this->Streams().Publish(this->Subject("*"), "d", "").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(this->Streams()
                .Publish(this->Subject("a"), std::string(kMessageBytesMax + 1, 'x'), "")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  ConsumerSpec missing = this->Consumer("c");
  missing.stream = "Nope" + this->prefix_;
  Recorder got;
  EXPECT_EQ(this->Streams().Consume(missing, got.Handler()).status().code(), StatusCode::kNotFound);
  ConsumerSpec wrong = this->Consumer("c");
  wrong.retry_delay_ms = wrong.ack_wait_ms;
  EXPECT_EQ(this->Streams().Consume(wrong, got.Handler()).status().code(),
            StatusCode::kInvalidArgument);
  auto running = this->Streams().Consume(this->Consumer("c"), got.Handler());
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(this->Streams().Consume(this->Consumer("c"), got.Handler()).status().code(),
            StatusCode::kAlreadyExists);
}

REGISTER_TYPED_TEST_SUITE_P(DurableConformance, EventsPublishedBeforeAConsumerExistsReachItInOrder,
                            AConsumerResumesAfterItsLastAnswer, EventsAndPositionsSurviveAReopen,
                            ARetryIsDeliveredAgainBeforeAnythingLater,
                            AnEventRetriedMaxDeliveriesTimesIsParked,
                            ARejectedEventIsDroppedAndCounted, AMsgIdIsStoredOnceWithinTheWindow,
                            AFilterSubjectSelectsAndEachDurableGetsItsOwnCopy,
                            AnAgeBoundShorterThanTheDuplicateWindowIsAccepted,
                            BadCallsAreRefusedWithClearErrors);

}  // namespace telos::bus::testing
