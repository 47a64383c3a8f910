// WhoJson: the /api/who document, {"count":n,"players":[{"name","level","zone"}, ...]}.
//
// Names and zone ids are repaired by the base UTF-8 rule (telos/base/utf8.h) and the document is
// serialized by Boost.JSON, so it parses whatever a name holds. Members keep this order, which
// operators' scripts and the e2e tests read.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "telos/world/ports.h"

namespace telos::world {

std::string WhoJson(const std::vector<WhoEntry>& who);

}  // namespace telos::world
