#include "explorer.h"

#include <deque>

namespace telos::sim {

void Explorer::Arrived(int32_t room, size_t exit_count, int back_exit) {
  const bool stepped = left_from_ != kUnknownRoom && left_by_ >= 0;
  if (stepped) {
    std::vector<int32_t>& exits = led_to_[left_from_];
    if (static_cast<size_t>(left_by_) < exits.size()) exits[static_cast<size_t>(left_by_)] = room;
  }
  const int32_t came_from = left_from_;
  left_from_ = kUnknownRoom;
  left_by_ = -1;
  here_ = room;
  here_exits_ = exit_count;
  if (room == kUnknownRoom) return;
  std::vector<int32_t>& exits = led_to_[room];
  // A room whose exits changed (a door, new content) is learned afresh.
  if (exits.size() != exit_count) exits.assign(exit_count, kUnknownRoom);
  if (stepped && came_from != room && back_exit >= 0 &&
      static_cast<size_t>(back_exit) < exits.size() &&
      exits[static_cast<size_t>(back_exit)] == kUnknownRoom) {
    exits[static_cast<size_t>(back_exit)] = came_from;
  }
}

int Explorer::Next(Random& random) {
  if (here_exits_ == 0) return -1;
  int choice = -1;
  if (here_ != kUnknownRoom) {
    const std::vector<int32_t>& exits = led_to_[here_];
    std::vector<int> untried;
    for (size_t i = 0; i < exits.size(); ++i) {
      if (exits[i] == kUnknownRoom) untried.push_back(static_cast<int>(i));
    }
    if (!untried.empty()) {
      choice = untried[static_cast<size_t>(random.Uniform(0, std::ssize(untried) - 1))];
    } else {
      choice = TowardUntried();
    }
  }
  // Nowhere left to explore, or lost: any exit.
  if (choice < 0)
    choice = static_cast<int>(random.Uniform(0, static_cast<int64_t>(here_exits_) - 1));
  left_from_ = here_;
  left_by_ = choice;
  return choice;
}

int32_t Explorer::LedTo(int32_t room, int exit) const {
  const auto known = led_to_.find(room);
  if (known == led_to_.end() || exit < 0 || static_cast<size_t>(exit) >= known->second.size()) {
    return kUnknownRoom;
  }
  return known->second[static_cast<size_t>(exit)];
}

int Explorer::TowardUntried() const {
  // Breadth first over the rooms seen, remembering each room's first step from here.
  std::unordered_map<int32_t, int> first_step{{here_, -1}};
  std::deque<int32_t> queue{here_};
  while (!queue.empty()) {
    const int32_t room = queue.front();
    queue.pop_front();
    const auto known = led_to_.find(room);
    if (known == led_to_.end()) continue;
    const std::vector<int32_t>& exits = known->second;
    for (size_t i = 0; i < exits.size(); ++i) {
      const int32_t next = exits[i];
      if (next == kUnknownRoom) return first_step.at(room);  // room has an untried exit
      if (first_step.contains(next)) continue;
      first_step.emplace(next, room == here_ ? static_cast<int>(i) : first_step.at(room));
      queue.push_back(next);
    }
  }
  return -1;
}

}  // namespace telos::sim
