#include "bots.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "telos/base/clock.h"
#include "telos/base/random.h"
#include "telos/sim/swarm.h"

namespace telos::app {
namespace {

constexpr int kExitBadFlags = 2;
constexpr int kBarWidth = 24;
constexpr int64_t kPlainProgressEverySeconds = 5;

std::string_view PhaseName(sim::LiveStatus::Phase phase) {
  switch (phase) {
    case sim::LiveStatus::Phase::kRamping: return "ramping";
    case sim::LiveStatus::Phase::kSteady: return "running";
    case sim::LiveStatus::Phase::kStopping: return "quitting";
  }
  return "?";
}

// A progress bar redrawn in place on a terminal; plain lines every few seconds otherwise.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1) {}

  void Show(const sim::LiveStatus& s) {
    const std::string counters =
        std::to_string(s.bots_started) + "/" + std::to_string(s.bots_requested) + " started, " +
        std::to_string(s.bots_playing_now) + " playing, " + std::to_string(s.commands_sent) +
        " cmds, " + std::to_string(s.errors) + " err, " + std::to_string(s.unexpected_disconnects) +
        " drops, rtt p99 " + Fixed(s.rtt_p99_last_second_ms) + " ms";
    if (tty_) {
      const int filled = static_cast<int>(s.phase_progress * kBarWidth + 0.5);
      std::string bar(static_cast<size_t>(std::clamp(filled, 0, kBarWidth)), '#');
      bar.resize(kBarWidth, '.');
      std::fprintf(stderr, "\r\033[K%-8s [%s] %5.0fs  %s", std::string(PhaseName(s.phase)).c_str(),
                   bar.c_str(), s.t_s, counters.c_str());
      std::fflush(stderr);
      drawn_ = true;
      return;
    }
    const auto second = static_cast<int64_t>(s.t_s);
    if (second - last_line_s_ < kPlainProgressEverySeconds && s.phase == last_phase_) return;
    last_line_s_ = second;
    last_phase_ = s.phase;
    std::fprintf(stderr, "telos bots: %s t=%llds %s\n", std::string(PhaseName(s.phase)).c_str(),
                 static_cast<long long>(second), counters.c_str());
  }

  void Finish() {
    if (drawn_) std::fputc('\n', stderr);
  }

 private:
  static std::string Fixed(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  bool tty_;
  bool drawn_ = false;
  int64_t last_line_s_ = -1'000;
  sim::LiveStatus::Phase last_phase_ = sim::LiveStatus::Phase::kRamping;
};

bool WriteFile(const std::string& path, const std::string& body) {
  std::ofstream out(path, std::ios::trunc);
  out << body;
  out.close();
  if (!out) {
    std::fprintf(stderr, "telos bots: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int RunBots(const BotsFlags& flags) {
  sim::SwarmOptions options;
  for (const std::string& text : flags.targets) {
    auto target = sim::ParseTarget(text);
    if (!target.ok()) {
      std::fprintf(stderr, "telos bots: %s\n", target.status().message().c_str());
      return kExitBadFlags;
    }
    options.targets.push_back(*target);
  }
  if (flags.transport == "telnet") {
    options.transport = sim::TransportKind::kTelnet;
  } else if (flags.transport == "websocket") {
    options.transport = sim::TransportKind::kWebSocket;
  } else {
    std::fprintf(stderr, "telos bots: --transport must be telnet or websocket\n");
    return kExitBadFlags;
  }
  if (flags.dialect == "telos") {
    options.dialect = sim::Dialect::kTelos;
  } else if (flags.dialect == "tinymux") {
    options.dialect = sim::Dialect::kTinyMux;
  } else {
    std::fprintf(stderr, "telos bots: --dialect must be telos or tinymux\n");
    return kExitBadFlags;
  }
  auto mix = sim::BehaviourMix::Parse(flags.mix);
  if (!mix.ok()) {
    std::fprintf(stderr, "telos bots: --%s\n", mix.status().message().c_str());
    return kExitBadFlags;
  }
  options.mix = *mix;
  options.bots = flags.bots;
  options.ramp_per_second = flags.ramp_per_second;
  options.duration_s = flags.duration_s;
  options.accounts_prefix = flags.accounts_prefix;
  options.metrics_url = flags.metrics_url;
  options.server_pid = flags.server_pid;
  options.think_ms = flags.think_ms;
  options.reply_timeout_ms = flags.reply_timeout_ms;
  options.fight_target = flags.fight_target;
  options.spread_steps = flags.spread_steps;
  options.allow_remote = flags.allow_remote;
  if (Status valid = sim::ValidateSwarmOptions(options); !valid.ok()) {
    std::fprintf(stderr, "telos bots: %s\n", valid.message().c_str());
    return kExitBadFlags;
  }

  SystemClock clock;
  Random random(flags.seed != 0 ? flags.seed : std::random_device{}());
  sim::Swarm swarm(std::move(options), clock, random);
  Progress progress;
  auto result = swarm.Run([&progress](const sim::LiveStatus& s) { progress.Show(s); });
  progress.Finish();
  if (!result.ok()) {
    std::fprintf(stderr, "telos bots: %s\n", result.status().message().c_str());
    return kExitBadFlags;
  }
  const sim::Report& r = result->report;
  std::fprintf(stderr,
               "telos bots: %lld/%lld playing, %lld commands, rtt p50 %.2f p95 %.2f p99 %.2f max "
               "%.2f ms, %lld errors, %lld unexpected disconnects (seed %llu)\n",
               static_cast<long long>(r.bots_playing), static_cast<long long>(r.bots_requested),
               static_cast<long long>(r.commands_sent), r.rtt.p50_ms, r.rtt.p95_ms, r.rtt.p99_ms,
               r.rtt.max_ms, static_cast<long long>(r.errors),
               static_cast<long long>(r.unexpected_disconnects),
               static_cast<unsigned long long>(random.seed()));
  const std::string json = sim::ReportToJson(r);
  if (flags.report_path.empty()) {
    std::fputs(json.c_str(), stdout);
  } else if (!WriteFile(flags.report_path, json)) {
    return 1;
  }
  if (!flags.csv_path.empty()) {
    std::string csv = sim::SeriesCsvHeader();
    for (const auto& row : result->series) csv += sim::SeriesCsvRow(row);
    if (!WriteFile(flags.csv_path, csv)) return 1;
  }
  return 0;
}

}  // namespace telos::app
