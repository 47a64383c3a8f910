// Combat commands: kill, flee, consider.
#include "commands/registry.h"
#include "zone_core.h"

namespace telos::world {

void RegisterCombatCommands(CommandRegistry& r) {
  r.Add({"kill",
         {"k", "attack", "hit"},
         Position::kStanding,
         "kill <creature>",
         "Attacks a creature. Fights go on in rounds until someone dies or flees.",
         [](CommandContext& c) {
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Kill whom?");
             return;
           }
           Actor* target = c.zone.FindInRoom(c.actor, c.args);
           if (target == nullptr) {
             c.zone.Send(c.actor, "You do not see '" + std::string(c.args) + "' here.");
             return;
           }
           if (target == &c.actor) {
             c.zone.Send(c.actor, "You give yourself a stern talking-to.");
             return;
           }
           if (target->is_player) {
             c.zone.Send(c.actor, "You cannot attack other players.");
             return;
           }
           if (!c.zone.CanFightHere(c.actor)) {
             c.zone.Send(c.actor, "This is a place of peace. No fighting here.");
             return;
           }
           c.zone.Send(c.actor, "{r}You attack " + target->name + "!{x}");
           c.zone.ToRoom(c.actor.room, c.actor.Display() + " attacks " + target->name + "!",
                         c.actor.id);
           c.zone.StartFight(c.actor, *target);
         }});
  r.Add({"flee",
         {},
         Position::kFighting,
         "flee",
         "Runs from a fight through a random exit.",
         [](CommandContext& c) {
           if (c.actor.fighting == 0) {
             c.zone.Send(c.actor, "You are not fighting anyone.");
             return;
           }
           c.zone.Flee(c.actor);
         }});
  r.Add({"consider",
         {"con"},
         Position::kResting,
         "consider <creature>",
         "Judges how a fight with a creature would go.",
         [](CommandContext& c) {
           Actor* target = c.args.empty() ? nullptr : c.zone.FindInRoom(c.actor, c.args);
           if (target == nullptr) {
             c.zone.Send(c.actor, "Consider whom?");
             return;
           }
           int diff = target->level - c.actor.level;
           const char* verdict = diff <= -5   ? "You could kill it with a stern look."
                                 : diff <= -2 ? "An easy fight."
                                 : diff <= 1  ? "A fair fight."
                                 : diff <= 4  ? "You would need some luck."
                                              : "Death would thank you for the gift.";
           c.zone.Send(c.actor, target->Display() + ": " + verdict);
         }});
}

}  // namespace telos::world
