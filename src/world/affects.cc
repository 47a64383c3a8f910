// Affects (poison, regeneration, haste) and hit point / mana / move regeneration.
#include <algorithm>

#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

const char* AppliedText(AffectKind kind) {
  switch (kind) {
    case AffectKind::kPoison: return "{g}You feel very sick.{x}";
    case AffectKind::kRegeneration: return "{g}Warmth spreads through you as your body mends.{x}";
    case AffectKind::kHaste: return "{y}The world slows around you.{x}";
    case AffectKind::kShield: return "{c}A shimmering shield surrounds you.{x}";
  }
  return "";
}

const char* ExpiredText(AffectKind kind) {
  switch (kind) {
    case AffectKind::kPoison: return "The poison has run its course. You feel better.";
    case AffectKind::kRegeneration: return "The healing warmth fades.";
    case AffectKind::kHaste: return "You slow down to the pace of the world.";
    case AffectKind::kShield: return "Your shimmering shield fades away.";
  }
  return "";
}

}  // namespace

void ZoneCore::ApplyAffect(Actor& actor, AffectKind kind, int64_t duration_ms) {
  if (duration_ms <= 0) return;
  for (Affect& affect : actor.affects) {
    if (affect.kind == kind) {
      affect.remaining_ms = std::max(affect.remaining_ms, duration_ms);
      Send(actor, AppliedText(kind));
      return;
    }
  }
  actor.affects.push_back({kind, duration_ms});
  Send(actor, AppliedText(kind));
}

void ZoneCore::Damage(Actor& actor, int amount, Actor* source) {
  if (amount <= 0 || actor.removed || actor.position == Position::kDead) return;
  actor.hp -= amount;
  MarkDirty(actor);
  if (actor.hp <= 0) Die(actor, source);
}

void ZoneCore::Heal(Actor& actor, int amount) {
  if (amount <= 0 || actor.removed) return;
  actor.hp = std::min(actor.max_hp, actor.hp + amount);
  MarkDirty(actor);
}

void ZoneCore::AffectsTick() {
  bool pulse = heartbeats_ % kAffectPulseHeartbeats == 0;
  std::vector<uint64_t> affected;
  for (const auto& [id, actor] : actors_) {
    if (!actor->affects.empty()) affected.push_back(id);
  }
  for (uint64_t id : affected) {
    Actor* actor = FindActor(id);
    if (actor == nullptr) continue;
    // Expire first (an affect ends on the heartbeat its time runs out), then pulse the rest.
    std::vector<AffectKind> pulses;
    for (size_t i = 0; i < actor->affects.size();) {
      Affect& affect = actor->affects[i];
      affect.remaining_ms -= limits::kZoneHeartbeatMs;
      if (affect.remaining_ms <= 0) {
        AffectKind kind = affect.kind;
        actor->affects.erase(actor->affects.begin() + static_cast<std::ptrdiff_t>(i));
        Send(*actor, ExpiredText(kind));
        continue;
      }
      if (pulse) pulses.push_back(affect.kind);
      ++i;
    }
    for (AffectKind kind : pulses) {
      if (actor->removed) break;
      if (kind == AffectKind::kPoison) {
        Send(*actor, "{g}You shiver as poison burns in your veins.{x}");
        Damage(*actor, kPoisonDamagePerPulse, nullptr);
      } else if (kind == AffectKind::kRegeneration) {
        Heal(*actor, kRegenerationHealPerPulse);
      }
    }
  }
}

void ZoneCore::RegenTick() {
  for (const auto& [id, actor_ptr] : actors_) {
    Actor& actor = *actor_ptr;
    if (actor.fighting != 0 || actor.position == Position::kDead) continue;
    int factor =
        actor.position == Position::kResting || actor.position == Position::kSleeping ? 2 : 1;
    if (actor.HasAffect(AffectKind::kPoison)) continue;  // poison stops natural healing
    bool changed = false;
    auto regen = [&](int& value, int max) {
      if (value >= max) return;
      value = std::min(max, value + factor * std::max(1, max / 10));
      changed = true;
    };
    regen(actor.hp, actor.max_hp);
    if (actor.is_player) {
      regen(actor.mana, actor.max_mana);
      regen(actor.moves, actor.max_moves);
    }
    if (changed) MarkDirty(actor);
  }
}

}  // namespace telos::world
