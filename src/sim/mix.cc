#include "telos/sim/mix.h"

#include <charconv>

namespace telos::sim {
namespace {

constexpr std::array<std::string_view, kBehaviourCount> kNames = {"walk",  "look", "say", "tell",
                                                                  "fight", "idle", "pose"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view BehaviourName(Behaviour behaviour) {
  return kNames[static_cast<size_t>(behaviour)];
}

BehaviourMix BehaviourMix::Default() {
  auto mix = Parse("walk=3,look=2,say=2,tell=1,fight=1,idle=1");
  RELEASE_ASSERT(mix.ok(), "the default mix parses");
  return *mix;
}

Result<BehaviourMix> BehaviourMix::Parse(std::string_view spec) {
  BehaviourMix mix;
  std::array<bool, kBehaviourCount> seen{};
  if (Trim(spec).empty()) return Status::InvalidArgument("mix: empty");
  while (true) {
    const size_t comma = spec.find(',');
    const std::string_view item = Trim(spec.substr(0, comma));
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      return Status::InvalidArgument("mix: expected name=weight, got '" + std::string(item) + "'");
    }
    const std::string_view name = Trim(item.substr(0, eq));
    const std::string_view number = Trim(item.substr(eq + 1));
    size_t index = kBehaviourCount;
    for (size_t i = 0; i < kBehaviourCount; ++i) {
      if (kNames[i] == name) index = i;
    }
    if (index == kBehaviourCount) {
      return Status::InvalidArgument("mix: unknown behaviour '" + std::string(name) +
                                     "' (walk, look, say, tell, fight, idle, pose)");
    }
    if (seen[index]) return Status::InvalidArgument("mix: '" + std::string(name) + "' twice");
    seen[index] = true;
    int weight = -1;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), weight);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || weight < 0 ||
        weight > kMixWeightMax) {
      return Status::InvalidArgument("mix: weight of '" + std::string(name) +
                                     "' must be a whole number from 0 to " +
                                     std::to_string(kMixWeightMax));
    }
    mix.weights_[index] = weight;
    mix.total_ += weight;
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  if (mix.total_ == 0) return Status::InvalidArgument("mix: every weight is 0");
  return mix;
}

Behaviour BehaviourMix::Pick(Random& random) const {
  RELEASE_ASSERT(total_ > 0, "a mix with no weight");
  int64_t draw = random.Uniform(0, total_ - 1);
  for (size_t i = 0; i < kBehaviourCount; ++i) {
    if (draw < weights_[i]) return static_cast<Behaviour>(i);
    draw -= weights_[i];
  }
  RELEASE_ASSERT(false, "draw beyond the total weight");
  return Behaviour::kIdle;
}

std::string BehaviourMix::ToString() const {
  std::string out;
  for (size_t i = 0; i < kBehaviourCount; ++i) {
    if (i > 0) out += ',';
    out += std::string(kNames[i]) + "=" + std::to_string(weights_[i]);
  }
  return out;
}

}  // namespace telos::sim
