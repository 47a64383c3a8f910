#include "telos/net/mtts.h"

#include <algorithm>
#include <cctype>

#include "telos/base/limits.h"

namespace telos::net {
namespace {

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool ParseMtts(std::string_view answer, uint32_t& bits) {
  if (answer.size() < 6 || Upper(answer.substr(0, 5)) != "MTTS ") return false;
  const std::string_view digits = answer.substr(5);
  if (digits.empty() || digits.size() > 9) return false;  // the standard defines 12 bits
  uint32_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  bits = value;
  return true;
}

ColourDepth ColourDepthFor(const TerminalCapabilities& caps) {
  if (caps.mtts) {
    if (caps.Has(mtts::kTruecolor)) return ColourDepth::kTruecolor;
    if (caps.Has(mtts::k256Colours)) return ColourDepth::k256;
    if (caps.Has(mtts::kAnsi)) return ColourDepth::k16;
    return ColourDepth::kNone;
  }
  const std::string type = Upper(caps.terminal_type);
  if (type.find("TRUECOLOR") != std::string::npos || type.find("24BIT") != std::string::npos) {
    return ColourDepth::kTruecolor;
  }
  if (type.find("256COLOR") != std::string::npos) return ColourDepth::k256;
  return ColourDepth::k16;
}

bool TerminalTypeCycle::may_send() const {
  return !done_ && sends_ < limits::kTerminalTypeRoundsMax;
}

bool TerminalTypeCycle::OnAnswer(std::string_view answer) {
  if (done_) return false;
  // We ask at most kTerminalTypeRoundsMax times, so more answers than that were never asked
  // for: a client sending them unasked would otherwise grow `answers_` (and the repeat search
  // over it) without bound.
  if (answers_.size() >= limits::kTerminalTypeRoundsMax) {
    done_ = true;
    return false;
  }
  // A repeat ends the cycle: a plain client repeats at once, an MTTS client after its bits,
  // and a client that cycles through a list has come round again.
  if (std::find(answers_.begin(), answers_.end(), answer) != answers_.end()) {
    done_ = true;
    return false;
  }
  answers_.emplace_back(answer);
  uint32_t bits = 0;
  if (answers_.size() == 1) {
    caps_.client_name = std::string(answer);
    caps_.terminal_type = std::string(answer);  // until a second answer says otherwise
  } else if (ParseMtts(answer, bits)) {
    caps_.mtts = true;
    caps_.mtts_bits = bits;
    done_ = true;  // MTTS is the last step of the standard
    return false;
  } else if (answers_.size() == 2) {
    caps_.terminal_type = std::string(answer);
  }
  return may_send();
}

}  // namespace telos::net
