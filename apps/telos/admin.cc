#include "admin.h"

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "role_common.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/roles.h"
#include "telos/store/postgres_store.h"
#include "telos/store/sqlite_store.h"

namespace telos::app {
namespace {

constexpr const char* kCommand = "telos admin";

// Runs `action` on the account row in `accounts`; see RunAdminRoles for the exit codes.
int ApplyToAccount(AdminAction action, const std::string& account, Roles role,
                   store::AccountStore& accounts) {
  auto record = accounts.Load(account);
  if (!record.ok()) {
    std::fprintf(stderr, "%s: %s\n", kCommand, record.status().message().c_str());
    return 1;
  }
  Roles roles = record->roles;
  if (action != AdminAction::kShow) {
    auto updated = accounts.UpdateRoles(record->id, action == AdminAction::kGrant ? role : 0,
                                        action == AdminAction::kRevoke ? role : 0);
    if (!updated.ok()) {
      std::fprintf(stderr, "%s: %s\n", kCommand, updated.status().ToString().c_str());
      return 1;
    }
    roles = *updated;
  }
  std::printf("%s: %s\n", record->name.c_str(), RoleNames(roles).c_str());
  return 0;
}

// The account database, as `telos admin` and `telos ctl audit` open it.
struct OpenedDb {
  std::unique_ptr<store::PostgresStore> postgres;
  std::unique_ptr<store::SqliteStore> sqlite;
  store::AccountStore& accounts() { return postgres ? postgres->accounts() : sqlite->accounts(); }
  store::AuditStore& audit() { return postgres ? postgres->audit() : sqlite->audit(); }
};

// Opens the database or prints why not and returns the exit code (0 on success).
int OpenDb(const Config& config, const Clock& clock, const char* command, OpenedDb& out) {
  if (config.Lookup("TELOS_DATABASE_URL").has_value()) {
    auto options = PostgresOptionsFromConfig(config);
    if (!options.ok()) {
      std::fprintf(stderr, "%s: %s\n", command, options.status().message().c_str());
      return kExitConfigError;
    }
    options->application_name = "telos-admin";
    auto opened = store::PostgresStore::Open(*options, clock);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s: cannot open PostgreSQL at TELOS_DATABASE_URL: %s\n", command,
                   opened.status().ToString().c_str());
      return opened.status().code() == StatusCode::kInvalidArgument ? kExitConfigError : 1;
    }
    out.postgres = std::move(*opened);
    return 0;
  }
  auto data_dir = config.String("TELOS_DATA_DIR", "telos-data");
  if (!data_dir.ok()) {
    std::fprintf(stderr, "%s: %s\n", command, data_dir.status().message().c_str());
    return kExitConfigError;
  }
  const std::filesystem::path path = std::filesystem::path(*data_dir) / "telos.db";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    // Creating an empty database here would make an account that no one can log in to.
    std::fprintf(stderr,
                 "%s: TELOS_DATA_DIR='%s': no telos.db there (start `telos serve` once, or set "
                 "TELOS_DATABASE_URL for a fleet)\n",
                 command, data_dir->c_str());
    return kExitConfigError;
  }
  store::SqliteStoreOptions options;
  options.path = path.string();
  auto opened = store::SqliteStore::Open(options, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s: %s\n", command, opened.status().ToString().c_str());
    return 1;
  }
  out.sqlite = std::move(*opened);
  return 0;
}

}  // namespace

int RunAdminRoles(AdminAction action, const std::string& account, const std::string& role_word,
                  const Config& config) {
  Roles role = kRolePlayer;
  if (action != AdminAction::kShow) {
    auto parsed = ParseRole(role_word);
    if (!parsed) {
      std::fprintf(stderr, "%s: unknown role '%s' (player, builder or admin)\n", kCommand,
                   role_word.c_str());
      return 1;
    }
    if (*parsed == kRolePlayer) {
      // Every account is a player; there is nothing to grant or take away.
      std::fprintf(stderr, "%s: every account is a player; grant or revoke builder or admin\n",
                   kCommand);
      return 1;
    }
    role = *parsed;
  }
  SystemClock clock;
  OpenedDb db;
  if (int code = OpenDb(config, clock, kCommand, db); code != 0) return code;
  const int code = ApplyToAccount(action, account, role, db.accounts());
  if (code == 0 && action != AdminAction::kShow) {
    // A role change is a staff action too: it goes on the trail.
    const int64_t now =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch())
            .count();
    auto appended =
        db.audit().Append({0, now, "operator", action == AdminAction::kGrant ? "grant" : "revoke",
                           account, role_word, "telos admin"});
    if (!appended.ok()) {
      std::fprintf(stderr, "%s: the change is made, but its audit row was not stored: %s\n",
                   kCommand, appended.status().ToString().c_str());
    }
  }
  return code;
}

int RunCtlAudit(const CtlAuditFlags& flags, const Config& config) {
  constexpr const char* kCtl = "telos ctl audit";
  if (flags.limit < 1 || flags.limit > static_cast<int64_t>(limits::kAuditListMax)) {
    std::fprintf(stderr, "%s: --limit must be 1 to %zu\n", kCtl, limits::kAuditListMax);
    return kExitConfigError;
  }
  SystemClock clock;
  OpenedDb db;
  if (int code = OpenDb(config, clock, kCtl, db); code != 0) return code;
  auto rows = db.audit().List(static_cast<size_t>(flags.limit), flags.actor, flags.target);
  if (!rows.ok()) {
    std::fprintf(stderr, "%s: %s\n", kCtl, rows.status().ToString().c_str());
    return 1;
  }
  if (flags.json) {
    boost::json::array out;
    for (const store::AuditRow& row : *rows) {
      out.push_back(boost::json::object{{"id", row.id},
                                        {"at_unix_ms", row.at_unix_ms},
                                        {"actor", row.actor},
                                        {"action", row.action},
                                        {"target", row.target},
                                        {"detail", row.detail},
                                        {"world", row.world}});
    }
    std::printf("%s\n", boost::json::serialize(out).c_str());
    return 0;
  }
  std::printf("%-8s %-24s %-16s %-10s %-16s %-12s %s\n", "ID", "WHEN (UTC)", "WHO", "WHAT",
              "TARGET", "WORLD", "DETAIL");
  for (const store::AuditRow& row : *rows) {
    const std::time_t seconds = static_cast<std::time_t>(row.at_unix_ms / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &utc);
    std::printf("%-8lld %-24s %-16s %-10s %-16s %-12s %s\n", static_cast<long long>(row.id), when,
                row.actor.c_str(), row.action.c_str(), row.target.c_str(), row.world.c_str(),
                row.detail.c_str());
  }
  return 0;
}

}  // namespace telos::app
