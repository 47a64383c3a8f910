#include "telos/sim/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include <boost/json.hpp>

#include "telos/base/assert.h"
#include "telos/base/utf8.h"

namespace telos::sim {
namespace {

namespace json = boost::json;

double ParseDouble(std::string_view s, bool* ok) {
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  *ok = *ok && ec == std::errc() && end == s.data() + s.size();
  return value;
}

// One sample line: name, the raw label text between braces, and the value.
struct Sample {
  std::string_view name;
  std::string_view labels;
  std::string_view value;
};

std::optional<Sample> SplitSample(std::string_view line) {
  if (line.empty() || line.front() == '#') return std::nullopt;
  Sample sample;
  size_t pos = line.find_first_of("{ ");
  if (pos == std::string_view::npos) return std::nullopt;
  sample.name = line.substr(0, pos);
  if (line[pos] == '{') {
    const size_t close = line.find('}', pos);
    if (close == std::string_view::npos) return std::nullopt;
    sample.labels = line.substr(pos + 1, close - pos - 1);
    pos = close + 1;
  }
  std::string_view rest = line.substr(pos);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  sample.value = rest.substr(0, rest.find(' '));  // drop an optional timestamp
  return sample;
}

std::string_view LabelValue(std::string_view labels, std::string_view key) {
  const std::string needle = std::string(key) + "=\"";
  size_t pos = 0;
  while ((pos = labels.find(needle, pos)) != std::string_view::npos) {
    if (pos == 0 || labels[pos - 1] == ',') {
      const size_t start = pos + needle.size();
      const size_t end = labels.find('"', start);
      if (end == std::string_view::npos) return {};
      return labels.substr(start, end - start);
    }
    pos += needle.size();
  }
  return {};
}

template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Index of the bucket holding rank q*total, or nullopt with no observations.
std::optional<size_t> RankBucket(double q, const std::vector<HistogramBucket>& buckets) {
  if (buckets.empty() || buckets.back().cumulative_count <= 0) return std::nullopt;
  const double rank = q * buckets.back().cumulative_count;
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].cumulative_count >= rank && buckets[i].cumulative_count > 0) return i;
  }
  return buckets.size() - 1;
}

double LargestFinite(const std::vector<HistogramBucket>& buckets, size_t below) {
  for (size_t i = below; i-- > 0;) {
    if (std::isfinite(buckets[i].upper_bound)) return buckets[i].upper_bound;
  }
  return 0;
}

// Boost.JSON writes a non-finite double as a bare Infinity or NaN, which no JSON reader takes:
// such a figure (a rate over an empty window) is null.
json::value Real(double v) {
  return std::isfinite(v) ? json::value(v) : json::value(nullptr);
}

json::value Optional(const std::optional<double>& v) {
  return v ? Real(*v) : json::value(nullptr);
}

// Targets, zone names and scrape errors come from the command line and the server: repaired to
// valid UTF-8, since the serializer copies bytes as they are.
json::string Text(std::string_view text) {
  return json::string(SanitizeUtf8(text));
}

json::object LatencyJson(const LatencySummary& s) {
  return json::object{{"count", s.count},         {"p50_ms", Real(s.p50_ms)},
                      {"p95_ms", Real(s.p95_ms)}, {"p99_ms", Real(s.p99_ms)},
                      {"max_ms", Real(s.max_ms)}, {"mean_ms", Real(s.mean_ms)}};
}

json::object CountsJson(const std::map<std::string, int64_t>& counts) {
  json::object out;
  for (const auto& [k, v] : counts) out[SanitizeUtf8(k)] = v;
  return out;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int64_t NearestRankPercentile(const std::vector<int64_t>& sorted, double q) {
  RELEASE_ASSERT(!sorted.empty(), "percentile of an empty list");
  RELEASE_ASSERT(q >= 0 && q <= 100, "percentile out of range");
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<int64_t>(std::ceil(q / 100.0 * n));
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(sorted.size()));
  return sorted[static_cast<size_t>(rank - 1)];
}

