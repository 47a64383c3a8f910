// Account and session commands: quit, password, alias, mail.
#include <charconv>
#include <functional>
#include <string>
#include <string_view>

#include "commands/registry.h"
#include "telos/base/limits.h"
#include "telos/base/utf8.h"
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

// The password dialogue. Each secret is asked on its own prompt with the terminal's echo off,
// so it is never shown on screen, never kept in a client's history and never passes through
// Dispatch (aliases, scripts, the room). Every prompt carries echo off, not only the first: a
// connection that took the character over mid-dialogue hides the answer as well. Whatever ends
// the dialogue turns echo back on. An empty answer cancels.
void AskPassword(ZoneCore& zone, Actor& actor, std::string_view question,
                 std::function<void(ZoneCore&, Actor&, std::string)> answer) {
  zone.Send(actor, question);
  actor.pending.echo = PlayerOutput::Echo::kOff;
  actor.answer = std::move(answer);
}

// Ends the dialogue with echo back on. The player's Enter was not echoed either, so a bare
// line ends the input line the prompt left open.
void EndPasswordDialogue(ZoneCore& zone, Actor& actor, std::string_view line) {
  actor.pending.echo = PlayerOutput::Echo::kOn;
  zone.Send(actor, "");
  zone.Send(actor, line);
}

// The last answer is in: the account service decides, and its verdict arrives as a notice.
void AnswerAgain(const std::string& old_password, const std::string& new_password, ZoneCore& zone,
                 Actor& actor, std::string again) {
  if (again != new_password) {
    return EndPasswordDialogue(zone, actor, "The passwords differ. Your password is unchanged.");
  }
  EndPasswordDialogue(zone, actor, "Changing your password...");
  std::string key = actor.key;
  ZoneCore::Poster post = zone.poster();
  zone.deps().passwords->Change(key, old_password, new_password, [post, key](Status status) {
    (void)post([key, status](ZoneCore& z) {
      if (status.ok()) {
        z.Notice(key, "Password changed.");
      } else if (status.code() == StatusCode::kPermissionDenied) {
        z.Notice(key, "That is not your current password. Your password is unchanged.");
      } else {
        z.Notice(key, "Password not changed: " + status.message());
      }
    });
  });
}

void AnswerNew(const std::string& old_password, ZoneCore& zone, Actor& actor,
               std::string new_password) {
  if (new_password.empty()) return EndPasswordDialogue(zone, actor, "Your password is unchanged.");
  zone.Send(actor, "");
  AskPassword(zone, actor, "Again:", std::bind_front(AnswerAgain, old_password, new_password));
}

void AnswerOld(ZoneCore& zone, Actor& actor, std::string old_password) {
  if (old_password.empty()) return EndPasswordDialogue(zone, actor, "Your password is unchanged.");
  zone.Send(actor, "");
  AskPassword(zone, actor, "New password:", std::bind_front(AnswerNew, std::move(old_password)));
}

void Password(CommandContext& c) {
  if (!c.args.empty()) {
    // The line is already typed, shown and perhaps kept by the client: it is not used, so the
    // habit of typing a password on a command line gets no reward.
    c.zone.Send(c.actor,
                "Type 'password' on its own: it asks for your old and new passwords on prompts "
                "that hide what you type. Nothing was changed. If that line held your real "
                "password, change it now.");
    return;
  }
  if (c.actor.position == Position::kFighting) {
    c.zone.Send(c.actor, "Not while you are fighting!");
    return;
  }
  c.zone.Send(c.actor, "Changing your password (an empty answer cancels).");
  AskPassword(c.zone, c.actor, "Old password:", AnswerOld);
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
    // A letter is speech too: a mute that left mail open would only move the flood there.
    if (c.zone.RefuseMuted(c.actor)) return;
    auto [to, body] = SplitWord(rest);
    if (to.empty() || body.empty()) {
      c.zone.Send(c.actor, "Usage: mail send <name> <message>");
      return;
    }
    if (body.size() > limits::kMailBodyBytesMax) {
      c.zone.Send(c.actor, "That letter is too long.");
      return;
    }
    // The subject is the letter's start, cut where no character is split: stores refuse
    // invalid UTF-8, so a cut inside one would lose the letter.
    std::string subject(Utf8Prefix(body, limits::kMailSubjectFromBodyBytes));
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
         "password",
         "Changes your password: asks for the old one and the new one (twice) on prompts that "
         "hide what you type.",
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
