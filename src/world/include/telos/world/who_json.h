// WhoJson: the /api/who document, {"count":n,"players":[{"name","level","zone"}, ...]}.
// RecordsJson: the /api/records document, the fleet-wide records:
//   {"count":n,"records":[{"kind","subject","name","count",
//                          "first":{"actor","at_ms"},"last":{"actor","at_ms"}}, ...]}
// where "name" is what the subject is called in the pack (a boss's name), else the subject.
//
// Names and zone ids are repaired by the base UTF-8 rule (telos/base/utf8.h) and the document is
// serialized by Boost.JSON, so it parses whatever a name holds. Members keep this order, which
// operators' scripts and the e2e tests read.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "telos/world/content.h"
#include "telos/world/ports.h"

namespace telos::world {

std::string WhoJson(const std::vector<WhoEntry>& who);
std::string RecordsJson(const Pack& pack, const std::vector<RecordLine>& records);
// A record's subject as players read it: a mob's name ("the Hollow Abbot") for a "zone:id"
// subject the pack knows, else the subject itself.
std::string RecordSubjectName(const Pack& pack, const RecordLine& record);

}  // namespace telos::world