LatencySummary Summarize(std::vector<int64_t> samples_us) {
  LatencySummary s;
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  s.count = samples_us.size();
  auto ms = [](int64_t us) { return static_cast<double>(us) / 1000.0; };
  s.p50_ms = ms(NearestRankPercentile(samples_us, 50));
  s.p95_ms = ms(NearestRankPercentile(samples_us, 95));
  s.p99_ms = ms(NearestRankPercentile(samples_us, 99));
  s.max_ms = ms(samples_us.back());
  long double sum = 0;
  for (int64_t v : samples_us) sum += v;
  s.mean_ms = static_cast<double>(sum / samples_us.size()) / 1000.0;
  return s;
}

std::vector<HistogramBucket> ParseHistogram(std::string_view text, std::string_view name) {
  const std::string bucket_name = std::string(name) + "_bucket";
  std::map<double, double> by_bound;
  ForEachLine(text, [&](std::string_view line) {
    const auto sample = SplitSample(line);
    if (!sample || sample->name != bucket_name) return;
    const std::string_view le = LabelValue(sample->labels, "le");
    bool ok = !le.empty();
    const double bound = ParseDouble(le, &ok);
    const double count = ParseDouble(sample->value, &ok);
    if (ok) by_bound[bound] += count;
  });
  std::vector<HistogramBucket> out;
  for (const auto& [bound, count] : by_bound) out.push_back({bound, count});
  return out;
}

std::optional<double> ParseSampleSum(std::string_view text, std::string_view name) {
  const auto by_label = ParseSamplesByLabel(text, name, "");
  if (by_label.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& [label, value] : by_label) sum += value;
  return sum;
}

std::map<std::string, double> ParseSamplesByLabel(std::string_view text, std::string_view name,
                                                  std::string_view label) {
  std::map<std::string, double> by_label;
  ForEachLine(text, [&](std::string_view line) {
    const auto sample = SplitSample(line);
    if (!sample || sample->name != name) return;
    bool ok = true;
    const double v = ParseDouble(sample->value, &ok);
    if (ok) by_label[std::string(LabelValue(sample->labels, label))] += v;
  });
  return by_label;
}

std::vector<HistogramBucket> SubtractHistogram(const std::vector<HistogramBucket>& after,
                                               const std::vector<HistogramBucket>& before) {
  std::vector<HistogramBucket> out;
  for (const auto& b : after) {
    double earlier = 0;
    for (const auto& e : before) {
      if (e.upper_bound == b.upper_bound) earlier = e.cumulative_count;
    }
    out.push_back({b.upper_bound, std::max(0.0, b.cumulative_count - earlier)});
  }
  return out;
}

std::optional<double> HistogramQuantile(double q, const std::vector<HistogramBucket>& buckets) {
  RELEASE_ASSERT(q >= 0 && q <= 1, "quantile out of range");
  const auto index = RankBucket(q, buckets);
  if (!index) return std::nullopt;
  const HistogramBucket& b = buckets[*index];
  if (!std::isfinite(b.upper_bound)) return LargestFinite(buckets, *index);
  const double lower = *index == 0 ? 0.0 : buckets[*index - 1].upper_bound;
  const double below = *index == 0 ? 0.0 : buckets[*index - 1].cumulative_count;
  const double in_bucket = b.cumulative_count - below;
  const double rank = q * buckets.back().cumulative_count;
  if (in_bucket <= 0) return b.upper_bound;
  return lower + (b.upper_bound - lower) * std::clamp((rank - below) / in_bucket, 0.0, 1.0);
}

std::optional<double> HistogramQuantileBound(double q,
                                             const std::vector<HistogramBucket>& buckets) {
  RELEASE_ASSERT(q >= 0 && q <= 1, "quantile out of range");
  const auto index = RankBucket(q, buckets);
  if (!index) return std::nullopt;
  return buckets[*index].upper_bound;
}

