// libFuzzer target for the MSDP decoder and the agent behind it (src/net/msdp.h), which read
// every MSDP subnegotiation a telnet client sends. Besides "never crashes", it checks that
// what decodes encodes to bytes that decode to the same thing (when they stay within the
// bounds: an encoded multi-value variable grows by an array's markers), and that every answer
// the agent gives is itself well-formed MSDP.
//
// Run locally:  build/dev/tests/fuzz/msdp_fuzz tests/fuzz/corpus/msdp
// -dict=tests/fuzz/dict/msdp.dict
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/net/msdp.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto decoded = telos::net::DecodeMsdp(input);
  if (!decoded) return 0;
  const std::string encoded = telos::net::EncodeMsdp(*decoded);
  if (const auto again = telos::net::DecodeMsdp(encoded)) Check(*again == *decoded);

  telos::net::MsdpAgent agent;
  agent.UpdateFromGmcp("Char.Vitals", R"({"hp":1,"maxhp":2,"mana":3,"maxmana":4})");
  agent.UpdateFromGmcp("Room.Info", R"({"id":"a","name":"b","zone":"c","exits":{"n":"d"}})");
  const std::string answer = agent.OnMessage(*decoded);
  Check(answer.empty() || telos::net::DecodeMsdp(answer).has_value());
  agent.UpdateFromGmcp("Char.Vitals", R"({"hp":5})");
  const std::string reports = agent.TakeReports();
  Check(reports.empty() || telos::net::DecodeMsdp(reports).has_value());
  Check(agent.reported().size() <= telos::limits::kMsdpReportedMax);
  return 0;
}
