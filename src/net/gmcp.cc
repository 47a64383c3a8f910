#include "telos/net/gmcp.h"

#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "telos/net/text.h"

namespace telos::net {
namespace {

namespace json = boost::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsModuleName(std::string_view name) {
  return !name.empty() && name.size() <= limits::kGmcpPackageBytesMax &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
             "0123456789._-") == std::string_view::npos;
}

// The packages whose last body stands for the current state, sent again to a client that
// turns their module on later. Lists that Add and Remove change (Char.Items) are not among them:
// a remembered list would be stale.
bool IsStatePackage(std::string_view lowered) {
  return lowered == "char.name" || lowered == "char.status" || lowered == "char.vitals" ||
         lowered == "room.info" || lowered == "room.players";
}

// A string member of a Core.Hello body, cleaned for logs and bounded.
std::string HelloField(const json::object& hello, std::string_view key) {
  const json::value* v = hello.if_contains(key);
  if (v == nullptr || !v->is_string()) return {};
  const std::string clean = SanitizeInput(std::string_view(v->as_string()));
  return std::string(CutAtCharacter(clean, limits::kTerminalTypeBytesMax));
}

}  // namespace

std::string_view GmcpModuleOf(std::string_view package) {
  const size_t dot = package.rfind('.');
  return dot == std::string_view::npos ? package : package.substr(0, dot);
}

std::optional<std::vector<std::string>> GmcpSupports::ParseModules(std::string_view body) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec || !doc.is_array()) return std::nullopt;
  for (const json::value& entry : doc.as_array()) {
    if (out.size() >= limits::kGmcpModulesMax) break;
    if (!entry.is_string()) continue;
    // "Char.Items 1": the module, then its version, which changes nothing we send.
    std::string_view text(entry.as_string());
    std::string_view name = text.substr(0, text.find(' '));
    if (IsModuleName(name)) out.push_back(Lower(name));
  }
  return out;
}

bool GmcpSupports::WantsModule(std::string_view lowered_module) const {
  const bool listed = modules_.find(std::string(lowered_module)) != modules_.end();
  return chosen_ ? listed : !listed;
}

bool GmcpSupports::Wants(std::string_view package) const {
  const std::string lowered = Lower(package);
  if (GmcpModuleOf(lowered) == "core" || lowered == "core") return true;
  return WantsModule(GmcpModuleOf(lowered));
}

void GmcpSupports::Remember(std::string_view package, std::string_view body) {
  const std::string lowered = Lower(package);
  if (!IsStatePackage(lowered)) return;
  if (body.size() > limits::kGmcpRememberedBodyBytesMax) {
    remembered_.erase(lowered);  // too big to keep: better none than a stale one
    return;
  }
  remembered_[lowered] = GmcpMessage{std::string(package), std::string(body)};
}

std::vector<GmcpMessage> GmcpSupports::OnClientMessage(std::string_view package,
                                                       std::string_view body) {
  std::vector<GmcpMessage> out;
  const std::string lowered = Lower(package);
  if (lowered == "core.ping") {
    out.push_back({"Core.Ping", ""});
    return out;
  }
  if (lowered == "core.hello") {
    boost::system::error_code ec;
    const json::value doc = json::parse(body, ec);
    if (!ec && doc.is_object()) {
      client_name_ = HelloField(doc.as_object(), "client");
      client_version_ = HelloField(doc.as_object(), "version");
    }
    out.push_back({"Core.Hello", R"({"name":"TelosMUD"})"});
    return out;
  }
  const bool set = lowered == "core.supports.set";
  const bool add = lowered == "core.supports.add";
  const bool remove = lowered == "core.supports.remove";
  if (!set && !add && !remove) return out;

  const std::optional<std::vector<std::string>> parsed = ParseModules(body);
  if (!parsed) return out;  // not a list: the client's set stays as it was
  const std::vector<std::string>& named = *parsed;

  // What was wanted before, to replay the state of modules this message turns on.
  std::vector<std::pair<const std::string*, bool>> before;
  for (const auto& [name, message] : remembered_) before.emplace_back(&name, Wants(name));
  if (set) {
    chosen_ = true;
    modules_ = std::set<std::string>(named.begin(), named.end());
  } else if (add == chosen_) {  // Add to a chosen set, or Remove from the default of all
    for (const std::string& m : named) {
      if (modules_.size() >= limits::kGmcpModulesMax) break;
      modules_.insert(m);
    }
  } else {  // Remove from a chosen set, or Add back to the default what was removed
    for (const std::string& m : named) modules_.erase(m);
  }

  for (const auto& [name, was_wanted] : before) {
    if (!was_wanted && Wants(*name)) out.push_back(remembered_.at(*name));
  }
  return out;
}

}  // namespace telos::net
