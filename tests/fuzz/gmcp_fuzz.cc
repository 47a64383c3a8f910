// libFuzzer target for what a client's GMCP Core package makes the transport do
// (src/net/gmcp.h): Core.Supports.Set/Add/Remove bodies, Core.Hello and Core.Ping. The input's
// first byte picks the message, the rest is its JSON body, so the fuzzer can reach each one.
// Besides "never crashes", it checks the promises the transports rely on: at most
// limits::kGmcpModulesMax modules are held, Core is always wanted, a recorded client name is
// clean and bounded, and every answer is a Core message or a remembered state package.
//
// Run locally:  build/dev/tests/fuzz/gmcp_fuzz tests/fuzz/corpus/gmcp
// -dict=tests/fuzz/dict/gmcp.dict
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/limits.h"
#include "telos/net/gmcp.h"

namespace {

using telos::fuzz::Check;
using telos::fuzz::CleanUtf8;

constexpr std::string_view kPackages[] = {
    "Core.Supports.Set", "Core.Supports.Add", "Core.Supports.Remove",
    "Core.Hello",        "Core.Ping",         "core.supports.set"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  telos::net::GmcpSupports supports;
  supports.Remember("Room.Info", R"({"num":1})");
  supports.Remember("Char.Vitals", R"({"hp":1})");
  // Each line is one message: its first byte picks the package, the rest is the body.
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty()) continue;
    const std::string_view package =
        kPackages[static_cast<uint8_t>(line[0]) % std::size(kPackages)];
    for (const auto& answer : supports.OnClientMessage(package, line.substr(1))) {
      Check(answer.package == "Core.Ping" || answer.package == "Core.Hello" ||
            answer.package == "Room.Info" || answer.package == "Char.Vitals");
    }
    Check(supports.Wants("Core.Ping"));
    Check(supports.client_name().size() <= telos::limits::kTerminalTypeBytesMax);
    Check(CleanUtf8(supports.client_name()) && CleanUtf8(supports.client_version()));
  }
  return 0;
}
