// `telos serve` joining a fleet: when TELOS_REDIS is set, the one process runs a world shard
// (claiming zones from the pool like any `telos world`), a gate routing its players to whichever
// shard owns their zone, and the account screens in-process on PostgreSQL
// (TELOS_DATABASE_URL). Its keys come from TELOS_SIGNING_KEY_FILE / TELOS_HANDOFF_KEY_FILE — the
// fleet's, to share players with other processes — or, when unset, are generated once and kept
// under TELOS_DATA_DIR/keys. So are its caller tokens, TELOS_GATE_TOKEN (its gate's Play
// streams) and TELOS_WORLD_TOKEN (its world's calls with peers): the fleet's when set (or their
// _FILE forms), else made once and kept as TELOS_DATA_DIR/keys/{gate,world}.token — a serve is
// never open to any caller, and a process joins it only with those tokens.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "role_common.h"
#include "serve.h"
#include "telos/auth/documents.h"
#include "telos/shard/fleet_comms.h"
#include "telos/shard/records_announcer.h"
#include "world_process.h"

namespace telos::app {
namespace {

constexpr const char* kRole = "telos serve";

// The key at `path`, or (path empty) the one kept as <data_dir>/keys/<name>.key, made once.
Result<auth::SigningKey> KeyFileOrKept(const std::string& path, const std::string& data_dir,
                                       const std::string& name, Logger& log) {
  if (!path.empty()) return auth::SigningKey::LoadFile(path);
  const std::string dir = (std::filesystem::path(data_dir) / "keys").string();
  const std::string kept = dir + "/" + name + ".key";
  if (std::filesystem::exists(kept)) return auth::SigningKey::LoadFile(kept);
  auth::SigningKey fresh = auth::SigningKey::Generate();
  if (Status s = fresh.WriteFiles(dir, name); !s.ok()) return s;
  log.Info("key generated", {{"file", kept}, {"public_key", fresh.verify_key().Hex()}});
  return fresh;
}

// `value` when set, else the token kept as <data_dir>/keys/<name>.token (mode 0600), made once.
Result<std::string> TokenOrKept(const std::string& value, const std::string& data_dir,
                                const std::string& name, Logger& log) {
  if (!value.empty()) return value;
  const std::filesystem::path dir = std::filesystem::path(data_dir) / "keys";
  const std::string kept = (dir / (name + ".token")).string();
  if (std::filesystem::exists(kept)) {
    std::ifstream in(kept);
    std::string token;
    std::getline(in, token);
    if (token.empty()) {
      return Status::InvalidArgument(kept + ": no token in the file (delete it to make one)");
    }
    return token;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidArgument(dir.string() + ": cannot create: " + ec.message());
  const std::string token = auth::RandomToken(32);
  // O_EXCL: a token another process already uses is never replaced.
  const int fd = ::open(kept.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::InvalidArgument(kept + ": cannot create the token file");
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) return Status::InvalidArgument(kept + ": cannot write the token file");
  log.Info("caller token generated", {{"file", kept}});
  return token;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "host";
  return host;
}

}  // namespace

int RunServeInFleet(const ServeSettings& settings, const Config& config, Logger& log) {
  SystemClock clock;
  Metrics metrics;
  auto telemetry = StartTelemetry(config, "serve", metrics, log);
  if (!telemetry.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, telemetry.status().message().c_str());
    return kExitConfigError;
  }
  WorldRoleSettings world_settings;
  {
    auto id = config.String("TELOS_SHARD_ID", "serve-" + HostName());
    auto listen = config.String("TELOS_WORLD_LISTEN", world_settings.listen_address);
    auto advertise = config.String("TELOS_ADVERTISE", "");
    auto ttl = config.Int("TELOS_LEASE_TTL_MS", world_settings.lease_ttl_ms, 600, 600'000);
    for (const Status& s : {id.status(), listen.status(), advertise.status(), ttl.status()}) {
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", kRole, s.message().c_str());
        return kExitConfigError;
      }
    }
    if (*id == shard::kDirectorOrigin) {
      // The director's announcements carry that origin (world_role.cc says why it is refused).
      std::fprintf(stderr, "%s: TELOS_SHARD_ID: \"%s\" is the director's name on the bus\n", kRole,
                   id->c_str());
      return kExitConfigError;
    }
    world_settings.shard_id = *id;
    world_settings.listen_address = *listen;
    auto advertised = AdvertisedAddress(*listen, *advertise);
    if (!advertised.ok()) {
      std::fprintf(stderr, "%s: %s\n", kRole, advertised.status().message().c_str());
      return kExitConfigError;
    }
    world_settings.advertise = *advertised;
    world_settings.lease_ttl_ms = *ttl;
  }
  auto pool = config.String("TELOS_ZONE_POOL", "");
  auto signing_path = config.String("TELOS_SIGNING_KEY_FILE", "");
  auto handoff_path = config.String("TELOS_HANDOFF_KEY_FILE", "");
  auto redis = RedisOptionsFromConfig(config);
  auto pg = PostgresOptionsFromConfig(config);
  auto nats = NatsOptionsFromConfig(config);
  auto gate_token = config.Secret("TELOS_GATE_TOKEN", "");
  auto world_token = config.Secret("TELOS_WORLD_TOKEN", "");
  for (const Status& s :
       {pool.status(), signing_path.status(), handoff_path.status(), redis.status(), pg.status(),
        nats.status(), gate_token.status(), world_token.status()}) {
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", kRole, s.message().c_str());
      return kExitConfigError;
    }
  }
  world_settings.nats_url = nats->url;
  world_settings.nats_credentials = nats->credentials;
  world_settings.subject_prefix = shard::SubjectPrefixFor(redis->key_namespace);
  for (size_t start = 0; start < pool->size();) {
    size_t end = pool->find(',', start);
    if (end == std::string::npos) end = pool->size();
    if (end > start) world_settings.zone_pool.push_back(pool->substr(start, end - start));
    start = end + 1;
  }
  log.Info("joining a fleet",
           {{"shard", world_settings.shard_id}, {"listen", world_settings.listen_address}});

