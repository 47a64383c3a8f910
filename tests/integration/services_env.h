// Reads the addresses of the real services (scripts/services env) for integration tests.
// A missing variable fails the test: integration tests never skip silently.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace telos::testing {

inline std::string RequireEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    ADD_FAILURE() << name << " is not set: run `eval \"$(scripts/services env)\"` first";
    return {};
  }
  return value;
}

// Splits "scheme://host:port[/...]" into host and port.
inline bool SplitHostPort(const std::string& url, std::string& host, int& port) {
  const auto scheme = url.find("://");
  const std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  host = rest.substr(0, colon);
  port = std::atoi(rest.substr(colon + 1).c_str());
  return port > 0;
}

// A name no other test run uses, for keys, tables and streams.
inline std::string UniqueName(const std::string& prefix) {
  return prefix + "_" + std::to_string(::getpid()) + "_" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace telos::testing
