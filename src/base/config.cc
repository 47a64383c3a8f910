#include "telos/base/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "telos/base/limits.h"

extern char** environ;

namespace telos {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// Renders a scalar TOML node as the text an environment variable would hold. Arrays of
// scalars become comma-separated lists. Empty optional for anything else (an inline table).
std::optional<std::string> NodeText(const toml::node& node) {
  if (auto s = node.value<std::string>(); s && node.is_string()) return *s;
  if (node.is_integer()) return std::to_string(*node.value<int64_t>());
  if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
  if (node.is_floating_point()) {
    std::ostringstream os;
    os << *node.value<double>();
    return os.str();
  }
  if (const auto* arr = node.as_array()) {
    std::string out;
    for (const auto& item : *arr) {
      auto text = NodeText(item);
      if (!text || item.is_array()) return std::nullopt;
      if (!out.empty()) out += ',';
      out += *text;
    }
    return out;
  }
  return std::nullopt;
}

Status Flatten(const toml::table& table, const std::string& prefix, const std::string& source,
               Config::Environment& values, Config::Environment& origins) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix + "_" + Upper(key.str());
    const std::string origin = source + ":" + std::to_string(node.source().begin.line);
    if (const auto* sub = node.as_table()) {
      TELOS_RETURN_IF_ERROR(Flatten(*sub, name, source, values, origins));
      continue;
    }
    auto text = NodeText(node);
    if (!text) {
      return Status::InvalidArgument(origin + ": " + name +
                                     ": expected a string, number, boolean or list of them");
    }
    values[name] = *text;
    origins[name] = origin;
  }
  return Status::Ok();
}

std::string Describe(std::string_view variable, const Config::Value& v) {
  return std::string(variable) + "='" + v.text + "' (from " + v.origin + ")";
}

}  // namespace

std::optional<bool> ParseBoolWord(std::string_view word) {
  const std::string w = Lower(word);
  if (w == "1" || w == "true" || w == "yes" || w == "on") return true;
  if (w == "0" || w == "false" || w == "no" || w == "off") return false;
  return std::nullopt;
}

Result<Config> Config::FromProcess() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return FromEnvironment(std::move(env));
}

Result<Config> Config::FromEnvironment(Environment env) {
  auto it = env.find("TELOS_CONFIG");
  if (it == env.end() || it->second.empty()) {
    return FromEnvironmentAndToml(std::move(env), "", "");
  }
  const std::string path = it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument("TELOS_CONFIG='" + path + "': cannot open the file");
  }
  std::string text;
  text.resize(limits::kConfigFileBytesMax + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limits::kConfigFileBytesMax) {
    return Status::InvalidArgument("TELOS_CONFIG='" + path + "': file larger than " +
                                   std::to_string(limits::kConfigFileBytesMax) + " bytes");
  }
  return FromEnvironmentAndToml(std::move(env), text, path);
}

Result<Config> Config::FromEnvironmentAndToml(Environment env, std::string_view toml_text,
                                              std::string source) {
  Config config;
  config.env_ = std::move(env);
  if (toml_text.empty()) return config;
  toml::table table;
  try {
    table = toml::parse(toml_text, source);
  } catch (const toml::parse_error& err) {
    return Status::InvalidArgument("TELOS_CONFIG: " + source + ":" +
                                   std::to_string(err.source().begin.line) + ": " +
                                   std::string(err.description()));
  }
  TELOS_RETURN_IF_ERROR(Flatten(table, "TELOS", source, config.file_values_, config.file_origins_));
  return config;
}

std::optional<Config::Value> Config::Lookup(std::string_view variable) const {
  if (auto it = env_.find(variable); it != env_.end()) return Value{it->second, "environment"};
  if (auto it = file_values_.find(variable); it != file_values_.end()) {
    return Value{it->second, file_origins_.find(variable)->second};
  }
  return std::nullopt;
}

Result<std::string> Config::String(std::string_view variable, std::string fallback) const {
  auto v = Lookup(variable);
  return v ? v->text : std::move(fallback);
}

Result<std::string> Config::RequiredString(std::string_view variable) const {
  auto v = Lookup(variable);
  if (!v || v->text.empty()) {
    return Status::InvalidArgument(std::string(variable) + ": required but not set");
  }
  return v->text;
}

Result<int64_t> Config::Int(std::string_view variable, int64_t fallback, int64_t min,
                            int64_t max) const {
  auto v = Lookup(variable);
  if (!v) return fallback;
  int64_t out = 0;
  const char* first = v->text.data();
  const char* last = first + v->text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec != std::errc() || ptr != last || v->text.empty()) {
    return Status::InvalidArgument(Describe(variable, *v) + ": expected a whole number");
  }
  if (out < min || out > max) {
    return Status::InvalidArgument(Describe(variable, *v) + ": must be between " +
                                   std::to_string(min) + " and " + std::to_string(max));
  }
  return out;
}

Result<bool> Config::Bool(std::string_view variable, bool fallback) const {
  auto v = Lookup(variable);
  if (!v) return fallback;
  if (auto b = ParseBoolWord(v->text)) return *b;
  return Status::InvalidArgument(Describe(variable, *v) +
                                 ": expected one of 1, true, yes, on, 0, false, no, off");
}

Result<std::string> Config::Choice(std::string_view variable, std::string fallback,
                                   const std::vector<std::string>& choices) const {
  auto v = Lookup(variable);
  if (!v) return fallback;
  if (std::find(choices.begin(), choices.end(), v->text) != choices.end()) return v->text;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  return Status::InvalidArgument(Describe(variable, *v) + ": expected one of " + list);
}

Result<uint16_t> Config::Port(std::string_view variable, uint16_t fallback) const {
  auto n = Int(variable, fallback, 0, 65535);
  if (!n.ok()) return n.status();
  return static_cast<uint16_t>(*n);
}

Result<std::string> Config::Secret(std::string_view variable, std::string fallback) const {
  const std::string file_variable = std::string(variable) + "_FILE";
  const std::optional<Value> direct = Lookup(variable);
  const std::optional<Value> file = Lookup(file_variable);
  const bool has_direct = direct && !direct->text.empty();
  const bool has_file = file && !file->text.empty();
  if (has_direct && has_file) {
    return Status::InvalidArgument(std::string(variable) + " (from " + direct->origin + ") and " +
                                   file_variable + " (from " + file->origin +
                                   ") are both set: set one");
  }
  if (has_direct) return direct->text;
  if (!has_file) return fallback;

  const std::string& path = file->text;
  const std::string where = file_variable + "='" + path + "' (from " + file->origin + ")";
  // A directory opens as a stream that reads nothing, which would pass for an empty secret.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(where + ": is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(where + ": cannot open the file");
  // One byte more than allowed tells a file at the bound from a longer one.
  std::string text(limits::kSecretFileBytesMax + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::InvalidArgument(where + ": cannot read the file");
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limits::kSecretFileBytesMax) {
    return Status::InvalidArgument(where + ": file larger than " +
                                   std::to_string(limits::kSecretFileBytesMax) + " bytes");
  }
  if (text.ends_with('\n')) {
    text.pop_back();
    if (text.ends_with('\r')) text.pop_back();
  }
  return text;
}

Result<std::string> Config::RequiredSecret(std::string_view variable) const {
  auto value = Secret(variable, "");
  if (!value.ok()) return value.status();
  if (value->empty()) {
    return Status::InvalidArgument(std::string(variable) + ": required but not set (nor " +
                                   std::string(variable) + "_FILE)");
  }
  return value;
}

}  // namespace telos
