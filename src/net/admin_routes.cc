#include "telos/net/admin_routes.h"

#include <boost/asio/ip/address.hpp>

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
  body.reserve(2 + report.members.size());
  body.emplace("status", report.healthy ? "ok" : "unavailable");
  // A load balancer only needs the status code; the reason is for the operator reading it.
  if (!report.healthy) body.emplace("reason", report.reason.empty() ? "unknown" : report.reason);
  for (const auto& member : report.members) body.emplace(member.key(), member.value());
  return boost::json::serialize(body);
}

void AddHealthRoute(HttpServer& server, HealthFn health) {
  server.Handle("/api/health", [health = std::move(health)](const HttpRequest&) {
    const HealthReport report = health();
    return HttpResponse::Json(report.healthy ? 200 : 503, HealthJson(report));
  });
}

void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health) {
  AddHealthRoute(server, std::move(health));
  server.Handle("/metrics", [&metrics](const HttpRequest&) {
    return HttpResponse::Text(200, metrics.RenderText(), "text/plain; version=0.0.4");
  });
}

Result<AdminBind> ReadAdminBind(const Config& config, uint16_t default_port, uint16_t public_port) {
  AdminBind bind;
  auto address = config.String("TELOS_ADMIN_BIND", bind.address);
  if (!address.ok()) return address.status();
  auto port = config.Port("TELOS_ADMIN_PORT", default_port);
  if (!port.ok()) return port.status();
  boost::system::error_code ec;
  boost::asio::ip::make_address(*address, ec);
  if (ec) {
    return Status::InvalidArgument("TELOS_ADMIN_BIND='" + *address +
                                   "': not an IP address (the admin listener's address, e.g. "
                                   "127.0.0.1; its port is TELOS_ADMIN_PORT)");
  }
  if (*port != 0 && *port == public_port) {
    return Status::InvalidArgument("TELOS_ADMIN_PORT=" + std::to_string(*port) +
                                   ": must differ from TELOS_HTTP_PORT (the admin listener is "
                                   "not the public one)");
  }
  bind.address = *address;
  bind.port = *port;
  return bind;
}

HttpServerOptions AdminServerOptions(const AdminBind& bind) {
  HttpServerOptions options;
  options.bind_address = bind.address;
  options.port = bind.port;
  return options;
}

}  // namespace telos::net
