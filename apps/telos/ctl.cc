#include "ctl.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "role_common.h"
#include "telos/base/clock.h"
#include "telos/directory/cluster_view.h"
#include "telos/directory/redis_directory.h"
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
    std::fprintf(stderr, "telos ctl cluster: cannot read the directory at %s: %s\n",
                 redis_url->c_str(), view.status().ToString().c_str());
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

}  // namespace telos::app
