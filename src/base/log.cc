#include "telos/base/log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "telos/base/config.h"

namespace telos {
namespace {

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

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t min;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  uint32_t cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void AppendValue(std::string& out, const LogField::Value& value) {
  if (const auto* s = std::get_if<std::string_view>(&value)) {
    out += '"';
    AppendJsonEscaped(out, *s);
    out += '"';
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    if (!std::isfinite(*d)) {
      out += "null";  // JSON has no NaN or infinity
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", *d);
      out += buf;
    }
  } else {
    out += std::get<bool>(value) ? "true" : "false";
  }
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

void AppendJsonEscaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(text, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not valid UTF-8
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
}

std::string FormatLogLine(std::string_view ts, LogLevel level, std::string_view role,
                          std::string_view msg, LogFields fields) {
  std::string line;
  line.reserve(96 + msg.size());
  line += "{\"ts\":\"";
  AppendJsonEscaped(line, ts);
  line += "\",\"level\":\"";
  line += LogLevelName(level);
  line += "\",\"role\":\"";
  AppendJsonEscaped(line, role);
  line += "\",\"msg\":\"";
  AppendJsonEscaped(line, msg);
  line += '"';
  for (const auto& f : fields) {
    // The four fixed keys cannot be overwritten by a field of the same name.
    if (f.key == "ts" || f.key == "level" || f.key == "role" || f.key == "msg") continue;
    line += ",\"";
    AppendJsonEscaped(line, f.key);
    line += "\":";
    AppendValue(line, f.value);
  }
  line += '}';
  return line;
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
