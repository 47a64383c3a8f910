#include "ctl.h"

#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "director_role.h"
#include "role_common.h"
#include "telos/base/clock.h"
#include "telos/director/director.h"
#include "telos/directory/cluster_view.h"
#include "telos/directory/redis_directory.h"
#include "telos/redis/connection.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/pack_reload.h"
#include "telos/world/content.h"

namespace telos::app {
namespace {

// The id ctl answers with: the host it runs on, so a shared log of ctl output says where from.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "ctl";
  return name;
}

}  // namespace

int RunCtlCluster(const CtlClusterFlags& flags, const Config& config) {
  auto redis_url = config.Secret("TELOS_REDIS", "");
  if (!redis_url.ok()) {
    std::fprintf(stderr, "telos ctl cluster: %s\n", redis_url.status().message().c_str());
    return kExitConfigError;
  }
  if (redis_url->empty()) {
    std::fprintf(stderr, "TELOS_REDIS (or TELOS_REDIS_FILE): required for telos ctl cluster\n");
    return kExitConfigError;
  }
  // TELOS_REDIS and TELOS_REDIS_NAMESPACE, read exactly as the fleet's roles read them.
  auto options = RedisOptionsFromConfig(config);
  if (!options.ok()) {
    std::fprintf(stderr, "telos ctl cluster: %s\n", options.status().message().c_str());
    return kExitConfigError;
  }
  auto content_dir = config.String("TELOS_CONTENT_DIR", "content");
  if (!content_dir.ok()) {
    std::fprintf(stderr, "telos ctl cluster: %s\n", content_dir.status().message().c_str());
    return kExitConfigError;
  }

  // The zones worth asking about are the pack's: every world of one fleet runs the same pack.
  std::vector<world::Problem> problems;
  auto pack = world::LoadPack(*content_dir, &problems);
  if (!pack.ok()) {
    std::fprintf(stderr, "telos ctl cluster: content pack %s is invalid:\n", content_dir->c_str());
    for (const auto& p : problems) std::fprintf(stderr, "  %s\n", p.ToString().c_str());
    if (problems.empty()) std::fprintf(stderr, "  %s\n", pack.status().message().c_str());
    return kExitConfigError;
  }
  std::vector<std::string> zones;
  zones.reserve(pack->zones.size());
  for (const world::ZoneDef& zone : pack->zones) zones.push_back(zone.id);

  SystemClock clock;
  directory::RedisDirectory dir(*options, clock);
  auto view = directory::ReadClusterView(dir, zones, "ctl", HostName());
  if (!view.ok()) {
    // host:port only: the URL may carry a password, and this message lands in terminals and logs.
    auto address = redis::ParseUrl(*redis_url);
    const std::string where =
        address.ok() ? address->host + ":" + std::to_string(address->port) : "TELOS_REDIS";
    std::fprintf(stderr, "telos ctl cluster: cannot read the directory at %s: %s\n", where.c_str(),
                 view.status().ToString().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", directory::ClusterViewJson(*view).c_str());
  } else {
    std::fputs(directory::ClusterViewText(*view).c_str(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int RunCtlReload(const Config& config) {
  constexpr const char* kVerb = "telos ctl reload";
  auto redis_url = config.Secret("TELOS_REDIS", "");
  if (!redis_url.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, redis_url.status().message().c_str());
    return kExitConfigError;
  }
  if (redis_url->empty()) {
    std::fprintf(stderr, "TELOS_REDIS (or TELOS_REDIS_FILE): required for %s\n", kVerb);
    return kExitConfigError;
  }
  auto options = RedisOptionsFromConfig(config);
  if (!options.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, options.status().message().c_str());
    return kExitConfigError;
  }
  auto nats = NatsOptionsFromConfig(config);
  if (!nats.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, nats.status().message().c_str());
    return kExitConfigError;
  }
  if (nats->url.empty()) {
    std::fprintf(stderr, "TELOS_NATS (or TELOS_NATS_FILE): required for %s\n", kVerb);
    return kExitConfigError;
  }
  auto content_dir = config.String("TELOS_CONTENT_DIR", "content");
  if (!content_dir.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, content_dir.status().message().c_str());
    return kExitConfigError;
  }

  // The pack is judged whole here first: a bad one is refused before any world is asked.
  std::vector<world::Problem> problems;
  auto pack = world::LoadPack(*content_dir, &problems);
  if (!pack.ok()) {
    std::fprintf(stderr, "%s: refused: content pack %s is invalid; nothing changed:\n", kVerb,
                 content_dir->c_str());
    for (const auto& p : problems) std::fprintf(stderr, "  %s\n", p.ToString().c_str());
    if (problems.empty()) std::fprintf(stderr, "  %s\n", pack.status().message().c_str());
    return kExitConfigError;
  }

  Logger log("ctl", LogLevel::kError);
  nats->name = "telos-ctl " + HostName();
  auto bus = bus::NatsBus::Connect(*nats, log);
  if (!bus.ok()) {
    std::fprintf(stderr, "%s: refused: cannot use NATS at %s: %s\n", kVerb, nats->url.c_str(),
                 bus.status().ToString().c_str());
    return 1;
  }
  SystemClock clock;
  directory::RedisDirectory dir(*options, clock);
  std::printf("reloading the fleet onto pack %s %s\n", pack->name.c_str(),
              pack->content_hash.c_str());
  const shard::FleetReloadReport report =
      shard::ReloadFleet(**bus, dir, *pack, shard::SubjectPrefixFor(options->key_namespace), log);
  for (const std::string& line : report.lines) std::printf("  %s\n", line.c_str());
  std::fflush(stdout);
  if (!report.status.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, report.status.message().c_str());
    return 1;
  }
  std::printf("every world runs pack %s\n", pack->content_hash.c_str());
  return std::fflush(stdout) == 0 ? 0 : 1;
}

