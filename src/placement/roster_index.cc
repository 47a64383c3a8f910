#include "telos/placement/roster_index.h"

#include <algorithm>
#include <bit>

#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::placement {
namespace {

// Fibonacci hashing: multiply by 2^64 / golden ratio and keep the top bits. Character ids are
// assigned by the database, not chosen by players, so a fixed multiplier spreads them well
// enough, sequential ids included.
constexpr uint64_t kHashMultiplier = 0x9E37'79B9'7F4A'7C15;
constexpr size_t kMinSlots = 16;
constexpr size_t kSlotsPerPlayer = 2;  // keeps the table at most half full

}  // namespace

RosterIndex::RosterIndex(std::span<const Candidate> candidates) {
  RELEASE_ASSERT(candidates.size() <= limits::kInstancesPerMapMax,
                 "more candidates than limits::kInstancesPerMapMax");
  size_t listed_total = 0;
  listed_.reserve(candidates.size());
  for (const Candidate& candidate : candidates) {
    listed_.push_back(static_cast<uint32_t>(candidate.players.size()));
    listed_total += candidate.players.size();
  }
  if (listed_total == 0) return;
  // Sized for the total before duplicates are known, so slots never move while building.
  const size_t slot_count = std::bit_ceil(std::max(kMinSlots, listed_total * kSlotsPerPlayer));
  slots_.resize(slot_count);
  shift_ = static_cast<uint32_t>(64 - std::countr_zero(slot_count));

  // First pass: one slot per distinct player, holding its first position and its count. The
  // later positions of players on several candidates are kept aside in candidate order.
  struct Extra {
    size_t slot;
    uint32_t position;
  };
  std::vector<Extra> extras;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::vector<PlayerId>& players = candidates[i].players;
    ASSERT(std::is_sorted(players.begin(), players.end()), "Candidate::players must be sorted");
    const auto position = static_cast<uint32_t>(i);
    for (size_t k = 0; k < players.size(); ++k) {
      if (k > 0 && players[k] == players[k - 1]) continue;  // listed twice: counts once
      Slot& slot = FindOrInsert(players[k]);
      if (slot.count == 0) {
        slot.first = position;
        ++players_;
      } else {
        extras.push_back(Extra{static_cast<size_t>(&slot - slots_.data()), position});
      }
      ++slot.count;
    }
  }
  if (extras.empty()) return;

  // Second pass, only for players on several candidates: move their positions to `overflow_`,
  // contiguous and ascending. `count` is reused as the fill cursor and ends where it started.
  overflow_.reserve(extras.size() * 2);
  for (Slot& slot : slots_) {
    if (slot.count < 2) continue;
    const auto begin = static_cast<uint32_t>(overflow_.size());
    overflow_.push_back(slot.first);
    overflow_.resize(overflow_.size() + slot.count - 1);
    slot.first = begin;
    slot.count = 1;
  }
  for (const Extra& extra : extras) {
    Slot& slot = slots_[extra.slot];
    overflow_[slot.first + slot.count] = extra.position;
    ++slot.count;
  }
}

size_t RosterIndex::Home(PlayerId player) const {
  return static_cast<size_t>((player * kHashMultiplier) >> shift_);
}

const RosterIndex::Slot* RosterIndex::Find(PlayerId player) const {
  if (slots_.empty()) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(player);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.count == 0) return nullptr;
    if (slot.player == player) return &slot;
  }
}

RosterIndex::Slot& RosterIndex::FindOrInsert(PlayerId player) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(player);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.count == 0) {
      slot.player = player;
      return slot;
    }
    if (slot.player == player) return slot;
  }
}

std::span<const uint32_t> RosterIndex::PositionsOf(PlayerId player) const {
  const Slot* slot = Find(player);
  if (slot == nullptr) return {};
  if (slot->count == 1) return {&slot->first, 1};
  return {overflow_.data() + slot->first, slot->count};
}

bool RosterIndex::Matches(std::span<const Candidate> candidates) const {
  if (candidates.size() != listed_.size()) return false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].players.size() != listed_[i]) return false;
  }
  return true;
}

}  // namespace telos::placement
