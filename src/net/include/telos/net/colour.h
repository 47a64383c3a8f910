// Colour depth: fitting the ANSI colour escapes in game text to what a client can show.
//
// Game text may carry SGR escapes (ESC [ ... m) of any depth: the 16 basic colours, the xterm
// 256-colour palette (38;5;n / 48;5;n) and 24-bit colour (38;2;r;g;b / 48;2;r;g;b). FitColour
// rewrites each escape for the client's depth: a colour it cannot show becomes the nearest one
// it can (by distance in RGB over the xterm palette), and a client without colour gets none
// of the SGR escapes at all. Other escapes and all text are left byte for byte, so text that
// already fits comes back unchanged (and costs one scan for ESC when it holds none).
//
// RenderColourAtDepth is RenderColour (text.h) with one more code, {#rrggbb}, a 24-bit
// foreground colour, and the result fitted to `depth`.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace telos::net {

enum class ColourDepth : uint8_t { kNone, k16, k256, kTruecolor };

std::string_view ColourDepthName(ColourDepth depth);  // "none", "16", "256", "truecolor"

std::string FitColour(std::string_view text, ColourDepth depth);

std::string RenderColourAtDepth(std::string_view text, ColourDepth depth);

}  // namespace telos::net
