// The Bus conformance suite: one set of rules, run against every backend.
//
// A backend test file defines a Backend type and instantiates the suite:
//   INSTANTIATE_TYPED_TEST_SUITE_P(InProcess, BusConformance, InProcessBackend);
// A Backend provides:
//   Status Ready();          both clients are connected (checked in SetUp; failing fails)
//   Bus& A();  Bus& B();     two clients of one server, as two processes would be: separate
//                            connections, separate delivery threads
//   std::string Prefix();    a subject prefix that no other test (or concurrent run) uses
//
// Nothing here sleeps to wait: conditions are polled with a deadline (WaitFor), and a "nothing
// arrived" claim is made only after a later message on the same path did arrive (a sentinel),
// since one publisher's messages reach one subscriber in order. Timings are asserted only as
// coarse bounds.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telos/base/status.h"
#include "telos/bus/bus.h"

namespace telos::bus::testing {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// How long any "eventually" may take before a test gives up.
inline constexpr milliseconds kPatience{15'000};

// Polls `pred` every millisecond until it holds; false if it never did within `within`.
template <typename F>
bool WaitFor(F pred, milliseconds within = kPatience) {
  const auto deadline = steady_clock::now() + within;
  while (true) {
    if (pred()) return true;
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
}

// Collects what a subscription receives. Declare it before the Subscription that feeds it.
class Inbox {
 public:
  std::function<void(const Message&)> Handler() {
    return [this](const Message& m) {
      std::lock_guard lock(mu_);
      messages_.push_back(m);
    };
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return messages_.size();
  }
  std::vector<Message> messages() const {
    std::lock_guard lock(mu_);
    return messages_;
  }
  std::vector<std::string> subjects() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const Message& m : messages_) out.push_back(m.subject);
    return out;
  }
  std::vector<std::string> datas() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const Message& m : messages_) out.push_back(m.data);
    return out;
  }
  bool WaitForCount(size_t n) const {
    return WaitFor([&] { return size() >= n; });
  }

 private:
  mutable std::mutex mu_;
  std::vector<Message> messages_;
};

// Records what a connection callback (Bus::OnConnectionChange) was told, in order. Declare it
// before the bus that calls it.
class Transitions {
 public:
  std::function<void(bool)> Callback() {
    return [this](bool up) {
      std::lock_guard lock(mu_);
      seen_.push_back(up);
    };
  }
  std::vector<bool> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<bool> seen_;
};

// What a Request's completion reported. Shared with the completion, which may run after the
// test body ends (a request cancelled when the bus is destroyed).
struct Outcome {
  mutable std::mutex mu;
  int calls = 0;
  std::optional<Result<std::string>> result;
  std::thread::id thread;
  steady_clock::time_point at;

  int Calls() const {
    std::lock_guard lock(mu);
    return calls;
  }
  // REQUIRES: Calls() > 0.
  Result<std::string> Get() const {
    std::lock_guard lock(mu);
    return *result;
  }
  StatusCode Code() const { return Get().status().code(); }
};

inline std::function<void(Result<std::string>)> Capture(std::shared_ptr<Outcome> outcome,
                                                        std::mutex* take_first = nullptr) {
  return [outcome, take_first](Result<std::string> r) {
    std::unique_lock<std::mutex> held;
    if (take_first != nullptr) held = std::unique_lock(*take_first);
    std::lock_guard lock(outcome->mu);
    ++outcome->calls;
    outcome->result.emplace(std::move(r));
    outcome->thread = std::this_thread::get_id();
    outcome->at = steady_clock::now();
  };
}

inline std::unique_ptr<Subscription> MustSubscribe(Bus& bus, const std::string& subject,
                                                   std::function<void(const Message&)> handler) {
  auto sub = bus.Subscribe(subject, std::move(handler));
  EXPECT_TRUE(sub.ok()) << subject << ": " << sub.status().ToString();
  return sub.ok() ? std::move(sub).value() : nullptr;
}

