// Account and session commands: quit, password, alias, mail.
#include <charconv>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

void Alias(CommandContext& c) {
  auto [name, expansion] = SplitWord(c.args);
  std::string key = Lower(name);
  if (key.empty()) {
    if (c.actor.aliases.empty()) c.zone.Send(c.actor, "You have no aliases.");
    for (const auto& [alias, text] : c.actor.aliases) c.zone.Send(c.actor, alias + " = " + text);
    return;
  }
  if (key == "alias" || key.size() > 32) {
    c.zone.Send(c.actor, "That cannot be an alias.");
    return;
  }
  if (expansion.empty()) {
    c.zone.Send(c.actor, c.actor.aliases.erase(key) ? "Alias '" + key + "' removed."
                                                    : "No alias '" + key + "'.");
    return;
  }
  if (expansion.size() > limits::kAliasBytesMax) {
    c.zone.Send(c.actor, "That alias is too long.");
    return;
  }
  if (c.actor.aliases.count(key) == 0 &&
      c.actor.aliases.size() >= limits::kAliasesPerCharacterMax) {
    c.zone.Send(c.actor, "You have too many aliases. Remove one first.");
    return;
  }
  c.actor.aliases[key] = std::string(expansion);
  c.zone.Send(c.actor, "Alias '" + key + "' = " + std::string(expansion));
}

void Password(CommandContext& c) {
  auto [old_password, new_password] = SplitWord(c.args);
  if (old_password.empty() || new_password.empty()) {
    c.zone.Send(c.actor, "Usage: password <old> <new>");
    return;
  }
  std::string key = c.actor.key;
  ZoneCore::Poster post = c.zone.poster();
  c.zone.deps().passwords->Change(key, std::string(old_password), std::string(new_password),
                                  [post, key](Status status) {
                                    (void)post([key, status](ZoneCore& z) {
                                      if (status.ok()) {
                                        z.Notice(key, "Password changed.");
                                      } else if (status.code() == StatusCode::kPermissionDenied) {
                                        z.Notice(key, "That is not your current password.");
                                      } else {
                                        z.Notice(key, "Password not changed: " + status.message());
                                      }
                                    });
                                  });
}

void Mail(CommandContext& c) {
  auto [sub, rest] = SplitWord(c.args);
  std::string action = Lower(sub);
  std::string key = c.actor.key;
  ZoneCore::Poster post = c.zone.poster();
  MailPort& mail = *c.zone.deps().mail;
  if (action.empty() || action == "list") {
    mail.List(key, [post, key](Result<std::vector<MailHeader>> result) {
      (void)post([key, result = std::move(result)](ZoneCore& z) {
        if (!result.ok()) {
          z.Notice(key, "The post office is closed right now. Try again later.");
          return;
        }
        if (result->empty()) z.Notice(key, "You have no mail.");
        for (const MailHeader& header : *result) {
          z.Notice(key, std::string(header.read ? "  " : "* ") + "#" + std::to_string(header.id) +
                            " from " + header.from + ": " + header.subject);
        }
      });
    });
    return;
  }
  if (action == "read") {
    int64_t id = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
    if (rest.empty() || ec != std::errc() || end != rest.data() + rest.size()) {
      c.zone.Send(c.actor, "Usage: mail read <number>");
      return;
    }
    mail.Read(key, id, [post, key](Result<MailMessage> result) {
      (void)post([key, result = std::move(result)](ZoneCore& z) {
        if (!result.ok()) {
          z.Notice(key, result.status().code() == StatusCode::kNotFound
                            ? "No such letter."
                            : "The post office is closed right now. Try again later.");
          return;
        }
        z.Notice(key, "From: " + result->header.from);
        z.Notice(key, "Subject: " + result->header.subject);
        z.Notice(key, result->body);
      });
    });
    return;
  }
  if (action == "send") {
    auto [to, body] = SplitWord(rest);
    if (to.empty() || body.empty()) {
      c.zone.Send(c.actor, "Usage: mail send <name> <message>");
      return;
    }
    if (body.size() > limits::kMailBodyBytesMax) {
      c.zone.Send(c.actor, "That letter is too long.");
      return;
    }
    std::string subject(body.substr(0, std::min<size_t>(body.size(), 40)));
    std::string recipient(to);
    mail.Send(c.actor.name, recipient, subject, std::string(body),
              [post, key, recipient](Status status) {
                (void)post([key, recipient, status](ZoneCore& z) {
                  if (status.ok()) {
                    z.Notice(key, "Your letter to " + recipient + " is on its way.");
                  } else if (status.code() == StatusCode::kNotFound) {
                    z.Notice(key, "Nobody called '" + recipient + "' receives mail here.");
                  } else {
                    z.Notice(key, "The post office is closed right now. Try again later.");
                  }
                });
              });
    return;
  }
  c.zone.Send(c.actor, "Usage: mail [list] | mail read <number> | mail send <name> <message>");
}

}  // namespace

void RegisterMiscCommands(CommandRegistry& r) {
  r.Add({"quit",
         {},
         Position::kStanding,
         "quit",
         "Saves your character and leaves the world.",
         [](CommandContext& c) { c.zone.QuitPlayer(c.actor); }});
  r.Add({"password",
         {},
         Position::kSleeping,
         "password <old> <new>",
         "Changes your password.",
         Password});
  r.Add({"alias",
         {},
         Position::kSleeping,
         "alias [word [command...]]",
         "Lists, sets or removes a shortcut: 'alias gs get sword' makes 'gs' do 'get sword'.",
         Alias});
  r.Add({"mail",
         {},
         Position::kResting,
         "mail [list] | mail read <n> | mail send <name> <text>",
         "Sends and reads letters, delivered even when the recipient is away.",
         Mail});
  r.Add({"colour",
         {"color"},
         Position::kSleeping,
         "colour [on|off]",
         "Turns colour on or off.",
         [](CommandContext& c) {
           std::string arg = Lower(c.args);
           if (arg == "on" || arg == "off") c.actor.colour = arg == "on";
           c.zone.Send(c.actor, std::string("Colour is ") + (c.actor.colour ? "on." : "off."));
         }});
  r.Add(
      {"save", {}, Position::kSleeping, "save", "Saves your character now.", [](CommandContext& c) {
         c.zone.Save(c.actor, SaveReason::kPeriodic);
         c.zone.Send(c.actor, "Saved.");
       }});
}

}  // namespace telos::world
