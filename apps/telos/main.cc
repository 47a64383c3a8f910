// telos: the one TelosMUD binary. Each role is a subcommand; this file parses flags and hands
// over to the role's wiring, nothing more. Settings come from TELOS_* variables (and the TOML
// file TELOS_CONFIG names); a bad one is reported by name and the process exits with code 2.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "account_role.h"
#include "admin.h"
#include "bots.h"
#include "ctl.h"
#include "director_role.h"
#include "gate_role.h"
#include "keygen.h"
#include "serve.h"
#include "telos/base/config.h"
#include "version.h"
#include "world_role.h"

namespace {

// Reads the configuration or exits with the configuration error code.
telos::Config LoadConfigOrExit() {
  auto config = telos::Config::FromProcess();
  if (!config.ok()) {
    std::fprintf(stderr, "telos: %s\n", config.status().message().c_str());
    std::exit(telos::kExitConfigError);
  }
  return std::move(*config);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"TelosMUD: a server for persistent multiplayer text worlds"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(telos::kVersion));
  int exit_code = 0;

  auto* version = app.add_subcommand("version", "Print the version and build information");
  version->callback([] {
    std::printf("telos %s (%s build, %s)\n", telos::kVersion, telos::kBuildType, telos::kCompiler);
  });

  auto* serve = app.add_subcommand(
      "serve",
      "Run the whole game in one process: telnet (TELOS_TELNET_PORT, 4000), web client and HTTP "
      "API (TELOS_HTTP_PORT, 8080), SQLite under TELOS_DATA_DIR (./telos-data); /metrics and "
      "/api/cluster on the admin listener (TELOS_ADMIN_BIND 127.0.0.1, TELOS_ADMIN_PORT 9080)");
  serve->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadServeSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos serve: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunServe(*settings, config);
  });

  auto* account = app.add_subcommand(
      "account",
      "Run the fleet's account service: gRPC for the gates on TELOS_ACCOUNT_LISTEN "
      "(127.0.0.1:7100) over PostgreSQL (TELOS_DATABASE_URL), signing login assertions with "
      "TELOS_SIGNING_KEY_FILE; health on TELOS_HTTP_PORT (8090), metrics on the admin listener "
      "(TELOS_ADMIN_BIND 127.0.0.1, TELOS_ADMIN_PORT 9090)");
  account->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadAccountRoleSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos account: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunAccountRole(*settings, config);
  });

  auto* world = app.add_subcommand(
      "world",
      "Run one world shard of a fleet: claims zones from TELOS_ZONE_POOL in the Redis directory "
      "(TELOS_REDIS), keeps characters in PostgreSQL (TELOS_DATABASE_URL), serves gates over gRPC "
      "on TELOS_WORLD_LISTEN (127.0.0.1:7200); health on TELOS_HTTP_PORT (8081), metrics and "
      "/api/cluster on the admin listener (TELOS_ADMIN_BIND 127.0.0.1, TELOS_ADMIN_PORT 9081)");
  world->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadWorldRoleSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos world: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunWorldRole(*settings, config);
  });

  auto* gate = app.add_subcommand(
      "gate",
      "Run a fleet gate: telnet (TELOS_TELNET_PORT, 4000) and web (TELOS_HTTP_PORT, 8080), login "
      "through the account service (TELOS_ACCOUNT), sessions routed to world shards by zone; "
      "/metrics and /api/cluster on the admin listener (TELOS_ADMIN_BIND 127.0.0.1, "
      "TELOS_ADMIN_PORT 9080)");
  gate->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadGateRoleSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos gate: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunGateRole(*settings, config);
  });

  auto* director = app.add_subcommand(
      "director",
      "Run a fleet director for TELOS_DIRECTOR_SCOPE (fleet): one leader per scope through the "
      "Redis directory (TELOS_REDIS) rebalances zones by load and answers draining shards on NATS "
      "(TELOS_NATS); the others stand by. /metrics, /api/health and /api/cluster on the admin "
      "listener (TELOS_ADMIN_BIND 127.0.0.1, TELOS_ADMIN_PORT 9095)");
  director->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadDirectorRoleSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos director: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunDirectorRole(*settings, config);
  });

  telos::app::BotsFlags bots_flags;
  auto* bots = app.add_subcommand(
      "bots", "Load-test a server with a swarm of scripted players and report RTT and tick lag");
  bots->add_option("--target", bots_flags.targets,
                   "host:port of a gate (telnet port, or HTTP port for websocket); repeatable")
      ->required();
  bots->add_option("--transport", bots_flags.transport, "telnet or websocket")
      ->check(CLI::IsMember({"telnet", "websocket"}));
  bots->add_option("--dialect", bots_flags.dialect,
                   "telos, or tinymux to drive a TinyMUX server with the same workload")
      ->check(CLI::IsMember({"telos", "tinymux"}));
  bots->add_option("--bots", bots_flags.bots, "How many bots (at most 20000)");
  bots->add_option("--ramp-per-second", bots_flags.ramp_per_second, "Bots started per second");
  bots->add_option("--duration-s", bots_flags.duration_s,
                   "Seconds measured once every bot is started (at most 3600)");
  bots->add_option("--mix", bots_flags.mix, "Behaviour weights, e.g. walk=3,look=2,idle=1");
  bots->add_option("--report", bots_flags.report_path, "Write the JSON report here (else stdout)");
  bots->add_option("--csv", bots_flags.csv_path, "Write the per-second series here");
  bots->add_option("--metrics-url", bots_flags.metrics_url,
                   "The server's /metrics on its admin listener (http://127.0.0.1:9080/metrics "
                   "for a serve or gate), read before and after the measured window");
  bots->add_option("--accounts-prefix", bots_flags.accounts_prefix,
                   "Accounts are <prefix>_<n>; a run with the same prefix reuses them");
  bots->add_option("--server-pid", bots_flags.server_pid,
                   "Sample this process's CPU and memory from /proc during the window");
  bots->add_option("--think-ms", bots_flags.think_ms, "Mean time between a bot's actions");
  bots->add_option("--reply-timeout-ms", bots_flags.reply_timeout_ms,
                   "A reply later than this counts as an error");
  bots->add_option("--fight-target", bots_flags.fight_target, "What the fight behaviour attacks");
  bots->add_option("--spread-steps", bots_flags.spread_steps,
                   "Before the window, each bot explores the world for a random 0..N steps "
                   "(N at most 1000)");
  bots->add_flag("--allow-remote", bots_flags.allow_remote,
                 "Allow targets that are not loopback (only servers you own)");
  bots->add_option("--seed", bots_flags.seed, "Seed of the bots' choices (0: random)");
  bots->callback([&exit_code, &bots_flags] { exit_code = telos::app::RunBots(bots_flags); });

  std::string keygen_dir;
  std::string keygen_name;
  bool keygen_rotate = false;
  auto* keygen = app.add_subcommand(
      "keygen",
      "Make an Ed25519 key pair for signed fleet documents: DIR/NAME.key (secret, mode 0600) and "
      "DIR/NAME.pub; never overwrites. With --rotate, rotate that pair in place and print the "
      "roll-out order");
  keygen->add_option("--dir", keygen_dir, "Directory for the key files (created if missing)")
      ->required();
  keygen->add_option("--name", keygen_name, "Base name of the key files, e.g. assertion")
      ->required();
  keygen->add_flag("--rotate", keygen_rotate,
                   "Rotate the existing pair: it becomes NAME.previous.key/.pub (replacing the "
                   "pair two rotations old) and a new pair takes NAME.key/.pub");
  keygen->callback([&exit_code, &keygen_dir, &keygen_name, &keygen_rotate] {
    exit_code = keygen_rotate ? telos::app::RunKeygenRotate(keygen_dir, keygen_name)
                              : telos::app::RunKeygen(keygen_dir, keygen_name);
  });

  std::string admin_account;
  std::string admin_role;
  auto* admin = app.add_subcommand(
      "admin",
      "Staff roles on accounts, in the account database (PostgreSQL at TELOS_DATABASE_URL, else "
      "TELOS_DATA_DIR/telos.db): how the first admin is made");
  admin->require_subcommand(1);
  const auto add_admin_action = [&](const char* name, const char* what,
                                    telos::app::AdminAction action) {
    auto* sub = admin->add_subcommand(name, what);
    sub->add_option("account", admin_account, "The account name")->required();
    if (action != telos::app::AdminAction::kShow) {
      sub->add_option("role", admin_role, "builder or admin")->required();
    }
    sub->callback([&exit_code, &admin_account, &admin_role, action] {
      const telos::Config config = LoadConfigOrExit();
      exit_code = telos::app::RunAdminRoles(action, admin_account, admin_role, config);
    });
  };
  add_admin_action("grant", "Give an account a role (builder or admin)",
                   telos::app::AdminAction::kGrant);
  add_admin_action("revoke", "Take a role from an account", telos::app::AdminAction::kRevoke);
  add_admin_action("roles", "Print an account's roles", telos::app::AdminAction::kShow);

  telos::app::CtlClusterFlags ctl_cluster_flags;
  auto* ctl = app.add_subcommand(
      "ctl", "Operator CLI: inspect or reload a running fleet (needs TELOS_REDIS)");
  ctl->require_subcommand(1);
  auto* ctl_cluster = ctl->add_subcommand(
      "cluster",
      "Live shards, the owner of every zone in the content pack (TELOS_CONTENT_DIR), players per "
      "shard and the standbys");
  ctl_cluster->add_flag("--json", ctl_cluster_flags.json,
                        "Print one JSON object instead of tables");
  ctl_cluster->callback([&exit_code, &ctl_cluster_flags] {
    const telos::Config config = LoadConfigOrExit();
    exit_code = telos::app::RunCtlCluster(ctl_cluster_flags, config);
  });

  auto* ctl_reload = ctl->add_subcommand(
      "reload",
      "Content hot reload: validate the pack in TELOS_CONTENT_DIR, then every live world "
      "rebuilds its changed zones in place (needs TELOS_REDIS and TELOS_NATS)");
  ctl_reload->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    exit_code = telos::app::RunCtlReload(config);
  });

  telos::app::CtlDirectorFlags ctl_directives_flags;
  auto* ctl_directives = ctl->add_subcommand(
      "directives",
      "The leader director of TELOS_DIRECTOR_SCOPE and the live rebalance directives");
  ctl_directives->add_flag("--json", ctl_directives_flags.json, "Print one JSON object");
  ctl_directives->callback([&exit_code, &ctl_directives_flags] {
    const telos::Config config = LoadConfigOrExit();
    exit_code = telos::app::RunCtlDirectives(ctl_directives_flags, config);
  });
  telos::app::CtlDirectorFlags ctl_rebalance_flags;
  auto* ctl_rebalance = ctl->add_subcommand(
      "rebalance",
      "The moves the rebalance planner would make now, with their explanations (--dry-run: "
      "computed from the live directory, nothing issued)");
  ctl_rebalance->add_flag("--dry-run", ctl_rebalance_flags.dry_run,
                          "Plan only (required: the leader director issues moves)");
  ctl_rebalance->add_flag("--json", ctl_rebalance_flags.json, "Print one JSON object");
  ctl_rebalance->callback([&exit_code, &ctl_rebalance_flags] {
    const telos::Config config = LoadConfigOrExit();
    exit_code = telos::app::RunCtlRebalance(ctl_rebalance_flags, config);
  });

  telos::app::CtlAuditFlags ctl_audit_flags;
  auto* ctl_audit = ctl->add_subcommand(
      "audit",
      "The staff audit trail, newest first, from the account database (PostgreSQL at "
      "TELOS_DATABASE_URL, else TELOS_DATA_DIR/telos.db)");
  ctl_audit->add_option("--limit", ctl_audit_flags.limit, "Rows to print (at most 1000)");
  ctl_audit->add_option("--actor", ctl_audit_flags.actor, "Only this staff member's actions");
  ctl_audit->add_option("--target", ctl_audit_flags.target, "Only actions on this target");
  ctl_audit->add_flag("--json", ctl_audit_flags.json, "Print one JSON array");
  ctl_audit->callback([&exit_code, &ctl_audit_flags] {
    const telos::Config config = LoadConfigOrExit();
    exit_code = telos::app::RunCtlAudit(ctl_audit_flags, config);
  });

  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
