// The rules for names players choose. Stricter than what the stores accept: a character name is
// 3 to 12 letters, shown capitalised ("aLDRIC" becomes "Aldric"); an account name is 3 to 20
// letters, digits or '_' and starts with a letter. Names that would confuse other players or
// impersonate staff ("admin", "someone", "self", ...) are reserved for both.
//
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::account {

// InvalidArgument with a sentence a player can act on.
Status ValidateCharacterName(std::string_view name);
Status ValidateAccountName(std::string_view name);
bool IsReservedName(std::string_view name);
// "aLDRIC" -> "Aldric". REQUIRES: ValidateCharacterName(name) is OK.
std::string DisplayCharacterName(std::string_view name);

}  // namespace telos::account
