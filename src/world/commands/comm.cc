// Communication: say, emote, tell, reply, ooc. A muted player (staff's mute) can use none.
#include "commands/registry.h"
#include "zone_core.h"

namespace telos::world {

void RegisterCommCommands(CommandRegistry& r) {
  r.Add({"say",
         {"'"},
         Position::kResting,
         "say <text>",
         "Says something to the room.",
         [](CommandContext& c) {
           if (c.zone.RefuseMuted(c.actor)) return;
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Say what?");
             return;
           }
           std::string text(c.args);
           c.zone.Send(c.actor, "You say, '" + text + "'");
           c.zone.ToRoom(c.actor.room, c.actor.Display() + " says, '" + text + "'", c.actor.id);
           c.zone.RunSpeechHooks(c.actor, text);
           if (!c.actor.removed && !c.actor.quests.empty()) c.zone.QuestTalk(c.actor);
         }});
  r.Add({"emote",
         {":"},
         Position::kResting,
         "emote <action>",
         "Shows an action: 'emote smiles' shows 'Alice smiles'.",
         [](CommandContext& c) {
           if (c.zone.RefuseMuted(c.actor)) return;
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Emote what?");
             return;
           }
           c.zone.ToRoom(c.actor.room, c.actor.name + " " + std::string(c.args));
         }});
  r.Add({"tell",
         {"t"},
         Position::kSleeping,
         "tell <player> <text>",
         "Sends a private message to a player anywhere in the world.",
         [](CommandContext& c) {
           if (c.zone.RefuseMuted(c.actor)) return;
           auto [name, text] = SplitWord(c.args);
           if (name.empty() || text.empty()) {
             c.zone.Send(c.actor, "Tell whom what? Usage: tell <player> <text>");
             return;
           }
           if (NameKey(name) == c.actor.key) {
             c.zone.Send(c.actor, "You mutter to yourself.");
             return;
           }
           c.zone.deps().router->Tell(c.actor.name, std::string(name), std::string(text));
         }});
  r.Add({"reply",
         {"r"},
         Position::kSleeping,
         "reply <text>",
         "Answers the last player who told you something.",
         [](CommandContext& c) {
           if (c.zone.RefuseMuted(c.actor)) return;
           if (c.actor.reply_to.empty()) {
             c.zone.Send(c.actor, "Nobody has told you anything yet.");
             return;
           }
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Reply what?");
             return;
           }
           c.zone.deps().router->Tell(c.actor.name, c.actor.reply_to, std::string(c.args));
         }});
  r.Add({"ooc",
         {},
         Position::kSleeping,
         "ooc <text>",
         "Talks on the out-of-character channel, heard by everyone in the world.",
         [](CommandContext& c) {
           if (c.zone.RefuseMuted(c.actor)) return;
           if (c.args.empty()) {
             c.zone.Send(c.actor, "Say what on ooc?");
             return;
           }
           c.zone.deps().router->Channel("ooc", c.actor.name, std::string(c.args));
         }});
}

}  // namespace telos::world
