// Text helpers shared by the zone and its commands: colour codes, case, word splitting.
#include <string>

#include "zone_core.h"

namespace telos::world {

std::string ApplyColour(std::string_view text, bool colour) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{' && i + 2 < text.size() && text[i + 2] == '}') {
      const char* code = nullptr;
      switch (text[i + 1]) {
        case 'r': code = "\x1b[31m"; break;
        case 'g': code = "\x1b[32m"; break;
        case 'y': code = "\x1b[33m"; break;
        case 'b': code = "\x1b[34m"; break;
        case 'm': code = "\x1b[35m"; break;
        case 'c': code = "\x1b[36m"; break;
        case 'w': code = "\x1b[37m"; break;
        case 'x': code = "\x1b[0m"; break;
        default: break;
      }
      if (code != nullptr) {
        if (colour) out += code;
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string Capitalize(std::string_view text) {
  std::string out(text);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::string Lower(std::string_view text) {
  return NameKey(text);
}

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::pair<std::string_view, std::string_view> SplitWord(std::string_view text) {
  text = Trim(text);
  size_t space = text.find_first_of(" \t");
  if (space == std::string_view::npos) return {text, {}};
  return {text.substr(0, space), Trim(text.substr(space + 1))};
}

std::string_view PositionName(Position position) {
  switch (position) {
    case Position::kDead: return "dead";
    case Position::kSleeping: return "sleeping";
    case Position::kResting: return "resting";
    case Position::kFighting: return "fighting";
    case Position::kStanding: return "standing";
  }
  return "standing";
}

}  // namespace telos::world
