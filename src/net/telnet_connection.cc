#include "telos/net/telnet_connection.h"

#include <zlib.h>

#include "telos/base/assert.h"
#include "telos/base/limits.h"
#include "telos/net/wrap.h"

namespace telos::net {

using namespace telnet;  // NOLINT: the option and command names read better unqualified

// The MCCP2 deflate stream. Window and memory level are kept small: a compressing client
// costs about 16 KiB instead of zlib's default 256 KiB, at a small loss of ratio on text.
class TelnetConnection::Compressor {
 public:
  Compressor() {
    stream_.zalloc = Z_NULL;
    stream_.zfree = Z_NULL;
    stream_.opaque = Z_NULL;
    const int rc = deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kWindowBits, kMemLevel,
                                Z_DEFAULT_STRATEGY);
    RELEASE_ASSERT(rc == Z_OK, "deflateInit2 failed");
  }
  ~Compressor() { deflateEnd(&stream_); }

  // Compresses `raw` and flushes so the client can show it at once. `finish` ends the stream.
  std::string Deflate(std::string_view raw, bool finish) {
    std::string out;
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    stream_.avail_in = static_cast<uInt>(raw.size());
    char chunk[4096];
    int rc;
    do {
      stream_.next_out = reinterpret_cast<Bytef*>(chunk);
      stream_.avail_out = sizeof chunk;
      rc = deflate(&stream_, finish ? Z_FINISH : Z_SYNC_FLUSH);
      RELEASE_ASSERT(rc != Z_STREAM_ERROR, "deflate state corrupted");
      out.append(chunk, sizeof chunk - stream_.avail_out);
    } while (stream_.avail_out == 0 && rc != Z_STREAM_END);
    return out;
  }

 private:
  static constexpr int kWindowBits = 11;
  static constexpr int kMemLevel = 4;
  z_stream stream_{};
};

TelnetConnection::TelnetConnection(size_t line_bytes_max, MsspProvider mssp)
    : lines_(line_bytes_max), mssp_(std::move(mssp)) {}

TelnetConnection::~TelnetConnection() = default;

bool TelnetConnection::WeSupport(uint8_t option) const {
  return option == kOptGmcp || option == kOptMssp || option == kOptMccp2 || option == kOptEor ||
         option == kOptCharset || option == kOptMsdp || (option == kOptEcho && hiding_input_) ||
         option == kOptSuppressGoAhead;
}

bool TelnetConnection::WeWant(uint8_t option) const {
  // A client's WILL CHARSET means it wants to send the REQUEST itself.
  return option == kOptWindowSize || option == kOptTerminalType || option == kOptCharset;
}

std::string TelnetConnection::Greeting() {
  std::string out;
  for (const uint8_t option : {kOptGmcp, kOptMssp, kOptMccp2, kOptEor, kOptCharset, kOptMsdp}) {
    us_[option].pending = true;
    out += EncodeNegotiation(kWill, option);
  }
  for (const uint8_t option : {kOptWindowSize, kOptTerminalType}) {
    him_[option].pending = true;
    out += EncodeNegotiation(kDo, option);
  }
  return out;
}

std::string TelnetConnection::Wire(std::string raw) {
  if (!compressor_) return raw;
  return compressor_->Deflate(raw, false);
}

TelnetInput TelnetConnection::Receive(std::string_view bytes, std::string& reply) {
  TelnetInput input;
  std::vector<TelnetEvent> events;
  decoder_.Feed(bytes, events);
  for (const auto& e : events) {
    switch (e.kind) {
      case TelnetEvent::Kind::kData:
        if (charset_ == Charset::kLatin1) {
          lines_.Feed(FromClientCharset(e.bytes, charset_), input.lines);
        } else {
          lines_.Feed(e.bytes, input.lines);
        }
        break;
      case TelnetEvent::Kind::kCommand:
        break;  // NOP, GA, AYT, break...: nothing to do for a line-mode game
      case TelnetEvent::Kind::kNegotiation: OnNegotiation(e.verb, e.option, reply, input); break;
      case TelnetEvent::Kind::kSubnegotiation:
        OnSubnegotiation(e.option, e.bytes, input, reply);
        break;
      case TelnetEvent::Kind::kOverflow: ++input.protocol_errors; break;
    }
  }
  return input;
}

