// The Bus conformance suite on two clients of one in-process hub, plus what only the in-process
// backend has: the SetConnected outage hook, the delivery queue bound, private hubs and
// shutdown.
#include "telos/bus/in_process_bus.h"

#include <atomic>
#include <memory>
#include <string>

#include "bus_conformance.h"

namespace telos::bus::testing {
namespace {

class InProcessBackend {
 public:
  Status Ready() { return Status::Ok(); }
  Bus& A() { return a_; }
  Bus& B() { return b_; }
  std::string Prefix() { return "test"; }

 private:
  std::shared_ptr<InProcessBus::Hub> hub_ = InProcessBus::NewHub();
  InProcessBus a_{hub_};
  InProcessBus b_{hub_};
};

INSTANTIATE_TYPED_TEST_SUITE_P(InProcess, BusConformance, InProcessBackend);

TEST(InProcessBus, SetConnectedSimulatesAnOutage) {
  auto hub = InProcessBus::NewHub();
  Transitions transitions;
  InProcessBus a(hub);
  InProcessBus b(hub);
  a.OnConnectionChange(transitions.Callback());

  Inbox heard_by_a;
  Inbox heard_by_b;
  auto sub_a = MustSubscribe(a, "room", heard_by_a.Handler());
  auto sub_b = MustSubscribe(b, "room", heard_by_b.Handler());
  ASSERT_TRUE(sub_a && sub_b);

  a.SetConnected(false);
  EXPECT_FALSE(a.connected());
  ASSERT_TRUE(WaitFor([&] { return transitions.seen() == std::vector<bool>{false}; }));
  a.SetConnected(false);  // no change, no callback

  // Down: nothing goes out...
  EXPECT_EQ(a.Publish("room", "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(a.Reply(Message{"room", "", "_INBOX.c9.1"}, "x").code(), StatusCode::kUnavailable);
  auto request = std::make_shared<Outcome>();
  a.Request("room", "q", milliseconds(10'000), Capture(request));
  ASSERT_TRUE(WaitFor([&] { return request->Calls() == 1; }));
  EXPECT_EQ(request->Code(), StatusCode::kUnavailable);
  // ...nothing comes in, and a subscriber that is down is no responder.
  ASSERT_TRUE(b.Publish("room", "while down").ok());
  ASSERT_TRUE(heard_by_b.WaitForCount(1));
  auto svc = MustSubscribe(a, "room.svc", [&](const Message& m) { (void)a.Reply(m, "a"); });
  ASSERT_TRUE(svc);  // subscribing works while down
  auto still_nobody = std::make_shared<Outcome>();
  b.Request("room.svc", "q", milliseconds(10'000), Capture(still_nobody));
  ASSERT_TRUE(WaitFor([&] { return still_nobody->Calls() == 1; }));
  EXPECT_EQ(still_nobody->Code(), StatusCode::kNotFound);

  a.SetConnected(true);
  EXPECT_TRUE(a.connected());
  ASSERT_TRUE(WaitFor([&] { return transitions.seen() == std::vector<bool>{false, true}; }));
  // The subscriptions made before and during the outage receive again.
  ASSERT_TRUE(b.Publish("room", "after").ok());
  ASSERT_TRUE(heard_by_a.WaitForCount(1));
  EXPECT_EQ(heard_by_a.datas(), std::vector<std::string>{"after"});
  auto answered = std::make_shared<Outcome>();
  b.Request("room.svc", "q", milliseconds(10'000), Capture(answered));
  ASSERT_TRUE(WaitFor([&] { return answered->Calls() == 1; }));
  ASSERT_TRUE(answered->Get().ok()) << answered->Get().status().ToString();
  EXPECT_EQ(*answered->Get(), "a");
}

TEST(InProcessBus, WaitingRequestsFailUnavailableWhenTheConnectionDrops) {
  auto hub = InProcessBus::NewHub();
  InProcessBus a(hub);
  InProcessBus b(hub);
  Inbox mute;
  auto sub = MustSubscribe(b, "svc", mute.Handler());
  ASSERT_TRUE(sub);
  auto outcome = std::make_shared<Outcome>();
  a.Request("svc", "q", milliseconds(60'000), Capture(outcome));
  ASSERT_TRUE(mute.WaitForCount(1));
  a.SetConnected(false);
  ASSERT_TRUE(WaitFor([&] { return outcome->Calls() == 1; }));
  EXPECT_EQ(outcome->Code(), StatusCode::kUnavailable);
  // The answer that comes after the reconnect finds nobody waiting.
  a.SetConnected(true);
  ASSERT_TRUE(b.Reply(mute.messages()[0], "late").ok());
  auto ping = MustSubscribe(b, "ping", [&](const Message& m) { (void)b.Reply(m, "pong"); });
  auto pong = std::make_shared<Outcome>();
  a.Request("ping", "", milliseconds(10'000), Capture(pong));
  ASSERT_TRUE(WaitFor([&] { return pong->Calls() == 1; }));
  EXPECT_EQ(outcome->Calls(), 1);
}

TEST(InProcessBus, DestructionCancelsWaitingRequestsExactlyOnce) {
  auto hub = InProcessBus::NewHub();
  InProcessBus server(hub);
  Inbox mute;
  auto sub = MustSubscribe(server, "svc", mute.Handler());
  ASSERT_TRUE(sub);
  std::vector<std::shared_ptr<Outcome>> outcomes;
  {
    InProcessBus client(hub);
    for (int i = 0; i < 10; ++i) {
      outcomes.push_back(std::make_shared<Outcome>());
      client.Request("svc", "q", milliseconds(60'000), Capture(outcomes.back()));
    }
    ASSERT_TRUE(mute.WaitForCount(10));
  }
  for (const auto& o : outcomes) {
    ASSERT_EQ(o->Calls(), 1);  // completed before the destructor returned
    EXPECT_EQ(o->Code(), StatusCode::kCancelled);
  }
  // Replies to a client that is gone go nowhere.
  for (const Message& m : mute.messages()) EXPECT_TRUE(server.Reply(m, "late").ok());
}

TEST(InProcessBus, ASubscriptionMayOutliveItsBus) {
  auto hub = InProcessBus::NewHub();
  std::unique_ptr<Subscription> sub;
  std::atomic<int> calls{0};
  {
    InProcessBus bus(hub);
    sub = MustSubscribe(bus, "x", [&](const Message&) { calls.fetch_add(1); });
    ASSERT_TRUE(sub);
  }
  InProcessBus other(hub);
  Inbox witness;
  auto w = MustSubscribe(other, "x", witness.Handler());
  ASSERT_TRUE(other.Publish("x", "after").ok());
  ASSERT_TRUE(witness.WaitForCount(1));
  EXPECT_EQ(calls.load(), 0);
  sub.reset();
}

TEST(InProcessBus, AFullDeliveryQueueShedsAndCounts) {
  auto hub = InProcessBus::NewHub();
  InProcessBus publisher(hub);
  InProcessBus slow(hub, InProcessBusOptions{.delivery_queue_depth_max = 4});
  std::atomic<bool> release{false};
  std::atomic<int> calls{0};
  auto sub = MustSubscribe(slow, "x", [&](const Message&) {
    // The test blocks this handler on purpose to fill the queue behind it.
    if (calls.fetch_add(1) == 0) WaitFor([&] { return release.load(); });
  });
  ASSERT_TRUE(sub);
  ASSERT_TRUE(publisher.Publish("x", "first").ok());
  ASSERT_TRUE(WaitFor([&] { return calls.load() == 1; }));
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(publisher.Publish("x", "more").ok());
  EXPECT_EQ(slow.dropped_messages(), 3u);  // 4 queued behind the running one
  EXPECT_EQ(publisher.dropped_messages(), 0u);
  release = true;
  ASSERT_TRUE(WaitFor([&] { return calls.load() == 5; }));
}

TEST(InProcessBus, PrivateHubsAreSeparateWorlds) {
  InProcessBus one;
  InProcessBus two;
  Inbox heard;
  auto sub = MustSubscribe(two, "x", heard.Handler());
  ASSERT_TRUE(sub);
  ASSERT_TRUE(one.Publish("x", "hello").ok());
  auto outcome = std::make_shared<Outcome>();
  one.Request("x", "q", milliseconds(10'000), Capture(outcome));
  ASSERT_TRUE(WaitFor([&] { return outcome->Calls() == 1; }));
  EXPECT_EQ(outcome->Code(), StatusCode::kNotFound);
  // A sentinel on two's own hub shows nothing from one arrived before it.
  ASSERT_TRUE(two.Publish("x", "sentinel").ok());
  ASSERT_TRUE(heard.WaitForCount(1));
  EXPECT_EQ(heard.datas(), std::vector<std::string>{"sentinel"});
}

TEST(InProcessBus, WildcardSubscriptionsOverlapWithoutDuplicates) {
  InProcessBus bus;
  Inbox exact, star, tail, all;
  auto s1 = MustSubscribe(bus, "a.b.c", exact.Handler());
  auto s2 = MustSubscribe(bus, "a.*.c", star.Handler());
  auto s3 = MustSubscribe(bus, "a.>", tail.Handler());
  auto s4 = MustSubscribe(bus, ">", all.Handler());
  ASSERT_TRUE(bus.Publish("a.b.c", "1").ok());
  ASSERT_TRUE(bus.Publish("z", "2").ok());
  ASSERT_TRUE(all.WaitForCount(2));
  EXPECT_EQ(exact.size(), 1u);
  EXPECT_EQ(star.size(), 1u);
  EXPECT_EQ(tail.size(), 1u);
  // Unsubscribing prunes the table: the same patterns can come and go.
  s2.reset();
  s2 = MustSubscribe(bus, "a.*.c", star.Handler());
  ASSERT_TRUE(bus.Publish("a.x.c", "3").ok());
  ASSERT_TRUE(star.WaitForCount(2));
  // Deliveries to one client run in subscription order, so `all` (older than the new `star`)
  // has the message too, and `exact` did not match.
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(exact.size(), 1u);
  EXPECT_EQ(tail.size(), 2u);
}

}  // namespace
}  // namespace telos::bus::testing
