#include "telos/sim/report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <limits>

namespace telos::sim {
namespace {

TEST(Percentile, NearestRankOnOneToHundred) {
  std::vector<int64_t> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(NearestRankPercentile(v, 50), 50);
  EXPECT_EQ(NearestRankPercentile(v, 95), 95);
  EXPECT_EQ(NearestRankPercentile(v, 99), 99);
  EXPECT_EQ(NearestRankPercentile(v, 100), 100);
  EXPECT_EQ(NearestRankPercentile(v, 0), 1);
}

TEST(Percentile, SmallListsRoundTheRankUp) {
  // Ten samples: p50 is the 5th, p95 and p99 both the 10th (ceil(9.5) = ceil(9.9) = 10).
  const std::vector<int64_t> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(NearestRankPercentile(v, 50), 5);
  EXPECT_EQ(NearestRankPercentile(v, 95), 10);
  EXPECT_EQ(NearestRankPercentile(v, 99), 10);
  EXPECT_EQ(NearestRankPercentile(v, 10), 1);
  EXPECT_EQ(NearestRankPercentile(v, 11), 2);
}

TEST(Percentile, OneSampleIsEveryPercentile) {
  const std::vector<int64_t> v = {42};
  for (double q : {0.0, 1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(NearestRankPercentile(v, q), 42);
}

TEST(Summarize, KnownLatencyListInAnyOrder) {
  // 1000 samples: 990 of 1 ms, 9 of 50 ms (i = 111, 222, ...) and one of 900 ms (i = 500).
  std::vector<int64_t> us;
  for (int i = 0; i < 1000; ++i) {
    us.push_back(i % 111 == 0 && i > 0 ? 50'000 : 1'000);
  }
  us[500] = 900'000;
  const LatencySummary s = Summarize(us);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.p95_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 1.0);  // rank ceil(990) is the last of the 990 one-ms samples
  EXPECT_DOUBLE_EQ(s.max_ms, 900.0);
}

TEST(Summarize, TailSamplesReachP99) {
  std::vector<int64_t> us(980, 2'000);
  for (int i = 0; i < 20; ++i) us.push_back(70'000);  // 2% slow
  const LatencySummary s = Summarize(us);
  EXPECT_DOUBLE_EQ(s.p50_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.p95_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 70.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 70.0);
  EXPECT_NEAR(s.mean_ms, (980 * 2.0 + 20 * 70.0) / 1000, 1e-9);
}

TEST(Summarize, EmptyGivesZeros) {
  const LatencySummary s = Summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p50_ms, 0);
  EXPECT_EQ(s.max_ms, 0);
}

TEST(Summarize, MicrosecondsBecomeFractionalMilliseconds) {
  const LatencySummary s = Summarize({250, 1'500, 3'750});
  EXPECT_DOUBLE_EQ(s.p50_ms, 1.5);
  EXPECT_DOUBLE_EQ(s.max_ms, 3.75);
  EXPECT_LE(s.p50_ms, s.p95_ms);
  EXPECT_LE(s.p95_ms, s.p99_ms);
  EXPECT_LE(s.p99_ms, s.max_ms);
}

constexpr std::string_view kMetrics =
    "# HELP telos_zone_tick_lag_ms lag\n"
    "# TYPE telos_zone_tick_lag_ms histogram\n"
    "telos_zone_tick_lag_ms_count{zone=\"lobby\"} 100\n"
    "telos_zone_tick_lag_ms_sum{zone=\"lobby\"} 40\n"
    "telos_zone_tick_lag_ms_bucket{zone=\"lobby\",le=\"0.5\"} 60\n"
    "telos_zone_tick_lag_ms_bucket{zone=\"lobby\",le=\"1\"} 90\n"
    "telos_zone_tick_lag_ms_bucket{zone=\"lobby\",le=\"10\"} 100\n"
    "telos_zone_tick_lag_ms_bucket{zone=\"lobby\",le=\"+Inf\"} 100\n"
    "telos_zone_tick_lag_ms_bucket{le=\"0.5\",zone=\"town\"} 40\n"
    "telos_zone_tick_lag_ms_bucket{le=\"1\",zone=\"town\"} 50\n"
    "telos_zone_tick_lag_ms_bucket{le=\"10\",zone=\"town\"} 98\n"
    "telos_zone_tick_lag_ms_bucket{le=\"+Inf\",zone=\"town\"} 100\n"
    "telos_zone_occupancy{zone=\"lobby\"} 7\n"
    "telos_zone_occupancy{zone=\"town\"} 5\n"
    "telos_telnet_connections 12\n";

TEST(Prometheus, HistogramIsSummedOverZones) {
  const auto buckets = ParseHistogram(kMetrics, "telos_zone_tick_lag_ms");
  ASSERT_EQ(buckets.size(), 4u);
  EXPECT_EQ(buckets[0].upper_bound, 0.5);
  EXPECT_EQ(buckets[0].cumulative_count, 100);
  EXPECT_EQ(buckets[2].cumulative_count, 198);
  EXPECT_TRUE(std::isinf(buckets[3].upper_bound));
  EXPECT_EQ(buckets[3].cumulative_count, 200);
  EXPECT_TRUE(ParseHistogram(kMetrics, "telos_missing").empty());
}

TEST(Prometheus, SampleSums) {
  EXPECT_EQ(ParseSampleSum(kMetrics, "telos_zone_occupancy"), 12);
  EXPECT_EQ(ParseSampleSum(kMetrics, "telos_telnet_connections"), 12);
  EXPECT_FALSE(ParseSampleSum(kMetrics, "telos_zone").has_value());
}

TEST(Prometheus, SamplesByLabel) {
  const auto by_zone = ParseSamplesByLabel(kMetrics, "telos_zone_occupancy", "zone");
  EXPECT_EQ(by_zone, (std::map<std::string, double>{{"lobby", 7}, {"town", 5}}));
  // Without the label, samples fall under "".
  EXPECT_EQ(ParseSamplesByLabel(kMetrics, "telos_telnet_connections", "zone"),
            (std::map<std::string, double>{{"", 12}}));
  EXPECT_TRUE(ParseSamplesByLabel(kMetrics, "telos_missing", "zone").empty());
}

TEST(Prometheus, QuantileInterpolatesInsideTheBucket) {
  const auto buckets = ParseHistogram(kMetrics, "telos_zone_tick_lag_ms");
  // Rank 100 of 200 falls at the top of the first bucket.
  EXPECT_NEAR(*HistogramQuantile(0.5, buckets), 0.5, 1e-9);
  // Rank 198 is the last of the (1, 10] bucket's 58 observations: 1 + 9 * 58/58 = 10.
  EXPECT_NEAR(*HistogramQuantile(0.99, buckets), 10.0, 1e-9);
  // Rank 170: 30 into the 58 of (1, 10].
  EXPECT_NEAR(*HistogramQuantile(0.85, buckets), 1 + 9.0 * 30 / 58, 1e-9);
  EXPECT_EQ(*HistogramQuantileBound(0.85, buckets), 10);
  // Rank 199 is in +Inf: the estimate is the largest finite bound.
  EXPECT_NEAR(*HistogramQuantile(0.995, buckets), 10.0, 1e-9);
  EXPECT_TRUE(std::isinf(*HistogramQuantileBound(0.995, buckets)));
}

TEST(Prometheus, QuantileOfNothingIsAbsent) {
  EXPECT_FALSE(HistogramQuantile(0.99, {}).has_value());
  const std::vector<HistogramBucket> zero = {{1, 0}, {std::numeric_limits<double>::infinity(), 0}};
  EXPECT_FALSE(HistogramQuantile(0.99, zero).has_value());
}

TEST(Prometheus, SubtractGivesTheWindow) {
  const std::vector<HistogramBucket> before = {{1, 10}, {10, 10}};
  const std::vector<HistogramBucket> after = {{1, 15}, {10, 25}};
  const auto window = SubtractHistogram(after, before);
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].cumulative_count, 5);
  EXPECT_EQ(window[1].cumulative_count, 15);
  // A bucket that did not exist before counts from zero.
  EXPECT_EQ(SubtractHistogram(after, {})[1].cumulative_count, 25);
}

TEST(ProcStat, ReadsCpuTicksAndRss) {
  const std::string line =
      "4242 (telos serve) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 50 0 0 20 0 9 0 "
      "100 123456789 3000 18446744073709551615";
  const auto sample = ParseProcStat(line);
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->cpu_ticks, 200u);
  EXPECT_EQ(sample->rss_pages, 3000u);
  EXPECT_FALSE(ParseProcStat("garbage").has_value());
  EXPECT_FALSE(ParseProcStat("1 (x) S 1 2").has_value());
}

TEST(Formats, JsonHasEveryFieldAndCsvRowsMatchTheHeader) {
  Report r;
  r.targets = {"127.0.0.1:4000"};
  r.rtt = Summarize({1'000, 2'000});
  r.errors_by_kind["login_timeout"] = 1;
  const std::string json = ReportToJson(r);
  for (const char* key :
       {"\"bots_connected\"", "\"commands_sent\"", "\"commands_in_window\"", "\"rtt\"",
        "\"p50_ms\"", "\"p95_ms\"", "\"p99_ms\"", "\"max_ms\"", "\"errors\"",
        "\"unexpected_disconnects\"", "\"tick_lag_p99_ms\":null", "\"login_timeout\":1"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  SeriesRow row;
  row.t_s = 1.0;
  row.commands = 3;
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  EXPECT_EQ(commas(SeriesCsvHeader()), commas(SeriesCsvRow(row)));
  EXPECT_EQ(SeriesCsvRow(row).substr(0, 10), "1.0,0,0,3,");
}

TEST(Formats, JsonOfHostileTextAndNonFiniteFiguresParsesBack) {
  Report r;
  r.targets = {"host\"\xFF:4000"};
  r.server.error = "scrape: \x01 cut\xE2\x82";
  r.server.occupancy_by_zone["zone\\\xC0"] = 2;
  r.errors_by_kind["kind\xED\xA0\x80"] = 1;
  r.ramp_per_second = std::numeric_limits<double>::infinity();
  r.server_process.cpu_cores = std::nan("");
  const std::string json = ReportToJson(r);
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(json, ec);
  ASSERT_FALSE(ec) << json;
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(v.at("targets").at(0).as_string(), "host\"" + fffd + ":4000");
  EXPECT_EQ(v.at("server").at("error").as_string(), "scrape: \x01 cut" + fffd);
  EXPECT_EQ(v.at("server").at("occupancy_by_zone").at("zone\\" + fffd).as_double(), 2);
  EXPECT_EQ(v.at("errors_by_kind").at("kind" + fffd + fffd + fffd).as_int64(), 1);
  EXPECT_TRUE(v.at("ramp_per_second").is_null());
  EXPECT_TRUE(v.at("server_process").at("cpu_cores").is_null());
}

}  // namespace
}  // namespace telos::sim
