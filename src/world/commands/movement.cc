// Movement: the six directions, `go <exit>` for named exits, rest and stand.
#include "commands/registry.h"
#include "zone_core.h"

namespace telos::world {
namespace {

void Go(CommandContext& c, std::string_view dir) {
  if (dir.empty()) {
    c.zone.Send(c.actor, "Go where?");
    return;
  }
  // Party members following the walker go the same way after them.
  c.zone.WalkWithFollowers(c.actor, Lower(dir));
}

}  // namespace

void RegisterMovementCommands(CommandRegistry& r) {
  static constexpr std::pair<const char*, const char*> kDirections[] = {
      {"north", "n"}, {"east", "e"}, {"south", "s"}, {"west", "w"}, {"up", "u"}, {"down", "d"}};
  for (const auto& [name, alias] : kDirections) {
    std::string dir = name;
    r.Add({dir, {alias}, Position::kStanding, dir, "Walks " + dir + ".", [dir](CommandContext& c) {
             Go(c, dir);
           }});
  }
  r.Add({"go",
         {},
         Position::kStanding,
         "go <exit>",
         "Walks through an exit by name. Named exits also work as commands on their own.",
         [](CommandContext& c) { Go(c, c.args); }});
  // Its own command rather than an alias of "go": alone, it takes the exit named "enter" (a
  // hut, a shop) instead of asking where.
  r.Add({"enter",
         {},
         Position::kStanding,
         "enter [exit]",
         "Goes in: through the exit named 'enter', or through the exit named.",
         [](CommandContext& c) { Go(c, c.args.empty() ? std::string_view("enter") : c.args); }});
  r.Add({"rest",
         {"sit"},
         Position::kResting,
         "rest",
         "Sits down to rest: hit points, mana and moves come back twice as fast.",
         [](CommandContext& c) {
           if (c.actor.position == Position::kResting) {
             c.zone.Send(c.actor, "You are already resting.");
             return;
           }
           c.actor.position = Position::kResting;
           c.zone.Send(c.actor, "You sit down and rest.");
           c.zone.ToRoom(c.actor.room, c.actor.Display() + " sits down and rests.", c.actor.id);
         }});
  r.Add({"stand",
         {"wake"},
         Position::kSleeping,
         "stand",
         "Gets back on your feet.",
         [](CommandContext& c) {
           if (c.actor.position >= Position::kFighting) {
             c.zone.Send(c.actor, "You are already standing.");
             return;
           }
           c.actor.position = Position::kStanding;
           c.zone.Send(c.actor, "You stand up.");
           c.zone.ToRoom(c.actor.room, c.actor.Display() + " stands up.", c.actor.id);
         }});
}

}  // namespace telos::world
