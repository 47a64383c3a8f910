#include "telos/net/charset.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"

namespace telos::net {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

struct Alias {
  std::string_view name;
  Charset charset;
};

// The names clients are seen to offer: the IANA names and aliases, and the spellings without
// punctuation that some clients send.
constexpr std::array<Alias, 16> kAliases{{
    {"UTF-8", Charset::kUtf8},
    {"UTF8", Charset::kUtf8},
    {"ISO-8859-1", Charset::kLatin1},
    {"ISO_8859-1", Charset::kLatin1},
    {"ISO8859-1", Charset::kLatin1},
    {"ISO-8859-1:1987", Charset::kLatin1},
    {"ISO_8859-1:1987", Charset::kLatin1},
    {"LATIN1", Charset::kLatin1},
    {"LATIN-1", Charset::kLatin1},
    {"L1", Charset::kLatin1},
    {"IBM819", Charset::kLatin1},
    {"CP819", Charset::kLatin1},
    {"US-ASCII", Charset::kAscii},
    {"ASCII", Charset::kAscii},
    {"ANSI_X3.4-1968", Charset::kAscii},
    {"US", Charset::kAscii},
}};

}  // namespace

std::optional<Charset> CharsetByName(std::string_view name) {
  for (const Alias& alias : kAliases) {
    if (SameName(alias.name, name)) return alias.charset;
  }
  return std::nullopt;
}

std::string_view CharsetName(Charset charset) {
  switch (charset) {
    case Charset::kUtf8: return "UTF-8";
    case Charset::kLatin1: return "ISO-8859-1";
    case Charset::kAscii: return "US-ASCII";
  }
  return "UTF-8";
}

CharsetMessage DecodeCharset(std::string_view payload) {
  using namespace telnet;  // NOLINT: the message names read better unqualified
  CharsetMessage msg;
  if (payload.empty()) return msg;
  const auto verb = static_cast<uint8_t>(payload[0]);
  std::string_view rest = payload.substr(1);
  switch (verb) {
    case kCharsetRequest: {
      // REQUEST [ "[TTABLE]" <version> ] <sep> <name> { <sep> <name> }
      constexpr std::string_view kTtable = "[TTABLE]";
      if (rest.starts_with(kTtable)) {
        if (rest.size() < kTtable.size() + 1) return msg;
        rest.remove_prefix(kTtable.size() + 1);
      }
      if (rest.size() < 2) return msg;  // a separator and at least one character of a name
      const char sep = rest[0];
      rest.remove_prefix(1);
      while (!rest.empty() && msg.names.size() < limits::kCharsetNamesMax) {
        const size_t end = std::min(rest.find(sep), rest.size());
        // Cleaned before the emptiness check: a name of control bytes alone is no name.
        std::string name = SanitizeUtf8(rest.substr(0, std::min(end, limits::kCharsetNameBytesMax)),
                                        Utf8Controls::kDrop);
        if (!name.empty()) msg.names.push_back(std::move(name));
        rest.remove_prefix(std::min(end + 1, rest.size()));
      }
      if (msg.names.empty()) return msg;
      msg.kind = CharsetMessage::Kind::kRequest;
      return msg;
    }
    case kCharsetAccepted:
      if (rest.empty()) return msg;
      msg.kind = CharsetMessage::Kind::kAccepted;
      msg.names.push_back(
          SanitizeUtf8(rest.substr(0, limits::kCharsetNameBytesMax), Utf8Controls::kDrop));
      return msg;
    case kCharsetRejected: msg.kind = CharsetMessage::Kind::kRejected; return msg;
    case kCharsetTtableIs: msg.kind = CharsetMessage::Kind::kTtableIs; return msg;
    case kCharsetTtableRejected:
    case kCharsetTtableAck:
    case kCharsetTtableNak: msg.kind = CharsetMessage::Kind::kTtableOther; return msg;
    default: return msg;
  }
}

std::string EncodeCharsetRequest(const std::vector<std::string_view>& names) {
  std::string out(1, static_cast<char>(telnet::kCharsetRequest));
  for (const std::string_view name : names) {
    out.push_back(';');
    out += name;
  }
  return out;
}

std::string EncodeCharsetAccepted(std::string_view name) {
  std::string out(1, static_cast<char>(telnet::kCharsetAccepted));
  out += name;
  return out;
}

std::string EncodeCharsetRejected() {
  return std::string(1, static_cast<char>(telnet::kCharsetRejected));
}

std::string EncodeCharsetTtableRejected() {
  return std::string(1, static_cast<char>(telnet::kCharsetTtableRejected));
}

std::string ToClientCharset(std::string_view utf8, Charset charset) {
  if (charset == Charset::kUtf8) return std::string(utf8);
  const uint32_t highest = charset == Charset::kLatin1 ? 0xFF : 0x7F;
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    if (lead < 0x80) {
      out.push_back(static_cast<char>(lead));
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(utf8, i);
    if (length == 0) {  // not UTF-8: the byte means nothing we could show
      out.push_back('?');
      ++i;
      continue;
    }
    uint32_t code = lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      code = code << 6 | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    }
    out.push_back(code <= highest ? static_cast<char>(code) : '?');
    i += length;
  }
  return out;
}

std::string FromClientCharset(std::string_view bytes, Charset charset) {
  if (charset != Charset::kLatin1) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 8);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x80) {
      out.push_back(c);
    } else {  // two-byte UTF-8 for U+0080..U+00FF
      out.push_back(static_cast<char>(0xC0 | b >> 6));
      out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
    }
  }
  return out;
}

}  // namespace telos::net
