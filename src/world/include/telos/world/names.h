// NameKey: the identity of a character, as zones, routing and the stores know it.
//
// A header of its own so that code which only needs a character's identity (the gate, which
// reaches the world through its link and never holds a CharacterState) does not pull in the
// character's state and its JSON schema. character_state.h includes it.
//
// A pure function; any thread.
#pragma once

#include <string>
#include <string_view>

namespace telos::world {

// Lower-case form of a character name ("Alice" -> "alice"). Only A-Z change; every other byte
// is kept as it is, so the key never depends on a locale.
inline std::string NameKey(std::string_view name) {
  std::string key(name);
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return key;
}

}  // namespace telos::world
