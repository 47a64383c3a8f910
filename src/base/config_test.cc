#include "telos/base/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "telos/base/limits.h"

namespace telos {
namespace {

TEST(ConfigTest, EnvironmentValuesAreTyped) {
  auto config = Config::FromEnvironment(
      {{"TELOS_HTTP_PORT", "8081"}, {"TELOS_ALLOW_INSECURE", "yes"}, {"TELOS_ROLE", "gate"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(*config->Port("TELOS_HTTP_PORT", 8080), 8081);
  EXPECT_TRUE(*config->Bool("TELOS_ALLOW_INSECURE", false));
  EXPECT_EQ(*config->Choice("TELOS_ROLE", "world", {"gate", "world"}), "gate");
  EXPECT_EQ(*config->Int("TELOS_UNSET", 15000, 1, 60000), 15000);
}

TEST(ConfigTest, BadValuesNameTheVariable) {
  auto config = Config::FromEnvironment({{"TELOS_HTTP_PORT", "80x"},
                                         {"TELOS_LEASE_TTL_MS", "0"},
                                         {"TELOS_ALLOW_INSECURE", "maybe"},
                                         {"TELOS_ROLE", "wizard"}});
  ASSERT_TRUE(config.ok());
  auto port = config->Port("TELOS_HTTP_PORT", 8080);
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("TELOS_HTTP_PORT='80x'"), std::string::npos);
  EXPECT_NE(port.status().message().find("environment"), std::string::npos);

  auto ttl = config->Int("TELOS_LEASE_TTL_MS", 15000, 1, 600000);
  ASSERT_FALSE(ttl.ok());
  EXPECT_NE(ttl.status().message().find("between 1 and 600000"), std::string::npos);

  auto insecure = config->Bool("TELOS_ALLOW_INSECURE", false);
  ASSERT_FALSE(insecure.ok());
  EXPECT_NE(insecure.status().message().find("TELOS_ALLOW_INSECURE"), std::string::npos);

  auto role = config->Choice("TELOS_ROLE", "world", {"gate", "world"});
  ASSERT_FALSE(role.ok());
  EXPECT_NE(role.status().message().find("expected one of gate, world"), std::string::npos);

  auto port_big =
      Config::FromEnvironment({{"TELOS_HTTP_PORT", "70000"}})->Port("TELOS_HTTP_PORT", 1);
  EXPECT_FALSE(port_big.ok());
}

TEST(ConfigTest, RequiredStringNamesTheMissingVariable) {
  auto config = Config::FromEnvironment({{"TELOS_EMPTY", ""}});
  auto a = config->RequiredString("TELOS_REDIS");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "TELOS_REDIS: required but not set");
  EXPECT_FALSE(config->RequiredString("TELOS_EMPTY").ok());
}

TEST(ConfigTest, TomlFileSitsUnderTheEnvironment) {
  const char* toml = R"(log_level = "debug"
http_port = 9000
[redis]
url = "redis://127.0.0.1:16379"
[world]
zone_pool = ["town", "arena"]
)";
  auto config = Config::FromEnvironmentAndToml({{"TELOS_HTTP_PORT", "9100"}}, toml, "telos.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(*config->Port("TELOS_HTTP_PORT", 8080), 9100);  // environment wins
  EXPECT_EQ(*config->String("TELOS_LOG_LEVEL", "info"), "debug");
  EXPECT_EQ(*config->String("TELOS_REDIS_URL", ""), "redis://127.0.0.1:16379");
  EXPECT_EQ(*config->String("TELOS_WORLD_ZONE_POOL", ""), "town,arena");
  EXPECT_EQ(config->Lookup("TELOS_REDIS_URL")->origin, "telos.toml:4");
}

TEST(ConfigTest, BadFileValueNamesFileAndLine) {
  auto config = Config::FromEnvironmentAndToml({}, "\nhttp_port = \"eighty\"\n", "telos.toml");
  ASSERT_TRUE(config.ok());
  auto port = config->Port("TELOS_HTTP_PORT", 8080);
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("TELOS_HTTP_PORT='eighty' (from telos.toml:2)"),
            std::string::npos);
}

TEST(ConfigTest, MalformedTomlIsRefusedWithItsLine) {
  auto config = Config::FromEnvironmentAndToml({}, "a = 1\nb = = 2\n", "broken.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("broken.toml:2"), std::string::npos);
}

TEST(ConfigTest, ConfigFileFromTelosConfig) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("telos_config_test_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path);
    out << "data_dir = \"/var/lib/telos\"\n";
  }
  auto config = Config::FromEnvironment({{"TELOS_CONFIG", path.string()}});
  std::filesystem::remove(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(*config->String("TELOS_DATA_DIR", ""), "/var/lib/telos");

  auto missing = Config::FromEnvironment({{"TELOS_CONFIG", "/nonexistent/telos.toml"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("TELOS_CONFIG"), std::string::npos);
}

// A temporary file holding `text`, removed when the test ends.
class SecretFile {
 public:
  explicit SecretFile(std::string_view text)
      : path_(std::filesystem::temp_directory_path() /
              ("telos_secret_test_" + std::to_string(::getpid()) + "_" + std::to_string(next_++))) {
    std::ofstream out(path_, std::ios::binary);
    out << text;
  }
  ~SecretFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int next_ = 0;
  std::filesystem::path path_;
};

TEST(ConfigSecretTest, TheVariableItselfOrTheFallback) {
  auto config = Config::FromEnvironment({{"TELOS_CALLER_TOKEN", "s3cret"}});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config->Secret("TELOS_CALLER_TOKEN", ""), "s3cret");
  EXPECT_EQ(*config->Secret("TELOS_NATS", "nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
}

TEST(ConfigSecretTest, FileFormLosesOneTrailingNewline) {
  SecretFile lf("tok\n\n");  // only the last newline goes: the value may end in one
  SecretFile crlf("tok\r\n");
  SecretFile bare("tok\r");  // a carriage return alone is part of the value
  auto config = Config::FromEnvironment(
      {{"TELOS_A_FILE", lf.path()}, {"TELOS_B_FILE", crlf.path()}, {"TELOS_C_FILE", bare.path()}});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config->Secret("TELOS_A", ""), "tok\n");
  EXPECT_EQ(*config->Secret("TELOS_B", ""), "tok");
  EXPECT_EQ(*config->Secret("TELOS_C", ""), "tok\r");
  EXPECT_EQ(*config->RequiredSecret("TELOS_B"), "tok");
}

TEST(ConfigSecretTest, FileFormFromTheTomlFile) {
  SecretFile file("postgresql://telos:pw@db/telos\n");
  auto config = Config::FromEnvironmentAndToml(
      {}, "[database]\nurl_file = \"" + file.path() + "\"\n", "telos.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(*config->Secret("TELOS_DATABASE_URL", ""), "postgresql://telos:pw@db/telos");
}

TEST(ConfigSecretTest, BothFormsSetIsAnErrorNamingBoth) {
  SecretFile file("from-file");
  auto config = Config::FromEnvironment(
      {{"TELOS_CALLER_TOKEN", "from-env"}, {"TELOS_CALLER_TOKEN_FILE", file.path()}});
  ASSERT_TRUE(config.ok());
  auto token = config->Secret("TELOS_CALLER_TOKEN", "");
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = token.status().message();
  EXPECT_NE(message.find("TELOS_CALLER_TOKEN (from environment)"), std::string::npos) << message;
  EXPECT_NE(message.find("TELOS_CALLER_TOKEN_FILE"), std::string::npos) << message;
  EXPECT_EQ(message.find("from-env"), std::string::npos) << "the secret leaked: " << message;
}

TEST(ConfigSecretTest, EmptyValuesCountAsUnset) {
  SecretFile file("from-file");
  auto config = Config::FromEnvironment(
      {{"TELOS_CALLER_TOKEN", ""}, {"TELOS_CALLER_TOKEN_FILE", file.path()}, {"TELOS_X_FILE", ""}});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(*config->Secret("TELOS_CALLER_TOKEN", ""), "from-file");
  EXPECT_EQ(*config->Secret("TELOS_X", "fallback"), "fallback");
  auto required = config->RequiredSecret("TELOS_X");
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().message(), "TELOS_X: required but not set (nor TELOS_X_FILE)");
}

TEST(ConfigSecretTest, MissingOrUnreadableFileNamesTheVariable) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  auto config = Config::FromEnvironment(
      {{"TELOS_REDIS_FILE", "/nonexistent/redis-url"}, {"TELOS_NATS_FILE", dir}});
  ASSERT_TRUE(config.ok());
  auto missing = config->Secret("TELOS_REDIS", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("TELOS_REDIS_FILE='/nonexistent/redis-url'"),
            std::string::npos)
      << missing.status().message();
  auto directory = config->Secret("TELOS_NATS", "");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("TELOS_NATS_FILE"), std::string::npos);
}

TEST(ConfigSecretTest, FileLargerThanTheBoundIsRefused) {
  SecretFile at_bound(std::string(limits::kSecretFileBytesMax, 'x'));
  SecretFile over(std::string(limits::kSecretFileBytesMax + 1, 'x'));
  auto config =
      Config::FromEnvironment({{"TELOS_A_FILE", at_bound.path()}, {"TELOS_B_FILE", over.path()}});
  ASSERT_TRUE(config.ok());
  auto a = config->Secret("TELOS_A", "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->size(), limits::kSecretFileBytesMax);
  auto b = config->Secret("TELOS_B", "");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("TELOS_B_FILE"), std::string::npos);
  EXPECT_NE(b.status().message().find("larger than"), std::string::npos);
}

}  // namespace
}  // namespace telos
