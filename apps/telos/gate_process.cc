#include "gate_process.h"

#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/directory/cluster_view.h"
#include "telos/net/admin_routes.h"
#include "telos/world/who_json.h"
#include "version.h"

namespace telos::app {
namespace {

gate::FleetLinkOptions LinkOptions(const GateProcessOptions& options, const world::Pack& pack) {
  gate::FleetLinkOptions link;
  link.gate_id = options.gate_id;
  link.gate_token = options.gate_token;
  link.lobby_zone = pack.start_room.zone;
  link.route_wait_ms = OrDefault(options.route_wait_ms, link.route_wait_ms);
  return link;
}

gate::GateOptions SessionOptions(const GateProcessOptions& options, const world::Pack& pack) {
  gate::GateOptions gate;
  gate.start_room = pack.start_room;
  gate.link_dead_ms = OrDefault(options.link_dead_ms, limits::kLinkDeadMs);
  gate.login_timeout_ms = OrDefault(options.login_timeout_ms, limits::kLoginTimeoutMs);
  return gate;
}

}  // namespace

GateProcess::GateProcess(GateProcessOptions options, const world::Pack& pack,
                         account::AccountDesk& desk, directory::Directory& directory,
                         boost::asio::io_context& io, BlockingRunner blocking, const Clock& clock,
                         Logger& log, Metrics& metrics,
                         std::function<net::HealthReport()> health_extra)
    : options_(std::move(options)),
      link_(LinkOptions(options_, pack), directory, io, blocking, clock, log, metrics),
      gate_(SessionOptions(options_, pack), io, blocking, desk, link_, clock, log, metrics),
      front_(
          io, options_.front, gate_.TerminalFactory(),
          [this, rooms = pack.RoomCount()] {
            return std::vector<std::pair<std::string, std::string>>{
                {"NAME", "TelosMUD"},
                {"PLAYERS", std::to_string(link_.online_count())},
                {"CODEBASE", std::string("TelosMUD ") + kVersion},
                {"ROOMS", std::to_string(rooms)},
                {"ANSI", "1"},
                {"GMCP", "1"},
                {"MCCP", "1"},
                {"UTF-8", "1"}};
          },
          clock, log, metrics) {
  auto health = [this, health_extra = std::move(health_extra)] { return Health(health_extra); };
  net::AddHealthRoute(front_.http(), health);
  net::AddAdminRoutes(front_.admin(), metrics, health);
  std::vector<std::string> all_zones;
  for (const auto& zone : pack.zones) all_zones.push_back(zone.id);
  // The directory read blocks (Redis): it runs on the blocking pool, not on an io thread, and
  // only on the admin listener, since it names every shard's endpoint.
  front_.admin().HandleBlocking(
      "/api/cluster",
      [this, &directory, all_zones](const net::HttpRequest&) {
        auto view =
            directory::ReadClusterView(directory, all_zones, options_.role, options_.gate_id);
        if (!view.ok()) {
          return net::HttpResponse::Json(
              503, boost::json::serialize(boost::json::object{{"error", "directory unavailable"}}));
        }
        return net::HttpResponse::Json(200, directory::ClusterViewJson(*view));
      },
      blocking);
  front_.http().Handle("/api/who", [this](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, world::WhoJson(who_ ? who_() : link_.Who()));
  });
}

net::HealthReport GateProcess::Health(const std::function<net::HealthReport()>& extra) const {
  boost::json::object members{{"role", SanitizeUtf8(options_.role)},
                              {"version", kVersion},
                              {"gate", SanitizeUtf8(options_.gate_id)},
                              {"sessions", gate_.sessions()},
                              {"shards", link_.ConnectedShards().size()}};
  net::HealthReport report;
  if (extra) {
    report = extra();
    for (auto& member : report.members) members.emplace(member.key(), std::move(member.value()));
  }
  if (options_.role == "gate") members.emplace("players", link_.online_count());
  report.members = std::move(members);
  if (stopping_) return net::HealthReport::Unavailable("stopping", std::move(report.members));
  return report;
}

void GateProcess::Stop(const std::string& message) {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  // The characters stay in the world (link-dead on their shards) until their owners reconnect
  // through any gate or the link-dead grace ends.
  gate_.BeginShutdown(message);
  link_.Stop();
  front_.Stop();
}

}  // namespace telos::app
