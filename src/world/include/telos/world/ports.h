// Ports: the world engine's outbound interfaces, implemented outside src/world.
//
// The engine has no sockets and no database. It talks to the session layer through PlayerSink
// (the gate implements it per session) and to durable state through CharacterPersistence,
// MailPort and PasswordPort (serve wires them to src/store and the account service). Tests use
// in-memory fakes.
//
// Threading: every method here is called from a zone's executor and must not block. Sinks are
// called from whichever zone currently hosts the player, so over a session's life from several
// executors (never two at once for one player): implementations must be thread-safe.
// Completion callbacks (`done`) may run on any thread, before or after the call returns; the
// engine re-posts them onto the right zone itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::world {

// A structured, GMCP event beside the text: "Char.Vitals", "Room.Info", "Comm.Channel.Text"
// (docs/protocols.md lists them all).
struct OutputEvent {
  std::string name;
  std::string json;  // the event body, a JSON object
};

// What one flush produces for one player: text and events, in order of production. The text is
// whole lines, each ending in "\n", colour already applied or stripped per the character's
// preference. One string rather than a string per line: a zone appends to it for every line a
// player hears, and in a crowded room that is most of the zone's work.
struct PlayerOutput {
  std::string text;
  size_t line_count = 0;
  // Of line_count, the lines that answered the player's own commands: the zone caps these
  // apart from what others' doings add, so a flood of chatter cannot cut a reply.
  size_t reply_line_count = 0;
  std::vector<OutputEvent> events;
  // The character left the world (quit): the gate should close or return to its menu.
  bool disconnect = false;
  // Whether the player's terminal should show what they type from now on. kOff comes with a
  // prompt for a secret (the password command's questions): the client hides the input (telnet
  // WILL ECHO, the web client's password box) and keeps the line out of its history. kOn ends
  // the secret. The gate applies it before this flush's text. A state, not an event: setting
  // it twice in one flush keeps the last, and kUnchanged leaves the terminal as it is.
  enum class Echo : uint8_t { kUnchanged, kOff, kOn };
  Echo echo = Echo::kUnchanged;

  void AddLine(std::string_view line) {
    text.append(line);
    text.push_back('\n');
    ++line_count;
  }
};

class PlayerSink {
 public:
  virtual ~PlayerSink() = default;
  // Called once per zone flush (after a tick or a batch of commands) that produced output.
  virtual void Deliver(PlayerOutput output) = 0;
};

// One line of `who`. Here rather than beside the zone's router so that the session layer, which
// lists who is online through its link to the world, needs no zone header.
struct WhoEntry {
  std::string name;
  int level = 1;
  std::string zone;
  // Display names ("Elf", "Mage"); empty where unknown (a pack without classes, another shard).
  std::string race;
  std::string char_class;
};

// Why a snapshot was taken; the saver may use it to prioritise (quit before periodic).
enum class SaveReason { kPeriodic, kQuit, kFreeze, kLevel, kDeath };

struct CharacterSnapshot {
  std::string name_key;    // lower-case identity
  std::string state_json;  // EncodeCharacter() output
  SaveReason reason = SaveReason::kPeriodic;
};

class CharacterPersistence {
 public:
  virtual ~CharacterPersistence() = default;
  // Queues a save and returns at once (write-behind; the saver coalesces per character).
  virtual void RequestSave(CharacterSnapshot snapshot) = 0;
};

struct MailHeader {
  int64_t id = 0;
  std::string from;
  std::string subject;
  int64_t sent_unix_ms = 0;
  bool read = false;
};

struct MailMessage {
  MailHeader header;
  std::string body;
};

class MailPort {
 public:
  virtual ~MailPort() = default;
  // NotFound when `to` names no character.
  virtual void Send(std::string from, std::string to, std::string subject, std::string body,
                    std::function<void(Status)> done) = 0;
  // Newest first.
  virtual void List(std::string owner,
                    std::function<void(Result<std::vector<MailHeader>>)> done) = 0;
  virtual void Read(std::string owner, int64_t id,
                    std::function<void(Result<MailMessage>)> done) = 0;
};

class PasswordPort {
 public:
  virtual ~PasswordPort() = default;
  // PermissionDenied when `old_password` is wrong; InvalidArgument when `new_password` is weak.
  // Neither password may appear in a log line or in the status message.
  virtual void Change(std::string name_key, std::string old_password, std::string new_password,
                      std::function<void(Status)> done) = 0;
};

