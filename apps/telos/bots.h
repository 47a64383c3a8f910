// `telos bots`: the bot-swarm load harness (src/sim) as a subcommand. main.cc parses the flags
// into BotsFlags; this file wires the swarm, draws the progress bar on stderr and writes the
// report and the series.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace telos::app {

struct BotsFlags {
  std::vector<std::string> targets;  // host:port, repeatable
  std::string transport = "telnet";  // or "websocket"
  std::string dialect = "telos";     // or "tinymux", for side-by-side runs
  int64_t bots = 50;
  double ramp_per_second = 10;
  double duration_s = 60;
  std::string mix = "walk=3,look=2,say=2,tell=1,fight=1,idle=1";
  std::string report_path;  // JSON; empty: stdout
  std::string csv_path;     // per-second series; empty: none
  std::string metrics_url;
  std::string accounts_prefix = "bot";
  int64_t server_pid = 0;
  int64_t think_ms = 3'000;
  int64_t reply_timeout_ms = 10'000;
  std::string fight_target = "dummy";
  int64_t spread_steps = 0;
  bool allow_remote = false;
  uint64_t seed = 0;  // 0: from the system's entropy
};

// Runs the swarm to its end; returns the process exit code (2 for bad flags, 1 when a file
// cannot be written, else 0: errors seen by the bots are in the report, not the exit code).
int RunBots(const BotsFlags& flags);

}  // namespace telos::app