std::optional<ProcessSample> ParseProcStat(std::string_view line) {
  const size_t paren = line.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(paren + 1);
  // Fields after the name start at field 3 (state); utime is 14, stime 15, rss 24.
  std::vector<std::string_view> fields;
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    const size_t sp = rest.find(' ');
    fields.push_back(rest.substr(0, sp));
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp);
  }
  auto field = [&](size_t number, uint64_t* out) {
    const size_t i = number - 3;
    if (i >= fields.size()) return false;
    const auto [end, ec] =
        std::from_chars(fields[i].data(), fields[i].data() + fields[i].size(), *out);
    return ec == std::errc() && end == fields[i].data() + fields[i].size();
  };
  uint64_t utime = 0, stime = 0, rss = 0;
  if (!field(14, &utime) || !field(15, &stime) || !field(24, &rss)) return std::nullopt;
  return ProcessSample{utime + stime, rss};
}

std::string ReportToJson(const Report& r) {
  json::array targets;
  for (const auto& t : r.targets) targets.emplace_back(Text(t));
  json::object by_zone;
  for (const auto& [zone, players] : r.server.occupancy_by_zone) {
    by_zone[SanitizeUtf8(zone)] = Real(players);
  }
  json::object server{{"scraped", r.server.scraped},
                      {"error", Text(r.server.error)},
                      {"window", "steady"},
                      {"tick_samples", r.server.tick_samples},
                      {"tick_lag_p50_ms", Optional(r.server.tick_lag_p50_ms)},
                      {"tick_lag_p99_ms", Optional(r.server.tick_lag_p99_ms)},
                      {"tick_lag_p99_bound_ms", Optional(r.server.tick_lag_p99_bound_ms)},
                      {"occupancy", Optional(r.server.occupancy)},
                      {"occupancy_by_zone", std::move(by_zone)},
                      {"gate_players", Optional(r.server.gate_players)},
                      {"telnet_connections", Optional(r.server.telnet_connections)}};
  json::object process{{"sampled", r.server_process.sampled},
                       {"pid", r.server_process.pid},
                       {"cpu_seconds", Real(r.server_process.cpu_seconds)},
                       {"cpu_cores", Real(r.server_process.cpu_cores)},
                       {"rss_bytes", r.server_process.rss_bytes}};
  json::object out{{"targets", std::move(targets)},
                   {"transport", Text(r.transport)},
                   {"dialect", Text(r.dialect)},
                   {"bots_requested", r.bots_requested},
                   {"ramp_per_second", Real(r.ramp_per_second)},
                   {"duration_s", Real(r.duration_s)},
                   {"mix", Text(r.mix)},
                   {"started_at", Text(r.started_at)},
                   {"ramp_seconds", Real(r.ramp_seconds)},
                   {"steady_seconds", Real(r.steady_seconds)},
                   {"bots_connected", r.bots_connected},
                   {"bots_playing", r.bots_playing},
                   {"bots_playing_at_end", r.bots_playing_at_end},
                   {"commands_sent", r.commands_sent},
                   {"commands_in_window", r.commands_in_window},
                   {"replies", r.replies},
                   {"idles", r.idles},
                   {"commands_by_behaviour", CountsJson(r.commands_by_behaviour)},
                   {"rtt", LatencyJson(r.rtt)},
                   {"rtt_samples_dropped", r.rtt_samples_dropped},
                   {"login", LatencyJson(r.login)},
                   {"errors", r.errors},
                   {"errors_by_kind", CountsJson(r.errors_by_kind)},
                   {"unexpected_disconnects", r.unexpected_disconnects},
                   {"server", std::move(server)},
                   {"server_process", std::move(process)}};
  return json::serialize(out) + "\n";
}

std::string SeriesCsvHeader() {
  return "t_s,bots_connected,bots_playing,commands,replies,rtt_p50_ms,rtt_p99_ms,rtt_max_ms,"
         "errors_total,unexpected_disconnects_total\n";
}

std::string SeriesCsvRow(const SeriesRow& row) {
  return Fixed(row.t_s, 1) + "," + std::to_string(row.bots_connected) + "," +
         std::to_string(row.bots_playing) + "," + std::to_string(row.commands) + "," +
         std::to_string(row.replies) + "," + Fixed(row.rtt.p50_ms, 3) + "," +
         Fixed(row.rtt.p99_ms, 3) + "," + Fixed(row.rtt.max_ms, 3) + "," +
         std::to_string(row.errors_total) + "," + std::to_string(row.unexpected_disconnects_total) +
         "\n";
}

}  // namespace telos::sim
