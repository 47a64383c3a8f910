// BehaviourMix: what a bot does each time it acts, as a weighted choice.
//
// A mix is parsed from text such as "walk=3,look=2,say=2,tell=1,fight=1,idle=1": each name is
// one of the behaviours below (pose is an emote, for workloads comparable with MUSH servers), each
// weight a whole number from 0 to kMixWeightMax. Names not given weigh 0; at least one weight must
// be positive. Pick() draws a behaviour with probability weight / total from the caller's Random,
// so a seeded run replays.
//
// Thread safety: a value; Pick() touches only the Random it is given.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "telos/base/limits.h"
#include "telos/base/random.h"
#include "telos/base/status.h"

namespace telos::sim {

enum class Behaviour { kWalk = 0, kLook, kSay, kTell, kFight, kIdle, kPose };
inline constexpr size_t kBehaviourCount = 7;
inline constexpr int kMixWeightMax = limits::kMixWeightMax;

// "walk", "look", "say", "tell", "fight", "idle" or "pose".
std::string_view BehaviourName(Behaviour behaviour);

class BehaviourMix {
 public:
  // The default: walk=3,look=2,say=2,tell=1,fight=1,idle=1.
  static BehaviourMix Default();
  // Fails with kInvalidArgument on an unknown or repeated name, a weight that is not a whole
  // number in [0, kMixWeightMax], an empty item, or when every weight is 0.
  static Result<BehaviourMix> Parse(std::string_view spec);

  int weight(Behaviour behaviour) const { return weights_[static_cast<size_t>(behaviour)]; }
  int total() const { return total_; }
  Behaviour Pick(Random& random) const;
  // Canonical text, every behaviour in declaration order: "walk=3,look=2,...,pose=0".
  std::string ToString() const;

 private:
  std::array<int, kBehaviourCount> weights_{};
  int total_ = 0;
};

}  // namespace telos::sim
