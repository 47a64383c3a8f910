#include <gtest/gtest.h>

#include "telos/world/character_state.h"

namespace telos::world {
namespace {

CharacterState Sample() {
  CharacterState s = NewCharacter("Alice", Ref{"town", "square"});
  s.level = 3;
  s.exp = 450;
  s.stats.strength = 15;
  s.hp = 12;
  s.inventory.push_back({Ref{"town", "bag"}, {{Ref{"town", "bread"}, {}}}});
  s.equipment.push_back({WearSlot::kWield, {Ref{"town", "short_sword"}, {}}});
  s.equipment.push_back({WearSlot::kHead, {Ref{"town", "leather_cap"}, {}}});
  s.affects.push_back({AffectKind::kHaste, 1500});
  s.wallet_coins = 77;
  s.bank_coins = 1000;
  s.aliases["gs"] = "get sword";
  s.colour = false;
  s.race = "elf";
  s.char_class = "mage";
  s.may_choose = false;
  s.practices = 3;
  s.trains = 1;
  s.skills["magic_missile"] = 42;
  s.quests["rats_in_the_cellar"] = {2, 0};
  s.quests_done["the_guild"] = 1;
  s.lag_until_ms = 1'767'225'601'000;
  s.cooldowns["recall"] = 1'767'225'660'000;
  return s;
}

TEST(CharacterState, RoundTrips) {
  CharacterState s = Sample();
  Result<CharacterState> back = DecodeCharacter(EncodeCharacter(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

// A row written by schema version 1 must stay readable by every later build.
TEST(CharacterState, DecodesSchemaVersion1) {
  const char* v1 = R"({"schema":1,"name":"Bob","level":2,"exp":120,
    "stats":{"str":14,"dex":12,"con":13,"int":11,"wis":10},
    "hp":25,"max_hp":40,"mana":5,"max_mana":25,"moves":70,"max_moves":85,
    "room":"lobby:atrium",
    "inventory":[{"item":"town:bag","contents":[{"item":"lobby:bread"}]}],
    "equipment":{"wield":{"item":"town:short_sword"}},
    "affects":[{"kind":"poison","remaining_ms":4000}],
    "wallet_coins":9,"bank_coins":300,"aliases":{"k":"kill rat"},"colour":true})";
  Result<CharacterState> s = DecodeCharacter(v1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "Bob");
  EXPECT_EQ(s->level, 2);
  EXPECT_EQ(s->stats.strength, 14);
  EXPECT_EQ(s->room, (Ref{"lobby", "atrium"}));
  ASSERT_EQ(s->inventory.size(), 1u);
  EXPECT_EQ(s->inventory[0].contents[0].proto, (Ref{"lobby", "bread"}));
  ASSERT_EQ(s->equipment.size(), 1u);
  EXPECT_EQ(s->equipment[0].first, WearSlot::kWield);
  EXPECT_EQ(s->affects[0].kind, AffectKind::kPoison);
  EXPECT_EQ(s->affects[0].remaining_ms, 4000);
  EXPECT_EQ(s->bank_coins, 300);
  EXPECT_EQ(s->aliases.at("k"), "kill rat");
  // Version 1 predates classes: no race or class yet, and not a new character to be asked.
  EXPECT_EQ(s->race, "");
  EXPECT_EQ(s->char_class, "");
  EXPECT_FALSE(s->may_choose);
  EXPECT_TRUE(s->skills.empty());
}

TEST(CharacterState, NewCharacterMayChooseAndKeepsItAcrossEncoding) {
  CharacterState s = NewCharacter("Cara", Ref{"lobby", "atrium"});
  EXPECT_TRUE(s.may_choose);
  Result<CharacterState> back = DecodeCharacter(EncodeCharacter(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->may_choose);
}

// A row written by schema version 2 (classes, no quests) stays readable.
TEST(CharacterState, DecodesSchemaVersion2WithoutQuests) {
  std::string v2 = EncodeCharacter(Sample());
  const std::string current = "\"schema\":" + std::to_string(kCharacterSchemaVersion);
  v2.replace(v2.find(current), current.size(), "\"schema\":2");
  Result<CharacterState> s = DecodeCharacter(v2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->char_class, "mage");
  EXPECT_TRUE(s->quests.empty()) << "version 2 has no quests; fields a v2 row cannot hold";
  EXPECT_TRUE(s->quests_done.empty());
}

TEST(CharacterState, RejectsBadQuestProgress) {
  std::string text = EncodeCharacter(Sample());
  std::string bad = text;
  bad.replace(bad.find("[2,0]"), 5, "[2,-1]");
  EXPECT_EQ(DecodeCharacter(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(CharacterState, RejectsBadSkills) {
  std::string text = EncodeCharacter(Sample());
  std::string bad = text;
  bad.replace(bad.find("\"magic_missile\":42"), 18, "\"magic_missile\":420");
  EXPECT_EQ(DecodeCharacter(bad).status().code(), StatusCode::kInvalidArgument);
  std::string negative = text;
  negative.replace(negative.find("\"practices\":3"), 13, "\"practices\":-3");
  EXPECT_EQ(DecodeCharacter(negative).status().code(), StatusCode::kInvalidArgument);
}

// Skill waits are optional in every version and must be non-negative instants.
TEST(CharacterState, SkillWaitsAreOptionalAndChecked) {
  CharacterState none = Sample();
  none.lag_until_ms = 0;
  none.cooldowns.clear();
  std::string text = EncodeCharacter(none);
  EXPECT_EQ(text.find("cooldowns"), std::string::npos);
  Result<CharacterState> back = DecodeCharacter(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, none);
  std::string bad = EncodeCharacter(Sample());
  bad.replace(bad.find("\"recall\":"), 9, "\"recall\":-");
  EXPECT_EQ(DecodeCharacter(bad).status().code(), StatusCode::kInvalidArgument);
  std::string wrong = EncodeCharacter(Sample());
  wrong.replace(wrong.find("\"recall\":"), 9 + 13, "\"recall\":\"soon\"");
  EXPECT_EQ(DecodeCharacter(wrong).status().code(), StatusCode::kInvalidArgument);
}

TEST(CharacterState, RejectsNewerSchemaAndGarbage) {
  std::string text = EncodeCharacter(Sample());
  std::string newer = text;
  const std::string current = "\"schema\":" + std::to_string(kCharacterSchemaVersion);
  newer.replace(newer.find(current), current.size(), "\"schema\":99");
  EXPECT_EQ(DecodeCharacter(newer).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(DecodeCharacter("not json").ok());
  EXPECT_FALSE(DecodeCharacter("[]").ok());
  EXPECT_FALSE(DecodeCharacter(R"({"schema":1})").ok());
}

}  // namespace
}  // namespace telos::world
