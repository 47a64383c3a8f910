// Staff roles of an account (issue 30): every account is a player; an account may also be a
// builder (edits the world from inside the game) and an admin (moves, silences, removes and bans
// players). Roles are a small bit set so that they fit one column of the account row and one
// integer of the signed login assertion, which is how every world learns them: a world never
// reads the account store, it trusts only what the account service signed.
//
// An admin holds every power a builder has (HasRole(kRoleAdmin bits, kRoleBuilder) is true), as
// in the MUDs whose staff levels are ordered.
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace telos {

using Roles = uint32_t;

inline constexpr Roles kRolePlayer = 0;  // no bit: what every account is
inline constexpr Roles kRoleBuilder = 1u << 0;
inline constexpr Roles kRoleAdmin = 1u << 1;
// Every bit a role may use; a value with any other bit set is refused wherever it is read
// (the store, the assertion), so a future role cannot be granted by a build that lacks it.
inline constexpr Roles kRolesKnownMask = kRoleBuilder | kRoleAdmin;

// Whether `roles` carries the powers of `role`. kRolePlayer is held by everyone; an admin holds
// the builder's powers too.
constexpr bool HasRole(Roles roles, Roles role) {
  if (role == kRolePlayer) return true;
  if (role == kRoleBuilder) return (roles & (kRoleBuilder | kRoleAdmin)) != 0;
  return (roles & role) == role;
}

// Any role beyond player.
constexpr bool IsStaff(Roles roles) {
  return (roles & kRolesKnownMask) != 0;
}

constexpr bool RolesKnown(Roles roles) {
  return (roles & ~kRolesKnownMask) == 0;
}

// "player", "builder" or "admin" (the words `telos admin grant` takes); nullopt otherwise.
inline std::optional<Roles> ParseRole(std::string_view word) {
  if (word == "player") return kRolePlayer;
  if (word == "builder") return kRoleBuilder;
  if (word == "admin") return kRoleAdmin;
  return std::nullopt;
}

// "player" for none, else the roles held joined by commas ("builder,admin").
inline std::string RoleNames(Roles roles) {
  std::string out;
  if ((roles & kRoleBuilder) != 0) out = "builder";
  if ((roles & kRoleAdmin) != 0) out += out.empty() ? "admin" : ",admin";
  return out.empty() ? "player" : out;
}

}  // namespace telos
