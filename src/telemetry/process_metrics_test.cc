#include "telos/telemetry/process_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "telos/base/metrics.h"

namespace telos::telemetry {
namespace {

double Sample(const Metrics& metrics, const std::string& name) {
  for (const auto& family : metrics.Collect()) {
    if (family.name != name) continue;
    const auto& m = family.metric.at(0);
    return family.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
  }
  ADD_FAILURE() << "no " << name;
  return -1;
}

TEST(ProcStatTest, FieldsCountFromTheLastParenthesis) {
  // The command name "a) b (c" holds spaces and parentheses.
  const std::string text =
      "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 123456 "
      "1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto stat = ReadProcStat(text);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->utime_ticks, 250u);
  EXPECT_EQ(stat->stime_ticks, 75u);
  EXPECT_EQ(stat->threads, 9);
  EXPECT_EQ(stat->start_ticks, 123456u);
  EXPECT_FALSE(ReadProcStat("4242 (short) S 1 2 3").has_value());
  EXPECT_FALSE(ReadProcStat("no parenthesis at all").has_value());
}

TEST(ProcessMetricsTest, TheProcessIsMeasuredAtEachRead) {
  Metrics metrics;
  AddProcessMetrics(metrics, {.version = "1.2.3", .build_type = "Debug", .compiler = "clang"});
  const double rss = Sample(metrics, "telos_process_resident_memory_bytes");
  EXPECT_GT(rss, 1024 * 1024);
  EXPECT_GE(Sample(metrics, "telos_process_virtual_memory_bytes"), rss);
  EXPECT_GE(Sample(metrics, "telos_process_threads"), 1);
  EXPECT_GE(Sample(metrics, "telos_process_open_fds"), 3);  // stdin, stdout, stderr at least
  EXPECT_GT(Sample(metrics, "telos_process_start_time_seconds"), 1.7e9);

  // Memory that is touched shows up in the next read.
  std::vector<char> ballast(64 * 1024 * 1024, 1);
  EXPECT_GT(Sample(metrics, "telos_process_resident_memory_bytes"), rss + 32 * 1024 * 1024);
  ballast[ballast.size() / 2] = 2;

  const std::string text = metrics.RenderText();
  EXPECT_NE(
      text.find("telos_build_info{build_type=\"Debug\",compiler=\"clang\",version=\"1.2.3\"} 1"),
      std::string::npos)
      << text;
}

TEST(ProcessMetricsTest, CpuTimeCountsWhatTheProcessSpends) {
  Metrics metrics;
  AddProcessMetrics(metrics, {.version = "1", .build_type = "x", .compiler = "y"});
  const double before = Sample(metrics, "telos_process_cpu_seconds_total");
  // Burn CPU until the counter moves (a clock tick is 10 ms), with a deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  volatile uint64_t spin = 0;
  while (Sample(metrics, "telos_process_cpu_seconds_total") <= before &&
         std::chrono::steady_clock::now() < deadline) {
    for (int j = 0; j < 1'000'000; ++j) spin = spin + j;
  }
  EXPECT_GT(Sample(metrics, "telos_process_cpu_seconds_total"), before);
}

}  // namespace
}  // namespace telos::telemetry
