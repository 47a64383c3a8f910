#include "telos/net/admin_routes.h"

namespace telos::net {

boost::json::object ParseLegacyHealthMembers(std::string_view legacy_members) {
  if (legacy_members.empty()) return {};
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse("{" + std::string(legacy_members) + "}", ec);
  if (ec || !parsed.is_object()) return boost::json::object{{"members_invalid", true}};
  return std::move(parsed.get_object());
}

std::string HealthJson(const HealthReport& report) {
  boost::json::object body;
  body.reserve(1 + report.members.size());
  body.emplace("status", report.healthy ? "ok" : "degraded");
  for (const auto& member : report.members) body.emplace(member.key(), member.value());
  return boost::json::serialize(body);
}

void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health) {
  server.Handle("/api/health", [health = std::move(health)](const HttpRequest&) {
    const HealthReport report = health();
    return HttpResponse::Json(report.healthy ? 200 : 503, HealthJson(report));
  });
  server.Handle("/metrics", [&metrics](const HttpRequest&) {
    return HttpResponse::Text(200, metrics.RenderText(), "text/plain; version=0.0.4");
  });
}

}  // namespace telos::net
