// Swarm: a bounded crowd of scripted players (bots) driving a TelosMUD gate, for load tests.
//
// Run() ramps `bots` bots at `ramp_per_second` over telnet or WebSocket, spread round-robin over
// the targets. Each bot connects, logs in to its account (creating the account and a character
// when they do not exist yet), then acts every think_ms (+-50% jitter) with a behaviour drawn
// from the mix, and measures each command's round trip: the time from sending the line to the
// first bytes that come back. A telnet bot does not read while it thinks: what others say
// meanwhile waits in the kernel (which is asked not to wake the client for it) and is dropped
// before the next command, so ten thousand bots cost the client little more than their own
// commands. After the ramp the swarm measures a steady window of duration_s
// seconds, reads the server's /metrics before and after it (tick lag over that window,
// occupancy) and, given a pid, the server's CPU time and resident memory from /proc. Then every
// bot quits and Run() returns the report and a per-second series.
//
// Bounds: at most kSwarmBotsMax bots, kSwarmDurationSecondsMax seconds of steady window, and
// the ramp's length is bounded by bots / ramp_per_second with ramp_per_second >=
// kSwarmRampPerSecondMin. Targets must be loopback addresses unless allow_remote says the
// operator owns them (CheckTargetAllowed).
//
// Thread safety: Run() blocks the calling thread and runs every bot on it (one io_context);
// SIGINT and SIGTERM during Run() end the window early and still produce a report. The clock
// times every measurement; the Random seeds each bot's own generator, so a run's choices replay.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/random.h"
#include "telos/base/status.h"
#include "telos/sim/mix.h"
#include "telos/sim/report.h"

namespace telos::sim {

using limits::kRttSamplesMax;
using limits::kSwarmBotsMax;
using limits::kSwarmDurationSecondsMax;
using limits::kSwarmQuitTimeoutMs;
using limits::kSwarmRampPerSecondMax;
using limits::kSwarmRampPerSecondMin;
using limits::kSwarmSpreadStepsMax;
using limits::kSwarmTargetsMax;
using limits::kSwarmThinkMsMin;

struct Target {
  std::string host;  // an IP literal or "localhost"
  uint16_t port = 0;
  std::string ToString() const;  // "127.0.0.1:4000", "[::1]:4000"
};

// "host:port" or "[v6]:port".
Result<Target> ParseTarget(std::string_view host_port);
// OK for loopback targets ("localhost", 127.0.0.0/8, ::1). Anything else is refused with
// kPermissionDenied unless allow_remote: load tests hit only machines their operator owns.
Status CheckTargetAllowed(const Target& target, bool allow_remote);

enum class TransportKind { kTelnet, kWebSocket };

// Whose login and command language the bots speak. kTinyMux drives a TinyMUX (MUSH) server
// for side-by-side runs: "connect"/"create <name> <password>", then OUTPUTSUFFIX marks the end
// of each reply; walk and look send "look", tell sends "page", pose and fight send "pose".
enum class Dialect { kTelos, kTinyMux };

struct SwarmOptions {
  std::vector<Target> targets;  // telnet ports, or HTTP ports for WebSocket (path /ws)
  TransportKind transport = TransportKind::kTelnet;
  Dialect dialect = Dialect::kTelos;
  int64_t bots = 50;
  double ramp_per_second = 10;
  double duration_s = 60;  // the steady window, after the ramp
  BehaviourMix mix = BehaviourMix::Default();
  // Accounts are <prefix>_<n>, characters <Prefix letters><n in letters>. Reusing a prefix
  // reuses the accounts and characters a previous run made.
  std::string accounts_prefix = "bot";
  std::string metrics_url;  // "http://127.0.0.1:9080/metrics" (admin); empty: no server view
  int64_t server_pid = 0;   // 0: no CPU and memory figures
  int64_t think_ms = 3'000;
  int64_t reply_timeout_ms = 10'000;
  int64_t login_timeout_ms = 60'000;
  std::string fight_target = "dummy";
  // Before the measured window, each bot takes this many random walking steps (a few tenths of
  // a second apart) so the swarm spreads over the world instead of crowding the start room.
  // The window begins once every bot has finished them (or failed to log in); the report's
  // ramp_seconds includes that wait.
  int64_t spread_steps = 0;
  bool allow_remote = false;
};

// Checks every bound and target; Run() calls it first.
Status ValidateSwarmOptions(const SwarmOptions& options);

// A bot's names, shared with tests and scripts that pre-create or inspect accounts.
std::string BotAccountName(std::string_view prefix, int64_t index);
std::string BotCharacterName(std::string_view prefix, int64_t index);
std::string BotPassword(std::string_view prefix);

struct LiveStatus {
  enum class Phase { kRamping, kSteady, kStopping };
  Phase phase = Phase::kRamping;
  double t_s = 0;
  double phase_progress = 0;  // 0..1 within the ramp or the steady window
  int64_t bots_requested = 0;
  int64_t bots_started = 0;
  int64_t bots_connected_now = 0;
  int64_t bots_playing_now = 0;
  int64_t commands_sent = 0;
  int64_t errors = 0;
  int64_t unexpected_disconnects = 0;
  double rtt_p99_last_second_ms = 0;
};

// Called once a second on the swarm's thread; must not block.
using ProgressFn = std::function<void(const LiveStatus&)>;

struct SwarmResult {
  Report report;
  std::vector<SeriesRow> series;
};

class Swarm {
 public:
  Swarm(SwarmOptions options, const Clock& clock, Random& random);
  Swarm(const Swarm&) = delete;
  Swarm& operator=(const Swarm&) = delete;

  // Runs the whole swarm; see the file comment. Fails only on invalid options.
  Result<SwarmResult> Run(const ProgressFn& progress);

 private:
  SwarmOptions options_;
  const Clock& clock_;
  Random& random_;
};

}  // namespace telos::sim
