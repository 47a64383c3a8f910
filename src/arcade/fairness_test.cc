// Provable fairness: the hash chain, its verifier, and the outcome formulas.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "telos/arcade/digest.h"
#include "telos/arcade/hash_chain.h"
#include "telos/arcade/outcomes.h"
#include "telos/base/limits.h"

namespace telos::arcade {
namespace {

TEST(DigestTest, Sha256MatchesTheStandardVector) {
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(DigestTest, HmacSha256MatchesAnIndependentComputation) {
  // Expected from Python's hmac module: hmac.new(sha256(b"key").digest(), msg, sha256).
  const Hash key = Sha256("key");
  EXPECT_EQ(ToHex(HmacSha256(key, "The quick brown fox jumps over the lazy dog")),
            "0fc3e74a68d4da323f3ddec527f38c9f055c9be900027860a9e9e5b7b7e4856e");
  EXPECT_NE(HmacSha256(key, "a"), HmacSha256(key, "b"));
  EXPECT_NE(HmacSha256(key, "a"), HmacSha256(Sha256("other"), "a"));
}

TEST(DigestTest, HexRoundTripsAndRefusesAnythingElse) {
  const Hash h = Sha256("x");
  auto parsed = HashFromHex(ToHex(h));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, h);
  std::string upper = ToHex(h);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_TRUE(HashFromHex(upper).ok());
  EXPECT_EQ(*HashFromHex(upper), h);
  EXPECT_FALSE(HashFromHex("").ok());
  EXPECT_FALSE(HashFromHex(ToHex(h).substr(1)).ok());
  EXPECT_FALSE(HashFromHex(ToHex(h) + "0").ok());
  std::string bad = ToHex(h);
  bad[10] = 'g';
  EXPECT_EQ(HashFromHex(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(HashChainTest, RoundsPlayTheChainInReverseAndEachVerifiesAgainstTheNext) {
  auto chain = HashChain::Generate("house secret", 3000);  // spans three checkpoints
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  // Position 0 is the last generated hash before the commitment.
  auto first = chain->RoundHash(0);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(VerifyAgainstNext(*first, chain->commitment()));
  Hash previous = *first;
  for (int64_t p = 1; p < 3000; ++p) {
    auto h = chain->RoundHash(p);
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(VerifyAgainstNext(*h, previous)) << "position " << p;
    ASSERT_FALSE(VerifyAgainstNext(previous, *h)) << "the chain runs one way only";
    previous = *h;
  }
  // The last position is SHA-256 of the secret itself.
  EXPECT_EQ(previous, Sha256("house secret"));
  EXPECT_EQ(chain->RoundHash(3000).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(chain->RoundHash(-1).status().code(), StatusCode::kFailedPrecondition);
}

TEST(HashChainTest, ARoundHashVerifiesAgainstTheCommitmentAcrossSkippedPositions) {
  auto chain = HashChain::Generate("s", 50);
  ASSERT_TRUE(chain.ok());
  auto h7 = chain->RoundHash(7);
  auto h4 = chain->RoundHash(4);
  ASSERT_TRUE(h7.ok() && h4.ok());
  EXPECT_TRUE(VerifyAgainst(*h7, *h4, 3));
  EXPECT_FALSE(VerifyAgainst(*h7, *h4, 2));
  EXPECT_TRUE(VerifyAgainst(*h7, chain->commitment(), 8));
  EXPECT_FALSE(VerifyAgainst(*h4, *h7, 50)) << "an earlier round never verifies a later one";
  // A different secret gives a different chain end.
  auto other = HashChain::Generate("t", 50);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->commitment(), chain->commitment());
  EXPECT_FALSE(VerifyAgainst(*h7, other->commitment(), 50));
}

TEST(HashChainTest, BadParametersAreRefused) {
  EXPECT_EQ(HashChain::Generate("", 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(HashChain::Generate("s", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(HashChain::Generate("s", limits::kArcadeChainLengthMax + 1).status().code(),
            StatusCode::kInvalidArgument);
}

Hash HashWith52(uint64_t r) {
  Hash h{};
  const uint64_t shifted = r << 4;
  for (int i = 0; i < 7; ++i) h[static_cast<size_t>(i)] = (shifted >> (8 * (6 - i))) & 0xff;
  return h;
}

TEST(OutcomesTest, TheCrashFormulaAtItsEdges) {
  EXPECT_EQ(Outcome52(HashWith52(12345)), 12345u);
  EXPECT_EQ(CrashPointX100(HashWith52(0), 100), 100);  // 0.99x floors up to 1.00x
  // X = 1/2: 99 / 0.5 = 1.98x.
  EXPECT_EQ(CrashPointX100(HashWith52(uint64_t{1} << 51), 100), 198);
  // X = 3/4: 99 / 0.25 = 3.96x.
  EXPECT_EQ(CrashPointX100(HashWith52(uint64_t{3} << 50), 100), 396);
  EXPECT_EQ(CrashPointX100(HashWith52((uint64_t{1} << 52) - 1), 100), limits::kArcadeCrashX100Max);
  // No edge: X = 1/2 is exactly 2.00x.
  EXPECT_EQ(CrashPointX100(HashWith52(uint64_t{1} << 51), 0), 200);
}

TEST(OutcomesTest, CrashPointsHaveTheAdvertisedDistribution) {
  // P(crash >= M) = 0.99 / M: check M = 2x and the 1% instant crashes over 200,000 rounds.
  int64_t at_least_2x = 0;
  int64_t instant = 0;
  const int64_t rounds = 200'000;
  for (int64_t i = 0; i < rounds; ++i) {
    const int64_t x100 = CrashPointX100(OutcomeHash(Sha256(std::to_string(i)), "seed"), 100);
    if (x100 >= 200) ++at_least_2x;
    if (x100 == 100) ++instant;
  }
  EXPECT_NEAR(static_cast<double>(at_least_2x) / rounds, 0.495, 0.005);
  EXPECT_NEAR(static_cast<double>(instant) / rounds, 0.0199, 0.002);  // X < 0.01 + 1.00..1.00
}

TEST(OutcomesTest, TheSeedChangesTheOutcome) {
  const Hash round = Sha256("round");
  EXPECT_NE(OutcomeHash(round, "seed-a"), OutcomeHash(round, "seed-b"));
  EXPECT_EQ(OutcomeHash(round, "seed-a"), OutcomeHash(round, "seed-a"));
}

TEST(OutcomesTest, DiceRollsAreUniformAndPayWithTheEdge) {
  EXPECT_EQ(DiceRoll(HashWith52(0)), 0);
  EXPECT_EQ(DiceRoll(HashWith52((uint64_t{1} << 52) - 1)), 9999);
  EXPECT_EQ(DiceRoll(HashWith52(uint64_t{1} << 51)), 5000);
  std::map<int64_t, int64_t> tenths;
  for (int64_t i = 0; i < 100'000; ++i) {
    const int64_t roll = DiceRoll(OutcomeHash(Sha256(std::to_string(i)), "s"));
    ASSERT_GE(roll, 0);
    ASSERT_LE(roll, 9999);
    ++tenths[roll / 1000];
  }
  for (const auto& [tenth, count] : tenths) EXPECT_NEAR(count, 10'000, 500) << tenth;
  // Under 50.00: pays 1.98x; under 1.00 pays 99x.
  EXPECT_EQ(DicePayout(100, 5000, 100), 198);
  EXPECT_EQ(DicePayout(100, 100, 100), 9900);
  EXPECT_EQ(DicePayout(100, 5000, 0), 200);
}

TEST(OutcomesTest, TheCrashCurveRisesAndItsInverseIsExact) {
  EXPECT_EQ(CrashCurveX100(0), 100);
  EXPECT_EQ(CrashCurveX100(-5), 100);
  int64_t last = 100;
  for (int64_t ms = 0; ms < 60'000; ms += 100) {
    const int64_t x = CrashCurveX100(ms);
    EXPECT_GE(x, last);
    last = x;
  }
  for (int64_t x100 : {101, 150, 200, 1000, 12345}) {
    const int64_t ms = CrashCurveMsFor(x100);
    EXPECT_GE(CrashCurveX100(ms), x100);
    EXPECT_LT(CrashCurveX100(ms - 1), x100);
  }
  EXPECT_NEAR(static_cast<double>(CrashCurveMsFor(200)), 11'552, 2);
  EXPECT_EQ(CrashPayout(150, 250), 375);
}

}  // namespace
}  // namespace telos::arcade
