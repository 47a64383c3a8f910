#include "telos/base/log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <boost/json.hpp>

#include "telos/base/config.h"
#include "telos/base/utf8.h"

namespace telos {
namespace {

namespace json = boost::json;

spdlog::level::level_enum ToSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> MakeOut(std::shared_ptr<spdlog::sinks::sink> sink) {
  auto out = std::make_shared<spdlog::logger>("telos", std::move(sink));
  // We build the whole line ourselves; spdlog only buffers and writes it.
  out->set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%v", spdlog::pattern_time_type::utc, std::string("\n")));
  out->set_level(spdlog::level::trace);
  out->flush_on(spdlog::level::trace);
  return out;
}

std::string NowIso8601() {
  const auto now = std::chrono::system_clock::now();
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - secs).count();
  const std::time_t t = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[128];  // roomy enough that gcc can prove no int field truncates
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

// Text from anywhere (player names, operator-set ids, error messages) as a JSON string: the
// serializer escapes quotes and controls but copies bytes as they are, so invalid UTF-8 is
// repaired first.
json::string JsonText(std::string_view text) {
  return json::string(SanitizeUtf8(text));
}

json::value JsonValue(const LogField::Value& value) {
  if (const auto* s = std::get_if<std::string_view>(&value)) return JsonText(*s);
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) {
    // JSON has no NaN or infinity, and Boost.JSON would write them as bare words.
    if (!std::isfinite(*d)) return nullptr;
    return *d;
  }
  return std::get<bool>(value);
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarn;
  if (text == "error") return LogLevel::kError;
  return std::nullopt;
}

Result<LogLevel> LogLevelFromConfig(const Config& config) {
  LogLevel level = LogLevel::kInfo;
  if (auto v = config.Lookup("TELOS_LOG_LEVEL")) {
    auto parsed = ParseLogLevel(v->text);
    if (!parsed) {
      return Status::InvalidArgument("TELOS_LOG_LEVEL='" + v->text + "' (from " + v->origin +
                                     "): expected one of debug, info, warn, error");
    }
    level = *parsed;
  }
  // DEBUG is a developer convenience: any truthy word forces debug; anything else is ignored
  // rather than refused, since other tools read the same variable.
  if (auto v = config.Lookup("DEBUG")) {
    if (ParseBoolWord(v->text).value_or(false)) level = LogLevel::kDebug;
  }
  return level;
}

std::string FormatLogLine(std::string_view ts, LogLevel level, std::string_view role,
                          std::string_view msg, LogFields fields) {
  json::object line;
  line.reserve(4 + fields.size());
  line.emplace("ts", JsonText(ts));
  line.emplace("level", LogLevelName(level));
  line.emplace("role", JsonText(role));
  line.emplace("msg", JsonText(msg));
  for (const auto& f : fields) {
    // emplace keeps the first value of a key: the four fixed keys cannot be overwritten, and a
    // field named twice appears once.
    line.emplace(SanitizeUtf8(f.key), JsonValue(f.value));
  }
  return json::serialize(line);
}

Logger::Logger(std::string role, LogLevel level)
    : Logger(std::move(role), level, std::make_shared<spdlog::sinks::stdout_sink_mt>()) {}

Logger::Logger(std::string role, LogLevel level, std::shared_ptr<spdlog::sinks::sink> sink)
    : Logger(std::move(role), level, MakeOut(std::move(sink))) {}

Logger::Logger(std::string role, LogLevel level, std::shared_ptr<spdlog::logger> out)
    : role_(std::move(role)), level_(level), out_(std::move(out)) {}

Logger::~Logger() = default;

void Logger::Log(LogLevel level, std::string_view msg, LogFields fields) {
  if (!Enabled(level)) return;
  const std::string line = FormatLogLine(NowIso8601(), level, role_, msg, fields);
  out_->log(ToSpd(level), spdlog::string_view_t(line.data(), line.size()));
}

std::unique_ptr<Logger> Logger::WithRole(std::string role) const {
  return std::unique_ptr<Logger>(new Logger(std::move(role), level_, out_));
}

void Logger::Flush() {
  out_->flush();
}

}  // namespace telos