namespace {

// The directors' settings as `telos director` reads them, or an exit code after one stderr line.
Result<DirectorRoleSettings> CtlDirectorSettings(const char* verb, const Config& config) {
  auto redis_url = config.Secret("TELOS_REDIS", "");
  if (redis_url.ok() && redis_url->empty()) {
    return Status::InvalidArgument(std::string("TELOS_REDIS (or TELOS_REDIS_FILE): required for ") +
                                   verb);
  }
  return ReadDirectorRoleSettings(config);
}

}  // namespace

int RunCtlDirectives(const CtlDirectorFlags& flags, const Config& config) {
  constexpr const char* kVerb = "telos ctl directives";
  auto settings = CtlDirectorSettings(kVerb, config);
  if (!settings.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, settings.status().message().c_str());
    return kExitConfigError;
  }
  SystemClock clock;
  directory::RedisDirectory dir(*RedisOptionsFromConfig(config), clock);
  auto view = DirectorViewJson(dir, settings->scope);
  if (!view.ok()) {
    std::fprintf(stderr, "%s: cannot read the directory: %s\n", kVerb,
                 view.status().ToString().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", boost::json::serialize(*view).c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const boost::json::value& leader = view->at("leader");
  std::printf("scope %s: leader %s (epoch %lld)\n", settings->scope.c_str(),
              leader.is_string() ? leader.as_string().c_str() : "(none)",
              static_cast<long long>(view->at("epoch").to_number<int64_t>()));
  const boost::json::array& directives = view->at("directives").as_array();
  std::printf("%-24s %-20s %-20s %8s %10s\n", "ZONE", "FROM", "TO", "EPOCH", "TTL_MS");
  for (const boost::json::value& d : directives) {
    const boost::json::object& o = d.as_object();
    std::printf("%-24s %-20s %-20s %8lld %10lld\n", o.at("zone").as_string().c_str(),
                o.at("from").as_string().c_str(), o.at("to").as_string().c_str(),
                static_cast<long long>(o.at("epoch").to_number<int64_t>()),
                static_cast<long long>(o.at("ttl_ms").to_number<int64_t>()));
  }
  if (directives.empty()) std::printf("(no live directives)\n");
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int RunCtlRebalance(const CtlDirectorFlags& flags, const Config& config) {
  constexpr const char* kVerb = "telos ctl rebalance";
  if (!flags.dry_run) {
    std::fprintf(stderr, "%s: only --dry-run is supported: the leader director issues the moves\n",
                 kVerb);
    return kExitConfigError;
  }
  auto settings = CtlDirectorSettings(kVerb, config);
  if (!settings.ok()) {
    std::fprintf(stderr, "%s: %s\n", kVerb, settings.status().message().c_str());
    return kExitConfigError;
  }
  auto pack = LoadPackOrReport(settings->content_dir, kVerb);
  if (!pack) return kExitConfigError;
  SystemClock clock;
  directory::RedisDirectory dir(*RedisOptionsFromConfig(config), clock);
  auto reading = director::ReadAndPlan(dir, settings->options.rebalance, ColocationGroupsOf(*pack),
                                       ElapsedMs(Instant{}, clock.Now()));
  if (!reading.ok()) {
    std::fprintf(stderr, "%s: cannot plan from the directory: %s\n", kVerb,
                 reading.status().ToString().c_str());
    return 1;
  }
  const director::RebalancePlan& plan = reading->plan;
  if (flags.json) {
    boost::json::array moves;
    for (const director::PlannedMove& move : plan.moves) {
      boost::json::array zones;
      for (const std::string& zone : move.zones) zones.push_back(boost::json::value(zone));
      moves.push_back(boost::json::object{{"zones", std::move(zones)},
                                          {"from", move.from},
                                          {"to", move.to},
                                          {"players", move.players},
                                          {"cut", move.why.cut},
                                          {"spread_before", move.why.spread_before},
                                          {"spread_after", move.why.spread_after},
                                          {"colocation_group", move.why.colocation_group},
                                          {"explanation", move.text}});
    }
    boost::json::array loads;
    for (const director::ShardLoadView& load : plan.loads_before) {
      loads.push_back(boost::json::object{
          {"shard", load.shard}, {"draining", load.draining}, {"players", load.players}});
    }
    std::printf("%s\n", boost::json::serialize(boost::json::object{
                                                   {"dry_run", true},
                                                   {"spread_before", plan.spread_before},
                                                   {"spread_after", plan.spread_after},
                                                   {"moves_in_flight", plan.moves_in_flight},
                                                   {"stop", director::PlanStopName(plan.stop)},
                                                   {"loads", std::move(loads)},
                                                   {"moves", std::move(moves)},
                                               })
                            .c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  std::printf("dry run (nothing issued): %s\n", plan.Describe().c_str());
  for (const director::ShardLoadView& load : plan.loads_before) {
    std::printf("  %-24s %8lld players%s\n", load.shard.c_str(),
                static_cast<long long>(load.players), load.draining ? " (draining)" : "");
  }
  for (const director::PlannedMove& move : plan.moves) std::printf("move: %s\n", move.text.c_str());
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace telos::app
