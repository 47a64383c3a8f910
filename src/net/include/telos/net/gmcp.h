// GMCP (telnet option 201) as Mudlet and IRE clients speak it: the Core package a transport
// answers itself, and the set of modules a client asked for.
//
// A client names the modules it wants with Core.Supports.Set ["Char 1", "Room 1", ...], and
// changes the set with Core.Supports.Add and Core.Supports.Remove. A message belongs to the
// module named by all but its last part ("Char.Items.List" to "Char.Items", "Room.Info" to
// "Room", "Comm.Channel.Text" to "Comm.Channel"); once a client has said what it wants, only
// messages of those modules go to it (names compare case-insensitively, as GMCP says). A client
// that never sends Core.Supports gets every module (TinTin++, MUSHclient and the web client do
// not send it), and one that only sends Remove gets every module but those removed. Core.*
// messages are always allowed. Add before any Set takes back an earlier Remove.
//
// GmcpSupports also answers Core.Ping (an empty Core.Ping back, the client measures the round
// trip) and Core.Hello (recording the client's name and version, and answering with the
// server's), and remembers the last body of the packages that describe current state
// (Char.Name, Char.Status, Char.Vitals, Room.Info, Room.Players): when a Set or Add turns a
// module on, those are sent again so a client that asks late is not left without them until
// the next change. A client holds at most limits::kGmcpModulesMax modules; remembered bodies
// are bounded by limits::kGmcpRememberedBodyBytesMax each.
//
// Thread safety: one per connection, used on that connection's strand only.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace telos::net {

struct GmcpMessage {
  std::string package;  // e.g. "Core.Hello"
  std::string json;     // the rest of the payload, possibly empty; not validated here
};

// "Char.Items.List" -> "Char.Items"; "Room.Info" -> "Room"; a name of one part is its own module.
std::string_view GmcpModuleOf(std::string_view package);

class GmcpSupports {
 public:
  // Handles one message from the client. Core.Hello, Core.Ping and Core.Supports.* are acted
  // on; the messages to send back (answers, and remembered state for modules just turned on)
  // are returned in order. Anything else returns nothing.
  std::vector<GmcpMessage> OnClientMessage(std::string_view package, std::string_view json);

  // Whether a message of `package` from the game goes to this client.
  bool Wants(std::string_view package) const;

  // Called with every message the game sends (wanted or not), so state can be replayed later.
  void Remember(std::string_view package, std::string_view json);

  // True once the client has sent Core.Supports.Set: from then on only its modules are sent.
  bool chosen() const { return chosen_; }
  // From Core.Hello: "client" and "version", cleaned and bounded; empty if never said.
  const std::string& client_name() const { return client_name_; }
  const std::string& client_version() const { return client_version_; }

 private:
  bool WantsModule(std::string_view lowered_module) const;
  // Parses a Supports body: a JSON array of "Module version" strings. Returns lower-case
  // module names (entries that are not strings or not names are skipped), or nullopt for a
  // body that is not a JSON array, which then changes nothing.
  static std::optional<std::vector<std::string>> ParseModules(std::string_view json);

  bool chosen_ = false;
  std::set<std::string> modules_;  // chosen_: the modules wanted; else: the modules removed
  std::string client_name_;
  std::string client_version_;
  std::map<std::string, GmcpMessage, std::less<>> remembered_;  // by lower-case package
};

}  // namespace telos::net
