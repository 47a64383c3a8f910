// Report math and formats of the bot swarm: latency percentiles, the server's Prometheus
// histograms, /proc/<pid>/stat, and the JSON report and CSV series written at the end of a run.
//
// Everything here is a pure function of its inputs (no sockets, no clock), so the numbers a
// run prints are tested in report_test.cc from known lists.
//
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telos::sim {

// --- Latency percentiles

struct LatencySummary {
  uint64_t count = 0;
  // Milliseconds. All 0 when count == 0.
  double p50_ms = 0;
  double p95_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
};

// The nearest-rank percentile: the smallest sample such that at least q% of the samples are
// less than or equal to it (index ceil(q/100 * n) - 1, clamped to the list). Always one of the
// samples, so p50 <= p95 <= p99 <= max holds by construction.
// REQUIRES: `sorted` ascending and non-empty; 0 <= q <= 100.
int64_t NearestRankPercentile(const std::vector<int64_t>& sorted, double q);

// Summary of latencies given in microseconds (any order).
LatencySummary Summarize(std::vector<int64_t> samples_us);

// --- Prometheus text exposition (the server's /metrics)

struct HistogramBucket {
  double upper_bound = 0;  // "le"; +infinity for the last bucket
  double cumulative_count = 0;
};

// The buckets of histogram `name` (without the "_bucket" suffix), summed over every label set
// (all zones), ascending by bound. Empty when the histogram is absent.
std::vector<HistogramBucket> ParseHistogram(std::string_view text, std::string_view name);
// The sum of every sample of gauge or counter `name` over its label sets; nullopt if absent.
std::optional<double> ParseSampleSum(std::string_view text, std::string_view name);
// The values of every sample named `name`, summed per value of its `label` ("" when absent).
std::map<std::string, double> ParseSamplesByLabel(std::string_view text, std::string_view name,
                                                  std::string_view label);
// after - before, bucket by bucket (both from ParseHistogram of the same histogram), so a
// quantile covers only the window between two scrapes. A bucket missing from `before` is 0.
std::vector<HistogramBucket> SubtractHistogram(const std::vector<HistogramBucket>& after,
                                               const std::vector<HistogramBucket>& before);
// Prometheus' histogram_quantile: linear interpolation inside the bucket holding rank q*total,
// with 0 as the lower edge of the first bucket. When that bucket is +Inf, the largest finite
// bound is returned (the estimate is then a lower bound). nullopt when there are no
// observations. REQUIRES: 0 <= q <= 1.
std::optional<double> HistogramQuantile(double q, const std::vector<HistogramBucket>& buckets);
// The upper bound of the bucket holding rank q*total: a conservative "at most" figure.
std::optional<double> HistogramQuantileBound(double q, const std::vector<HistogramBucket>& buckets);

// --- /proc/<pid>/stat

struct ProcessSample {
  uint64_t cpu_ticks = 0;  // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
  uint64_t rss_pages = 0;
};
// Parses the one line of /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses; fields are counted after its last ')'.
std::optional<ProcessSample> ParseProcStat(std::string_view line);

// --- The report

struct ServerView {
  bool scraped = false;       // both scrapes of /metrics worked
  std::string error;          // why not, when !scraped
  uint64_t tick_samples = 0;  // zone ticks observed during the steady window
  std::optional<double> tick_lag_p50_ms;
  std::optional<double> tick_lag_p99_ms;            // interpolated estimate
  std::optional<double> tick_lag_p99_bound_ms;      // upper bound of its bucket
  std::optional<double> occupancy;                  // sum of telos_zone_occupancy at the end
  std::map<std::string, double> occupancy_by_zone;  // telos_zone_occupancy per zone, at the end
  std::optional<double> telnet_connections;
  std::optional<double> gate_players;
};

struct ServerProcess {
  bool sampled = false;
  int64_t pid = 0;
  double cpu_seconds = 0;  // server CPU time spent during the steady window
  double cpu_cores = 0;    // cpu_seconds / window length: 1.0 is one core busy
  double rss_bytes = 0;    // resident memory at the end of the window
};

struct Report {
  // What was asked.
  std::vector<std::string> targets;
  std::string transport;
  std::string dialect;  // "telos" or "tinymux"
  int64_t bots_requested = 0;
  double ramp_per_second = 0;
  double duration_s = 0;
  std::string mix;
  std::string started_at;  // ISO 8601, UTC
  // What happened.
  double ramp_seconds = 0;          // first connect to the last bot started
  double steady_seconds = 0;        // window measured after the ramp
  int64_t bots_connected = 0;       // bots whose connection opened
  int64_t bots_playing = 0;         // bots that reached the world
  int64_t bots_playing_at_end = 0;  // still in the world when the window closed
  int64_t commands_sent = 0;        // over the whole run, ramp and spreading included
  int64_t commands_in_window = 0;   // sent inside the steady window: the load measured
  int64_t replies = 0;
  int64_t idles = 0;  // turns the mix chose to do nothing
  std::map<std::string, int64_t> commands_by_behaviour;
  LatencySummary rtt;
  LatencySummary login;
  uint64_t rtt_samples_dropped = 0;  // beyond the sample bound (reservoir kept the rest)
  int64_t errors = 0;
  std::map<std::string, int64_t> errors_by_kind;
  int64_t unexpected_disconnects = 0;
  ServerView server;
  ServerProcess server_process;
};

// One row of the per-second series.
struct SeriesRow {
  double t_s = 0;  // seconds since the swarm started
  int64_t bots_connected = 0;
  int64_t bots_playing = 0;
  int64_t commands = 0;  // sent within this second
  int64_t replies = 0;   // within this second
  LatencySummary rtt;    // of the replies within this second
  int64_t errors_total = 0;
  int64_t unexpected_disconnects_total = 0;
};

// The report as one JSON object (pretty enough to diff: one key per line is not promised).
std::string ReportToJson(const Report& report);
std::string SeriesCsvHeader();
std::string SeriesCsvRow(const SeriesRow& row);

}  // namespace telos::sim
