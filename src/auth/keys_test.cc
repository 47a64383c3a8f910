#include "telos/auth/keys.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "telos/base/assert.h"

namespace telos::auth {
namespace {

// A fresh directory under the system's temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "telos-auth-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    RELEASE_ASSERT(made != nullptr, "mkdtemp failed");
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void WriteText(const std::string& path, const std::string& text, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  RELEASE_ASSERT(::chmod(path.c_str(), mode) == 0, "chmod failed");
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  RELEASE_ASSERT(::stat(path.c_str(), &st) == 0, "stat failed");
  return st.st_mode & 07777;
}

// RFC 8032, section 7.1, TEST 2: a known seed, its public key and the signature of one byte.
constexpr char kRfcSeed[] = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
constexpr char kRfcPublic[] = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
constexpr char kRfcSignature[] =
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00";

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(Keys, SignAndVerifyRoundTrip) {
  const SigningKey key = SigningKey::Generate();
  const std::string signature = key.Sign("hello, world");
  EXPECT_EQ(signature.size(), kSignatureBytes);
  EXPECT_TRUE(key.verify_key().Verify("hello, world", signature));
  EXPECT_FALSE(key.verify_key().Verify("hello, world!", signature));
  EXPECT_TRUE(key.verify_key().Verify("", key.Sign("")));
}

TEST(Keys, MatchesRfc8032TestVector) {
  auto key = SigningKey::FromSeedHex(kRfcSeed);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->verify_key().Hex(), kRfcPublic);
  EXPECT_EQ(key->Sign(Unhex("72")), Unhex(kRfcSignature));
  auto verify = VerifyKey::FromHex(kRfcPublic);
  ASSERT_TRUE(verify.ok());
  EXPECT_TRUE(verify->Verify(Unhex("72"), Unhex(kRfcSignature)));
}

TEST(Keys, TamperedSignatureOrWrongKeyIsRejected) {
  const SigningKey key = SigningKey::Generate();
  const SigningKey other = SigningKey::Generate();
  std::string signature = key.Sign("message");
  EXPECT_FALSE(other.verify_key().Verify("message", signature));
  signature[10] = static_cast<char>(signature[10] ^ 0x01);
  EXPECT_FALSE(key.verify_key().Verify("message", signature));
  EXPECT_FALSE(key.verify_key().Verify("message", ""));
  EXPECT_FALSE(key.verify_key().Verify("message", key.Sign("message").substr(0, 63)));
  EXPECT_FALSE(key.verify_key().Verify("message", key.Sign("message") + "x"));
}

TEST(Keys, DefaultVerifyKeyVerifiesNothing) {
  const SigningKey key = SigningKey::Generate();
  EXPECT_FALSE(VerifyKey().Verify("message", key.Sign("message")));
}

TEST(Keys, GeneratedKeysDiffer) {
  EXPECT_NE(SigningKey::Generate().SeedHex(), SigningKey::Generate().SeedHex());
}

TEST(Keys, SeedRoundTrip) {
  const SigningKey key = SigningKey::Generate();
  const std::string seed = key.SeedHex();
  EXPECT_EQ(seed.size(), 2 * kSeedBytes);
  auto again = SigningKey::FromSeedHex(seed);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->verify_key().Hex(), key.verify_key().Hex());
  EXPECT_EQ(again->SeedHex(), seed);
  // Same seed, same (deterministic) Ed25519 signature.
  EXPECT_EQ(again->Sign("m"), key.Sign("m"));
}

TEST(Keys, VerifyKeyHexRoundTripAcceptsUpperCase) {
  const SigningKey key = SigningKey::Generate();
  const std::string hex = key.verify_key().Hex();
  EXPECT_EQ(hex.size(), 2 * kPublicKeyBytes);
  auto parsed = VerifyKey::FromHex(hex);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Hex(), hex);
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto parsed_upper = VerifyKey::FromHex(upper);
  ASSERT_TRUE(parsed_upper.ok());
  EXPECT_EQ(parsed_upper->Hex(), hex);
}

