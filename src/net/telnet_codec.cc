#include "telos/net/telnet_codec.h"

#include "telos/base/limits.h"

namespace telos::net::telnet {

void TelnetDecoder::EmitData(std::vector<TelnetEvent>& out, std::string_view bytes) {
  if (out.empty() || out.back().kind != TelnetEvent::Kind::kData) {
    out.push_back(TelnetEvent{TelnetEvent::Kind::kData, 0, 0, {}});
  }
  out.back().bytes.append(bytes);
}

void TelnetDecoder::Feed(std::string_view input, std::vector<TelnetEvent>& out) {
  for (size_t i = 0; i < input.size(); ++i) {
    const char ch = input[i];
    const auto b = static_cast<uint8_t>(ch);
    switch (state_) {
      case State::kData:
        if (b == kIac) {
          state_ = State::kIac;
        } else {
          // Plain text is nearly all of a stream: take the whole run up to the next IAC at once.
          size_t end = input.find(static_cast<char>(kIac), i);
          if (end == std::string_view::npos) end = input.size();
          EmitData(out, input.substr(i, end - i));
          i = end - 1;
        }
        break;
      case State::kIac:
        if (b == kIac) {
          EmitData(out, input.substr(i, 1));  // an escaped 255 is data
          state_ = State::kData;
        } else if (b == kWill || b == kWont || b == kDo || b == kDont) {
          verb_ = b;
          state_ = State::kOption;
        } else if (b == kSb) {
          state_ = State::kSbOption;
        } else {
          out.push_back(TelnetEvent{TelnetEvent::Kind::kCommand, b, 0, {}});
          state_ = State::kData;
        }
        break;
      case State::kOption:
        out.push_back(TelnetEvent{TelnetEvent::Kind::kNegotiation, verb_, b, {}});
        state_ = State::kData;
        break;
      case State::kSbOption:
        sb_option_ = b;
        sb_payload_.clear();
        sb_overflow_ = false;
        state_ = State::kSbData;
        break;
      case State::kSbData:
        if (b == kIac) {
          state_ = State::kSbIac;
        } else if (sb_payload_.size() < limits::kTelnetSubnegotiationBytesMax) {
          sb_payload_.push_back(ch);
        } else {
          sb_overflow_ = true;
        }
        break;
      case State::kSbIac:
        if (b == kIac) {  // escaped 255 inside the payload
          if (sb_payload_.size() < limits::kTelnetSubnegotiationBytesMax) {
            sb_payload_.push_back(ch);
          } else {
            sb_overflow_ = true;
          }
          state_ = State::kSbData;
          break;
        }
        // IAC SE ends the subnegotiation. Any other IAC <x> is a protocol error: the
        // subnegotiation is ended there and <x> is read as a command, as most clients do.
        if (sb_overflow_) {
          out.push_back(TelnetEvent{TelnetEvent::Kind::kOverflow, 0, sb_option_, {}});
        } else {
          out.push_back(
              TelnetEvent{TelnetEvent::Kind::kSubnegotiation, kSb, sb_option_, sb_payload_});
        }
        sb_payload_.clear();
        sb_payload_.shrink_to_fit();  // idle connections keep no large buffers
        state_ = State::kData;
        if (b != kSe) {
          state_ = State::kIac;
          Feed(std::string_view(&ch, 1), out);
        }
        break;
    }
  }
}

std::string EncodeNegotiation(uint8_t verb, uint8_t option) {
  return std::string{static_cast<char>(kIac), static_cast<char>(verb), static_cast<char>(option)};
}

std::string EncodeSubnegotiation(uint8_t option, std::string_view payload) {
  std::string out{static_cast<char>(kIac), static_cast<char>(kSb), static_cast<char>(option)};
  out.reserve(payload.size() + 5);
  for (const char c : payload) {
    out.push_back(c);
    if (static_cast<uint8_t>(c) == kIac) out.push_back(c);
  }
  out.push_back(static_cast<char>(kIac));
  out.push_back(static_cast<char>(kSe));
  return out;
}

std::string EncodeText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16 + 2);
  // Output is mostly lines of plain text: copy the runs between line ends (and IAC bytes, which
  // are doubled) whole rather than byte by byte.
  size_t start = 0;
  while (start < text.size()) {
    size_t at = start;
    while (at < text.size() && text[at] != '\n' && static_cast<uint8_t>(text[at]) != kIac) ++at;
    out.append(text.substr(start, at - start));
    if (at == text.size()) break;
    if (text[at] == '\n') {
      if (at == 0 || text[at - 1] != '\r') out.push_back('\r');
      out.push_back('\n');
    } else {
      out.append(2, text[at]);
    }
    start = at + 1;
  }
  return out;
}

}  // namespace telos::net::telnet
