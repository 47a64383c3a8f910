// libFuzzer target for everything a telnet client's bytes pass through: the IAC decoder, option
// negotiation (including MCCP2 switching compression on and off), subnegotiations (NAWS, TTYPE,
// GMCP) and the line reader. Besides "never crashes", it checks the promises made to the game:
// every line is valid UTF-8 without control characters and within the length limit.
//
// Run locally:  build/dev/tests/fuzz/telnet_fuzz tests/fuzz/corpus/telnet -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "telos/net/telnet_connection.h"

namespace {

constexpr size_t kLineBytesMax = 64;

bool ValidCleanUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return false;
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if ((c & 0xC0) == 0x80 || c >= 0xF8 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  telos::net::TelnetConnection conn(kLineBytesMax, [] {
    return std::vector<std::pair<std::string, std::string>>{{"NAME", "fuzz"}};
  });
  (void)conn.Greeting();
  // Feed the input in two pieces so that sequences split across reads are exercised.
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  for (std::string_view piece : {input.substr(0, cut), input.substr(cut)}) {
    std::string reply;
    const telos::net::TelnetInput in = conn.Receive(piece, reply);
    for (const auto& line : in.lines) {
      Check(line.text.size() <= kLineBytesMax);
      Check(ValidCleanUtf8(line.text));
    }
    for (const auto& msg : in.gmcp) Check(!msg.package.empty());
    // Output must keep working whatever the negotiation did to the connection.
    (void)conn.Text("after the storm\n");
    (void)conn.Gmcp("Char.Vitals", "{\"hp\":1}");
    (void)conn.Prompt("> ");
  }
  (void)conn.Echo(false);
  (void)conn.Echo(true);
  return 0;
}
