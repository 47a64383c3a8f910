#include "role_common.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <boost/asio/post.hpp>

#include <csignal>
#include <cstdio>

#include "telos/base/limits.h"
#include "version.h"
#include "web_files.h"

namespace telos::app {
namespace {

net::TelnetServerOptions TelnetOptions(const FrontDoorSettings& s, FrontDoor::Mssp mssp) {
  net::TelnetServerOptions options;
  options.bind_address = s.bind_address;
  options.port = s.telnet_port;
  options.idle_timeout_ms = OrDefault(s.idle_timeout_ms, limits::kSessionIdleTimeoutMs);
  options.connections_per_address_max = static_cast<size_t>(OrDefault<int64_t>(
      s.connections_per_address, static_cast<int64_t>(limits::kTelnetConnectionsPerAddressMax)));
  options.input_lines_per_second =
      OrDefault(s.input_lines_per_second, limits::kInputLinesPerSecond);
  options.mssp = std::move(mssp);
  return options;
}

net::HttpServerOptions HttpOptions(const FrontDoorSettings& s) {
  net::HttpServerOptions options;
  options.bind_address = s.bind_address;
  options.port = s.http_port;
  options.connections_per_address_max = static_cast<size_t>(OrDefault<int64_t>(
      s.connections_per_address, static_cast<int64_t>(limits::kTelnetConnectionsPerAddressMax)));
  return options;
}

// Names show in top -H, perf and /proc, so an operator can tell socket work from zone work.
void NameThisThread(const char* name) {
  pthread_setname_np(pthread_self(), name);  // at most 15 characters
}

}  // namespace

std::shared_ptr<const world::Pack> LoadPackOrReport(const std::string& dir, const char* program) {
  std::vector<world::Problem> problems;
  auto pack = world::LoadPack(dir, &problems);
  if (pack.ok()) return std::make_shared<const world::Pack>(std::move(*pack));
  std::fprintf(stderr, "%s: content pack %s is invalid:\n", program, dir.c_str());
  for (const auto& p : problems) std::fprintf(stderr, "  %s\n", p.ToString().c_str());
  if (problems.empty()) std::fprintf(stderr, "  %s\n", pack.status().message().c_str());
  return nullptr;
}

RoleThreads::RoleThreads(int64_t blocking_threads)
    : work_(boost::asio::make_work_guard(io_)),
      zone_work_(boost::asio::make_work_guard(zone_io_)),
      pool_(static_cast<size_t>(blocking_threads)),
      blocking_([this](std::function<void()> task) { boost::asio::post(pool_, std::move(task)); }) {
}

RoleThreads::~RoleThreads() {
  Join();
}

void RoleThreads::Run(int64_t io_threads, int64_t zone_threads) {
  const auto spawn = [this](int64_t count, const char* name, boost::asio::io_context& loop) {
    for (int64_t i = 0; i < count; ++i) {
      threads_.emplace_back([name, &loop] {
        NameThisThread(name);
        loop.run();
      });
    }
  };
  spawn(io_threads, "telos-io", io_);
  spawn(zone_threads, "telos-zone", zone_io_);
}

void RoleThreads::Join() {
  if (joined_) return;
  joined_ = true;
  work_.reset();
  zone_work_.reset();
  io_.stop();
  zone_io_.stop();
  for (auto& t : threads_) t.join();
  pool_.join();
}

AccountStack::AccountStack(store::AccountStore& accounts, store::CharacterStore& characters,
                           int64_t password_passes, int64_t password_memory_kib, const Clock& clock,
                           Logger& log, Metrics& metrics, const AccountLimitSettings& limits)
    : hasher(account::PasswordCost{static_cast<uint64_t>(password_passes),
                                   static_cast<size_t>(password_memory_kib) * 1024}),
      throttle(clock, limits.login_failures_per_address_max,
               std::chrono::milliseconds(limits::kLoginFailureWindowMs)),
      service(accounts, characters, hasher, throttle, clock, log, metrics, limits.service) {
  const account::PasswordCost minimum{};
  if (static_cast<size_t>(password_memory_kib) * 1024 < minimum.memory_bytes ||
      static_cast<uint64_t>(password_passes) < minimum.passes) {
    log.Warn(
        "password hashing is below OWASP's argon2id minimum (TELOS_PASSWORD_*): "
        "insecure, for load tests only");
  }
}

Result<AccountLimitSettings> ReadAccountLimits(const Config& config) {
  AccountLimitSettings limits;
  int64_t per_address = 0, overall = 0, waiters = 0, failures = 0;
  TELOS_READ_SETTING(per_address,
                     config.Int("TELOS_ACCOUNT_CREATIONS_PER_ADDRESS_MAX", 0, 0, 1'000'000));
  TELOS_READ_SETTING(overall, config.Int("TELOS_ACCOUNT_CREATIONS_MAX", 0, 0, 1'000'000));
  TELOS_READ_SETTING(waiters, config.Int("TELOS_CREATION_HASH_WAITERS_MAX", 0, 0, 10'000));
  TELOS_READ_SETTING(failures, config.Int("TELOS_LOGIN_FAILURES_PER_ADDRESS_MAX", 0, 0, 1'000'000));
  if (per_address > 0) limits.service.creations_per_address_max = static_cast<size_t>(per_address);
  if (overall > 0) limits.service.creations_max = static_cast<size_t>(overall);
  if (waiters > 0) limits.service.hashing.creation_waiters_max = static_cast<size_t>(waiters);
  if (failures > 0) limits.login_failures_per_address_max = static_cast<size_t>(failures);
  return limits;
}

Result<directory::RedisOptions> RedisOptionsFromConfig(const Config& config) {
  // A secret: the URL may carry an ACL user's password.
  auto url = config.RequiredSecret("TELOS_REDIS");
  if (!url.ok()) return url.status();
  auto options = directory::RedisOptionsFromUrl(*url);
  if (!options.ok()) return Status::InvalidArgument("TELOS_REDIS: " + options.status().message());
  auto ns = config.String("TELOS_REDIS_NAMESPACE", options->key_namespace);
  if (!ns.ok()) return ns.status();
  if (ns->empty() || ns->find_first_of("{}") != std::string::npos) {
    return Status::InvalidArgument("TELOS_REDIS_NAMESPACE: must be non-empty without '{' or '}'");
  }
  options->key_namespace = *ns;
  return options;
}

Result<std::unique_ptr<store::RedisCheckpointStore>> OpenCheckpoints(
    const directory::RedisOptions& redis, const Clock& clock) {
  store::RedisCheckpointStoreOptions options;
  options.host = redis.host;
  options.port = redis.port;
  options.username = redis.username;
  options.password = redis.password;
  options.key_namespace = redis.key_namespace;
  return store::RedisCheckpointStore::Create(options, clock);
}

Result<bus::NatsBusOptions> NatsOptionsFromConfig(const Config& config) {
  bus::NatsBusOptions options;
  bus::NatsCredentials& c = options.credentials;
  TELOS_READ_SETTING(options.url, config.Secret("TELOS_NATS", ""));
  TELOS_READ_SETTING(c.user, config.String("TELOS_NATS_USER", ""));
  TELOS_READ_SETTING(c.password, config.Secret("TELOS_NATS_PASSWORD", ""));
  TELOS_READ_SETTING(c.token, config.Secret("TELOS_NATS_TOKEN", ""));
  TELOS_READ_SETTING(c.creds_file, config.String("TELOS_NATS_CREDS_FILE", ""));
  TELOS_READ_SETTING(c.nkey, config.String("TELOS_NATS_NKEY", ""));
  TELOS_READ_SETTING(c.nkey_seed_file, config.String("TELOS_NATS_NKEY_SEED_FILE", ""));
  const bool any = !c.user.empty() || !c.password.empty() || !c.token.empty() ||
                   !c.creds_file.empty() || !c.nkey.empty() || !c.nkey_seed_file.empty();
  if (options.url.empty() && any) {
    return Status::InvalidArgument("TELOS_NATS_*: NATS credentials are set but TELOS_NATS is not");
  }
  if (c.user.empty() != c.password.empty()) {
    return Status::InvalidArgument("TELOS_NATS_USER and TELOS_NATS_PASSWORD: set both or neither");
  }
  if (c.nkey.empty() != c.nkey_seed_file.empty()) {
    return Status::InvalidArgument(
        "TELOS_NATS_NKEY and TELOS_NATS_NKEY_SEED_FILE: set both or neither");
  }
  const int kinds = int{!c.user.empty()} + int{!c.token.empty()} + int{!c.creds_file.empty()} +
                    int{!c.nkey.empty()};
  if (kinds > 1) {
    return Status::InvalidArgument(
        "TELOS_NATS_USER/_PASSWORD, TELOS_NATS_TOKEN, TELOS_NATS_CREDS_FILE and "
        "TELOS_NATS_NKEY/_NKEY_SEED_FILE: set one kind of NATS credentials, not several");
  }
  return options;
}

Result<store::PostgresStoreOptions> PostgresOptionsFromConfig(const Config& config) {
  // A secret: a libpq URL or keyword string carries the password.
  auto url = config.RequiredSecret("TELOS_DATABASE_URL");
  if (!url.ok()) return url.status();
  auto schema = config.String("TELOS_DATABASE_SCHEMA", "");
  if (!schema.ok()) return schema.status();
  store::PostgresStoreOptions options;
  options.conninfo = *url;
  options.schema = *schema;
  return options;
}

Result<FrontDoorSettings> ReadFrontDoorSettings(const Config& config) {
  FrontDoorSettings s;
  TELOS_READ_SETTING(s.bind_address, config.String("TELOS_BIND", s.bind_address));
  TELOS_READ_SETTING(s.telnet_port, config.Port("TELOS_TELNET_PORT", s.telnet_port));
  TELOS_READ_SETTING(s.http_port, config.Port("TELOS_HTTP_PORT", s.http_port));
  TELOS_READ_SETTING(s.web_dir, config.String("TELOS_WEB_DIR", s.web_dir));
  TELOS_READ_SETTING(s.idle_timeout_ms,
                     config.Int("TELOS_IDLE_TIMEOUT_MS", 0, 0, 24 * 3600 * 1000));
  TELOS_READ_SETTING(s.connections_per_address,
                     config.Int("TELOS_CONNECTIONS_PER_ADDRESS_MAX", 0, 0, 1'000'000));
  auto lines_per_second = config.Int("TELOS_INPUT_LINES_PER_SECOND", 0, 0, 10'000);
  if (!lines_per_second.ok()) return lines_per_second.status();
  s.input_lines_per_second = static_cast<double>(*lines_per_second);
  if (s.bind_address.empty()) return Status::InvalidArgument("TELOS_BIND: must not be empty");
  TELOS_READ_SETTING(s.admin, net::ReadAdminBind(config, s.admin.port, s.http_port));
  return s;
}

FrontDoor::FrontDoor(boost::asio::io_context& io, const FrontDoorSettings& settings,
                     net::TerminalHandlerFactory terminals, Mssp mssp, const Clock& clock,
                     Logger& log, Metrics& metrics)
    : telnet_(io, TelnetOptions(settings, std::move(mssp)), terminals, clock, log, metrics),
      http_(io, HttpOptions(settings), log),
      admin_(io, net::AdminServerOptions(settings.admin), log) {
  net::WebSocketOptions ws_options;
  ws_options.idle_timeout_ms = OrDefault(settings.idle_timeout_ms, limits::kSessionIdleTimeoutMs);
  ws_options.input_lines_per_second =
      OrDefault(settings.input_lines_per_second, limits::kInputLinesPerSecond);
  http_.HandleWebSocket("/ws", terminals, clock, ws_options);
  if (auto files = ServeWebFiles(http_, settings.web_dir); files.ok()) {
    log.Info("web client", {{"dir", settings.web_dir}, {"files", static_cast<int64_t>(*files)}});
  } else {
    log.Warn("web client not served", {{"error", files.status().ToString()}});
  }
}

Status FrontDoor::Start() {
  auto telnet_port = telnet_.Start();
  if (!telnet_port.ok()) return telnet_port.status();
  auto http_port = http_.Start();
  if (!http_port.ok()) {
    telnet_.Stop();
    return http_port.status();
  }
  auto admin_port = admin_.Start();
  if (!admin_port.ok()) {
    telnet_.Stop();
    http_.Stop();
    return Status::Unavailable("TELOS_ADMIN_BIND/TELOS_ADMIN_PORT: " +
                               admin_port.status().message());
  }
  telnet_port_ = *telnet_port;
  http_port_ = *http_port;
  admin_port_ = *admin_port;
  return Status::Ok();
}

void FrontDoor::Stop() {
  telnet_.Stop();
  http_.Stop();
  admin_.Stop();
}

Result<std::unique_ptr<telemetry::Telemetry>> StartTelemetry(const Config& config,
                                                             std::string_view role,
                                                             Metrics& metrics, Logger& log) {
  auto settings = telemetry::ReadTelemetrySettings(config, role, kVersion);
  if (!settings.ok()) return settings.status();
  telemetry::AddProcessMetrics(
      metrics, {.version = kVersion, .build_type = kBuildType, .compiler = kCompiler});
  return telemetry::Telemetry::Start(*settings, metrics, log);
}

Result<std::string> AdvertisedAddress(const std::string& listen, const std::string& advertise) {
  if (!advertise.empty()) return advertise;
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("TELOS_WORLD_LISTEN: expected host:port, got '" + listen + "'");
  }
  const std::string host = listen.substr(0, colon);
  if (host != "0.0.0.0" && host != "[::]" && host != "::") return listen;
  // A wildcard listener: advertise this host's first non-loopback IPv4 address.
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) {
    return Status::InvalidArgument("TELOS_ADVERTISE: cannot list this host's addresses; set it");
  }
  std::string found;
  for (ifaddrs* i = interfaces; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) found = text;
  }
  freeifaddrs(interfaces);
  if (found.empty()) {
    return Status::InvalidArgument(
        "TELOS_ADVERTISE: no non-loopback address to advertise for a wildcard listener; set it");
  }
  return found + listen.substr(colon);
}

StopSignal::StopSignal(boost::asio::io_context& io, Logger& log) : signals_(io, SIGINT, SIGTERM) {
  signals_.async_wait([this, &log](const boost::system::error_code& error, int signal_number) {
    if (error) return;
    log.Info("signal received: shutting down", {{"signal", signal_number}});
    std::lock_guard lock(mu_);
    stop_ = true;
    cv_.notify_all();
  });
}

void StopSignal::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_; });
}

