#include "telos/telemetry/telemetry.h"

#include <unistd.h>

#include <atomic>
#include <boost/url/parse.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "opentelemetry/exporters/otlp/otlp_http_metric_exporter_factory.h"
#include "opentelemetry/exporters/otlp/otlp_http_metric_exporter_options.h"
#include "opentelemetry/sdk/common/global_log_handler.h"
#include "opentelemetry/sdk/instrumentationscope/instrumentation_scope.h"
#include "opentelemetry/sdk/metrics/export/metric_producer.h"
#include "opentelemetry/sdk/metrics/export/periodic_exporting_metric_reader_factory.h"
#include "opentelemetry/sdk/metrics/export/periodic_exporting_metric_reader_options.h"
#include "opentelemetry/sdk/metrics/metric_reader.h"
#include "opentelemetry/sdk/resource/resource.h"
#include "telos/base/limits.h"

// Assigns a Result's value to `target`, or returns its status from the enclosing function.
#define TELOS_TELEMETRY_ASSIGN(target, expr)    \
  do {                                          \
    auto result_ = (expr);                      \
    if (!result_.ok()) return result_.status(); \
    target = std::move(*result_);               \
  } while (false)

namespace telos::telemetry {
namespace {

namespace otlp = opentelemetry::exporter::otlp;
namespace msdk = opentelemetry::sdk::metrics;
namespace internal_log = opentelemetry::sdk::common::internal_log;
using opentelemetry::common::SystemTimestamp;

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "%2C" and the like, as the OTel spec's W3C-baggage-style lists encode their values.
std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = HexDigit(s[i + 1]);
    const int lo = HexDigit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// key=value,key=value (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS). `secret` keeps
// the text out of the error.
Result<std::vector<std::pair<std::string, std::string>>> ParseKeyValueList(
    std::string_view variable, std::string_view text, bool secret) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string name(variable);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string entry = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) continue;  // "a=1,,b=2" and a trailing comma are harmless
    const size_t eq = entry.find('=');
    const std::string key = eq == std::string::npos ? "" : Trim(entry.substr(0, eq));
    if (key.empty()) {
      return Status::InvalidArgument(name + ": every entry must be key=value" +
                                     (secret
                                          ? std::string(" (value not shown: it may hold a secret)")
                                          : ", not '" + entry + "'"));
    }
    auto value = PercentDecode(Trim(entry.substr(eq + 1)));
    if (!value) {
      return Status::InvalidArgument(name + ": bad percent-encoding in the value of '" + key + "'");
    }
    if (out.size() == limits::kOtlpListEntriesMax) {
      return Status::InvalidArgument(name + ": more than " +
                                     std::to_string(limits::kOtlpListEntriesMax) + " entries");
    }
    out.emplace_back(key, std::move(*value));
  }
  return out;
}

// An http(s) URL with a host, or InvalidArgument naming the variable.
Status CheckEndpoint(std::string_view variable, const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  const std::string name(variable);
  if (!parsed) return Status::InvalidArgument(name + ": '" + url + "' is not a URL");
  if (parsed->scheme() != "http" && parsed->scheme() != "https") {
    return Status::InvalidArgument(name + ": '" + url +
                                   "' must be http:// or https:// (OTLP/gRPC is not supported)");
  }
  if (parsed->encoded_host().empty()) {
    return Status::InvalidArgument(name + ": '" + url + "' has no host");
  }
  return Status::Ok();
}

