// DeliveryMetrics: each instrument moves for the deliveries its meaning names (spec 000): live
// events feed the lag, a resuming consumer's backlog the catch-up pair, a rejected event the
// poisoned counter; a redelivery is not counted twice; the subject labels stay bounded.
#include "telos/bus/delivery_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "telos/base/limits.h"
#include "telos/base/metrics.h"

namespace telos::bus {
namespace {

constexpr int64_t kStartedMs = 1'000'000;

DurableEvent Event(uint64_t sequence, int64_t published_ms, std::string subject = "game.event.x") {
  return DurableEvent{std::move(subject), "{}", sequence, 1, published_ms};
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(DeliveryMetricsTest, LiveEventsFeedTheLagAndTheBacklogFeedsTheCatchupPair) {
  Metrics metrics;
  DeliveryMetrics delivery("GAME_EVENTS", kStartedMs, metrics);
  delivery.Record(Event(1, kStartedMs - 5'000), Disposition::kAck, kStartedMs + 10);  // backlog
  delivery.Record(Event(2, kStartedMs + 20), Disposition::kAck, kStartedMs + 25);     // live
  delivery.Record(Event(2, kStartedMs + 20), Disposition::kAck, kStartedMs + 900);    // again
  delivery.Record(Event(3, kStartedMs + 30), Disposition::kReject, kStartedMs + 31);
  const std::string text = metrics.RenderText();
  EXPECT_TRUE(Has(text, "bus_catchup_events_total{subject=\"game.event.x\"} 1")) << text;
  EXPECT_TRUE(Has(text, "bus_catchup_age_ms_count{subject=\"game.event.x\"} 1")) << text;
  EXPECT_TRUE(Has(text, "bus_deliver_lag_ms_count 2")) << text;  // events 2 and 3, once each
  EXPECT_TRUE(Has(text, "commbus_durable_poisoned_total{stream=\"GAME_EVENTS\"} 1")) << text;
}

TEST(DeliveryMetricsTest, CatchupSubjectLabelsAreBounded) {
  Metrics metrics;
  DeliveryMetrics delivery("GAME_EVENTS", kStartedMs, metrics);
  const size_t subjects = limits::kDurableCatchupSubjectLabelsMax + 5;
  for (size_t i = 0; i < subjects; ++i) {
    delivery.Record(Event(i + 1, kStartedMs - 1, "game.event.k" + std::to_string(i)),
                    Disposition::kAck, kStartedMs);
  }
  const std::string text = metrics.RenderText();
  EXPECT_TRUE(Has(text, "bus_catchup_events_total{subject=\"game.event.k0\"} 1")) << text;
  EXPECT_FALSE(Has(text, "subject=\"game.event.k" +
                             std::to_string(limits::kDurableCatchupSubjectLabelsMax) + "\""));
  EXPECT_TRUE(Has(text, "bus_catchup_events_total{subject=\"other\"} 5")) << text;
}

}  // namespace
}  // namespace telos::bus
