// Server-side word wrap: game text broken into lines no wider than the client's window (NAWS).
//
// Each line of `text` longer than `columns` visible columns is broken at its last space that
// fits (the space becomes the line end); a word longer than a whole line is broken where the
// line is full. ANSI escapes take no columns and are never split; a UTF-8 character takes
// one column (East Asian wide characters are counted as one, which errs toward wider lines).
// Lines that fit, and text with no line over the width, come back unchanged.
//
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace telos::net {

// REQUIRES: columns > 0.
std::string WrapText(std::string_view text, size_t columns);

}  // namespace telos::net
