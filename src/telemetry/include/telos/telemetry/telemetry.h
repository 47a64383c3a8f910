// Telemetry: OpenTelemetry export of a process's metrics over OTLP, off unless configured.
//
// Contract:
// - Off (no thread, no socket, nothing recorded twice) unless OTEL_EXPORTER_OTLP_ENDPOINT or
//   OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, and OTEL_SDK_DISABLED is not true, and
//   OTEL_METRICS_EXPORTER is not "none". The Prometheus /metrics endpoint is unaffected.
// - When on, every metric of the process's Metrics registry (src/base) is exported every
//   OTEL_METRIC_EXPORT_INTERVAL ms as cumulative OTLP data under its OpenTelemetry name
//   (OtlpMetricName: telos_zone_tick_lag_ms is telos.zone.tick_lag_ms), with the same labels as
//   attributes: counters as monotonic sums, gauges as gauges, histograms with their buckets.
//   Prometheus's conventional translation of those names is what /metrics already shows.
// - Standard variables honoured: OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT, _PROTOCOL
//   (http/protobuf, the default, or http/json), _HEADERS, _TIMEOUT; OTEL_METRIC_EXPORT_INTERVAL,
//   OTEL_METRIC_EXPORT_TIMEOUT; OTEL_SERVICE_NAME (default "telos-<role>"),
//   OTEL_RESOURCE_ATTRIBUTES; OTEL_SDK_DISABLED; OTEL_METRICS_EXPORTER (otlp or none). The SDK
//   itself reads the TLS and compression ones. A bad value is InvalidArgument naming the
//   variable (headers are secrets: their value is never echoed).
// - A collector that is down costs a failed POST per interval and a rate-limited warn line;
//   it never blocks the game (the export runs on its own thread).
//
// Thread safety: Telemetry's methods are for the thread that owns it; the export thread only
// reads the registry, which is safe from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telos/base/config.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"

namespace telos::telemetry {

enum class OtlpProtocol { kHttpProtobuf, kHttpJson };

struct TelemetrySettings {
  bool metrics_enabled = false;
  // The full URL metrics are POSTed to (…/v1/metrics).
  std::string metrics_endpoint;
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds export_interval{60'000};
  std::chrono::milliseconds export_timeout{30'000};
  // The resource: service.name first, then the rest in the order they were set.
  std::vector<std::pair<std::string, std::string>> resource;
};

// Reads the OTEL_* variables for a process of `role` ("world", "gate", ...) at `version`.
Result<TelemetrySettings> ReadTelemetrySettings(const Config& config, std::string_view role,
                                                std::string_view version);

// The OpenTelemetry name of a registry metric: "telos_" becomes "telos.", and the first word
// after it is its component when more than a suffix follows ("telos_zone_tick_lag_ms" is
// "telos.zone.tick_lag_ms", "telos_logins_total" is "telos.logins_total").
std::string OtlpMetricName(std::string_view prometheus_name);

// The export: started by Start, stopped (after one last export) by the destructor.
class Telemetry {
 public:
  // Null when settings.metrics_enabled is false.
  static std::unique_ptr<Telemetry> Start(const TelemetrySettings& settings, const Metrics& metrics,
                                          Logger& log);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // Exports now and waits for it (at most `timeout`); true when the collector took it.
  bool Flush(std::chrono::milliseconds timeout);

  struct Impl;

 private:
  explicit Telemetry(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace telos::telemetry
