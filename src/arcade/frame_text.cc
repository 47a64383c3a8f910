#include "telos/arcade/frame_text.h"

namespace telos::arcade {

std::string FormatX100(int64_t x100) {
  const int64_t cents = x100 % 100;
  return std::to_string(x100 / 100) + "." + (cents < 10 ? "0" : "") + std::to_string(cents) + "x";
}

std::string FrameJson(const Frame& frame) {
  // Every field is a number, a phase name or a game name / hex digest (no characters to
  // escape), so the object is written directly.
  std::string json =
      "{\"game\":\"" + frame.game + "\",\"round\":" + std::to_string(frame.position) +
      ",\"phase\":\"" + std::string(PhaseName(frame.phase)) +
      "\",\"betting_ms_left\":" + std::to_string(frame.betting_ms_left) +
      ",\"multiplier\":" + std::to_string(frame.multiplier_x100) +
      ",\"bets\":" + std::to_string(frame.bets) + ",\"staked\":" + std::to_string(frame.staked);
  if (frame.phase == Phase::kSettled) {
    json += ",\"hash\":\"" + frame.round_hash + "\"";
    if (frame.crash_x100 > 0) json += ",\"crash\":" + std::to_string(frame.crash_x100);
    if (frame.roll >= 0) json += ",\"roll\":" + std::to_string(frame.roll);
    json += std::string(",\"refunded\":") + (frame.refunded ? "true" : "false");
  }
  return json + "}";
}

FrameNews FrameText::Next(const Frame& frame, Instant now) {
  const bool changed = frame.phase != last_phase_ || frame.position != last_position_;
  last_phase_ = frame.phase;
  last_position_ = frame.position;
  FrameNews news;
  news.text = Line(frame, changed, now);
  if (changed || now - last_gmcp_ >= Millis(gmcp_frame_ms_)) {
    last_gmcp_ = now;
    news.gmcp = FrameJson(frame);
  }
  return news;
}

std::string FrameText::Line(const Frame& frame, bool changed, Instant now) {
  const std::string tag = "[" + frame.game + " #" + std::to_string(frame.position) + "] ";
  if (!changed) {
    // Only a rising crash multiplier says something between phase changes.
    if (kind_ != GameKind::kCrash || frame.phase != Phase::kRunning ||
        now - last_text_ < Millis(text_tick_ms_)) {
      return "";
    }
    last_text_ = now;
    return tag + FormatX100(frame.multiplier_x100) + " and rising...";
  }
  last_text_ = now;
  const std::string seconds = std::to_string((frame.betting_ms_left + 999) / 1000);
  switch (frame.phase) {
    case Phase::kBetting:
      return kind_ == GameKind::kCrash
                 ? tag + "Bets are open for " + seconds + " s: 'bet " + frame.game +
                       " <chips> [auto cash-out, e.g. 2.5]', then 'cashout' before it crashes."
                 : tag + "Bets are open for " + seconds + " s: 'bet " + frame.game +
                       " <chips> <under>' wins when the roll (0-9999) is under your number.";
    case Phase::kClosing: return "";
    case Phase::kRunning:
      return kind_ == GameKind::kCrash ? tag + "Bets are closed. 1.00x and rising..."
                                       : tag + "Bets are closed. The dice are rolling...";
    case Phase::kSettling: return "";
    case Phase::kSettled: {
      std::string line = kind_ == GameKind::kCrash
                             ? tag + "Crashed at " + FormatX100(frame.crash_x100) + "."
                             : tag + "The roll is " + std::to_string(frame.roll) + ".";
      if (frame.refunded) line += " The round was refunded.";
      return line + " Round hash " + frame.round_hash.substr(0, 16) + "...";
    }
    case Phase::kIdle: return "";
  }
  return "";
}

}  // namespace telos::arcade
