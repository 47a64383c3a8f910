// libFuzzer target for the configuration file layer (config.h): TOML text parsed by toml++,
// flattened into TELOS_* settings, then read through every typed getter the roles use. Besides
// "never crashes": a getter that succeeds returns a value within its bounds, and a setting the
// file gives is found with the file as its origin.
//
// Secret() is left out on purpose: it reads the file that a *_FILE setting names, and a fuzzed
// path ("/dev/stdin") would make the target wait, which says nothing about the parser.
//
// Run locally:  build/dev/tests/fuzz/config_fuzz tests/fuzz/corpus/config \
//                 -dict=tests/fuzz/dict/config.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/config.h"

namespace {

// Settings the roles read; the dictionary holds their file keys.
constexpr const char* kVariables[] = {
    "TELOS_BIND",           "TELOS_HTTP_PORT",       "TELOS_TELNET_PORT", "TELOS_REDIS_URL",
    "TELOS_SHARD_ID",       "TELOS_IDLE_TIMEOUT_MS", "TELOS_ZONE_POOL",   "TELOS_SEED",
    "TELOS_ALLOW_INSECURE", "TELOS_LOG_LEVEL",       "TELOS_CONTENT_DIR", "TELOS_IO_THREADS",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = telos::Config::FromEnvironmentAndToml({}, text, "fuzz.toml");
  if (!config.ok()) return 0;
  for (const char* variable : kVariables) {
    if (auto value = config->Lookup(variable)) {
      Check(value->origin.rfind("fuzz.toml", 0) == 0);
    }
    (void)config->String(variable, "fallback");
    (void)config->RequiredString(variable);
    if (auto n = config->Int(variable, 5, -100, 100'000); n.ok()) {
      Check(*n >= -100 && *n <= 100'000);
    }
    (void)config->Bool(variable, false);
    (void)config->Port(variable, 0);
    (void)config->Choice(variable, "a", {"a", "b", "debug"});
  }
  return 0;
}
