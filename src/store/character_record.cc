#include "telos/store/character_record.h"

#include <string>

#include "telos/base/limits.h"

namespace telos::store {
namespace {

bool IsNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

Status ValidateName(std::string_view kind, std::string_view name, size_t bytes_max) {
  if (name.empty()) return Status::InvalidArgument(std::string(kind) + " name is empty");
  if (name.size() > bytes_max) {
    return Status::InvalidArgument(std::string(kind) + " name is longer than " +
                                   std::to_string(bytes_max) + " bytes");
  }
  for (char c : name) {
    if (!IsNameByte(c)) {
      return Status::InvalidArgument(std::string(kind) +
                                     " name may only hold letters, digits, '-' and '_'");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string NameKey(std::string_view name) {
  std::string key(name);
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return key;
}

Status ValidateCharacterName(std::string_view name) {
  return ValidateName("character", name, limits::kCharacterNameBytesMax);
}

Status ValidateAccountName(std::string_view name) {
  return ValidateName("account", name, limits::kAccountNameBytesMax);
}

}  // namespace telos::store
