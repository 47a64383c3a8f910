// libFuzzer target for the URLs in a deployment's settings: the Redis URL (redis::ParseUrl, and
// directory::RedisOptionsFromUrl on top of it) and the PostgreSQL URL.
//
// Checks for Redis: a parsed URL has a host and a port in 1..65535; a refused one never repeats
// its password in the message (the message goes to logs and to the operator's terminal). The
// check looks only at passwords it can recognise unambiguously: 8 or more letters and digits,
// with both, that appear nowhere else in the URL.
//
// The database URL: src/store offers no pure function for it. TELOS_DATABASE_URL is read in
// apps/telos/role_common.cc and passed as-is to the store, whose connection first hands it to
// libpq's PQconninfoParse (to tell a malformed URL from an unreachable server) and then
// connects. The target runs that first step exactly; libpq is not instrumented, so the fuzzer
// gets no coverage guidance inside it, and the target mostly shows that our side of the call
// (the error string, the free) holds up.
//
// Run locally:  build/dev/tests/fuzz/url_fuzz tests/fuzz/corpus/url \
//                 -dict=tests/fuzz/dict/url.dict -max_total_time=600
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/directory/redis_directory.h"
#include "telos/redis/connection.h"

namespace {

using telos::fuzz::Check;

// The password of "scheme://user:password@host...", when it is one the check can judge.
std::string RecognisablePassword(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  const size_t authority = scheme_end + 3;
  const size_t authority_end = std::min(url.find_first_of("/?#", authority), url.size());
  const size_t at = url.find('@', authority);
  if (at == std::string_view::npos || at >= authority_end) return {};
  const std::string_view userinfo = url.substr(authority, at - authority);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return {};
  const std::string_view password = userinfo.substr(colon + 1);
  bool letter = false, digit = false;
  for (const char c : password) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u))
      letter = true;
    else if (std::isdigit(u))
      digit = true;
    else
      return {};
  }
  if (password.size() < 8 || !letter || !digit) return {};
  const std::string rest = std::string(url.substr(0, authority)) + "\n" +
                           std::string(url.substr(at)) + "\n" +
                           std::string(userinfo.substr(0, colon));
  if (rest.find(password) != std::string::npos) return {};
  return std::string(password);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string url(reinterpret_cast<const char*>(data), size);
  const std::string password = RecognisablePassword(url);

  auto address = telos::redis::ParseUrl(url);
  if (address.ok()) {
    Check(!address->host.empty());
    Check(address->port >= 1 && address->port <= 65535);
  } else if (!password.empty()) {
    Check(address.status().message().find(password) == std::string::npos);
  }
  auto options = telos::directory::RedisOptionsFromUrl(url);
  Check(options.ok() == address.ok());
  if (options.ok()) {
    Check(options->host == address->host && options->port == address->port);
  } else if (!password.empty()) {
    Check(options.status().message().find(password) == std::string::npos);
  }

  // The database URL, as the store's connection checks it before connecting. A string with a
  // NUL cannot come from the environment or a TOML file, so it is cut there as C would.
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &error);
  if (parsed != nullptr) PQconninfoFree(parsed);
  if (error != nullptr) PQfreemem(error);
  return 0;
}
