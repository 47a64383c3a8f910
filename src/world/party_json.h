// The JSON shape of PartyState and PartyInvite, shared by the party messages (party.cc) and the
// character state that carries a member's copy (character_state.cc). Private to src/world.
//
// Thread safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include "telos/world/party.h"

namespace telos::world {

boost::json::object PartyToJson(const PartyState& party);
// False when `value` is not a well-formed party within the limits; *out is then unspecified.
bool PartyFromJson(const boost::json::value& value, PartyState* out);

boost::json::object InviteToJson(const PartyInvite& invite);
bool InviteFromJson(const boost::json::value& value, PartyInvite* out);

}  // namespace telos::world
