#include "strand_relay.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <thread>

namespace telos::net {
namespace {

namespace asio = boost::asio;

TEST(StrandRelay, ABurstForManyConnectionsCostsOnePostPerLane) {
  asio::io_context io;
  auto relay = StrandRelay::Create(io);
  struct Connection {
    asio::any_io_executor strand;
    size_t lane;
    std::vector<int> seen;
  };
  std::vector<Connection> connections;
  for (int i = 0; i < 50; ++i) {
    connections.push_back({asio::make_strand(io), relay->AssignLane(), {}});
  }
  for (int n = 0; n < 20; ++n) {
    for (auto& c : connections) relay->Run(c.lane, c.strand, [&c, n] { c.seen.push_back(n); });
  }
  // io.run() counts the handlers it ran: one drain per lane, with every task run inside it.
  EXPECT_EQ(io.run(), StrandRelay::kLanes);
  for (const auto& c : connections) {
    ASSERT_EQ(c.seen.size(), 20u);
    for (int n = 0; n < 20; ++n) EXPECT_EQ(c.seen[n], n);
  }
}

TEST(StrandRelay, KeepsEachConnectionsOrderWhileIoThreadsDrainConcurrently) {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::vector<std::thread> io_threads;
  for (int i = 0; i < 2; ++i) io_threads.emplace_back([&io] { io.run(); });
  auto relay = StrandRelay::Create(io);

  constexpr int kConnections = 6;
  constexpr int kTasks = 20000;
  struct Connection {
    asio::any_io_executor strand;
    size_t lane;
    std::vector<int> seen;  // touched only on the strand
  };
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < kConnections; ++i) {
    auto c = std::make_unique<Connection>();
    c->strand = asio::make_strand(io);
    c->lane = relay->AssignLane();
    connections.push_back(std::move(c));
  }
  // Two producers, like two zone threads, each writing to its own half of the connections.
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&, p] {
      for (int n = 0; n < kTasks; ++n) {
        for (int i = p; i < kConnections; i += 2) {
          Connection* c = connections[i].get();
          relay->Run(c->lane, c->strand, [c, n] { c->seen.push_back(n); });
        }
      }
    });
  }
  for (auto& t : producers) t.join();
  // Every task is now queued behind a posted drain, so the io threads return once all have run.
  guard.reset();
  for (auto& t : io_threads) t.join();
  for (const auto& c : connections) {
    ASSERT_EQ(c->seen.size(), static_cast<size_t>(kTasks));
    for (int n = 0; n < kTasks; ++n) ASSERT_EQ(c->seen[n], n) << "out of order at " << n;
  }
}

TEST(StrandRelay, ATaskGivenOnItsOwnStrandRunsAtOnce) {
  asio::io_context io;
  auto relay = StrandRelay::Create(io);
  asio::any_io_executor strand = asio::make_strand(io);
  const size_t lane = relay->AssignLane();
  std::vector<std::string> order;
  asio::post(strand, [&] {
    relay->Run(lane, strand, [&] { order.push_back("inner"); });
    order.push_back("after");
  });
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"inner", "after"}));
}

TEST(StrandRelay, TasksLeftWhenTheIoContextGoesAwayAreDroppedAndLetGo) {
  std::weak_ptr<StrandRelay> relay_seen;
  std::weak_ptr<int> connection_seen;
  {
    asio::io_context io;
    auto relay = StrandRelay::Create(io);
    // Like a connection: it holds the relay, and the task holds it.
    auto connection = std::make_shared<int>(0);
    auto holds_relay = std::shared_ptr<StrandRelay>(relay);
    asio::any_io_executor strand = asio::make_strand(io);
    bool ran = false;
    relay->Run(relay->AssignLane(), strand, [connection, holds_relay, &ran] { ran = true; });
    relay_seen = relay;
    connection_seen = connection;
    EXPECT_FALSE(ran);
  }  // the io_context never ran: its posted drain is destroyed, and the task with it
  EXPECT_TRUE(connection_seen.expired());
  EXPECT_TRUE(relay_seen.expired());
}

}  // namespace
}  // namespace telos::net
