// DeliveryMetrics: the durable consumers' delivery instruments, with spec 000's meanings, for
// any consumer of DurableStreams (durable.h) to record each delivery and its handler's answer:
//
//   bus_deliver_lag_ms                      histogram: publish -> deliver, LIVE events only
//   bus_catchup_events_total{subject}       counter: backlog events drained by a resuming
//                                           consumer (its depth: how much it missed)
//   bus_catchup_age_ms{subject}             histogram: each backlog event's age at delivery
//                                           (its max: how far behind the consumer is)
//   commbus_durable_poisoned_total{stream}  counter: events the handler rejected (malformed or
//                                           unroutable; dropped with a log line by the consumer)
//
// The backlog is what the stream held when this consumer (re)started: an event published
// before `started_unix_ms`. Folding those into the live lag would dwarf its distribution
// exactly during a recovery, so they go to the catch-up pair instead. Each event is counted
// the first time this consumer instance sees it (a retry or a redelivery is not a new
// delivery); delivery is in stream order, so the last counted stream sequence tells.
//
// Not here: commbus_durable_parked_total, which spec 000 counts once fleet-wide off the
// broker's MAX_DELIVERIES advisory, not per consumer.
//
// The subject label is bounded: the first limits::kDurableCatchupSubjectLabelsMax subjects get
// their own series, every later one shares "other" (a publisher picks the subject).
//
// Thread safety: Record() may be called from any thread (a consumer calls it from its own).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "telos/base/metrics.h"
#include "telos/bus/durable.h"

namespace telos::bus {

class DeliveryMetrics {
 public:
  // Bucket bounds of both histograms, in milliseconds: a live delivery in a few ms up to a
  // backlog a day old.
  static const std::vector<double>& BucketsMs();

  DeliveryMetrics(std::string stream, int64_t started_unix_ms, Metrics& metrics);

  // One delivery of `event` at `now_unix_ms` that the handler answered with `answer`.
  void Record(const DurableEvent& event, Disposition answer, int64_t now_unix_ms);

 private:
  const std::string stream_;
  const int64_t started_unix_ms_;
  Metrics& metrics_;
  prometheus::Histogram& lag_;
  prometheus::Counter& poisoned_;
  std::atomic<uint64_t> last_seen_sequence_{0};
  std::mutex labels_mu_;
  std::set<std::string> labelled_subjects_;  // guarded by labels_mu_

  // The label `subject` is counted under: itself, or "other" once the bound is reached.
  std::string SubjectLabel(const std::string& subject);
};

}  // namespace telos::bus
