#include "telos/net/admin_routes.h"

namespace telos::net {

void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health) {
  server.Handle("/api/health", [health = std::move(health)](const HttpRequest&) {
    const HealthReport report = health();
    std::string body = report.healthy ? "{\"status\":\"ok\"" : "{\"status\":\"degraded\"";
    if (!report.members.empty()) {
      body += ',';
      body += report.members;
    }
    body += '}';
    return HttpResponse::Json(report.healthy ? 200 : 503, std::move(body));
  });
  server.Handle("/metrics", [&metrics](const HttpRequest&) {
    return HttpResponse::Text(200, metrics.RenderText(), "text/plain; version=0.0.4");
  });
}

}  // namespace telos::net
