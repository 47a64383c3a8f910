// The health and operator routes of a role's two HTTP listeners (docs/operating.md, SECURITY.md).
//
// A role has a public listener (TELOS_BIND:TELOS_HTTP_PORT; on a gate or a serve it is the
// players' web port) and an admin listener (TELOS_ADMIN_BIND:TELOS_ADMIN_PORT, loopback unless
// an operator says otherwise). The public one answers /api/health and nothing else of these
// (AddHealthRoute), so a load balancer can judge the role where players reach it. The admin one
// answers /api/health and /metrics (AddAdminRoutes) and the role's operator routes
// (/api/cluster, which names every shard's endpoint): nothing an attacker could aim with is on a
// port players reach.
//
// /api/health answers 200 with {"status":"ok", ...} while the role can do its job and 503 with
// {"status":"unavailable","reason":"<why>", ...} when it cannot (draining, no zone running, its
// database unreachable: HealthReport::Unavailable). The role supplies the other members as a
// boost::json::object, whose strings it has passed through SanitizeUtf8 (ids come from
// operators). "status" and "reason" come first and cannot be overridden by members of those
// names. /metrics renders the process's Metrics registry as Prometheus text.
//
// Thread safety: the health function runs on the HTTP servers' io threads, possibly on both
// listeners at once; it must be thread-safe and must not block.
#pragma once

#include <boost/json.hpp>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include "telos/base/config.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
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

  // The role cannot serve now; `reason` says why in a few words ("draining").
  static HealthReport Unavailable(std::string reason, boost::json::object members) {
    HealthReport report(false, std::move(members));
    report.reason = std::move(reason);
    return report;
  }

  bool healthy = true;
  std::string reason;  // when !healthy; empty reads as "unknown"
  boost::json::object members;
};

using HealthFn = std::function<HealthReport()>;

// The /api/health body for `report`.
std::string HealthJson(const HealthReport& report);

// /api/health on a public listener. REQUIRES: before server.Start(). Whatever `health` reads
// must outlive the server.
void AddHealthRoute(HttpServer& server, HealthFn health);

// /api/health and /metrics on an admin listener. REQUIRES: before server.Start(). `metrics` and
// whatever `health` reads must outlive the server.
void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health);

// Where a role's admin listener binds.
struct AdminBind {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: the kernel picks one (tests); the ready log line names it
};

// TELOS_ADMIN_BIND (an IP address, loopback by default: operators and monitoring reach the
// admin routes, players do not) and TELOS_ADMIN_PORT (`default_port` when unset).
// InvalidArgument names the variable: an address that is not an IP address (a "host:port" is
// refused, the port has its own variable), or an admin port equal to `public_port`, the role's
// TELOS_HTTP_PORT (unless both are 0, the kernel's choice).
Result<AdminBind> ReadAdminBind(const Config& config, uint16_t default_port, uint16_t public_port);

// Options for an HttpServer on `bind`, with the other limits at their defaults.
HttpServerOptions AdminServerOptions(const AdminBind& bind);

}  // namespace telos::net
