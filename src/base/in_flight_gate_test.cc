#include "telos/base/in_flight_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>

namespace telos {
namespace {

using std::chrono::milliseconds;

TEST(InFlightGateTest, PassesAreRefusedOnceClosed) {
  auto gate = InFlightGate::Make();
  {
    InFlightGate::Pass pass = gate->TryEnter();
    EXPECT_TRUE(pass);
    EXPECT_EQ(gate->inside(), 1u);
  }
  EXPECT_EQ(gate->inside(), 0u);
  gate->Close();
  EXPECT_TRUE(gate->closed());
  EXPECT_FALSE(gate->TryEnter());
  gate->Close();  // idempotent
}

TEST(InFlightGateTest, CloseWaitsForAPassHeldOnAnotherThread) {
  auto gate = InFlightGate::Make();
  std::promise<void> entered, release;
  std::thread worker([&] {
    InFlightGate::Pass pass = gate->TryEnter();
    ASSERT_TRUE(pass);
    entered.set_value();
    release.get_future().wait();
  });
  entered.get_future().wait();
  auto closing = std::async(std::launch::async, [&] { gate->Close(); });
  // Close has begun (it refuses passes) but cannot return while the worker is inside.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!gate->closed() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(gate->closed());
  EXPECT_FALSE(gate->TryEnter());
  EXPECT_EQ(closing.wait_for(milliseconds(50)), std::future_status::timeout);
  release.set_value();
  EXPECT_EQ(closing.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  worker.join();
  EXPECT_EQ(gate->inside(), 0u);
}

TEST(InFlightGateTest, AWrappedTaskRunsOnlyWhileOpenAndMayOutliveItsComponent) {
  std::function<void(int)> late;
  int ran = 0;
  {
    struct Component {
      std::shared_ptr<InFlightGate> in_flight = InFlightGate::Make();
      ~Component() { in_flight->Close(); }
    } component;
    auto task = component.in_flight->Wrap([&ran](int n) { ran += n; });
    task(2);
    EXPECT_EQ(ran, 2);
    late = task;
  }
  // The component (and its reference to the gate) is gone; the wrapper still owns the gate.
  late(5);
  EXPECT_EQ(ran, 2);
}

TEST(InFlightGateTest, AMovedPassIsReleasedOnce) {
  auto gate = InFlightGate::Make();
  InFlightGate::Pass a = gate->TryEnter();
  InFlightGate::Pass b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_TRUE(b);
  EXPECT_EQ(gate->inside(), 1u);
  b = InFlightGate::Pass();
  EXPECT_EQ(gate->inside(), 0u);
  gate->Close();
}

}  // namespace
}  // namespace telos