  auto shared_pack = LoadPackOrReport(settings.content_dir, kRole);
  if (!shared_pack) return kExitConfigError;
  if (auto resolved = ResolveZonePool(world_settings, *shared_pack); !resolved.ok()) {
    std::fprintf(stderr, "%s: %s\n", kRole, resolved.status().message().c_str());
    return kExitConfigError;
  }
  auto signing_key = KeyFileOrKept(*signing_path, settings.data_dir, "assertion", log);
  auto handoff_key = KeyFileOrKept(*handoff_path, settings.data_dir, "handoff", log);
  if (!signing_key.ok() || !handoff_key.ok()) {
    const Status& s = signing_key.ok() ? handoff_key.status() : signing_key.status();
    std::fprintf(stderr, "%s: keys: %s\n", kRole, s.message().c_str());
    return kExitConfigError;
  }
  auto gate_secret = TokenOrKept(*gate_token, settings.data_dir, "gate", log);
  auto world_secret = TokenOrKept(*world_token, settings.data_dir, "world", log);
  for (const auto* token : {&gate_secret, &world_secret}) {
    if (!token->ok()) {
      std::fprintf(stderr, "%s: tokens: %s\n", kRole, token->status().message().c_str());
      return kExitConfigError;
    }
  }
  if (*gate_secret == *world_secret) {
    std::fprintf(stderr, "%s: TELOS_WORLD_TOKEN: must differ from TELOS_GATE_TOKEN\n", kRole);
    return kExitConfigError;
  }
  world_settings.gate_token = *gate_secret;
  world_settings.world_token = *world_secret;

  pg->application_name = "telos-serve";
  auto opened = store::PostgresStore::Open(*pg, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s: cannot open PostgreSQL at TELOS_DATABASE_URL: %s\n", kRole,
                 opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<store::PostgresStore> db = std::move(*opened);
  directory::RedisDirectory directory(*redis, clock);
  auto checkpoints = OpenCheckpoints(*redis, clock);
  if (!checkpoints.ok()) {
    std::fprintf(stderr, "%s: TELOS_REDIS_NAMESPACE: %s\n", kRole,
                 checkpoints.status().message().c_str());
    return kExitConfigError;
  }

  return RunServeParts(settings,
                       ServeParts{.world = std::move(world_settings),
                                  .pack = shared_pack,
                                  .accounts = &db->accounts(),
                                  .backends = WorldBackends{
                                      .characters = &db->characters(),
                                      .mail = &db->mail(),
                                      .directory = &directory,
                                      .checkpoints = checkpoints->get(),
                                      .audit = &db->audit(),
                                      .social = &db->social(),
                                      .store_name = "postgres",
                                      .store_ping = [&db] { return db->Ping(); },
                                      .directory_name = "redis",
                                      .directory_ping = [&directory] { return directory.Ping(); },
                                      .records = &db->records()},
                                  .assertion_key = &*signing_key,
                                  .handoff_key = &*handoff_key,
                                  .mode = "fleet"},
                       clock, log, metrics);
}

}  // namespace telos::app
