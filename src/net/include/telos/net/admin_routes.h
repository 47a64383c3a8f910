// The routes every role serves on its HTTP port: /api/health and /metrics.
//
// /api/health answers 200 with {"status":"ok", ...} while the role can do its job and 503 with
// {"status":"degraded", ...} otherwise; the role supplies the other members as a
// boost::json::object, whose strings it has passed through SanitizeUtf8 (ids come from
// operators). "status" comes first and cannot be overridden by a member of that name. /metrics
// renders the process's Metrics registry as Prometheus text.
//
// Thread safety: the health function runs on the HTTP server's threads.
#pragma once

#include <boost/json.hpp>
#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include "telos/base/metrics.h"
#include "telos/net/http_server.h"

namespace telos::net {

// Parses members serialized as `"key":value` pairs joined by commas (the transitional form of
// HealthReport below); text that does not parse becomes {"members_invalid":true}. For callers
// that still receive members as text from elsewhere.
boost::json::object ParseLegacyHealthMembers(std::string_view legacy_members);

struct HealthReport {
  HealthReport() = default;
  HealthReport(bool healthy_in, boost::json::object members_in)
      : healthy(healthy_in), members(std::move(members_in)) {}
  // Transitional, for apps/telos/serve.cc until it builds its members as an object: members
  // already serialized as `"key":value` pairs joined by commas, parsed here by
  // ParseLegacyHealthMembers, so the endpoint still answers valid JSON. A template so that a
  // braced list (`{true, {{"role", "world"}}}`) can only mean the object.
  template <typename S>
  requires std::same_as<std::remove_cvref_t<S>, std::string> HealthReport(bool healthy_in,
                                                                          S&& legacy_members)
      : healthy(healthy_in), members(ParseLegacyHealthMembers(legacy_members)) {}

  bool healthy = true;
  boost::json::object members;
};

using HealthFn = std::function<HealthReport()>;

// The /api/health body for `report`.
std::string HealthJson(const HealthReport& report);

// REQUIRES: before server.Start(). `metrics` and whatever `health` reads must outlive the server.
void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health);

}  // namespace telos::net
