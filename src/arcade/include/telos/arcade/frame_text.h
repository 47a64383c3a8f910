// FrameText: what players watching the arcade see of a game's frames (issue 27 item 2): a few
// text lines per round, and GMCP Arcade.Frame messages. A driver emits a frame at least every
// 100 ms; players get each phase change at once, a crash multiplier line at most every
// kArcadeTextTickMs and a GMCP frame at most every kArcadeGmcpFrameMs, so a room of watchers is
// not flooded. Wherever the frames are shown (the casino's rooms in `serve`, every gate of a
// fleet) the same class decides.
//
// Thread safety: none; one FrameText per game, fed by whoever receives that game's frames.
#pragma once

#include <cstdint>
#include <string>

#include "telos/arcade/round_driver.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"

namespace telos::arcade {

struct FrameNews {
  std::string text;  // one line for players, or empty
  std::string gmcp;  // the Arcade.Frame body (a JSON object), or empty: nothing to send now
};

class FrameText {
 public:
  explicit FrameText(GameKind kind, int64_t text_tick_ms = limits::kArcadeTextTickMs,
                     int64_t gmcp_frame_ms = limits::kArcadeGmcpFrameMs)
      : kind_(kind), text_tick_ms_(text_tick_ms), gmcp_frame_ms_(gmcp_frame_ms) {}

  // What to show of `frame`, received at `now`.
  FrameNews Next(const Frame& frame, Instant now);

 private:
  std::string Line(const Frame& frame, bool phase_changed, Instant now);

  const GameKind kind_;
  const int64_t text_tick_ms_;
  const int64_t gmcp_frame_ms_;
  Phase last_phase_ = Phase::kIdle;
  int64_t last_position_ = -1;
  Instant last_text_{};
  Instant last_gmcp_{};
};

// The Arcade.Frame body of a frame: {"game", "round", "phase", "betting_ms_left",
// "multiplier", "bets", "staked"} and, once settled, "hash" and "crash" or "roll".
std::string FrameJson(const Frame& frame);

// "2.31x" for 231.
std::string FormatX100(int64_t x100);

}  // namespace telos::arcade
