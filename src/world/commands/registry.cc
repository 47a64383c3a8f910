// CommandRegistry: exact, alias and abbreviation lookup, and "did you mean" suggestions.
#include "commands/registry.h"

#include <algorithm>

#include "zone_core.h"

namespace telos::world {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

CommandRegistry::CommandRegistry() = default;

void CommandRegistry::Add(CommandSpec spec) {
  commands_.push_back(std::move(spec));
}

const CommandSpec* CommandRegistry::FindExact(std::string_view word) const {
  for (const CommandSpec& spec : commands_) {
    if (spec.name == word) return &spec;
  }
  for (const CommandSpec& spec : commands_) {
    if (std::find(spec.aliases.begin(), spec.aliases.end(), word) != spec.aliases.end()) {
      return &spec;
    }
  }
  return nullptr;
}

const CommandSpec* CommandRegistry::FindPrefix(std::string_view word,
                                               std::vector<std::string>* ambiguous,
                                               Roles roles) const {
  const CommandSpec* found = nullptr;
  std::vector<std::string> candidates;
  for (const CommandSpec& spec : commands_) {
    if (!HasRole(roles, spec.role)) continue;
    if (spec.exact && spec.name != word) continue;
    if (!word.empty() && spec.name.starts_with(word)) {
      found = &spec;
      candidates.push_back(spec.name);
    }
  }
  if (candidates.size() == 1) return found;
  if (candidates.size() > 1) *ambiguous = std::move(candidates);
  return nullptr;
}

std::string CommandRegistry::Suggest(std::string_view word, Roles roles) const {
  std::string best;
  size_t best_distance = word.size() <= 3 ? 1 : 2;
  for (const CommandSpec& spec : commands_) {
    if (spec.hidden || !HasRole(roles, spec.role)) continue;
    size_t distance = EditDistance(word, spec.name);
    if (distance <= best_distance && (best.empty() || distance < best_distance)) {
      best = spec.name;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace telos::world
