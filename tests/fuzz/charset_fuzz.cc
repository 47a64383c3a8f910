// libFuzzer target for CHARSET (RFC 2066) and the Latin-1 transcoding behind it
// (src/net/charset.h): the REQUEST/ACCEPTED decoder reads what any client sends, and the
// transcoders carry every byte a Latin-1 player types or reads. Besides "never crashes", it
// checks the promises: a decoded REQUEST stays within its bounds, Latin-1 input always becomes
// valid UTF-8 and comes back byte for byte, and output to Latin-1 never grows.
//
// Run locally:  build/dev/tests/fuzz/charset_fuzz tests/fuzz/corpus/charset
// -dict=tests/fuzz/dict/charset.dict
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/net/charset.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::net::Charset;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const telos::net::CharsetMessage msg = telos::net::DecodeCharset(input);
  Check(msg.names.size() <= telos::limits::kCharsetNamesMax);
  for (const std::string& name : msg.names) {
    Check(!name.empty() || msg.kind != telos::net::CharsetMessage::Kind::kRequest);
    Check(telos::IsValidUtf8(name));
    (void)telos::net::CharsetByName(name);
  }

  const std::string utf8 = telos::net::FromClientCharset(input, Charset::kLatin1);
  Check(telos::IsValidUtf8(utf8));
  Check(telos::net::ToClientCharset(utf8, Charset::kLatin1) == input);
  Check(telos::net::ToClientCharset(input, Charset::kLatin1).size() <= input.size());
  const std::string ascii = telos::net::ToClientCharset(input, Charset::kAscii);
  for (const char c : ascii) Check(static_cast<unsigned char>(c) < 0x80);
  return 0;
}
