#include <gtest/gtest.h>

#include "telos/world/content.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using testing::TempDir;
using testing::WriteSmallPack;

bool HasProblem(const std::vector<Problem>& problems, const std::string& file, int line,
                const std::string& fragment) {
  for (const Problem& p : problems) {
    if (p.file == file && p.line == line && p.message.find(fragment) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string Dump(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += p.ToString() + "\n";
  return out;
}

TEST(ContentLoader, SmallPackLoads) {
  TempDir dir;
  WriteSmallPack(dir);
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(pack.ok()) << Dump(problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(pack->name, "test");
  ASSERT_EQ(pack->zones.size(), 2u);
  EXPECT_EQ(pack->zones[0].id, "lobby");
  EXPECT_EQ(pack->RoomCount(), 7);
  EXPECT_EQ(pack->start_room, (Ref{"lobby", "atrium"}));
  const ItemDef* sword = pack->FindItem(Ref{"town", "short_sword"});
  ASSERT_NE(sword, nullptr);
  EXPECT_EQ(sword->damage->ToString(), "1d6+1");
  EXPECT_EQ(sword->slot, WearSlot::kWield);
  const RoomDef* atrium = pack->FindRoom(Ref{"lobby", "atrium"});
  ASSERT_NE(atrium, nullptr);
  EXPECT_EQ(atrium->exits[1].to, (Ref{"town", "square"}));
  EXPECT_EQ(pack->content_hash.size(), 64u);
}

TEST(ContentLoader, HashIsStableAndTracksContent) {
  TempDir a, b;
  WriteSmallPack(a);
  WriteSmallPack(b);
  std::vector<Problem> problems;
  std::string hash_a = LoadPack(a.path(), &problems)->content_hash;
  EXPECT_EQ(hash_a, LoadPack(b.path(), &problems)->content_hash);
  b.Write("scripts/extra.lua", "-- nothing\n");
  EXPECT_NE(hash_a, LoadPack(b.path(), &problems)->content_hash);
}

TEST(ContentLoader, DiceParsing) {
  EXPECT_EQ(ParseDice("2d6")->Max(), 12);
  EXPECT_EQ(ParseDice("1d4-1")->bonus, -1);
  EXPECT_EQ(ParseDice("3d8+10")->ToString(), "3d8+10");
  EXPECT_FALSE(ParseDice("d6"));
  EXPECT_FALSE(ParseDice("2x6"));
  EXPECT_FALSE(ParseDice("0d6"));
  EXPECT_FALSE(ParseDice("1d6+"));
  EXPECT_FALSE(ParseDice("1d6 + 2"));
}

TEST(ContentLoader, BrokenPackReportsEveryProblemWithFileAndLine) {
  TempDir dir;
  dir.Write("pack.toml", "name = \"broken\"\nversion = \"1\"\nstart_room = \"lobby:nowhere\"\n");
  // Line numbers matter: each problem below names the line it is on.
  dir.Write("zones/lobby.toml",
            "[zone]\n"                           // 1
            "id = \"lobbyx\"\n"                  // 2  id != file name
            "name = \"Lobby\"\n"                 // 3
            "kind = \"palace\"\n"                // 4  unknown kind
            "reset_minutes = 0\n"                // 5  out of range
            "\n"                                 // 6
            "[[rooms]]\n"                        // 7
            "id = \"atrium\"\n"                  // 8
            "name = \"Atrium\"\n"                // 9
            "description = \"x\"\n"              // 10
            "flags = [\"safe\", \"sparkly\"]\n"  // 11 unknown flag
            "script = \"missing.lua\"\n"         // 12 no such script
            "colour = \"red\"\n"                 // 13 unknown key
            "  [[rooms.exits]]\n"                // 14
            "  dir = \"north\"\n"                // 15
            "  to = \"hall\"\n"                  // 16 dangling exit
            "\n"                                 // 17
            "[[rooms]]\n"                        // 18
            "id = \"atrium\"\n"                  // 19 duplicate id
            "name = \"Again\"\n"                 // 20
            "description = \"y\"\n"              // 21
            "  [[rooms.exits]]\n"                // 22
            "  dir = \"east\"\n"                 // 23
            "  to = \"town:gate\"\n"             // 24 unknown zone
            "\n"                                 // 25
            "[[items]]\n"                        // 26
            "id = \"club\"\n"                    // 27
            "name = \"a club\"\n"                // 28
            "keywords = [\"club\"]\n"            // 29
            "ground = \"A club.\"\n"             // 30
            "type = \"bludgeon\"\n"              // 31 unknown type
            "slot = \"tail\"\n"                  // 32 unknown slot
            "damage = \"2q6\"\n"                 // 33 bad dice
            "value = -5\n"                       // 34 bad number
            "\n"                                 // 35
            "[[mobs]]\n"                         // 36
            "id = \"Rat\"\n"                     // 37 invalid id
            "name = \"a rat\"\n"                 // 38
            "keywords = [\"rat\"]\n"             // 39
            "ground = \"A rat.\"\n"              // 40
            "level = 0\n"                        // 41 out of range
            "hp = 5\n"                           // 42
            "flags = [\"grumpy\"]\n"             // 43 unknown mob flag
            "equipment = [\"sword\"]\n"          // 44 unknown item
            "\n"                                 // 45
            "[[resets]]\n"                       // 46
            "mob = \"dragon\"\n"                 // 47 unknown mob
            "room = \"atrium\"\n"                // 48
            "\n"                                 // 49
            "[[shops]]\n"                        // 50
            "keeper = \"nobody\"\n"              // 51 unknown keeper
            "sells = [\"club\", \"ghost\"]\n");  // 52 unknown ware
  dir.Write("zones/bad_syntax.toml", "[zone]\nid = \"bad_syntax\"\nname = = \"x\"\n");
  dir.Write("scripts/broken.lua", "function f()\n  return 1 +\nend\n");
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(dir.path(), &problems);
  ASSERT_FALSE(pack.ok());
  std::string all = Dump(problems);
  const std::string z = "zones/lobby.toml";
  EXPECT_TRUE(HasProblem(problems, "pack.toml", 3, "unknown room 'lobby:nowhere'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 2, "must equal the file name")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 4, "unknown zone kind 'palace'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 5, "out of range 1..1440")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 11, "unknown room flag 'sparkly'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 12, "script 'missing.lua' not found")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 13, "unknown key 'colour'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 16, "unknown room 'lobby:hall'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 19, "duplicate room id 'atrium'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 24, "unknown zone 'town'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 31, "unknown item type 'bludgeon'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 32, "unknown wear slot 'tail'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 33, "bad dice '2q6'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 34, "out of range")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 37, "invalid id 'Rat'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 41, "'level' = 0 is out of range")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 43, "unknown mob flag 'grumpy'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 44, "unknown item 'lobby:sword'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 47, "unknown mob 'lobby:dragon'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 51, "unknown mob 'lobby:nobody'")) << all;
  EXPECT_TRUE(HasProblem(problems, z, 52, "unknown item 'lobby:ghost'")) << all;
  EXPECT_TRUE(HasProblem(problems, "zones/bad_syntax.toml", 3, "")) << all;
  EXPECT_TRUE(HasProblem(problems, "scripts/broken.lua", 3, "Lua syntax error")) << all;
  // Problems come sorted by file, then line.
  for (size_t i = 1; i < problems.size(); ++i) {
    EXPECT_LE(std::tie(problems[i - 1].file, problems[i - 1].line),
              std::tie(problems[i].file, problems[i].line));
  }
  EXPECT_NE(pack.status().message().find("problem"), std::string::npos);
}

// Issue 24: related zones declare a colocation group in their header for the director; a group
// name follows the id rules, and a bad one is reported at its line.
TEST(ContentLoader, ZonesDeclareTheirColocationGroup) {
  TempDir dir;
  WriteSmallPack(dir);
  std::vector<Problem> problems;
  Result<Pack> plain = LoadPack(dir.path(), &problems);
  ASSERT_TRUE(plain.ok()) << Dump(problems);
  EXPECT_EQ(plain->FindZone("town")->colocation_group, "");

  const std::string town =
      "[zone]\nid = \"town\"\nname = \"Town\"\nkind = \"town\"\n"
      "reset_minutes = 5\ncolocation_group = \"%s\"\n\n"
      "[[rooms]]\nid = \"square\"\nname = \"Square\"\ndescription = \"x\"\n";
  auto with_group = [&](const std::string& group) {
    std::string text = town;
    text.replace(text.find("%s"), 2, group);
    return text;
  };
  TempDir good;
  good.Write("pack.toml", "name = \"g\"\nversion = \"1\"\nstart_room = \"town:square\"\n");
  good.Write("zones/town.toml", with_group("harrow"));
  problems.clear();
  Result<Pack> grouped = LoadPack(good.path(), &problems);
  ASSERT_TRUE(grouped.ok()) << Dump(problems);
  EXPECT_EQ(grouped->FindZone("town")->colocation_group, "harrow");

  TempDir bad;
  bad.Write("pack.toml", "name = \"b\"\nversion = \"1\"\nstart_room = \"town:square\"\n");
  bad.Write("zones/town.toml", with_group("Not A Group"));
  problems.clear();
  EXPECT_FALSE(LoadPack(bad.path(), &problems).ok());
  EXPECT_TRUE(HasProblem(problems, "zones/town.toml", 6, "invalid colocation group"))
      << Dump(problems);
}

TEST(ContentLoader, TwoRoomsWithOneRoomNumberAreRefused) {
  // "lobby:r563919" and "lobby:r800634" hash to the same GMCP room number (441534354).
  ASSERT_EQ(RoomNumber({"lobby", "r563919"}), RoomNumber({"lobby", "r800634"}));
  const std::string zone =
      "[zone]\nid = \"lobby\"\nname = \"L\"\nkind = \"lobby\"\nreset_minutes = 5\n\n"
      "[[rooms]]\nid = \"r563919\"\nname = \"A\"\ndescription = \"x\"\n\n"
      "[[rooms]]\nid = \"%s\"\nname = \"B\"\ndescription = \"x\"\n";
  auto pack_with = [&](const TempDir& dir, const std::string& second) {
    std::string text = zone;
    text.replace(text.find("%s"), 2, second);
    dir.Write("pack.toml", "name = \"n\"\nversion = \"1\"\nstart_room = \"lobby:r563919\"\n");
    dir.Write("zones/lobby.toml", text);
  };
  TempDir good;
  pack_with(good, "r800635");
  std::vector<Problem> problems;
  ASSERT_TRUE(LoadPack(good.path(), &problems).ok()) << Dump(problems);
  TempDir bad;
  pack_with(bad, "r800634");
  problems.clear();
  EXPECT_FALSE(LoadPack(bad.path(), &problems).ok());
  EXPECT_TRUE(HasProblem(problems, "zones/lobby.toml", 0,
                         "room 'lobby:r800634' has the same room number (441534354) as "
                         "'lobby:r563919'"))
      << Dump(problems);
}

TEST(ContentLoader, MissingFolderAndFiles) {
  std::vector<Problem> problems;
  EXPECT_FALSE(LoadPack("/nonexistent/telos/pack", &problems).ok());
  EXPECT_EQ(problems.size(), 1u);
  TempDir dir;
  EXPECT_FALSE(LoadPack(dir.path(), &problems).ok());
  EXPECT_TRUE(HasProblem(problems, "pack.toml", 0, "cannot")) << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, "zones", 0, "no zone files")) << Dump(problems);
}

#ifdef TELOS_SOURCE_DIR
TEST(ContentLoader, DefaultWorldIsValid) {
  std::filesystem::path content = std::filesystem::path(TELOS_SOURCE_DIR) / "content";
  if (!std::filesystem::exists(content / "pack.toml")) GTEST_SKIP() << "no default content yet";
  std::vector<Problem> problems;
  Result<Pack> pack = LoadPack(content, &problems);
  ASSERT_TRUE(pack.ok()) << Dump(problems);
  EXPECT_GE(pack->zones.size(), 6u);
  EXPECT_GE(pack->RoomCount(), 80);
}
#endif

}  // namespace
}  // namespace telos::world
