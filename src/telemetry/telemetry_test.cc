#include "telos/telemetry/telemetry.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <string>

#include "telos/base/config.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos_testing/otlp_sink.h"

namespace telos::telemetry {
namespace {

using namespace std::chrono_literals;

Result<TelemetrySettings> Read(Config::Environment env) {
  auto config = Config::FromEnvironment(std::move(env));
  EXPECT_TRUE(config.ok());
  return ReadTelemetrySettings(*config, "world", "1.2.3");
}

std::string ResourceValue(const TelemetrySettings& s, const std::string& key) {
  for (const auto& [k, v] : s.resource) {
    if (k == key) return v;
  }
  return "";
}

TEST(OtlpMetricNameTest, TheComponentBecomesANamespace) {
  EXPECT_EQ(OtlpMetricName("telos_zone_tick_lag_ms"), "telos.zone.tick_lag_ms");
  EXPECT_EQ(OtlpMetricName("telos_zone_occupancy"), "telos.zone.occupancy");
  EXPECT_EQ(OtlpMetricName("telos_gate_frames_dropped_total"), "telos.gate.frames_dropped_total");
  EXPECT_EQ(OtlpMetricName("telos_shard_drain_reclaimed_total"),
            "telos.shard.drain_reclaimed_total");
  EXPECT_EQ(OtlpMetricName("telos_logins_total"), "telos.logins_total");
  EXPECT_EQ(OtlpMetricName("telos_uptime"), "telos.uptime");
  EXPECT_EQ(OtlpMetricName("process_cpu"), "process_cpu");
}

TEST(TelemetrySettingsTest, OffWithoutAnEndpoint) {
  auto s = Read({});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->metrics_enabled);
  Logger log("test", LogLevel::kError);
  Metrics metrics;
  EXPECT_EQ(Telemetry::Start(*s, metrics, log), nullptr);
}

TEST(TelemetrySettingsTest, TheGeneralEndpointGetsTheSignalPath) {
  auto s = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->metrics_enabled);
  EXPECT_EQ(s->metrics_endpoint, "http://collector:4318/v1/metrics");
  EXPECT_EQ(s->protocol, OtlpProtocol::kHttpProtobuf);
  EXPECT_EQ(s->export_interval, 60'000ms);
  EXPECT_EQ(s->export_timeout, 30'000ms);
  EXPECT_EQ(s->request_timeout, 10'000ms);

  auto specific = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"},
                        {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "https://m.example:443/in"}});
  ASSERT_TRUE(specific.ok());
  EXPECT_EQ(specific->metrics_endpoint, "https://m.example:443/in");
}

TEST(TelemetrySettingsTest, DisabledAndNoneWinOverAnEndpoint) {
  auto disabled =
      Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_SDK_DISABLED", "true"}});
  ASSERT_TRUE(disabled.ok());
  EXPECT_FALSE(disabled->metrics_enabled);
  auto none =
      Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_METRICS_EXPORTER", "none"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->metrics_enabled);
}

TEST(TelemetrySettingsTest, StandardVariablesAreHonoured) {
  auto s = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                 {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"},
                 {"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"},
                 {"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc, x-team = game"},
                 {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                 {"OTEL_METRIC_EXPORT_INTERVAL", "1000"},
                 {"OTEL_RESOURCE_ATTRIBUTES",
                  "service.name=from-attributes,deployment.environment=staging,region=eu%2Cwest"},
                 {"OTEL_SERVICE_NAME", "world-eu-1"}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->protocol, OtlpProtocol::kHttpJson);
  ASSERT_EQ(s->headers.size(), 2u);
  EXPECT_EQ(s->headers[0], std::make_pair(std::string("authorization"), std::string("Bearer abc")));
  EXPECT_EQ(s->headers[1], std::make_pair(std::string("x-team"), std::string("game")));
  EXPECT_EQ(s->request_timeout, 2500ms);
  EXPECT_EQ(s->export_interval, 1000ms);
  EXPECT_EQ(s->export_timeout, 1000ms);  // never longer than the interval
  EXPECT_EQ(s->resource.front().first, "service.name");
  EXPECT_EQ(ResourceValue(*s, "service.name"), "world-eu-1");  // OTEL_SERVICE_NAME wins
  EXPECT_EQ(ResourceValue(*s, "deployment.environment"), "staging");
  EXPECT_EQ(ResourceValue(*s, "region"), "eu,west");
  EXPECT_EQ(ResourceValue(*s, "service.version"), "1.2.3");
  EXPECT_EQ(ResourceValue(*s, "telos.role"), "world");

  auto defaults = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(ResourceValue(*defaults, "service.name"), "telos-world");
}

TEST(TelemetrySettingsTest, BadValuesNameTheVariable) {
  const std::map<std::string, std::pair<std::string, std::string>> cases = {
      {"OTEL_EXPORTER_OTLP_ENDPOINT", {"ftp://c:21", "must be http"}},
      {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", {"not a url", "is not a URL"}},
      {"OTEL_EXPORTER_OTLP_PROTOCOL", {"grpc", "http/protobuf or http/json"}},
      {"OTEL_EXPORTER_OTLP_TIMEOUT", {"0", "between"}},
      {"OTEL_METRIC_EXPORT_INTERVAL", {"5", "between"}},
      {"OTEL_METRIC_EXPORT_TIMEOUT", {"soon", ""}},
      {"OTEL_RESOURCE_ATTRIBUTES", {"region", "key=value"}},
      {"OTEL_SDK_DISABLED", {"maybe", ""}},
      {"OTEL_METRICS_EXPORTER", {"console", ""}},
  };
  for (const auto& [variable, bad] : cases) {
    Config::Environment env{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}};
    env[variable] = bad.first;
    auto s = Read(env);
    ASSERT_FALSE(s.ok()) << variable;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << variable;
    EXPECT_NE(s.status().message().find(variable), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find(bad.second), std::string::npos) << s.status().message();
  }
}

TEST(TelemetrySettingsTest, ABadHeaderIsNamedButNeverShown) {
  auto s = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                 {"OTEL_EXPORTER_OTLP_HEADERS", "Bearer-sekrit-token"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("OTEL_EXPORTER_OTLP_HEADERS"), std::string::npos);
  EXPECT_EQ(s.status().message().find("sekrit"), std::string::npos) << s.status().message();
}

// The JSON the sink received, as (metric name -> the metric object) for the last request.
std::map<std::string, boost::json::object> MetricsIn(const std::string& body,
                                                     boost::json::object* resource) {
  std::map<std::string, boost::json::object> out;
  const boost::json::value doc = boost::json::parse(body);
  for (const auto& rm : doc.at("resourceMetrics").as_array()) {
    if (resource) *resource = rm.at("resource").as_object();
    for (const auto& sm : rm.at("scopeMetrics").as_array()) {
      for (const auto& m : sm.at("metrics").as_array()) {
        out[std::string(m.at("name").as_string())] = m.as_object();
      }
    }
  }
  return out;
}

std::string Attribute(const boost::json::value& attributes, const std::string& key) {
  for (const auto& kv : attributes.as_array()) {
    if (kv.at("key").as_string() == key) {
      return std::string(kv.at("value").at("stringValue").as_string());
    }
  }
  return "";
}

TEST(TelemetryExportTest, TheRegistryArrivesAsOtlpJson) {
  testing::OtlpSink sink;
  auto s = Read({{"OTEL_EXPORTER_OTLP_ENDPOINT", sink.url()},
                 {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                 {"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer t0k"},
                 {"OTEL_METRIC_EXPORT_INTERVAL", "3600000"}});  // only Flush exports
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Logger log("test", LogLevel::kError);
  Metrics metrics;
  metrics.Counter("gate_frames_dropped_total", "Frames dropped").Increment(3);
  metrics.Gauge("zone_occupancy", "Players in the zone", {{"zone", "lobby"}}).Set(7);
  auto& lag =
      metrics.Histogram("zone_tick_lag_ms", "Heartbeat overrun", {1, 10}, {{"zone", "lobby"}});
  lag.Observe(0.5);
  lag.Observe(5);
  lag.Observe(50);
  lag.Observe(60);

  auto telemetry = Telemetry::Start(*s, metrics, log);
  ASSERT_NE(telemetry, nullptr);
  ASSERT_TRUE(telemetry->Flush(10s));
  ASSERT_TRUE(sink.WaitFor([](const auto& r) { return !r.empty(); }, 10s));
  const auto request = sink.requests().back();
  EXPECT_EQ(request.target, "/v1/metrics");
  EXPECT_EQ(request.content_type, "application/json");
  EXPECT_EQ(request.authorization, "Bearer t0k");

  boost::json::object resource;
  const auto got = MetricsIn(request.body, &resource);
  EXPECT_EQ(Attribute(resource.at("attributes"), "service.name"), "telos-world");

  ASSERT_TRUE(got.contains("telos.gate.frames_dropped_total"));
  const auto& sum = got.at("telos.gate.frames_dropped_total").at("sum");
  EXPECT_TRUE(sum.at("isMonotonic").as_bool());
  EXPECT_EQ(sum.at("dataPoints").at(0).at("asDouble").to_number<double>(), 3);

  ASSERT_TRUE(got.contains("telos.zone.occupancy"));
  const auto& gauge_point = got.at("telos.zone.occupancy").at("gauge").at("dataPoints").at(0);
  EXPECT_EQ(gauge_point.at("asDouble").to_number<double>(), 7);
  EXPECT_EQ(Attribute(gauge_point.at("attributes"), "zone"), "lobby");

  ASSERT_TRUE(got.contains("telos.zone.tick_lag_ms"));
  const auto& histogram = got.at("telos.zone.tick_lag_ms");
  EXPECT_EQ(histogram.at("unit").as_string(), "ms");
  const auto& point = histogram.at("histogram").at("dataPoints").at(0);
  // OTLP JSON writes 64-bit integers as strings.
  EXPECT_EQ(point.at("count").as_string(), "4");
  EXPECT_EQ(point.at("sum").to_number<double>(), 115.5);
  const auto& bounds = point.at("explicitBounds").as_array();
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_EQ(bounds[1].to_number<double>(), 10);
  const auto& counts = point.at("bucketCounts").as_array();
  ASSERT_EQ(counts.size(), 3u);  // <=1, (1,10], >10: each bucket alone, not cumulative
  EXPECT_EQ(counts[0].as_string(), "1");
  EXPECT_EQ(counts[1].as_string(), "1");
  EXPECT_EQ(counts[2].as_string(), "2");
  EXPECT_EQ(Attribute(point.at("attributes"), "zone"), "lobby");
}

TEST(TelemetryExportTest, ExportsRepeatOnTheInterval) {
  testing::OtlpSink sink;
  auto s = Read({{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", sink.url() + "/v1/metrics"},
                 {"OTEL_METRIC_EXPORT_INTERVAL", "100"}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Logger log("test", LogLevel::kError);
  Metrics metrics;
  metrics.Counter("ticks_total", "Ticks").Increment();
  auto telemetry = Telemetry::Start(*s, metrics, log);
  ASSERT_NE(telemetry, nullptr);
  EXPECT_TRUE(sink.WaitFor([](const auto& r) { return r.size() >= 3; }, 20s));
  EXPECT_EQ(sink.requests().front().content_type, "application/x-protobuf");
}

}  // namespace
}  // namespace telos::telemetry
