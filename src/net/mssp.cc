#include "telos/net/mssp.h"

#include <algorithm>

namespace telos::net {

MsspVariables CompleteMssp(MsspVariables game, const MsspSettings& settings,
                           int64_t started_unix_seconds, uint16_t port) {
  MsspVariables out = std::move(game);
  const auto add = [&out](std::string name, std::string value) {
    if (value.empty()) return;
    const bool named =
        std::any_of(out.begin(), out.end(), [&name](const auto& var) { return var.first == name; });
    if (!named) out.emplace_back(std::move(name), std::move(value));
  };
  add("UPTIME", std::to_string(started_unix_seconds));
  if (port != 0) add("PORT", std::to_string(port));
  add("HOSTNAME", settings.hostname);
  add("CONTACT", settings.contact);
  add("WEBSITE", settings.website);
  add("DISCORD", settings.discord);
  add("LANGUAGE", settings.language);
  add("LOCATION", settings.location);
  add("GENRE", settings.genre);
  add("GAMEPLAY", settings.gameplay);
  add("STATUS", settings.status);
  add("CRAWL DELAY", std::to_string(settings.crawl_delay_hours));
  add("CODEBASE", "TelosMUD");
  add("FAMILY", "Custom");
  // What the telnet side speaks (docs/protocols.md), as MSSP's protocol flags.
  for (const char* on : {"ANSI", "UTF-8", "XTERM 256 COLORS", "XTERM TRUE COLORS", "GMCP", "MSDP",
                         "MCCP", "MSSP", "CHARSET", "VT100"}) {
    add(on, "1");
  }
  for (const char* off : {"MXP", "MSP", "MCP", "PUEBLO", "SSL"}) add(off, "0");
  return out;
}

}  // namespace telos::net