TEST(Keys, FromHexRejectsWrongLengthAndNonHex) {
  const std::string good(kRfcPublic);
  for (const std::string& bad :
       {std::string(), good.substr(0, 63), good.substr(0, 62), good + "0", good + "00",
        good.substr(0, 63) + "g", "0x" + good.substr(2), good.substr(0, 63) + " ",
        " " + good.substr(1), good.substr(0, 32) + std::string(1, '\0') + good.substr(33)}) {
    auto key = VerifyKey::FromHex(bad);
    EXPECT_FALSE(key.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(key.status().code(), StatusCode::kInvalidArgument);
    auto seed = SigningKey::FromSeedHex(bad);
    EXPECT_FALSE(seed.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(seed.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(KeyFiles, WriteThenLoadRoundTrip) {
  TempDir dir;
  const std::string keys_dir = dir.File("nested/keys");  // created by WriteFiles
  const SigningKey key = SigningKey::Generate();
  ASSERT_TRUE(key.WriteFiles(keys_dir, "account").ok());

  const std::string key_path = keys_dir + "/account.key";
  const std::string pub_path = keys_dir + "/account.pub";
  EXPECT_EQ(ModeOf(key_path), 0600u);
  EXPECT_EQ(ModeOf(pub_path), 0644u);

  auto loaded = SigningKey::LoadFile(key_path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->SeedHex(), key.SeedHex());
  auto verify = VerifyKey::LoadFile(pub_path);
  ASSERT_TRUE(verify.ok()) << verify.status().ToString();
  EXPECT_EQ(verify->Hex(), key.verify_key().Hex());
  EXPECT_TRUE(verify->Verify("m", loaded->Sign("m")));
}

TEST(KeyFiles, WriteFilesRefusesToOverwrite) {
  TempDir dir;
  const SigningKey first = SigningKey::Generate();
  ASSERT_TRUE(first.WriteFiles(dir.path().string(), "handoff").ok());
  const Status again = SigningKey::Generate().WriteFiles(dir.path().string(), "handoff");
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  auto loaded = SigningKey::LoadFile(dir.File("handoff.key"));
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->SeedHex(), first.SeedHex());  // untouched
}

TEST(KeyFiles, WriteFilesRefusesWhenOnlyThePublicHalfExists) {
  TempDir dir;
  WriteText(dir.File("lone.pub"), "x\n", 0644);
  const Status status = SigningKey::Generate().WriteFiles(dir.path().string(), "lone");
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.File("lone.key")));
}

TEST(KeyFiles, WriteFilesRejectsNamesThatAreNotPlainFileNames) {
  TempDir dir;
  const SigningKey key = SigningKey::Generate();
  for (const std::string& name : {std::string(), std::string("."), std::string(".."),
                                  std::string("a/b"), std::string("../escape")}) {
    EXPECT_EQ(key.WriteFiles(dir.path().string(), name).code(), StatusCode::kInvalidArgument)
        << "name '" << name << "'";
  }
}

TEST(KeyFiles, SigningKeyReadableByOthersIsRefused) {
  TempDir dir;
  const std::string path = dir.File("open.key");
  WriteText(path, SigningKey::Generate().SeedHex() + "\n", 0644);
  auto loaded = SigningKey::LoadFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            path + ": signing key must not be readable by others (chmod 600)");

  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  EXPECT_EQ(SigningKey::LoadFile(path).status().code(), StatusCode::kInvalidArgument);
  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  EXPECT_TRUE(SigningKey::LoadFile(path).ok());
}

TEST(KeyFiles, MissingFileIsNotFoundNamingThePath) {
  TempDir dir;
  const std::string path = dir.File("absent.key");
  auto signing = SigningKey::LoadFile(path);
  EXPECT_EQ(signing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(signing.status().message().find(path), std::string::npos);
  auto verify = VerifyKey::LoadFile(dir.File("absent.pub"));
  EXPECT_EQ(verify.status().code(), StatusCode::kNotFound);
  EXPECT_NE(verify.status().message().find("absent.pub"), std::string::npos);
}

TEST(KeyFiles, TrailingNewlineIsOptionalAndGarbageNamesTheFile) {
  TempDir dir;
  const SigningKey key = SigningKey::Generate();
  WriteText(dir.File("bare.pub"), key.verify_key().Hex(), 0644);
  WriteText(dir.File("crlf.pub"), key.verify_key().Hex() + "\r\n", 0644);
  WriteText(dir.File("bare.key"), key.SeedHex(), 0600);
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("bare.pub"))->Hex(), key.verify_key().Hex());
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("crlf.pub"))->Hex(), key.verify_key().Hex());
  EXPECT_EQ(SigningKey::LoadFile(dir.File("bare.key"))->SeedHex(), key.SeedHex());

  WriteText(dir.File("bad.pub"), "not a key\n", 0644);
  auto bad = VerifyKey::LoadFile(dir.File("bad.pub"));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bad.pub"), std::string::npos);
  WriteText(dir.File("two.pub"), key.verify_key().Hex() + "\n" + key.verify_key().Hex() + "\n",
            0644);
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("two.pub")).status().code(), StatusCode::kInvalidArgument);
}

