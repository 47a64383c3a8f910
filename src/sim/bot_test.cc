// The pure parts of a bot: exit and room parsing and the latency reservoir.
#include <gtest/gtest.h>

#include "bot.h"

namespace telos::sim {
namespace {

TEST(ParseExits, ReadsTheLastExitLine) {
  // The world's format: directions separated by spaces, in colour.
  EXPECT_EQ(ParseExits("The Atrium\n\x1b[32m[Exits: north south east]\x1b[0m\n> "),
            (std::vector<std::string>{"north", "south", "east"}));
  EXPECT_EQ(ParseExits("[Exits: west]\nThe Hall\n[Exits: up, down]"),
            (std::vector<std::string>{"up", "down"}));
  EXPECT_TRUE(ParseExits("[Exits: none]").empty());
  EXPECT_TRUE(ParseExits("no exits line at all").empty());
  // An annotation is not part of a direction's name.
  EXPECT_EQ(ParseExits("[Exits: north (closed), south]"),
            (std::vector<std::string>{"north", "south"}));
}

TEST(RoomTitle, ReadsTheCyanLineAboveTheExits) {
  const std::string room =
      "\x1b[36mThe Atrium of Arrivals\x1b[0m\r\n"
      "A high hall.\r\n"
      "Its floor is worn.\r\n"
      "\x1b[32m[Exits: north south]\x1b[0m\r\n";
  EXPECT_EQ(RoomTitle(room), "The Atrium of Arrivals");
  // Chatter before and a channel line (cyan too) between do not confuse it; the last room wins.
  EXPECT_EQ(RoomTitle("\x1b[36mThe Old Room\x1b[0m\r\n[Exits: west]\r\n" + room +
                      "\x1b[36m[chat] Ann: hi\x1b[0m\r\n"),
            "The Atrium of Arrivals");
  EXPECT_EQ(RoomTitle("\x1b[36mThe Hall\x1b[0m\r\n\x1b[36m[chat] Bo: hey\x1b[0m\r\n"
                      "\x1b[32m[Exits: up]\x1b[0m"),
            "The Hall");
  // Text after a prompt starts on the prompt's line.
  EXPECT_EQ(RoomTitle("Bo says, 'hi'\r\n> \x1b[36mThe Hall\x1b[0m\r\n\x1b[32m[Exits: up]"),
            "The Hall");
  EXPECT_EQ(RoomTitle("You cannot go that way.\r\n> "), "");
  EXPECT_EQ(RoomTitle("[Exits: north]"), "");
}

TEST(ReverseDirection, PairsOppositesBothWays) {
  EXPECT_EQ(ReverseDirection("north"), "south");
  EXPECT_EQ(ReverseDirection("south"), "north");
  EXPECT_EQ(ReverseDirection("down"), "up");
  EXPECT_EQ(ReverseDirection("southeast"), "northwest");
  EXPECT_EQ(ReverseDirection("enter"), "out");
  EXPECT_EQ(ReverseDirection("out"), "enter");
  EXPECT_EQ(ReverseDirection("in"), "out");
  EXPECT_TRUE(ReverseDirection("portal").empty());
  EXPECT_TRUE(ReverseDirection("").empty());
}

TEST(BackExit, FindsTheWayBack) {
  const std::vector<std::string> exits = {"north", "east", "out"};
  EXPECT_EQ(BackExit(exits, "south"), 0);
  EXPECT_EQ(BackExit(exits, "enter"), 2);
  EXPECT_EQ(BackExit(exits, "up"), -1);
  EXPECT_EQ(BackExit(exits, "look"), -1);
  EXPECT_EQ(BackExit({"in", "west"}, "out"), 0);
}

TEST(LatencyRecorder, KeepsEverySampleUnderTheBound) {
  Random random(3);
  LatencyRecorder recorder(10);
  for (int i = 0; i < 10; ++i) recorder.Add(i, random);
  EXPECT_EQ(recorder.samples().size(), 10u);
  EXPECT_EQ(recorder.dropped(), 0u);
}

TEST(LatencyRecorder, ReservoirStaysBoundedAndFair) {
  Random random(5);
  LatencyRecorder recorder(1'000);
  // 10,000 samples: the first half fast (1), the second half slow (100).
  for (int i = 0; i < 10'000; ++i) recorder.Add(i < 5'000 ? 1 : 100, random);
  EXPECT_EQ(recorder.samples().size(), 1'000u);
  EXPECT_EQ(recorder.seen(), 10'000u);
  EXPECT_EQ(recorder.dropped(), 9'000u);
  const auto slow = std::count(recorder.samples().begin(), recorder.samples().end(), 100);
  EXPECT_NEAR(static_cast<double>(slow) / 1'000, 0.5, 0.06);
}

}  // namespace
}  // namespace telos::sim
