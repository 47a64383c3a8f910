// `telos admin`: staff roles from the command line (issue 30). `telos admin grant ACCOUNT ROLE`
// and `telos admin revoke ACCOUNT ROLE` change the account row directly in the account
// database, which is also how the first admin of an empty database is made (no one in the game
// can grant anything yet). `telos admin roles ACCOUNT` prints what the account holds.
//
// The database is the one the account service signs from: PostgreSQL at TELOS_DATABASE_URL
// (TELOS_DATABASE_SCHEMA) when that is set, else the SQLite file of `telos serve`,
// TELOS_DATA_DIR/telos.db. Every grant and revoke is also an audit row. A change takes effect
// when the character next enters the world (after a quit or a kick); a character already in
// the world keeps the roles it entered with.
#pragma once

#include <cstdint>
#include <string>

#include "telos/base/config.h"

namespace telos::app {

enum class AdminAction { kGrant, kRevoke, kShow };

// Prints the account's roles after the change and returns 0; a configuration error names the
// variable and returns kExitConfigError; no such account, an unknown role or an unreachable
// database print the reason and return 1.
int RunAdminRoles(AdminAction action, const std::string& account, const std::string& role,
                  const Config& config);

// `telos ctl audit`: the staff audit trail (every world's staff actions, and role changes made
// here), newest first, from the same database.
struct CtlAuditFlags {
  int64_t limit = 50;
  std::string actor;   // only this staff member's actions
  std::string target;  // only the actions on this player (or room, or address)
  bool json = false;
};
int RunCtlAudit(const CtlAuditFlags& flags, const Config& config);

}  // namespace telos::app