TEST(KeyFiles, DirectoryIsNotAKeyFile) {
  TempDir dir;
  EXPECT_EQ(VerifyKey::LoadFile(dir.path().string()).status().code(), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ key ids and rings

TEST(KeyIds, IdIsTheFirstHalfOfTheBlake2bOfThePublicKey) {
  // hashlib.blake2b(public_key, digest_size=16).hexdigest()[:16] for the RFC 8032 key.
  auto key = SigningKey::FromSeedHex(kRfcSeed);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->id(), "a704f70b2e6621fc");
  EXPECT_EQ(key->verify_key().id(), "a704f70b2e6621fc");
  EXPECT_EQ(VerifyKey::FromHex(kRfcPublic)->id(), "a704f70b2e6621fc");
  EXPECT_EQ(VerifyKey().id(), "ff0f22492f44bac4");  // the all-zero key has an id too
}

TEST(KeyIds, EveryWayToMakeAKeyGivesItsId) {
  TempDir dir;
  const SigningKey key = SigningKey::Generate();
  ASSERT_EQ(key.id().size(), kKeyIdChars);
  for (const char c : key.id()) EXPECT_TRUE(std::isxdigit(c) && !std::isupper(c)) << key.id();
  ASSERT_TRUE(key.WriteFiles(dir.path().string(), "k").ok());
  EXPECT_EQ(SigningKey::LoadFile(dir.File("k.key"))->id(), key.id());
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("k.pub"))->id(), key.id());
  EXPECT_EQ(SigningKey::FromSeedHex(key.SeedHex())->id(), key.id());
  EXPECT_NE(SigningKey::Generate().id(), key.id());
}

TEST(KeyRings, FindsTheCurrentAndThePreviousKeyByIdAndNothingElse) {
  const SigningKey current = SigningKey::Generate();
  const SigningKey previous = SigningKey::Generate();
  const KeyRing ring(current.verify_key(), previous.verify_key());
  ASSERT_NE(ring.Find(current.id()), nullptr);
  EXPECT_EQ(ring.Find(current.id())->Hex(), current.verify_key().Hex());
  ASSERT_NE(ring.Find(previous.id()), nullptr);
  EXPECT_EQ(ring.Find(previous.id())->Hex(), previous.verify_key().Hex());
  EXPECT_EQ(ring.Find(SigningKey::Generate().id()), nullptr);
  EXPECT_EQ(ring.Find(""), nullptr);
  EXPECT_EQ(ring.Ids(), current.id() + ", " + previous.id());

  const KeyRing one = current.verify_key();  // a VerifyKey stands for a ring of one
  EXPECT_NE(one.Find(current.id()), nullptr);
  EXPECT_EQ(one.Find(previous.id()), nullptr);
  EXPECT_FALSE(one.previous().has_value());
  EXPECT_EQ(one.Ids(), current.id());

  const KeyRing same(current.verify_key(), current.verify_key());
  EXPECT_FALSE(same.previous().has_value());
  EXPECT_EQ(same.Ids(), current.id());
}

// ------------------------------------------------------------------ rotating key files

TEST(KeyRotationFiles, RotationKeepsTheOldPairAsThePreviousOne) {
  TempDir dir;
  const std::string d = dir.path().string();
  const SigningKey first = SigningKey::Generate();
  ASSERT_TRUE(first.WriteFiles(d, "account").ok());

  auto rotated = RotateKeyFiles(d, "account");
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_EQ(rotated->previous_id, first.id());
  EXPECT_EQ(rotated->dropped_id, "");
  EXPECT_NE(rotated->current_id, first.id());

  auto key = SigningKey::LoadFile(dir.File("account.key"));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->id(), rotated->current_id);
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("account.pub"))->id(), rotated->current_id);
  EXPECT_EQ(SigningKey::LoadFile(dir.File("account.previous.key"))->SeedHex(), first.SeedHex());
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("account.previous.pub"))->id(), first.id());
  EXPECT_EQ(ModeOf(dir.File("account.key")), 0600u);
  EXPECT_EQ(ModeOf(dir.File("account.previous.key")), 0600u);
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.next.key")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.next.pub")));
}

