// Reading Weights from TOML. toml++ reports syntax errors by throwing; they are caught here and
// become InvalidArgument, so no exception leaves this file.
#include <array>
#include <fstream>
#include <sstream>
#include <string>

#include <toml++/toml.h>

#include "telos/base/limits.h"
#include "telos/placement/weights.h"

namespace telos::placement {
namespace {

struct Field {
  std::string_view key;
  int64_t Weights::*member;
};

// Every key a weights file may hold: the field names of Weights.
constexpr std::array kFields = {
    Field{"party_points", &Weights::party_points},
    Field{"guild_points_per_member", &Weights::guild_points_per_member},
    Field{"guild_members_max", &Weights::guild_members_max},
    Field{"friend_points_per_friend", &Weights::friend_points_per_friend},
    Field{"friends_max", &Weights::friends_max},
    Field{"locale_points", &Weights::locale_points},
    Field{"fill_points", &Weights::fill_points},
    Field{"fill_band_low_pct", &Weights::fill_band_low_pct},
    Field{"fill_band_high_pct", &Weights::fill_band_high_pct},
    Field{"overfull_points_per_pct", &Weights::overfull_points_per_pct},
    Field{"age_points", &Weights::age_points},
    Field{"age_max_ms", &Weights::age_max_ms},
    Field{"antiflap_points", &Weights::antiflap_points},
};

std::string KnownKeys() {
  std::string out;
  for (const Field& field : kFields) {
    if (!out.empty()) out += ", ";
    out += field.key;
  }
  return out;
}

std::string_view NodeTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::integer: return "an integer";
    default: return "a date or time";
  }
}

std::string Where(std::string_view source, const toml::node& node) {
  return std::string(source) + ":" + std::to_string(node.source().begin.line);
}

}  // namespace

Result<Weights> ParseWeights(std::string_view toml_text, std::string_view source) {
  toml::table table;
  try {
    table = toml::parse(toml_text, std::string(source));
  } catch (const toml::parse_error& err) {
    return Status::InvalidArgument("weights: " + std::string(source) + ":" +
                                   std::to_string(err.source().begin.line) + ": " +
                                   std::string(err.description()));
  }
  Weights weights;
  for (const auto& [key, node] : table) {
    const Field* field = nullptr;
    for (const Field& candidate : kFields) {
      if (candidate.key == key.str()) field = &candidate;
    }
    if (field == nullptr) {
      return Status::InvalidArgument("weights: " + Where(source, node) + ": unknown term '" +
                                     std::string(key.str()) + "'; known keys are " + KnownKeys());
    }
    if (!node.is_integer()) {
      return Status::InvalidArgument("weights: " + Where(source, node) + ": " +
                                     std::string(field->key) + " must be an integer, not " +
                                     std::string(NodeTypeName(node)));
    }
    weights.*(field->member) = *node.value<int64_t>();
  }
  if (Status valid = ValidateWeights(weights); !valid.ok()) {
    return Status::InvalidArgument(valid.message() + " (in " + std::string(source) + ")");
  }
  return weights;
}

Result<Weights> LoadWeightsFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("weights: cannot read " + path.string());
  std::string text;
  text.resize(limits::kPlacementWeightsFileBytesMax + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limits::kPlacementWeightsFileBytesMax) {
    return Status::InvalidArgument("weights: " + path.string() + " is larger than " +
                                   std::to_string(limits::kPlacementWeightsFileBytesMax) +
                                   " bytes");
  }
  return ParseWeights(text, path.string());
}

}  // namespace telos::placement
