#include "telos/net/websocket_message.h"

#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "telos/net/text.h"

namespace telos::net {
namespace {

namespace json = boost::json;

uint16_t ClampDimension(const json::value* v) {
  if (v == nullptr || !v->is_number()) return 0;
  const double d = v->to_number<double>();
  if (!(d > 0)) return 0;
  return static_cast<uint16_t>(d > kClientWindowDimensionMax ? kClientWindowDimensionMax
                                                             : static_cast<int64_t>(d));
}

}  // namespace

ClientMessage DecodeClientMessage(std::string_view frame) {
  ClientMessage out;
  json::parse_options opts;
  opts.max_depth = kClientMessageJsonDepthMax;
  boost::system::error_code ec;
  json::value v = json::parse(frame, ec, {}, opts);
  if (ec || !v.is_object()) return out;
  const auto& obj = v.get_object();
  const auto* type = obj.if_contains("type");
  if (type == nullptr || !type->is_string()) return out;
  const std::string_view kind = type->get_string();
  if (kind == "input") {
    const auto* t = obj.if_contains("text");
    if (t == nullptr || !t->is_string()) return out;
    out.kind = ClientMessage::Kind::kInput;
    out.text = std::string(t->get_string());
  } else if (kind == "gmcp") {
    const auto* package = obj.if_contains("package");
    if (package == nullptr || !package->is_string()) return out;
    const std::string_view name = package->get_string();
    if (name.empty() || name.size() > limits::kGmcpPackageBytesMax) return out;
    const auto* body = obj.if_contains("data");
    out.kind = ClientMessage::Kind::kGmcp;
    out.package = SanitizeInput(name);
    out.data = body ? json::serialize(*body) : std::string();
  } else if (kind == "naws") {
    out.kind = ClientMessage::Kind::kResize;
    out.width = ClampDimension(obj.if_contains("width"));
    out.height = ClampDimension(obj.if_contains("height"));
  }
  return out;
}

}  // namespace telos::net
