#include "telos/base/metrics.h"

#include <gtest/gtest.h>

namespace telos {
namespace {

TEST(MetricsTest, RendersPrometheusText) {
  Metrics metrics;
  metrics.Counter("logins_total", "Successful logins").Increment(3);
  metrics.Gauge("zone_occupancy", "Players in a zone", {{"zone", "town"}}).Set(12);
  auto& lag = metrics.Histogram("zone_tick_lag_ms", "Heartbeat lateness", {1, 10, 100});
  lag.Observe(0.5);
  lag.Observe(50);
  const std::string text = metrics.RenderText();
  EXPECT_NE(text.find("# TYPE telos_logins_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("telos_logins_total 3"), std::string::npos) << text;
  EXPECT_NE(text.find("telos_zone_occupancy{zone=\"town\"} 12"), std::string::npos) << text;
  EXPECT_NE(text.find("telos_zone_tick_lag_ms_bucket{le=\"1\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("telos_zone_tick_lag_ms_bucket{le=\"100\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("telos_zone_tick_lag_ms_count 2"), std::string::npos) << text;
}

TEST(MetricsTest, RefreshersRunBeforeEveryRead) {
  Metrics metrics;
  auto& mirrored = metrics.Gauge("mirrored", "A value kept elsewhere");
  double outside = 1;
  metrics.AddRefresh([&] { mirrored.Set(outside); });
  EXPECT_NE(metrics.RenderText().find("telos_mirrored 1"), std::string::npos);
  outside = 5;
  EXPECT_NE(metrics.RenderText().find("telos_mirrored 5"), std::string::npos);
  outside = 9;
  const auto families = metrics.Collect();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].metric.at(0).gauge.value, 9);
}

TEST(MetricsTest, SameNameAndLabelsIsTheSameMetric) {
  Metrics metrics;
  auto& a = metrics.Counter("commands_total", "Commands", {{"zone", "arena"}});
  auto& b = metrics.Counter("commands_total", "Commands", {{"zone", "arena"}});
  EXPECT_EQ(&a, &b);
}

TEST(MetricsTest, RemovedGaugeDisappears) {
  Metrics metrics;
  auto& g = metrics.Gauge("zone_occupancy", "Players in a zone", {{"zone", "crypt"}});
  g.Set(4);
  metrics.RemoveGauge("zone_occupancy", g);
  EXPECT_EQ(metrics.RenderText().find("zone=\"crypt\""), std::string::npos);
}

TEST(MetricsTest, AGaugeHeldTwiceStaysUntilBothHoldersRemoveIt) {
  Metrics metrics;
  auto& first = metrics.Gauge("zone_occupancy", "Players in a zone", {{"zone", "crypt"}});
  auto& second = metrics.Gauge("zone_occupancy", "Players in a zone", {{"zone", "crypt"}});
  ASSERT_EQ(&first, &second);
  second.Set(3);
  metrics.RemoveGauge("zone_occupancy", first);
  EXPECT_NE(metrics.RenderText().find("telos_zone_occupancy{zone=\"crypt\"} 3"), std::string::npos);
  metrics.RemoveGauge("zone_occupancy", second);
  EXPECT_EQ(metrics.RenderText().find("zone=\"crypt\""), std::string::npos);
}

}  // namespace
}  // namespace telos