ReloadSignal::ReloadSignal(boost::asio::io_context& io, Logger& log, std::function<void()> reload)
    : signals_(io, SIGHUP), log_(log), reload_(std::move(reload)) {
  Arm();
}

ReloadSignal::~ReloadSignal() {
  Stop();
  std::thread worker;
  {
    std::lock_guard lock(mu_);
    worker = std::move(worker_);
  }
  if (worker.joinable()) worker.join();
}

void ReloadSignal::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;  // a handler past its gate check now starts no worker
  }
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  // A handler already running still uses this object (the log, the signal set): wait for it.
  handlers_->Close();
}

void ReloadSignal::Arm() {
  signals_.async_wait([this, gate = handlers_](const boost::system::error_code& error, int) {
    const InFlightGate::Pass pass = gate->TryEnter();
    if (!pass || error) return;  // stopped (this may be gone), or cancelled
    std::lock_guard lock(mu_);
    if (stopped_) return;
    if (running_.exchange(true)) {
      log_.Warn("SIGHUP: a content reload is already running; this one is ignored");
    } else {
      log_.Info("SIGHUP: reloading content");
      if (worker_.joinable()) worker_.join();  // the last one, finished
      worker_ = std::thread([this] {
        reload_();
        running_.store(false);
      });
    }
    Arm();
  });
}

void LogFleetReload(const shard::FleetReloadReport& report, Logger& log) {
  std::string lines;
  for (const std::string& line : report.lines) {
    log.Info("reload: " + line);
    lines += (lines.empty() ? "" : "; ") + line;
  }
  if (report.status.ok()) {
    log.Info("reload applied", {{"worlds", lines}});
  } else {
    log.Error("reload refused", {{"error", report.status.ToString()}, {"details", lines}});
  }
}

}  // namespace telos::app