// The signal-specific variable when set, else the general one.
std::optional<Config::Value> Either(const Config& config, std::string_view specific,
                                    std::string_view general, std::string* which) {
  if (auto v = config.Lookup(specific); v && !v->text.empty()) {
    *which = std::string(specific);
    return v;
  }
  if (auto v = config.Lookup(general); v && !v->text.empty()) {
    *which = std::string(general);
    return v;
  }
  return std::nullopt;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

void SetResource(std::vector<std::pair<std::string, std::string>>& resource, const std::string& key,
                 const std::string& value) {
  for (auto& [k, v] : resource) {
    if (k == key) {
      v = value;
      return;
    }
  }
  resource.emplace_back(key, value);
}

std::string UnitOf(std::string_view name) {
  if (name.ends_with("_ms")) return "ms";
  if (name.ends_with("_bytes")) return "By";
  if (name.ends_with("_seconds")) return "s";
  return "";
}

// Reads the registry at each collection and hands it to the reader as cumulative OTLP data.
class RegistryProducer final : public msdk::MetricProducer {
 public:
  RegistryProducer(const Metrics& metrics, const TelemetrySettings& settings)
      : metrics_(metrics),
        resource_(opentelemetry::sdk::resource::Resource::Create(Attributes(settings.resource))),
        scope_(opentelemetry::sdk::instrumentationscope::InstrumentationScope::Create("telos")),
        start_(std::chrono::system_clock::now()) {}

  Result Produce() noexcept override {
    msdk::ScopeMetrics scope;
    scope.scope_ = scope_.get();
    const SystemTimestamp now(std::chrono::system_clock::now());
    for (const prometheus::MetricFamily& family : metrics_.Collect()) {
      if (family.metric.empty()) continue;
      msdk::MetricData data;
      data.instrument_descriptor.name_ = OtlpMetricName(family.name);
      data.instrument_descriptor.description_ = family.help;
      data.instrument_descriptor.unit_ = UnitOf(family.name);
      data.instrument_descriptor.value_type_ = msdk::InstrumentValueType::kDouble;
      data.aggregation_temporality = msdk::AggregationTemporality::kCumulative;
      data.start_ts = start_;
      data.end_ts = now;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          data.instrument_descriptor.type_ = msdk::InstrumentType::kCounter;
          break;
        case prometheus::MetricType::Gauge:
          data.instrument_descriptor.type_ = msdk::InstrumentType::kObservableGauge;
          break;
        case prometheus::MetricType::Histogram:
          data.instrument_descriptor.type_ = msdk::InstrumentType::kHistogram;
          break;
        default: continue;  // the registry makes no summaries or untyped metrics
      }
      for (const prometheus::ClientMetric& series : family.metric) {
        msdk::PointDataAttributes point;
        for (const auto& label : series.label)
          point.attributes.SetAttribute(label.name, label.value);
        point.point_data = Point(family.type, series, now);
        data.point_data_attr_.push_back(std::move(point));
      }
      scope.metric_data_.push_back(std::move(data));
    }
    Result result;
    result.points_.resource_ = &resource_;
    result.points_.scope_metric_data_.push_back(std::move(scope));
    result.status_ = Status::kSuccess;
    return result;
  }

 private:
  static opentelemetry::sdk::resource::ResourceAttributes Attributes(
      const std::vector<std::pair<std::string, std::string>>& resource) {
    opentelemetry::sdk::resource::ResourceAttributes attributes;
    for (const auto& [key, value] : resource) attributes.SetAttribute(key, value);
    return attributes;
  }

  static msdk::PointType Point(prometheus::MetricType type, const prometheus::ClientMetric& series,
                               SystemTimestamp now) {
    if (type == prometheus::MetricType::Counter) {
      msdk::SumPointData sum;
      sum.value_ = series.counter.value;
      sum.is_monotonic_ = true;
      return sum;
    }
    if (type == prometheus::MetricType::Gauge) {
      msdk::LastValuePointData gauge;
      gauge.value_ = series.gauge.value;
      gauge.is_lastvalue_valid_ = true;
      gauge.sample_ts_ = now;
      return gauge;
    }
    // Prometheus buckets are cumulative and end with +Inf; OTLP's count each bucket alone and
    // list only the finite bounds.
    msdk::HistogramPointData histogram;
    uint64_t below = 0;
    for (const prometheus::ClientMetric::Bucket& bucket : series.histogram.bucket) {
      if (!std::isinf(bucket.upper_bound)) histogram.boundaries_.push_back(bucket.upper_bound);
      histogram.counts_.push_back(bucket.cumulative_count - below);
      below = bucket.cumulative_count;
    }
    histogram.sum_ = series.histogram.sample_sum;
    histogram.count_ = series.histogram.sample_count;
    histogram.record_min_max_ = false;  // the registry keeps no min or max
    return histogram;
  }

  const Metrics& metrics_;
  opentelemetry::sdk::resource::Resource resource_;
  opentelemetry::nostd::unique_ptr<opentelemetry::sdk::instrumentationscope::InstrumentationScope>
      scope_;
  SystemTimestamp start_;
};

// The SDK's own complaints (a collector that refuses or is down) as our JSON log lines, at most
// one a minute so an absent collector does not flood the log.
class SdkLogHandler final : public internal_log::LogHandler {
 public:
  explicit SdkLogHandler(Logger& log) : log_(log) {}
  void Handle(internal_log::LogLevel level, const char* /*file*/, int /*line*/, const char* msg,
              const opentelemetry::sdk::common::AttributeMap& /*attributes*/) noexcept override {
    if (level > internal_log::LogLevel::Warning) return;
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t last = last_s_.load();
    if (last != 0 && now - last < 60) {
      suppressed_.fetch_add(1);
      return;
    }
    if (!last_s_.compare_exchange_strong(last, now)) return;
    log_.Warn("otlp export", {{"error", std::string(msg ? msg : "")},
                              {"suppressed", static_cast<int64_t>(suppressed_.exchange(0))}});
  }