template <typename Backend>
class BusConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    Status ready = backend_.Ready();
    ASSERT_TRUE(ready.ok()) << ready.ToString();
  }

  Bus& a() { return backend_.A(); }
  Bus& b() { return backend_.B(); }
  // A subject under this test's private prefix.
  std::string S(const std::string& suffix) { return backend_.Prefix() + "." + suffix; }

  // Sends a request and waits for its completion.
  std::shared_ptr<Outcome> Ask(Bus& bus, const std::string& subject, const std::string& data,
                               milliseconds timeout) {
    auto outcome = std::make_shared<Outcome>();
    bus.Request(subject, data, timeout, Capture(outcome));
    EXPECT_TRUE(WaitFor([&] { return outcome->Calls() > 0; }, timeout + kPatience));
    return outcome;
  }

  Backend backend_;
};

TYPED_TEST_SUITE_P(BusConformance);

// ------------------------------------------------------------------ publish and subscribe

TYPED_TEST_P(BusConformance, BothClientsAreConnected) {
  EXPECT_TRUE(this->a().connected());
  EXPECT_TRUE(this->b().connected());
}

TYPED_TEST_P(BusConformance, PublishReachesSubscribersOnEveryClient) {
  Inbox on_b;
  Inbox also_on_b;
  Inbox on_a;  // the publisher's own client hears it too
  auto s1 = MustSubscribe(this->b(), this->S("chat"), on_b.Handler());
  auto s2 = MustSubscribe(this->b(), this->S("chat"), also_on_b.Handler());
  auto s3 = MustSubscribe(this->a(), this->S("chat"), on_a.Handler());
  ASSERT_TRUE(s1 && s2 && s3);

  ASSERT_TRUE(this->a().Publish(this->S("chat"), "hello").ok());
  ASSERT_TRUE(on_b.WaitForCount(1));
  ASSERT_TRUE(also_on_b.WaitForCount(1));
  ASSERT_TRUE(on_a.WaitForCount(1));
  const Message m = on_b.messages()[0];
  EXPECT_EQ(m.subject, this->S("chat"));
  EXPECT_EQ(m.data, "hello");
  EXPECT_TRUE(m.reply_to.empty());

  // Binary payloads, the empty payload and a large one go through untouched.
  const std::string binary("\0\x01\xff payload", 11);
  ASSERT_TRUE(this->a().Publish(this->S("chat"), binary).ok());
  ASSERT_TRUE(this->a().Publish(this->S("chat"), "").ok());
  const std::string big(256 * 1024, 'x');
  ASSERT_TRUE(this->a().Publish(this->S("chat"), big).ok());
  const std::vector<std::string> sent = {"hello", binary, "", big};
  for (const Inbox* inbox : {&on_b, &also_on_b, &on_a}) {
    ASSERT_TRUE(inbox->WaitForCount(sent.size()));
    EXPECT_EQ(inbox->datas(), sent);
  }
}

TYPED_TEST_P(BusConformance, StarMatchesExactlyOneToken) {
  Inbox got;
  auto sub = MustSubscribe(this->b(), this->S("w.*.say"), got.Handler());
  ASSERT_TRUE(sub);
  for (const char* s : {"w.town.say", "w.town.square.say", "w.say", "w.town.shout", "w.town"}) {
    ASSERT_TRUE(this->a().Publish(this->S(s), s).ok()) << s;
  }
  ASSERT_TRUE(this->a().Publish(this->S("w.end.say"), "sentinel").ok());
  ASSERT_TRUE(
      WaitFor([&] { return !got.messages().empty() && got.messages().back().data == "sentinel"; }));
  EXPECT_EQ(got.subjects(),
            (std::vector<std::string>{this->S("w.town.say"), this->S("w.end.say")}));
}

