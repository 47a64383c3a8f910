// Explorer: how a spreading bot finds its way out into the world (private to src/sim).
//
// A random walk, even one that never turns straight back, stays near where it started: it
// reaches about the square root of its length in rooms, and loops it cannot see (the lobby's)
// hold it. The explorer remembers where each exit it took led. While the room it stands in has
// an exit it has not tried, it takes one at random; otherwise it heads by the shortest known path
// for the nearest room that still has one. A walk of N steps so reaches about N rooms deep.
//
// Rooms are small integers (the swarm interns room titles once for every bot); an exit is its
// position in the room's exit list, which the world shows in a fixed order.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "telos/base/random.h"

namespace telos::sim {

class Explorer {
 public:
  static constexpr int32_t kUnknownRoom = -1;

  // The bot is now in `room` (kUnknownRoom when the reply did not name one) with `exit_count`
  // exits. Records where the last step taken from Next() led and, given `back_exit` (the exit
  // here opposite the step, e.g. "south" after "north"), that it leads back: a way not worth a
  // step to learn.
  void Arrived(int32_t room, size_t exit_count, int back_exit = -1);
  // The step in flight will not arrive where its exit leads (the bot fled, or died): the next
  // Arrived() learns nothing about that exit.
  void Displaced() { left_by_ = -1; }
  // The exit to take next, as a position in the current room's exit list; -1 if it has none.
  int Next(Random& random);
  // How many rooms the explorer has seen.
  size_t rooms_known() const { return led_to_.size(); }
  // Where exit `exit` of `room` was found to lead; kUnknownRoom if it has not been tried.
  int32_t LedTo(int32_t room, int exit) const;

 private:
  // The first exit of the shortest known path to a room with an untried exit; -1 if none.
  int TowardUntried() const;

  // Per room seen, where each of its exits led (kUnknownRoom: not tried yet).
  std::unordered_map<int32_t, std::vector<int32_t>> led_to_;
  int32_t here_ = kUnknownRoom;
  size_t here_exits_ = 0;
  int32_t left_from_ = kUnknownRoom;  // where the step in flight started, and by which exit
  int left_by_ = -1;
};

}  // namespace telos::sim