 private:
  Logger& log_;
  std::atomic<int64_t> last_s_{0};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace

std::string OtlpMetricName(std::string_view prometheus_name) {
  std::string_view rest = prometheus_name;
  if (!rest.starts_with("telos_")) return std::string(prometheus_name);
  rest.remove_prefix(6);
  const size_t cut = rest.find('_');
  if (cut == std::string_view::npos || rest.substr(cut + 1) == "total") {
    return "telos." + std::string(rest);
  }
  return "telos." + std::string(rest.substr(0, cut)) + "." + std::string(rest.substr(cut + 1));
}

Result<TelemetrySettings> ReadTelemetrySettings(const Config& config, std::string_view role,
                                                std::string_view version) {
  TelemetrySettings s;
  bool disabled = false;
  TELOS_TELEMETRY_ASSIGN(disabled, config.Bool("OTEL_SDK_DISABLED", false));
  std::string exporter;
  TELOS_TELEMETRY_ASSIGN(exporter,
                         config.Choice("OTEL_METRICS_EXPORTER", "otlp", {"otlp", "none"}));

  std::string endpoint_variable;
  auto endpoint = Either(config, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                         "OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint_variable);
  if (endpoint) {
    s.metrics_endpoint = Trim(endpoint->text);
    TELOS_RETURN_IF_ERROR(CheckEndpoint(endpoint_variable, s.metrics_endpoint));
    // The general variable is a base URL the signal's path is added to; the specific one is
    // used as it is (the OTel spec's rule).
    if (endpoint_variable == "OTEL_EXPORTER_OTLP_ENDPOINT") {
      if (s.metrics_endpoint.ends_with('/')) s.metrics_endpoint.pop_back();
      s.metrics_endpoint += "/v1/metrics";
    }
  }

  std::string which;
  if (auto protocol = Either(config, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
                             "OTEL_EXPORTER_OTLP_PROTOCOL", &which)) {
    const std::string p = Trim(protocol->text);
    if (p == "http/protobuf") {
      s.protocol = OtlpProtocol::kHttpProtobuf;
    } else if (p == "http/json") {
      s.protocol = OtlpProtocol::kHttpJson;
    } else {
      return Status::InvalidArgument(which + ": '" + p + "' (from " + protocol->origin +
                                     ") is not supported: http/protobuf or http/json");
    }
  }
  if (auto headers = Either(config, "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
                            "OTEL_EXPORTER_OTLP_HEADERS", &which)) {
    TELOS_TELEMETRY_ASSIGN(s.headers, ParseKeyValueList(which, headers->text, /*secret=*/true));
  }
  int64_t request_timeout_ms = limits::kOtlpRequestTimeoutMsDefault;
  if (auto timeout = Either(config, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
                            "OTEL_EXPORTER_OTLP_TIMEOUT", &which)) {
    TELOS_TELEMETRY_ASSIGN(request_timeout_ms, config.Int(which, request_timeout_ms, 1,
                                                          limits::kOtlpRequestTimeoutMsMax));
  }
  s.request_timeout = std::chrono::milliseconds(request_timeout_ms);
  int64_t interval_ms = 0;
  TELOS_TELEMETRY_ASSIGN(
      interval_ms, config.Int("OTEL_METRIC_EXPORT_INTERVAL", limits::kOtlpExportIntervalMsDefault,
                              limits::kOtlpExportIntervalMsMin, limits::kOtlpExportIntervalMsMax));
  int64_t export_timeout_ms = 0;
  TELOS_TELEMETRY_ASSIGN(export_timeout_ms, config.Int("OTEL_METRIC_EXPORT_TIMEOUT",
                                                       limits::kOtlpExportTimeoutMsDefault, 1,
                                                       limits::kOtlpExportIntervalMsMax));
  s.export_interval = std::chrono::milliseconds(interval_ms);
  // An export may not outlast its interval (the SDK's rule too): a short interval with the
  // default timeout takes the interval as its timeout.
  s.export_timeout = std::chrono::milliseconds(std::min(export_timeout_ms, interval_ms));

  // The resource: our defaults, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME (the
  // OTel spec's precedence).
  s.resource = {{"service.name", "telos-" + std::string(role)},
                {"service.namespace", "telos"},
                {"service.version", std::string(version)},
                {"service.instance.id", HostName() + "-" + std::to_string(getpid())},
                {"host.name", HostName()},
                {"process.pid", std::to_string(getpid())},
                {"telos.role", std::string(role)}};
  if (auto attributes = config.Lookup("OTEL_RESOURCE_ATTRIBUTES")) {
    std::vector<std::pair<std::string, std::string>> parsed;
    TELOS_TELEMETRY_ASSIGN(
        parsed, ParseKeyValueList("OTEL_RESOURCE_ATTRIBUTES", attributes->text, /*secret=*/false));
    for (const auto& [key, value] : parsed) SetResource(s.resource, key, value);
  }
  std::string service_name;
  TELOS_TELEMETRY_ASSIGN(service_name, config.String("OTEL_SERVICE_NAME", ""));
  service_name = Trim(service_name);
  if (!service_name.empty()) SetResource(s.resource, "service.name", service_name);

  s.metrics_enabled = endpoint.has_value() && !disabled && exporter == "otlp";
  return s;
}

// The reader with the registry as its producer has no MeterProvider to start its own thread
// (the SDK starts it only for a provider's readers), so the interval is kept here: each tick
// is a ForceFlush, which collects from the registry and exports at once.
struct Telemetry::Impl {
  std::unique_ptr<RegistryProducer> producer;
  std::unique_ptr<msdk::MetricReader> reader;
  std::chrono::milliseconds interval{0};
  std::chrono::milliseconds timeout{0};
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread thread;

  void Run() {
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, interval, [this] { return stopping; })) {
      lock.unlock();
      reader->ForceFlush(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
      lock.lock();
    }
  }
};

Telemetry::Telemetry(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Telemetry::~Telemetry() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  // One last export of what the process counted.
  impl_->reader->ForceFlush(std::chrono::duration_cast<std::chrono::microseconds>(impl_->timeout));
  impl_->reader->Shutdown();
  // The handler holds the role's Logger, which dies soon after this.
  internal_log::GlobalLogHandler::SetLogHandler(
      opentelemetry::nostd::shared_ptr<internal_log::LogHandler>());
}

std::unique_ptr<Telemetry> Telemetry::Start(const TelemetrySettings& settings,
                                            const Metrics& metrics, Logger& log) {
  if (!settings.metrics_enabled) return nullptr;
  internal_log::GlobalLogHandler::SetLogHandler(
      opentelemetry::nostd::shared_ptr<internal_log::LogHandler>(new SdkLogHandler(log)));
  internal_log::GlobalLogHandler::SetLogLevel(internal_log::LogLevel::Warning);

  otlp::OtlpHttpMetricExporterOptions exporter_options;  // TLS and compression from OTEL_*
  exporter_options.url = settings.metrics_endpoint;
  exporter_options.content_type = settings.protocol == OtlpProtocol::kHttpJson
                                      ? otlp::HttpRequestContentType::kJson
                                      : otlp::HttpRequestContentType::kBinary;
  exporter_options.timeout = settings.request_timeout;
  exporter_options.http_headers.clear();
  for (const auto& [key, value] : settings.headers) {
    exporter_options.http_headers.emplace(key, value);
  }
  exporter_options.aggregation_temporality = otlp::PreferredAggregationTemporality::kCumulative;

  msdk::PeriodicExportingMetricReaderOptions reader_options;
  reader_options.export_interval_millis = settings.export_interval;
  reader_options.export_timeout_millis = settings.export_timeout;

  auto impl = std::make_unique<Impl>();
  impl->producer = std::make_unique<RegistryProducer>(metrics, settings);
  impl->reader = msdk::PeriodicExportingMetricReaderFactory::Create(
      otlp::OtlpHttpMetricExporterFactory::Create(exporter_options), reader_options);
  // No MeterProvider: the registry is the only source.
  impl->reader->SetMetricProducer(impl->producer.get());
  impl->interval = settings.export_interval;
  impl->timeout = settings.export_timeout;
  impl->thread = std::thread([raw = impl.get()] { raw->Run(); });
  log.Info(
      "otlp metrics export on",
      {{"endpoint", settings.metrics_endpoint},
       {"protocol", settings.protocol == OtlpProtocol::kHttpJson ? "http/json" : "http/protobuf"},
       {"interval_ms", static_cast<int64_t>(settings.export_interval.count())},
       {"service_name", settings.resource.front().second}});
  return std::unique_ptr<Telemetry>(new Telemetry(std::move(impl)));
}

bool Telemetry::Flush(std::chrono::milliseconds timeout) {
  return impl_->reader->ForceFlush(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
}

}  // namespace telos::telemetry