TYPED_TEST_P(BusConformance, TailMatchesOneOrMoreTrailingTokens) {
  Inbox got;
  auto sub = MustSubscribe(this->b(), this->S("t.>"), got.Handler());
  ASSERT_TRUE(sub);
  for (const char* s : {"t", "t.a", "u.a", "t.a.b.c"}) {
    ASSERT_TRUE(this->a().Publish(this->S(s), s).ok()) << s;
  }
  ASSERT_TRUE(this->a().Publish(this->S("t.z"), "sentinel").ok());
  ASSERT_TRUE(
      WaitFor([&] { return !got.messages().empty() && got.messages().back().data == "sentinel"; }));
  EXPECT_EQ(got.subjects(),
            (std::vector<std::string>{this->S("t.a"), this->S("t.a.b.c"), this->S("t.z")}));
}

TYPED_TEST_P(BusConformance, OrderFromOnePublisherIsPreserved) {
  constexpr int kCount = 1'000;
  Inbox got;
  auto sub = MustSubscribe(this->b(), this->S("seq"), got.Handler());
  ASSERT_TRUE(sub);
  std::vector<std::string> sent;
  for (int i = 0; i < kCount; ++i) {
    sent.push_back(std::to_string(i));
    ASSERT_TRUE(this->a().Publish(this->S("seq"), sent.back()).ok());
  }
  ASSERT_TRUE(got.WaitForCount(kCount)) << got.size();
  EXPECT_EQ(got.datas(), sent);
}

TYPED_TEST_P(BusConformance, ManySubscriptionsOnOneClient) {
  constexpr int kSubs = 2'000;
  std::vector<std::atomic<int>> hits(kSubs);
  std::vector<std::unique_ptr<Subscription>> subs;
  for (int i = 0; i < kSubs; ++i) {
    subs.push_back(MustSubscribe(this->b(), this->S("many." + std::to_string(i)),
                                 [&hits, i](const Message&) { hits[i].fetch_add(1); }));
    ASSERT_TRUE(subs.back()) << i;
  }
  for (int i = 0; i < kSubs; ++i) {
    ASSERT_TRUE(this->a().Publish(this->S("many." + std::to_string(i)), "x").ok());
  }
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& h : hits) {
      if (h.load() == 0) return false;
    }
    return true;
  }));
  for (int i = 0; i < kSubs; ++i) EXPECT_EQ(hits[i].load(), 1) << i;
  subs.clear();
}

// ------------------------------------------------------------------ unsubscribing

TYPED_TEST_P(BusConformance, NoDeliveryAfterSubscriptionIsDestroyed) {
  Inbox gone;
  Inbox stays;
  auto doomed = MustSubscribe(this->b(), this->S("u"), gone.Handler());
  auto witness = MustSubscribe(this->b(), this->S("u"), stays.Handler());
  ASSERT_TRUE(doomed && witness);
  ASSERT_TRUE(this->a().Publish(this->S("u"), "1").ok());
  ASSERT_TRUE(gone.WaitForCount(1));
  ASSERT_TRUE(stays.WaitForCount(1));

  doomed.reset();
  for (int i = 2; i <= 50; ++i) {
    ASSERT_TRUE(this->a().Publish(this->S("u"), std::to_string(i)).ok());
  }
  ASSERT_TRUE(stays.WaitForCount(50));
  EXPECT_EQ(gone.size(), 1u);
}

TYPED_TEST_P(BusConformance, DestroyingASubscriptionWaitsForItsRunningHandler) {
  std::atomic<bool> entered{false};
  std::atomic<bool> closing{false};
  std::atomic<bool> finished{false};
  std::atomic<int> calls_after_destroy{0};
  std::atomic<bool> destroyed{false};
  auto sub = MustSubscribe(this->b(), this->S("slow"), [&](const Message&) {
    if (destroyed.load()) calls_after_destroy.fetch_add(1);
    if (entered.exchange(true)) return;
    // Hold the first call until the destroyer has started, then keep running a little while,
    // so a destructor that does not wait would return before this call ends.
    WaitFor([&] { return closing.load(); });
    const auto until = steady_clock::now() + milliseconds(30);
    while (steady_clock::now() < until) std::this_thread::yield();
    finished = true;
  });
  ASSERT_TRUE(sub);
  ASSERT_TRUE(this->a().Publish(this->S("slow"), "first").ok());
  ASSERT_TRUE(WaitFor([&] { return entered.load(); }));
  // More messages are queued behind the running call; none may run once the destructor returns.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(this->a().Publish(this->S("slow"), "more").ok());

  bool finished_when_destroyed = false;
  std::thread destroyer([&] {
    closing = true;
    sub.reset();
    finished_when_destroyed = finished.load();
    destroyed = true;
  });
  destroyer.join();
  EXPECT_TRUE(finished_when_destroyed);

  // A sentinel through another subscription on the same client proves the queue has drained.
  Inbox witness;
  auto w = MustSubscribe(this->b(), this->S("slow"), witness.Handler());
  ASSERT_TRUE(w);
  ASSERT_TRUE(this->a().Publish(this->S("slow"), "sentinel").ok());
  ASSERT_TRUE(witness.WaitForCount(1));
  EXPECT_EQ(calls_after_destroy.load(), 0);
}

