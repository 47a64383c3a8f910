#include "telos/bus/delivery_metrics.h"

#include <algorithm>
#include <utility>

#include "telos/base/limits.h"

namespace telos::bus {

const std::vector<double>& DeliveryMetrics::BucketsMs() {
  static const std::vector<double> kBuckets = {
      1,     5,      10,     25,     50,      100,     250,       500,        1'000,     2'500,
      5'000, 10'000, 30'000, 60'000, 300'000, 900'000, 3'600'000, 21'600'000, 86'400'000};
  return kBuckets;
}

DeliveryMetrics::DeliveryMetrics(std::string stream, int64_t started_unix_ms, Metrics& metrics)
    : stream_(std::move(stream)),
      started_unix_ms_(started_unix_ms),
      metrics_(metrics),
      lag_(metrics.Histogram("bus_deliver_lag_ms",
                             "Durable event publish-to-deliver latency, live events only",
                             BucketsMs())),
      poisoned_(metrics.Counter("commbus_durable_poisoned_total",
                                "Durable messages dropped as undeliverable (malformed or "
                                "unroutable)",
                                {{"stream", stream_}})) {}

void DeliveryMetrics::Record(const DurableEvent& event, Disposition answer, int64_t now_unix_ms) {
  if (answer == Disposition::kReject) poisoned_.Increment();
  // Only the first time this consumer sees the event: a retry is not another delivery.
  uint64_t seen = last_seen_sequence_.load();
  while (event.stream_sequence > seen &&
         !last_seen_sequence_.compare_exchange_weak(seen, event.stream_sequence)) {
  }
  if (event.stream_sequence <= seen) return;
  const double age_ms =
      static_cast<double>(std::max<int64_t>(0, now_unix_ms - event.published_unix_ms));
  if (event.published_unix_ms < started_unix_ms_) {
    const MetricLabels labels{{"subject", SubjectLabel(event.subject)}};
    metrics_
        .Counter("bus_catchup_events_total",
                 "Durable backlog events drained by a resuming consumer", labels)
        .Increment();
    metrics_
        .Histogram("bus_catchup_age_ms", "Age of each durable backlog event at delivery",
                   BucketsMs(), labels)
        .Observe(age_ms);
    return;
  }
  lag_.Observe(age_ms);
}

std::string DeliveryMetrics::SubjectLabel(const std::string& subject) {
  std::lock_guard lock(labels_mu_);
  if (labelled_subjects_.count(subject) > 0) return subject;
  if (labelled_subjects_.size() >= limits::kDurableCatchupSubjectLabelsMax) return "other";
  labelled_subjects_.insert(subject);
  return subject;
}

}  // namespace telos::bus