void TelnetConnection::OnNegotiation(uint8_t verb, uint8_t option, std::string& reply,
                                     TelnetInput& input) {
  (void)input;
  switch (verb) {
    case kDo: {
      auto& s = us_[option];
      if (!WeSupport(option)) {
        reply += Wire(EncodeNegotiation(kWont, option));
        s = {};
        return;
      }
      if (s.enabled) return;  // already on: answering would start a loop
      const bool we_asked = s.pending;
      s.enabled = true;
      s.pending = false;
      if (!we_asked) reply += Wire(EncodeNegotiation(kWill, option));
      OnUsEnabled(option, reply);
      return;
    }
    case kDont: {
      auto& s = us_[option];
      const bool was_enabled = s.enabled;
      const bool we_asked = s.pending;
      s = {};
      if (was_enabled && !we_asked) reply += Wire(EncodeNegotiation(kWont, option));
      if (was_enabled) OnUsDisabled(option, reply);
      return;
    }
    case kWill: {
      auto& s = him_[option];
      if (!WeWant(option)) {
        reply += Wire(EncodeNegotiation(kDont, option));
        s = {};
        return;
      }
      if (s.enabled) return;
      const bool we_asked = s.pending;
      s.enabled = true;
      s.pending = false;
      if (!we_asked) reply += Wire(EncodeNegotiation(kDo, option));
      if (option == kOptTerminalType && ttype_.may_send()) {
        ttype_.OnSend();
        reply += Wire(EncodeSubnegotiation(kOptTerminalType, std::string(1, char(kTtypeSend))));
      }
      return;
    }
    case kWont: {
      auto& s = him_[option];
      const bool was_enabled = s.enabled;
      const bool we_asked = s.pending;
      s = {};
      if (was_enabled && !we_asked) reply += Wire(EncodeNegotiation(kDont, option));
      return;
    }
    default: return;
  }
}

void TelnetConnection::OnUsEnabled(uint8_t option, std::string& reply) {
  if (option == kOptMssp && mssp_) {
    std::string payload;
    for (const auto& [name, value] : mssp_()) {
      payload.push_back(static_cast<char>(kMsspVar));
      payload += name;
      payload.push_back(static_cast<char>(kMsspVal));
      payload += value;
    }
    reply += Wire(EncodeSubnegotiation(kOptMssp, payload));
  } else if (option == kOptCharset && !charset_requested_) {
    // Our preference, best first: UTF-8, then the 8-bit set most MUD clients can fall back to.
    charset_requested_ = true;
    reply += Wire(EncodeSubnegotiation(
        kOptCharset,
        EncodeCharsetRequest({CharsetName(Charset::kUtf8), CharsetName(Charset::kLatin1),
                              CharsetName(Charset::kAscii)})));
  } else if (option == kOptMccp2 && !compressor_) {
    // The start marker goes out uncompressed; every byte after it is compressed.
    reply += EncodeSubnegotiation(kOptMccp2, "");
    compressor_ = std::make_unique<Compressor>();
  }
}

void TelnetConnection::OnUsDisabled(uint8_t option, std::string& reply) {
  // A client that turns CHARSET off will not answer our REQUEST: stop waiting for it, or its
  // own later REQUEST would be refused as crossing ours.
  if (option == kOptCharset) charset_requested_ = false;
  if (option == kOptMccp2 && compressor_) {
    reply += compressor_->Deflate("", true);  // end the stream cleanly
    compressor_.reset();
  }
}