TEST(KeyRotationFiles, ASecondRotationDropsTheKeyTwoRotationsOld) {
  TempDir dir;
  const std::string d = dir.path().string();
  const SigningKey first = SigningKey::Generate();
  ASSERT_TRUE(first.WriteFiles(d, "handoff").ok());
  auto one = RotateKeyFiles(d, "handoff");
  ASSERT_TRUE(one.ok());
  auto two = RotateKeyFiles(d, "handoff");
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->dropped_id, first.id());
  EXPECT_EQ(two->previous_id, one->current_id);
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("handoff.previous.pub"))->id(), one->current_id);
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("handoff.pub"))->id(), two->current_id);
  // Nothing of the first pair is left on disk: four files, none holding its seed or public key.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find(first.SeedHex()), std::string::npos) << entry.path();
    EXPECT_EQ(text.find(first.verify_key().Hex()), std::string::npos) << entry.path();
  }
  EXPECT_EQ(files, 4u);
}

TEST(KeyRotationFiles, RefusesWithoutAPairOrWithAMismatchedOne) {
  TempDir dir;
  const std::string d = dir.path().string();
  auto none = RotateKeyFiles(d, "account");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();

  ASSERT_TRUE(SigningKey::Generate().WriteFiles(d, "account").ok());
  std::filesystem::remove(dir.File("account.pub"));
  ASSERT_TRUE(SigningKey::Generate().WriteFiles(d, "stranger").ok());
  std::filesystem::rename(dir.File("stranger.pub"), dir.File("account.pub"));
  const std::string before = VerifyKey::LoadFile(dir.File("account.pub"))->Hex();
  auto mixed = RotateKeyFiles(d, "account");
  EXPECT_EQ(mixed.status().code(), StatusCode::kFailedPrecondition) << mixed.status().ToString();
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("account.pub"))->Hex(), before);  // untouched
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.previous.pub")));
}

TEST(KeyRotationFiles, ALeftoverNextPairFromAnInterruptedRotationIsRefused) {
  TempDir dir;
  const std::string d = dir.path().string();
  const SigningKey first = SigningKey::Generate();
  ASSERT_TRUE(first.WriteFiles(d, "account").ok());
  ASSERT_TRUE(SigningKey::Generate().WriteFiles(d, "account.next").ok());
  auto rotated = RotateKeyFiles(d, "account");
  EXPECT_EQ(rotated.status().code(), StatusCode::kAlreadyExists) << rotated.status().ToString();
  EXPECT_EQ(SigningKey::LoadFile(dir.File("account.key"))->id(), first.id());
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.previous.key")));
}

TEST(KeyRotationFiles, APreviousNameThatIsNoFileIsRefusedBeforeAnythingMoves) {
  TempDir dir;
  const std::string d = dir.path().string();
  const SigningKey first = SigningKey::Generate();
  ASSERT_TRUE(first.WriteFiles(d, "account").ok());
  // Something that is not a key file sits at one of the names the rotation replaces: a
  // directory, which rename() cannot replace with a file.
  std::filesystem::create_directory(dir.File("account.previous.pub"));
  std::ofstream(dir.File("account.previous.pub") + "/keep") << "x";
  auto rotated = RotateKeyFiles(d, "account");
  EXPECT_EQ(rotated.status().code(), StatusCode::kFailedPrecondition)
      << rotated.status().ToString();
  // The pair in service keeps its names, and nothing of the new pair is left behind.
  auto key = SigningKey::LoadFile(dir.File("account.key"));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->id(), first.id());
  EXPECT_EQ(VerifyKey::LoadFile(dir.File("account.pub"))->id(), first.id());
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.previous.key")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.next.key")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("account.next.pub")));
}

// ------------------------------------------------------------------ keys named by configuration

TEST(KeyConfig, AVerifyKeyFromTheVariableOrItsFileForm) {
  TempDir dir;
  const SigningKey key = SigningKey::Generate();
  ASSERT_TRUE(key.WriteFiles(dir.path().string(), "k").ok());
  auto config = Config::FromEnvironment({{"TELOS_A", key.verify_key().Hex()},
                                         {"TELOS_B_FILE", dir.File("k.pub")},
                                         {"TELOS_C", "not a key"},
                                         {"TELOS_D", key.verify_key().Hex()},
                                         {"TELOS_D_FILE", dir.File("k.pub")}});
  ASSERT_TRUE(config.ok());
  auto a = VerifyKeyFromConfig(*config, "TELOS_A");
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status().ToString();
  EXPECT_EQ((*a)->id(), key.id());
  auto b = VerifyKeyFromConfig(*config, "TELOS_B");
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
  EXPECT_EQ((*b)->id(), key.id());
  auto unset = VerifyKeyFromConfig(*config, "TELOS_UNSET");
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->has_value());
  auto bad = VerifyKeyFromConfig(*config, "TELOS_C");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("TELOS_C"), std::string::npos) << bad.status().message();
  EXPECT_EQ(VerifyKeyFromConfig(*config, "TELOS_D").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace telos::auth
