#include "telos/account/names.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace telos::account {
namespace {

constexpr size_t kCharacterNameMin = 3;
constexpr size_t kCharacterNameMax = 12;
constexpr size_t kAccountNameMin = 3;
constexpr size_t kAccountNameMax = 20;

// Words a player must not be able to take: staff titles, pronouns and words commands treat
// specially (tell self, give all, ...), and our own name.
constexpr std::array<std::string_view, 28> kReserved = {
    "admin",   "administrator", "all",      "anyone",   "builder", "everyone",  "god",
    "guest",   "help",          "immortal", "imp",      "me",      "moderator", "mod",
    "new",     "nobody",        "none",     "operator", "quit",    "root",      "self",
    "someone", "staff",         "system",   "telos",    "wizard",  "you",       "server"};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool AllLetters(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
}

}  // namespace

bool IsReservedName(std::string_view name) {
  const std::string lower = Lower(name);
  return std::find(kReserved.begin(), kReserved.end(), lower) != kReserved.end();
}

Status ValidateCharacterName(std::string_view name) {
  if (name.size() < kCharacterNameMin || name.size() > kCharacterNameMax) {
    return Status::InvalidArgument("A character name has " + std::to_string(kCharacterNameMin) +
                                   " to " + std::to_string(kCharacterNameMax) + " letters.");
  }
  if (!AllLetters(name)) {
    return Status::InvalidArgument("A character name may only contain the letters a to z.");
  }
  if (IsReservedName(name)) {
    return Status::InvalidArgument("That name is reserved; please choose another.");
  }
  return Status::Ok();
}

Status ValidateAccountName(std::string_view name) {
  if (name.size() < kAccountNameMin || name.size() > kAccountNameMax) {
    return Status::InvalidArgument("An account name has " + std::to_string(kAccountNameMin) +
                                   " to " + std::to_string(kAccountNameMax) + " characters.");
  }
  if (std::isalpha(static_cast<unsigned char>(name[0])) == 0) {
    return Status::InvalidArgument("An account name starts with a letter.");
  }
  const bool ok = std::all_of(name.begin(), name.end(),
                              [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
  if (!ok) {
    return Status::InvalidArgument("An account name may contain letters, digits and '_'.");
  }
  if (IsReservedName(name)) {
    return Status::InvalidArgument("That name is reserved; please choose another.");
  }
  return Status::Ok();
}

std::string DisplayCharacterName(std::string_view name) {
  std::string out = Lower(name);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

}  // namespace telos::account