// A game event that matters beyond its zone (a boss killed), for the fleet-wide records. The
// world stamps it with its source and sequence and publishes it durably (shard::
// GameEventPublisher); the zone only says what happened. Non-blocking: queues and returns.
class GameEventPort {
 public:
  virtual ~GameEventPort() = default;
  // `kind` "boss_kill"; `subject` what it happened to ("dungeon:hollow_abbot"); `actor` who did
  // it (a display name, may be empty).
  virtual void Publish(std::string kind, std::string subject, std::string actor) = 0;
};

// One line of the fleet-wide records (store::Tally in the world's own terms).
struct RecordLine {
  std::string kind;
  std::string subject;
  int64_t count = 0;
  std::string first_actor;
  int64_t first_at_ms = 0;
  std::string last_actor;
  int64_t last_at_ms = 0;
};

// The records as the leader director applied them (the `records` command reads them).
class RecordsPort {
 public:
  virtual ~RecordsPort() = default;
  // Every record line, ordered by kind then subject; Unavailable while the store is away.
  virtual void Tallies(std::function<void(Result<std::vector<RecordLine>>)> done) = 0;
};

// Guilds, friends and the account's locale, kept by the character store (telos/store/
// social_store.h) and read with who is online across the fleet. Every request answers once
// (`done`, any thread): `status` OK, or a refusal whose message is one sentence for the player
// (the store words them); Unavailable when the store cannot be reached.
struct SocialRequest {
  enum class Op {
    kGuildCreate,  // arg: the guild's name
    kGuildInfo,    // the character's guild, its members and who of them is online
    kGuildInvite,  // arg: the invitee
    kGuildJoin,    // arg: the guild's name
    kGuildLeave,
    kGuildKick,     // arg: the member
    kGuildPromote,  // arg: the member (to officer)
    kGuildDemote,   // arg: the member (to member)
    kFriendAdd,     // arg: the friend
    kFriendRemove,  // arg: the friend
    kFriendList,    // the friends and who of them is online
    kLocaleSet,     // arg: "xx-YY"
    kLocaleGet,
  };
  Op op = Op::kGuildInfo;
  std::string character;  // who asks (display name or key)
  std::string arg;
};

struct SocialAnswer {
  Status status;
  std::string guild;  // kGuildCreate, kGuildJoin, kGuildInfo: the guild's display name
  std::string rank;   // kGuildInfo: the asker's ("founder", "officer", "member")
  struct Person {
    std::string name;
    std::string rank;  // guild members only
    bool online = false;
  };
  std::vector<Person> people;  // kGuildInfo: the members; kFriendList: the friends
  std::string locale;          // kLocaleSet, kLocaleGet ("" when unset)
};

class SocialPort {
 public:
  virtual ~SocialPort() = default;
  virtual void Ask(SocialRequest request, std::function<void(SocialAnswer)> done) = 0;
};

}  // namespace telos::world

namespace telos::world {

// The arcade's wagers, for the casino's commands (commands/arcade_commands.cc): implemented
// over arcade::Casino by the process that runs one (`serve`). Every call answers once (`done`,
// any thread); a refusal's message is a sentence for the player. `player` is the name key,
// `key` the idempotency key the command chose. Chips are play money: bought with coins, never
// sold back.
struct ArcadeWager {
  int64_t round = -1;        // the round's number (chain position)
  int64_t stake = 0;         // bet: the stake; buy: the chips bought
  int64_t cashout_x100 = 0;  // cash-out: the multiplier x100
  int64_t chips = 0;         // buy: the balance after; cash-out: the payout
};

class ArcadePort {
 public:
  virtual ~ArcadePort() = default;
  virtual void Chips(std::string player, std::function<void(Result<int64_t>)> done) = 0;
  virtual void Buy(std::string player, int64_t chips, std::string key,
                   std::function<void(Result<ArcadeWager>)> done) = 0;
  // `target`: dice, the number the roll must be under; crash, the auto cash-out x100 or 0.
  virtual void Bet(std::string player, std::string game, int64_t stake, int64_t target,
                   std::string key, std::function<void(Result<ArcadeWager>)> done) = 0;
  virtual void CashOut(std::string player, std::string key,
                       std::function<void(Result<ArcadeWager>)> done) = 0;
};

}  // namespace telos::world
