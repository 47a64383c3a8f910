// MSSP, the MUD Server Status Protocol (telnet option 70): the variables listing crawlers read.
//
// The game knows the live ones (NAME, PLAYERS, CODEBASE, ROOMS, ...) and hands them to the
// telnet server as its MsspProvider. CompleteMssp adds what the transport and configuration
// know and the game need not: UPTIME (when the server started, Unix seconds), PORT, the
// operator's contact details (MsspSettings, empty ones left out), CRAWL DELAY and the protocol
// flags for exactly what this server speaks. A variable the game already named is never
// repeated or overridden, so a game that knows better wins.
//
// Thread safety: pure function; MsspSettings is a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace telos::net {

using MsspVariables = std::vector<std::pair<std::string, std::string>>;

// Operator-set MSSP values, from configuration. Empty strings are not sent.
struct MsspSettings {
  std::string hostname;  // HOSTNAME: the name players connect to
  std::string contact;   // CONTACT: an e-mail address
  std::string website;   // WEBSITE
  std::string discord;   // DISCORD: an invitation link
  std::string language = "English";
  std::string location;            // LOCATION: the server's country
  std::string genre;               // GENRE, e.g. "Fantasy"
  std::string gameplay;            // GAMEPLAY, e.g. "Hack and Slash"
  std::string status = "Live";     // STATUS: Alpha, Beta, Live, ...
  int64_t crawl_delay_hours = -1;  // CRAWL DELAY: -1 lets the crawler choose
};

// The full list: `game` first, then each standard variable `game` did not name.
MsspVariables CompleteMssp(MsspVariables game, const MsspSettings& settings,
                           int64_t started_unix_seconds, uint16_t port);

}  // namespace telos::net
