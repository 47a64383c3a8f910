// Logger: structured JSON logs, one object per line on stdout.
//
// Every line carries "ts" (UTC, ISO 8601 with milliseconds), "level", "role" and "msg", then the
// caller's fields. The line is a Boost.JSON document and every string in it (keys too) goes
// through SanitizeUtf8 first, so any text is safe to log: the result always parses. Written
// through spdlog for its buffered, thread-safe sinks. The level comes from TELOS_LOG_LEVEL
// (debug|info|warn|error); DEBUG=1|true|yes|on forces debug.
//
// Not a singleton: main builds one Logger per role and hands it (or a child from WithRole) to
// each component's constructor.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "telos/base/status.h"

namespace spdlog {
class logger;
namespace sinks {
class sink;
}
}  // namespace spdlog

namespace telos {

class Config;

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

std::string_view LogLevelName(LogLevel level);
std::optional<LogLevel> ParseLogLevel(std::string_view text);
// Reads TELOS_LOG_LEVEL and DEBUG from the config; InvalidArgument names a bad value.
Result<LogLevel> LogLevelFromConfig(const Config& config);

// One structured field: a key and a string, integer, real or boolean value.
struct LogField {
  using Value = std::variant<std::string_view, int64_t, double, bool>;
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, int64_t v) : key(k), value(v) {}
  LogField(std::string_view k, int v) : key(k), value(int64_t{v}) {}
  LogField(std::string_view k, uint64_t v) : key(k), value(static_cast<int64_t>(v)) {}
  LogField(std::string_view k, unsigned v) : key(k), value(int64_t{v}) {}
  LogField(std::string_view k, double v) : key(k), value(v) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
  std::string_view key;
  Value value;
};
using LogFields = std::initializer_list<LogField>;

class Logger {
 public:
  // Logs to stdout.
  Logger(std::string role, LogLevel level);
  // Logs to the given sink (tests capture lines with an ostream sink).
  Logger(std::string role, LogLevel level, std::shared_ptr<spdlog::sinks::sink> sink);
  ~Logger();

  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  const std::string& role() const { return role_; }
  LogLevel level() const { return level_; }
  bool Enabled(LogLevel level) const { return level >= level_; }

  void Log(LogLevel level, std::string_view msg, LogFields fields = {});
  void Debug(std::string_view msg, LogFields fields = {}) { Log(LogLevel::kDebug, msg, fields); }
  void Info(std::string_view msg, LogFields fields = {}) { Log(LogLevel::kInfo, msg, fields); }
  void Warn(std::string_view msg, LogFields fields = {}) { Log(LogLevel::kWarn, msg, fields); }
  void Error(std::string_view msg, LogFields fields = {}) { Log(LogLevel::kError, msg, fields); }

  // A logger for another role (serve runs gate, world and account in one process) that
  // shares this one's sink and level.
  std::unique_ptr<Logger> WithRole(std::string role) const;

  void Flush();

 private:
  Logger(std::string role, LogLevel level, std::shared_ptr<spdlog::logger> out);
  std::string role_;
  LogLevel level_;
  std::shared_ptr<spdlog::logger> out_;
};

// Builds one log line (without the trailing newline). Exposed for tests and for tools.
std::string FormatLogLine(std::string_view ts, LogLevel level, std::string_view role,
                          std::string_view msg, LogFields fields);

}  // namespace telos
