// Metrics: one registry per process, rendered as Prometheus text at /metrics.
//
// A thin layer over prometheus-cpp: it owns the registry, prefixes every name with "telos_",
// and hands out counters, gauges and histograms that are safe to update from any thread
// (prometheus-cpp uses atomics). Components take a Metrics& in their constructor and keep the
// references it returns; the metrics live as long as the registry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>

namespace prometheus {
class Registry;
}

namespace telos {

using MetricLabels = std::map<std::string, std::string>;

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Registering the same name and labels twice returns the same metric.
  prometheus::Counter& Counter(const std::string& name, const std::string& help,
                               const MetricLabels& labels = {});
  prometheus::Gauge& Gauge(const std::string& name, const std::string& help,
                           const MetricLabels& labels = {});
  // `bounds` are the upper bounds of the buckets, ascending.
  prometheus::Histogram& Histogram(const std::string& name, const std::string& help,
                                   const std::vector<double>& bounds,
                                   const MetricLabels& labels = {});
  // Drops one labelled series (a torn-down zone's gauge, say) once every Gauge() call that
  // returned it has been matched by a RemoveGauge: a zone started again under the same id
  // shares the series with its old self, which may be destroyed after the new one started.
  void RemoveGauge(const std::string& name, prometheus::Gauge& gauge);

  // Runs `refresh` on the reading thread before every RenderText and Collect, so a gauge that
  // mirrors something outside the registry (the process's memory, say) is read when it is
  // current. `refresh` must be cheap and must not call back into RenderText or Collect.
  void AddRefresh(std::function<void()> refresh);

  // Everything registered, in Prometheus text exposition format 0.0.4.
  std::string RenderText() const;
  // Everything registered, as values read now: the OTLP bridge (src/telemetry) exports these.
  std::vector<prometheus::MetricFamily> Collect() const;

  // Bucket bounds for latencies in milliseconds, 0.1 ms .. 10 s.
  static std::vector<double> LatencyBucketsMs();

 private:
  void Refresh() const;

  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::mutex refresh_mu_;  // one refresh at a time: scrape and export may overlap
  std::vector<std::function<void()>> refreshers_;
  std::mutex gauge_holders_mu_;
  std::map<const prometheus::Gauge*, int> gauge_holders_;  // Gauge() calls not yet removed
};

}  // namespace telos
