#include "telos/base/log.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>

#include "telos/base/config.h"

namespace telos {
namespace {

boost::json::object ParseLine(const std::string& line) {
  boost::system::error_code ec;
  auto value = boost::json::parse(line, ec);
  EXPECT_FALSE(ec) << line;
  return value.is_object() ? value.as_object() : boost::json::object{};
}

TEST(LogTest, LineIsOneJsonObjectWithTheFixedFields) {
  const std::string line = FormatLogLine("2026-11-29T21:00:00.000Z", LogLevel::kWarn, "world",
                                         "claimed zone", {{"zone", "town"}, {"epoch", 3}});
  auto obj = ParseLine(line);
  EXPECT_EQ(obj["ts"].as_string(), "2026-11-29T21:00:00.000Z");
  EXPECT_EQ(obj["level"].as_string(), "warn");
  EXPECT_EQ(obj["role"].as_string(), "world");
  EXPECT_EQ(obj["msg"].as_string(), "claimed zone");
  EXPECT_EQ(obj["zone"].as_string(), "town");
  EXPECT_EQ(obj["epoch"].as_int64(), 3);
}

TEST(LogTest, HostileTextStaysValidJson) {
  const std::string hostile = "quote\" backslash\\ newline\n nul" + std::string(1, '\0') +
                              " bad utf8 \xC3\x28 end \xF0\x9F\x98\x80";
  const std::string line =
      FormatLogLine("t", LogLevel::kInfo, "gate", hostile,
                    {{"msg", "cannot override"}, {"ratio", 0.5}, {"ok", true}});
  auto obj = ParseLine(line);
  const std::string msg(obj["msg"].as_string());
  EXPECT_NE(msg.find("quote\" backslash\\ newline\n nul"), std::string::npos);
  EXPECT_NE(msg.find("\xEF\xBF\xBD("), std::string::npos);     // replaced bad byte
  EXPECT_NE(msg.find("\xF0\x9F\x98\x80"), std::string::npos);  // valid emoji kept
  EXPECT_EQ(obj["ratio"].as_double(), 0.5);
  EXPECT_TRUE(obj["ok"].as_bool());
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogTest, HostileKeysAndValuesComeBackExactlyRepaired) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string key = "k\"\\\x01\xFF";
  const std::string text = "q\" b\\ c\x01 del\x7F cut\xE2\x82 end";
  const std::string line =
      FormatLogLine("t", LogLevel::kInfo, "gate\xC0", text,
                    {{key, text}, {"zone", "first"}, {"zone", "second"}, {"nan", std::nan("")}});
  auto obj = ParseLine(line);
  const std::string repaired = "q\" b\\ c\x01 del\x7F cut" + fffd + " end";
  EXPECT_EQ(obj["msg"].as_string(), repaired);
  EXPECT_EQ(obj["role"].as_string(), "gate" + fffd);
  ASSERT_TRUE(obj.contains("k\"\\\x01" + fffd)) << line;
  EXPECT_EQ(obj["k\"\\\x01" + fffd].as_string(), repaired);
  // A key given twice is written once, with its first value: a line has no duplicate keys.
  EXPECT_EQ(line.find("\"zone\""), line.rfind("\"zone\"")) << line;
  EXPECT_EQ(obj["zone"].as_string(), "first");
  EXPECT_TRUE(obj["nan"].is_null());
}

TEST(LogTest, LoggerFiltersByLevelAndWritesLines) {
  std::ostringstream os;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(os);
  Logger log("account", LogLevel::kInfo, sink);
  log.Debug("hidden");
  log.Info("shown", {{"n", 1}});
  auto child = log.WithRole("gate");
  child->Error("from the child");
  log.Flush();
  std::istringstream in(os.str());
  std::string first, second, third;
  ASSERT_TRUE(std::getline(in, first));
  ASSERT_TRUE(std::getline(in, second));
  EXPECT_FALSE(std::getline(in, third));
  EXPECT_EQ(ParseLine(first)["msg"].as_string(), "shown");
  EXPECT_EQ(ParseLine(first)["role"].as_string(), "account");
  EXPECT_EQ(ParseLine(second)["role"].as_string(), "gate");
  EXPECT_EQ(ParseLine(second)["level"].as_string(), "error");
}

TEST(LogTest, LevelFromConfig) {
  auto level = [](Config::Environment env) {
    return LogLevelFromConfig(*Config::FromEnvironment(std::move(env)));
  };
  EXPECT_EQ(*level({}), LogLevel::kInfo);
  EXPECT_EQ(*level({{"TELOS_LOG_LEVEL", "error"}}), LogLevel::kError);
  EXPECT_EQ(*level({{"TELOS_LOG_LEVEL", "error"}, {"DEBUG", "on"}}), LogLevel::kDebug);
  EXPECT_EQ(*level({{"DEBUG", "0"}}), LogLevel::kInfo);
  auto bad = level({{"TELOS_LOG_LEVEL", "loud"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TELOS_LOG_LEVEL='loud'"), std::string::npos);
}

}  // namespace
}  // namespace telos
