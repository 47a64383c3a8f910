// Quest predicates (game.toml: a step with kind = "lua" and a `when`): how a `when` becomes a
// script, shared by the loader (which compiles it to report errors at load) and ZoneCore
// (which loads it into the zone's VM and calls it).
//
// A `when` is the body of a function(player, quest_id) that returns true when the step is
// done; inside it `has_item(ref)` says whether the player carries or wears such an item. The
// wrapper keeps the body's first line on line 1, so error lines are the body's own.
#pragma once

#include <string>
#include <string_view>

namespace telos::world {

inline constexpr const char* kQuestPredicateFunction = "when";

// The script name a quest step's `when` is loaded as (it shows in logs as scripts/<name>:line).
inline std::string QuestPredicateScript(std::string_view quest_id, size_t step_index) {
  return "quest " + std::string(quest_id) + " step " + std::to_string(step_index + 1);
}

inline std::string QuestPredicateSource(std::string_view when) {
  return "function when(player, quest_id) local function has_item(ref) "
         "return telos.has_item(player, ref) > 0 end " +
         std::string(when) + "\nend\n";
}

}  // namespace telos::world
