#include "telos/net/colour.h"

#include <algorithm>
#include <array>
#include <vector>

#include "telos/net/text.h"

namespace telos::net {
namespace {

struct Rgb {
  int r, g, b;
};

// xterm's default values for the 16 basic colours.
constexpr std::array<Rgb, 16> kBasic{{{0, 0, 0},
                                      {205, 0, 0},
                                      {0, 205, 0},
                                      {205, 205, 0},
                                      {0, 0, 238},
                                      {205, 0, 205},
                                      {0, 205, 205},
                                      {229, 229, 229},
                                      {127, 127, 127},
                                      {255, 0, 0},
                                      {0, 255, 0},
                                      {255, 255, 0},
                                      {92, 92, 255},
                                      {255, 0, 255},
                                      {0, 255, 255},
                                      {255, 255, 255}}};

int CubeLevel(int step) {
  return step == 0 ? 0 : 55 + 40 * step;
}

Rgb PaletteRgb(int index) {
  if (index < 16) return kBasic[static_cast<size_t>(index)];
  if (index < 232) {
    const int i = index - 16;
    return {CubeLevel(i / 36), CubeLevel(i / 6 % 6), CubeLevel(i % 6)};
  }
  const int grey = 8 + 10 * (index - 232);
  return {grey, grey, grey};
}

int Distance(Rgb a, Rgb b) {
  return (a.r - b.r) * (a.r - b.r) + (a.g - b.g) * (a.g - b.g) + (a.b - b.b) * (a.b - b.b);
}

int NearestBasic(Rgb c) {
  int best = 0;
  for (int i = 1; i < 16; ++i) {
    if (Distance(c, kBasic[static_cast<size_t>(i)]) <
        Distance(c, kBasic[static_cast<size_t>(best)])) {
      best = i;
    }
  }
  return best;
}

int CubeStep(int v) {
  return v < 48 ? 0 : v < 115 ? 1 : (v - 35) / 40;
}

// The nearest of the 240 palette colours above the basic 16 (whose values clients change).
int Nearest256(Rgb c) {
  const int cube = 16 + 36 * CubeStep(c.r) + 6 * CubeStep(c.g) + CubeStep(c.b);
  const int average = (c.r + c.g + c.b) / 3;
  const int grey = average > 238 ? 255 : 232 + std::max(0, (average - 3) / 10);
  return Distance(c, PaletteRgb(cube)) <= Distance(c, PaletteRgb(grey)) ? cube : grey;
}

// A basic colour (0..15) as SGR parameters for the foreground (base 30) or background (40).
void AppendBasic(std::string& out, int colour, int base) {
  const int code = colour < 8 ? base + colour : base + 60 + colour - 8;  // 90..97, 100..107
  out += std::to_string(code);
}

// Parses the SGR parameter list; an empty parameter means 0. False if it is not plain digits
// and ';' (sub-parameters with ':' are left to the client).
bool ParseParams(std::string_view params, std::vector<int>& out) {
  out.clear();
  int value = 0;
  size_t digits = 0;
  for (const char c : params) {
    if (c == ';') {
      out.push_back(value);
      value = 0;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 4) {
      value = value * 10 + (c - '0');
      ++digits;
    } else {
      return false;
    }
  }
  out.push_back(value);
  return true;
}

// Rewrites one SGR escape's parameters for `depth` (k16 or k256).
std::string FitParams(const std::vector<int>& params, ColourDepth depth) {
  std::string out;
  const auto separate = [&out] {
    if (!out.empty()) out.push_back(';');
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const int p = params[i];
    const bool extended = (p == 38 || p == 48) && i + 1 < params.size();
    const int base = p == 38 ? 30 : 40;
    if (extended && params[i + 1] == 5 && i + 2 < params.size()) {
      const int index = std::min(params[i + 2], 255);
      separate();
      if (depth == ColourDepth::k256) {
        out += std::to_string(p) + ";5;" + std::to_string(index);
      } else {
        AppendBasic(out, index < 16 ? index : NearestBasic(PaletteRgb(index)), base);
      }
      i += 2;
    } else if (extended && params[i + 1] == 2 && i + 4 < params.size()) {
      const Rgb c{std::min(params[i + 2], 255), std::min(params[i + 3], 255),
                  std::min(params[i + 4], 255)};
      separate();
      if (depth == ColourDepth::k256) {
        out += std::to_string(p) + ";5;" + std::to_string(Nearest256(c));
      } else {
        AppendBasic(out, NearestBasic(c), base);
      }
      i += 4;
    } else {
      separate();
      out += std::to_string(p);
    }
  }
  return out;
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

}  // namespace

std::string_view ColourDepthName(ColourDepth depth) {
  switch (depth) {
    case ColourDepth::kNone: return "none";
    case ColourDepth::k16: return "16";
    case ColourDepth::k256: return "256";
    case ColourDepth::kTruecolor: return "truecolor";
  }
  return "16";
}

std::string FitColour(std::string_view text, ColourDepth depth) {
  if (depth == ColourDepth::kTruecolor || text.find('\x1b') == std::string_view::npos) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  std::vector<int> params;
  size_t i = 0;
  while (i < text.size()) {
    const size_t esc = text.find('\x1b', i);
    if (esc == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, esc - i));
    // A CSI escape: ESC [ then parameter bytes (0x30..0x3F) and a final byte.
    size_t end = esc + 1;
    if (end < text.size() && text[end] == '[') {
      ++end;
      while (end < text.size() && text[end] >= 0x30 && text[end] <= 0x3F) ++end;
    }
    const bool sgr = end < text.size() && end > esc + 1 && text[end] == 'm';
    if (!sgr) {
      out.push_back(text[esc]);
      i = esc + 1;
      continue;
    }
    const std::string_view body = text.substr(esc + 2, end - esc - 2);
    i = end + 1;
    if (depth == ColourDepth::kNone) continue;  // no colour: the escape goes
    if (!ParseParams(body, params)) {
      out.append(text.substr(esc, i - esc));
      continue;
    }
    out += "\x1b[";
    out += FitParams(params, depth);
    out.push_back('m');
  }
  return out;
}

std::string RenderColourAtDepth(std::string_view text, ColourDepth depth) {
  std::string expanded;
  expanded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const bool code = text[i] == '{' && i + 8 < text.size() && text[i + 1] == '#' &&
                      text[i + 8] == '}' && IsHex(text[i + 2]) && IsHex(text[i + 3]) &&
                      IsHex(text[i + 4]) && IsHex(text[i + 5]) && IsHex(text[i + 6]) &&
                      IsHex(text[i + 7]);
    if (text[i] == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      expanded += "{{";  // a literal brace stays one for RenderColour
      ++i;
      continue;
    }
    if (!code) {
      expanded.push_back(text[i]);
      continue;
    }
    const auto channel = [&](size_t at) {
      return std::to_string(HexValue(text[at]) * 16 + HexValue(text[at + 1]));
    };
    if (depth != ColourDepth::kNone) {
      expanded += "\x1b[38;2;" + channel(i + 2) + ";" + channel(i + 4) + ";" + channel(i + 6) + "m";
    }
    i += 8;
  }
  return FitColour(RenderColour(expanded, depth != ColourDepth::kNone), depth);
}

}  // namespace telos::net