TYPED_TEST_P(BusConformance, AHandlerMayDestroyItsOwnSubscription) {
  std::unique_ptr<Subscription> sub;
  std::mutex sub_mu;
  std::atomic<int> calls{0};
  sub = MustSubscribe(this->b(), this->S("once"), [&](const Message&) {
    calls.fetch_add(1);
    std::lock_guard lock(sub_mu);
    sub.reset();
  });
  ASSERT_TRUE(sub);
  Inbox witness;
  auto w = MustSubscribe(this->b(), this->S("once"), witness.Handler());
  ASSERT_TRUE(w);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(this->a().Publish(this->S("once"), "x").ok());
  ASSERT_TRUE(witness.WaitForCount(5));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(sub_mu);
    return sub == nullptr;
  }));
  EXPECT_EQ(calls.load(), 1);
}

// ------------------------------------------------------------------ threads

TYPED_TEST_P(BusConformance, HandlersAndCompletionsNeverRunInsideTheCall) {
  // The test holds `held` across each call; a handler or completion that ran inside the call
  // would take it on the same thread and deadlock (or be seen on the caller's thread).
  std::mutex held;
  std::atomic<bool> handler_on_caller_thread{false};
  std::atomic<int> handled{0};
  const auto caller = std::this_thread::get_id();
  auto sub = MustSubscribe(this->a(), this->S("lock"), [&](const Message&) {
    std::lock_guard lock(held);
    if (std::this_thread::get_id() == caller) handler_on_caller_thread = true;
    handled.fetch_add(1);
  });
  ASSERT_TRUE(sub);

  auto no_responders = std::make_shared<Outcome>();
  auto invalid = std::make_shared<Outcome>();
  auto unanswered = std::make_shared<Outcome>();
  {
    std::lock_guard lock(held);
    ASSERT_TRUE(this->a().Publish(this->S("lock"), "x").ok());
    this->a().Request(this->S("nobody.here"), "q", milliseconds(10'000),
                      Capture(no_responders, &held));
    this->a().Request("bad..subject", "q", milliseconds(10'000), Capture(invalid, &held));
    // A request to the subscriber above: it does not answer, so this one times out at once.
    this->a().Request(this->S("lock"), "q", milliseconds(0), Capture(unanswered, &held));
    EXPECT_EQ(no_responders->Calls(), 0);
    EXPECT_EQ(invalid->Calls(), 0);
    EXPECT_EQ(unanswered->Calls(), 0);
  }
  ASSERT_TRUE(WaitFor([&] { return handled.load() == 2; }));
  ASSERT_TRUE(WaitFor([&] {
    return no_responders->Calls() == 1 && invalid->Calls() == 1 && unanswered->Calls() == 1;
  }));
  EXPECT_FALSE(handler_on_caller_thread.load());
  for (const auto& o : {no_responders, invalid, unanswered}) {
    std::lock_guard lock(o->mu);
    EXPECT_NE(o->thread, caller);
  }
  EXPECT_EQ(no_responders->Code(), StatusCode::kNotFound);
  EXPECT_EQ(invalid->Code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unanswered->Code(), StatusCode::kDeadlineExceeded);
}

TYPED_TEST_P(BusConformance, AHandlerMayCallTheBus) {
  // B relays what it hears on "in" to "out", from inside its handler.
  Inbox relayed;
  auto relay = MustSubscribe(this->b(), this->S("in"), [&](const Message& m) {
    EXPECT_TRUE(this->b().Publish(this->S("out"), "relayed " + m.data).ok());
  });
  auto out = MustSubscribe(this->a(), this->S("out"), relayed.Handler());
  ASSERT_TRUE(relay && out);
  ASSERT_TRUE(this->a().Publish(this->S("in"), "x").ok());
  ASSERT_TRUE(relayed.WaitForCount(1));
  EXPECT_EQ(relayed.datas(), std::vector<std::string>{"relayed x"});
}

// ------------------------------------------------------------------ request and reply

TYPED_TEST_P(BusConformance, RequestReplyAcrossClients) {
  auto server = MustSubscribe(this->b(), this->S("svc.echo"), [&](const Message& m) {
    EXPECT_FALSE(m.reply_to.empty());
    EXPECT_TRUE(this->b().Reply(m, "echo:" + m.data).ok());
  });
  ASSERT_TRUE(server);
  auto outcome = this->Ask(this->a(), this->S("svc.echo"), "hi", milliseconds(10'000));
  ASSERT_EQ(outcome->Calls(), 1);
  Result<std::string> answer = outcome->Get();
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, "echo:hi");

  // Many at once, each answered with its own data.
  constexpr int kRequests = 50;
  std::vector<std::shared_ptr<Outcome>> outcomes;
  for (int i = 0; i < kRequests; ++i) {
    outcomes.push_back(std::make_shared<Outcome>());
    this->a().Request(this->S("svc.echo"), std::to_string(i), milliseconds(10'000),
                      Capture(outcomes.back()));
  }
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& o : outcomes) {
      if (o->Calls() == 0) return false;
    }
    return true;
  }));
  for (int i = 0; i < kRequests; ++i) {
    Result<std::string> r = outcomes[i]->Get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, "echo:" + std::to_string(i));
  }

  // A client may answer its own requests too.
  auto self = MustSubscribe(this->a(), this->S("svc.self"),
                            [&](const Message& m) { EXPECT_TRUE(this->a().Reply(m, "me").ok()); });
  ASSERT_TRUE(self);
  auto own = this->Ask(this->a(), this->S("svc.self"), "", milliseconds(10'000));
  ASSERT_TRUE(own->Get().ok()) << own->Get().status().ToString();
  EXPECT_EQ(*own->Get(), "me");
}

TYPED_TEST_P(BusConformance, OnlyTheFirstReplyCounts) {
  auto first = MustSubscribe(this->b(), this->S("svc.dup"),
                             [&](const Message& m) { (void)this->b().Reply(m, "b"); });
  auto second = MustSubscribe(this->a(), this->S("svc.dup"),
                              [&](const Message& m) { (void)this->a().Reply(m, "a"); });
  ASSERT_TRUE(first && second);
  auto outcome = this->Ask(this->a(), this->S("svc.dup"), "", milliseconds(10'000));
  ASSERT_TRUE(outcome->Get().ok());
  const std::string answer = *outcome->Get();
  EXPECT_TRUE(answer == "a" || answer == "b") << answer;
  // Both replies are back by the time another round trip completes.
  auto again = this->Ask(this->a(), this->S("svc.dup"), "", milliseconds(10'000));
  ASSERT_TRUE(again->Get().ok());
  EXPECT_EQ(outcome->Calls(), 1);
}

TYPED_TEST_P(BusConformance, RequestWithNoSubscriberIsNotFoundQuickly) {
  const auto start = steady_clock::now();
  auto outcome = this->Ask(this->a(), this->S("svc.absent"), "q", milliseconds(20'000));
  ASSERT_EQ(outcome->Calls(), 1);
  EXPECT_EQ(outcome->Code(), StatusCode::kNotFound) << outcome->Get().status().ToString();
  // Well under the timeout: the answer does not wait for it.
  EXPECT_LT(steady_clock::now() - start, milliseconds(5'000));
}

TYPED_TEST_P(BusConformance, RequestNobodyAnswersIsDeadlineExceeded) {
  Inbox heard;
  auto mute = MustSubscribe(this->b(), this->S("svc.mute"), heard.Handler());
  ASSERT_TRUE(mute);
  constexpr milliseconds kTimeout{300};
  const auto start = steady_clock::now();
  auto outcome = this->Ask(this->a(), this->S("svc.mute"), "q", kTimeout);
  ASSERT_EQ(outcome->Calls(), 1);
  EXPECT_EQ(outcome->Code(), StatusCode::kDeadlineExceeded) << outcome->Get().status().ToString();
  {
    std::lock_guard lock(outcome->mu);
    EXPECT_GE(outcome->at - start, kTimeout);
    EXPECT_LT(outcome->at - start, kTimeout + milliseconds(5'000));
  }
  ASSERT_TRUE(heard.WaitForCount(1));
  // A late answer changes nothing: the completion ran once.
  EXPECT_TRUE(this->b().Reply(heard.messages()[0], "too late").ok());
  auto server = MustSubscribe(this->b(), this->S("svc.ping"),
                              [&](const Message& m) { (void)this->b().Reply(m, "pong"); });
  ASSERT_TRUE(server);
  auto ping = this->Ask(this->a(), this->S("svc.ping"), "", milliseconds(10'000));
  ASSERT_TRUE(ping->Get().ok());
  EXPECT_EQ(outcome->Calls(), 1);
}

// ------------------------------------------------------------------ arguments

TYPED_TEST_P(BusConformance, MalformedSubjectsAreInvalidArgument) {
  Bus& bus = this->a();
  auto noop = [](const Message&) {};
  for (const char* bad : {"", "a..b", ".a", "a.", "a b", "a.>.b", "a.b*", "a\nb"}) {
    EXPECT_EQ(bus.Subscribe(bad, noop).status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(bus.Publish(bad, "x").code(), StatusCode::kInvalidArgument) << bad;
  }
  // Wildcards are for subscribing only.
  EXPECT_EQ(bus.Publish(this->S("*"), "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bus.Publish(this->S(">"), "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bus.Publish(std::string(kSubjectBytesMax + 1, 'a'), "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(bus.Publish(this->S("big"), std::string(kMessageBytesMax + 1, 'x')).code(),
            StatusCode::kInvalidArgument);

  auto wild = std::make_shared<Outcome>();
  bus.Request(this->S("*"), "q", milliseconds(10'000), Capture(wild));
  auto empty = std::make_shared<Outcome>();
  bus.Request("", "q", milliseconds(10'000), Capture(empty));
  ASSERT_TRUE(WaitFor([&] { return wild->Calls() == 1 && empty->Calls() == 1; }));
  EXPECT_EQ(wild->Code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty->Code(), StatusCode::kInvalidArgument);

  // A Reply needs a request.
  EXPECT_EQ(bus.Reply(Message{this->S("x"), "", ""}, "r").code(), StatusCode::kInvalidArgument);
}

REGISTER_TYPED_TEST_SUITE_P(BusConformance, BothClientsAreConnected,
                            PublishReachesSubscribersOnEveryClient, StarMatchesExactlyOneToken,
                            TailMatchesOneOrMoreTrailingTokens, OrderFromOnePublisherIsPreserved,
                            ManySubscriptionsOnOneClient, NoDeliveryAfterSubscriptionIsDestroyed,
                            DestroyingASubscriptionWaitsForItsRunningHandler,
                            AHandlerMayDestroyItsOwnSubscription,
                            HandlersAndCompletionsNeverRunInsideTheCall, AHandlerMayCallTheBus,
                            RequestReplyAcrossClients, OnlyTheFirstReplyCounts,
                            RequestWithNoSubscriberIsNotFoundQuickly,
                            RequestNobodyAnswersIsDeadlineExceeded,
                            MalformedSubjectsAreInvalidArgument);

}  // namespace telos::bus::testing
