// Config: process settings, environment first, with an optional TOML file underneath.
//
// Every setting has a TELOS_* variable name. A value comes from the environment if set there,
// else from the TOML file named by TELOS_CONFIG (key = the variable name without "TELOS_",
// lower case; tables nest with '_', so [redis] url = "..." is TELOS_REDIS_URL), else from the
// caller's default. Every typed getter validates and, on a bad value, returns InvalidArgument
// naming the variable and where the value came from; main prints it and exits with code 2.
//
// Secrets (passwords, tokens, URLs that carry credentials) are read with Secret(), which also
// accepts NAME_FILE: the path of a file holding the value. The environment of a process is
// readable through /proc/<pid>/environ and `ps e` by its user and root, and it is inherited by
// every child; a file can be mounted read-only for the service user alone (a container or
// systemd secret). Secret() never puts the value in an error message.
//
// Thread safety: build and read on one thread (startup), then treat as immutable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos {

// The process exit code for a configuration error.
inline constexpr int kExitConfigError = 2;

class Config {
 public:
  using Environment = std::map<std::string, std::string, std::less<>>;

  // Reads the real process environment (and TELOS_CONFIG's file, if set).
  static Result<Config> FromProcess();
  // For tests: an explicit environment; TELOS_CONFIG inside it is honoured.
  static Result<Config> FromEnvironment(Environment env);
  // Parses TOML text as the file layer. `source` names it in error messages.
  static Result<Config> FromEnvironmentAndToml(Environment env, std::string_view toml_text,
                                               std::string source);

  // Raw lookup: the value and where it came from ("environment" or "file.toml:LINE").
  struct Value {
    std::string text;
    std::string origin;
  };
  std::optional<Value> Lookup(std::string_view variable) const;

  Result<std::string> String(std::string_view variable, std::string fallback) const;
  // A non-empty string, or an error naming the variable.
  Result<std::string> RequiredString(std::string_view variable) const;
  Result<int64_t> Int(std::string_view variable, int64_t fallback, int64_t min, int64_t max) const;
  // 1, true, yes, on / 0, false, no, off (case-insensitive).
  Result<bool> Bool(std::string_view variable, bool fallback) const;
  // One of `choices` (case-sensitive).
  Result<std::string> Choice(std::string_view variable, std::string fallback,
                             const std::vector<std::string>& choices) const;
  // A TCP port, 0..65535 (0 asks the kernel for a free one).
  Result<uint16_t> Port(std::string_view variable, uint16_t fallback) const;

  // A secret: `variable`'s value, else the contents of the file named by `variable`_FILE with
  // one trailing newline ("\n" or "\r\n", as editors and `echo` leave) removed, else `fallback`.
  // An empty value counts as unset. InvalidArgument, naming the variables but never the value,
  // when both are set, or when the file cannot be read or holds more than kSecretFileBytesMax
  // bytes.
  Result<std::string> Secret(std::string_view variable, std::string fallback) const;
  // As Secret(), but a secret that is empty or unset is an error naming both forms.
  Result<std::string> RequiredSecret(std::string_view variable) const;

 private:
  Environment env_;
  Environment file_values_;   // variable -> value text
  Environment file_origins_;  // variable -> "path:line"
};

// Parses a boolean word as Config::Bool does. Empty optional when it is not one.
std::optional<bool> ParseBoolWord(std::string_view word);

}  // namespace telos
