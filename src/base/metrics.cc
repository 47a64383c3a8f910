#include "telos/base/metrics.h"

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace telos {
namespace {
std::string Prefixed(const std::string& name) {
  return "telos_" + name;
}
}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}
Metrics::~Metrics() = default;

prometheus::Counter& Metrics::Counter(const std::string& name, const std::string& help,
                                      const MetricLabels& labels) {
  return prometheus::BuildCounter()
      .Name(Prefixed(name))
      .Help(help)
      .Register(*registry_)
      .Add(labels);
}

prometheus::Gauge& Metrics::Gauge(const std::string& name, const std::string& help,
                                  const MetricLabels& labels) {
  prometheus::Gauge& gauge =
      prometheus::BuildGauge().Name(Prefixed(name)).Help(help).Register(*registry_).Add(labels);
  std::lock_guard lock(gauge_holders_mu_);
  ++gauge_holders_[&gauge];
  return gauge;
}

prometheus::Histogram& Metrics::Histogram(const std::string& name, const std::string& help,
                                          const std::vector<double>& bounds,
                                          const MetricLabels& labels) {
  return prometheus::BuildHistogram()
      .Name(Prefixed(name))
      .Help(help)
      .Register(*registry_)
      .Add(labels, prometheus::Histogram::BucketBoundaries(bounds));
}

void Metrics::RemoveGauge(const std::string& name, prometheus::Gauge& gauge) {
  {
    std::lock_guard lock(gauge_holders_mu_);
    auto holder = gauge_holders_.find(&gauge);
    if (holder != gauge_holders_.end() && --holder->second > 0) return;  // still written to
    if (holder != gauge_holders_.end()) gauge_holders_.erase(holder);
  }
  prometheus::BuildGauge().Name(Prefixed(name)).Register(*registry_).Remove(&gauge);
}

void Metrics::AddRefresh(std::function<void()> refresh) {
  std::lock_guard lock(refresh_mu_);
  refreshers_.push_back(std::move(refresh));
}

void Metrics::Refresh() const {
  std::lock_guard lock(refresh_mu_);
  for (const auto& refresh : refreshers_) refresh();
}

std::string Metrics::RenderText() const {
  Refresh();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

std::vector<prometheus::MetricFamily> Metrics::Collect() const {
  Refresh();
  return registry_->Collect();
}

std::vector<double> Metrics::LatencyBucketsMs() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};
}

}  // namespace telos