void TelnetConnection::OnSubnegotiation(uint8_t option, std::string_view payload,
                                        TelnetInput& input, std::string& reply) {
  if (option == kOptWindowSize && him_[option].enabled) {
    if (payload.size() != 4) {
      ++input.protocol_errors;
      return;
    }
    const auto byte = [&](size_t i) { return static_cast<uint16_t>(uint8_t(payload[i])); };
    width_ = static_cast<uint16_t>(byte(0) << 8 | byte(1));
    height_ = static_cast<uint16_t>(byte(2) << 8 | byte(3));
    input.window_size_changed = true;
  } else if (option == kOptTerminalType && him_[option].enabled) {
    OnTerminalType(payload, input, reply);
  } else if (option == kOptCharset && (us_[option].enabled || him_[option].enabled)) {
    OnCharset(payload, input, reply);
  } else if (option == kOptMsdp && us_[option].enabled) {
    OnMsdp(payload, input, reply);
  } else if (option == kOptGmcp && us_[option].enabled) {
    const auto space = payload.find(' ');
    std::string_view package = payload.substr(0, space);
    const bool valid_name = !package.empty() && package.size() <= limits::kGmcpPackageBytesMax &&
                            package.find_first_not_of(
                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789._-") == std::string_view::npos;
    if (!valid_name) {
      ++input.protocol_errors;
      return;
    }
    GmcpMessage msg;
    msg.package = std::string(package);
    if (space != std::string_view::npos) msg.json = SanitizeInput(payload.substr(space + 1));
    const std::string hello_before = gmcp_.client_name();
    for (const GmcpMessage& answer : gmcp_.OnClientMessage(msg.package, msg.json)) {
      reply += Wire(GmcpBytes(answer.package, answer.json));
    }
    // Core.Hello may name the client when TTYPE did not.
    if (gmcp_.client_name() != hello_before) input.terminal_type_changed = true;
    input.gmcp.push_back(std::move(msg));
  }
}

void TelnetConnection::OnTerminalType(std::string_view payload, TelnetInput& input,
                                      std::string& reply) {
  if (payload.empty() || uint8_t(payload[0]) != kTtypeIs) {
    ++input.protocol_errors;
    return;
  }
  const std::string answer =
      std::string(CutAtCharacter(SanitizeInput(payload.substr(1)), limits::kTerminalTypeBytesMax));
  if (ttype_.OnAnswer(answer)) {
    ttype_.OnSend();
    reply += Wire(EncodeSubnegotiation(kOptTerminalType, std::string(1, char(kTtypeSend))));
  }
  const TerminalCapabilities& caps = ttype_.capabilities();
  depth_ = ColourDepthFor(caps);
  // MTTS names the encoding only by its UTF-8 bit: a client that sends the bits without it
  // reads 8-bit text, served as Latin-1, unless CHARSET has settled the question.
  if (caps.mtts && !charset_settled_) {
    charset_ = caps.Has(mtts::kUtf8) ? Charset::kUtf8 : Charset::kLatin1;
  }
  input.terminal_type_changed = true;
}

void TelnetConnection::OnCharset(std::string_view payload, TelnetInput& input, std::string& reply) {
  const CharsetMessage msg = DecodeCharset(payload);
  switch (msg.kind) {
    case CharsetMessage::Kind::kAccepted: {
      const std::optional<Charset> chosen = CharsetByName(msg.names[0]);
      if (!charset_requested_ || !chosen) {  // unasked, or a set we never offered
        ++input.protocol_errors;
        return;
      }
      charset_requested_ = false;
      charset_ = *chosen;
      charset_settled_ = true;
      input.terminal_type_changed = true;
      return;
    }
    case CharsetMessage::Kind::kRejected:
      // None of ours suits the client: it keeps what it had (UTF-8, or what MTTS said).
      charset_requested_ = false;
      return;
    case CharsetMessage::Kind::kRequest: {
      // Requests that cross: the server's stands, so the client's is refused and the client
      // answers ours (both sides know who the server is, so this cannot loop).
      if (charset_requested_) {
        reply += Wire(EncodeSubnegotiation(kOptCharset, EncodeCharsetRejected()));
        return;
      }
      for (const std::string& name : msg.names) {
        if (const std::optional<Charset> chosen = CharsetByName(name)) {
          charset_ = *chosen;
          charset_settled_ = true;
          input.terminal_type_changed = true;
          reply += Wire(EncodeSubnegotiation(kOptCharset, EncodeCharsetAccepted(name)));
          return;
        }
      }
      reply += Wire(EncodeSubnegotiation(kOptCharset, EncodeCharsetRejected()));
      return;
    }
    case CharsetMessage::Kind::kTtableIs:
      reply += Wire(EncodeSubnegotiation(kOptCharset, EncodeCharsetTtableRejected()));
      return;
    case CharsetMessage::Kind::kTtableOther: return;
    case CharsetMessage::Kind::kMalformed: ++input.protocol_errors; return;
  }
}

void TelnetConnection::OnMsdp(std::string_view payload, TelnetInput& input, std::string& reply) {
  const auto message = DecodeMsdp(payload);
  if (!message) {
    ++input.protocol_errors;
    return;
  }
  const std::string answer = msdp_.OnMessage(*message);
  if (!answer.empty())
    reply += Wire(EncodeSubnegotiation(kOptMsdp, ToClientCharset(answer, charset_)));
}

std::string TelnetConnection::ClientText(std::string_view text, bool wrap) const {
  // A window narrower than the bound is taken for a client's mistake, not a wish for 5 columns.
  std::string wrapped;
  if (wrap && word_wrap_ && width_ >= limits::kWordWrapColumnsMin) {
    wrapped = WrapText(text, width_);
    text = wrapped;
  }
  const ColourDepth depth = colour_depth();
  if (depth == ColourDepth::kTruecolor && charset_ == Charset::kUtf8) return EncodeText(text);
  std::string fitted = FitColour(text, depth);
  if (charset_ != Charset::kUtf8) fitted = ToClientCharset(fitted, charset_);
  return EncodeText(fitted);
}

std::string TelnetConnection::Text(std::string_view text) {
  return Wire(ClientText(text, true));
}

std::string TelnetConnection::Prompt(std::string_view text) {
  std::string raw = ClientText(text, false);  // a prompt stays on its one line
  if (us_[kOptEor].enabled) {
    raw.push_back(static_cast<char>(kIac));
    raw.push_back(static_cast<char>(kEor));
  } else if (!us_[kOptSuppressGoAhead].enabled) {
    raw.push_back(static_cast<char>(kIac));
    raw.push_back(static_cast<char>(kGa));
  }
  return Wire(std::move(raw));
}

std::string TelnetConnection::GmcpBytes(std::string_view package, std::string_view json) {
  std::string payload(package);
  if (!json.empty()) {
    payload.push_back(' ');
    payload += json;
  }
  return EncodeSubnegotiation(kOptGmcp, payload);
}

std::string TelnetConnection::Gmcp(std::string_view package, std::string_view json) {
  std::string raw;
  gmcp_.Remember(package, json);
  if (gmcp_enabled() && gmcp_.Wants(package)) raw = GmcpBytes(package, json);
  if (msdp_enabled()) {
    msdp_.UpdateFromGmcp(package, json);
    const std::string reports = msdp_.TakeReports();
    if (!reports.empty()) {
      raw += EncodeSubnegotiation(kOptMsdp, ToClientCharset(reports, charset_));
    }
  }
  if (raw.empty()) return {};
  return Wire(std::move(raw));
}

std::string TelnetConnection::Echo(bool echo_on) {
  auto& s = us_[kOptEcho];
  if (!echo_on) {
    hiding_input_ = true;
    if (s.enabled || s.pending) return {};
    s.pending = true;
    return Wire(EncodeNegotiation(kWill, kOptEcho));  // "we echo": the client stops echoing
  }
  hiding_input_ = false;
  if (!s.enabled && !s.pending) return {};
  s = {};
  return Wire(EncodeNegotiation(kWont, kOptEcho));
}

}  // namespace telos::net
