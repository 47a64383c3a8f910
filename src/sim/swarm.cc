#include "telos/sim/swarm.h"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

#include <boost/asio.hpp>

#include "bot.h"
#include "http_get.h"

namespace telos::sim {
namespace {

namespace asio = boost::asio;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr int64_t kScrapeTimeoutMs = 5'000;
constexpr int64_t kSpreadPollMs = 100;
constexpr std::string_view kTickLagHistogram = "telos_zone_tick_lag_ms";

std::string IsoTime(WallTime t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

double Seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

std::optional<ProcessSample> SampleProcess(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return ParseProcStat(line);
}

std::string_view TransportName(TransportKind kind) {
  return kind == TransportKind::kTelnet ? "telnet" : "websocket";
}

// The state of one Run(), all on its io_context's single thread.
class SwarmRun {
 public:
  SwarmRun(const SwarmOptions& options, const Clock& clock, Random& random,
           const ProgressFn& progress)
      : options_(options),
        clock_(clock),
        random_(random),
        progress_(progress),
        context_(io_.get_executor(), options, clock, random.Next()),
        control_timer_(io_),
        tick_timer_(io_),
        signals_(io_, SIGINT, SIGTERM) {}

  Status Prepare() {
    for (const Target& target : options_.targets) {
      boost::system::error_code ec;
      const auto address =
          asio::ip::make_address(target.host == "localhost" ? "127.0.0.1" : target.host, ec);
      if (ec) return Status::InvalidArgument("target " + target.ToString() + ": not an address");
      context_.endpoints.emplace_back(address, target.port);
      context_.hosts.push_back(target.ToString());
    }
    for (int64_t i = 0; i < options_.bots; ++i) {
      context_.character_names.push_back(BotCharacterName(options_.accounts_prefix, i));
    }
    return Status::Ok();
  }

  SwarmResult Execute() {
    started_ = clock_.Now();
    result_.report.started_at = IsoTime(clock_.WallNow());
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      interrupted_ = true;
      control_timer_.cancel();
    });
    asio::co_spawn(io_, Control(), asio::detached);
    asio::co_spawn(io_, Ticker(), asio::detached);
    io_.run();
    return std::move(result_);
  }

 private:
  // Sleeps until `deadline` or an interrupt (or, with `until_idle`, until no bot runs).
  asio::awaitable<void> SleepUntil(Instant deadline, bool until_idle = false) {
    while (!interrupted_ && clock_.Now() < deadline) {
      if (until_idle && context_.bots_running == 0) co_return;
      control_timer_.expires_after(std::max(Duration(0), deadline - clock_.Now()));
      (void)co_await control_timer_.async_wait(kTuple);
    }
  }

  void StartBot(int64_t index) {
    bots_.push_back(std::make_unique<Bot>(context_, index, random_.Next()));
    ++context_.bots_started;
    ++context_.bots_running;
    asio::co_spawn(io_, bots_.back()->Run(), [this](std::exception_ptr) {
      --context_.bots_running;
      if (context_.stopping) control_timer_.cancel();
    });
  }

  asio::awaitable<std::optional<std::string>> Scrape(std::string* error) {
    if (options_.metrics_url.empty()) co_return std::nullopt;
    auto url = ParseHttpUrl(options_.metrics_url);
    if (!url.ok()) {
      *error = url.status().message();
      co_return std::nullopt;
    }
    auto body =
        co_await HttpGet(context_.executor, *url, std::chrono::milliseconds(kScrapeTimeoutMs));
    if (!body.ok()) {
      *error = body.status().message();
      co_return std::nullopt;
    }
    co_return std::move(*body);
  }

  asio::awaitable<void> Control() {
    Report& report = result_.report;
    phase_ = LiveStatus::Phase::kRamping;
    for (int64_t i = 0; i < options_.bots && !interrupted_; ++i) {
      const auto offset = std::chrono::duration_cast<Duration>(
          std::chrono::duration<double>(static_cast<double>(i) / options_.ramp_per_second));
      co_await SleepUntil(started_ + offset);
      if (!interrupted_) StartBot(i);
    }
    // Bots still spreading out are not yet playing the mix: the window waits for them.
    while (context_.spreading_now > 0 && !interrupted_) {
      co_await SleepUntil(clock_.Now() + std::chrono::milliseconds(kSpreadPollMs));
    }
    steady_began_ = clock_.Now();
    report.ramp_seconds = Seconds(steady_began_ - started_);
    phase_ = LiveStatus::Phase::kSteady;
    context_.measuring = true;

    std::string scrape_error;
    const auto before = co_await Scrape(&scrape_error);
    const auto cpu_before =
        options_.server_pid > 0 ? SampleProcess(options_.server_pid) : std::nullopt;
    const Instant window_began = clock_.Now();
    const auto window =
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(options_.duration_s));
    co_await SleepUntil(steady_began_ + window);
    const Instant window_ended = clock_.Now();
    context_.measuring = false;
    const auto cpu_after =
        options_.server_pid > 0 ? SampleProcess(options_.server_pid) : std::nullopt;
    // No co_await inside ?: (GCC 12 destroys the temporaries twice).
    std::optional<std::string> after;
    if (before) after = co_await Scrape(&scrape_error);
    report.steady_seconds = Seconds(window_ended - steady_began_);
    report.bots_playing_at_end = context_.playing_now;
    FillServerView(before, after, scrape_error);
    if (cpu_before && cpu_after) {
      ServerProcess& p = report.server_process;
      p.sampled = true;
      p.pid = options_.server_pid;
      p.cpu_seconds = static_cast<double>(cpu_after->cpu_ticks - cpu_before->cpu_ticks) /
                      static_cast<double>(sysconf(_SC_CLK_TCK));
      const double seconds = Seconds(window_ended - window_began);
      p.cpu_cores = seconds > 0 ? p.cpu_seconds / seconds : 0;
      p.rss_bytes =
          static_cast<double>(cpu_after->rss_pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
    }

    phase_ = LiveStatus::Phase::kStopping;
    stopping_began_ = clock_.Now();
    context_.stopping = true;
    interrupted_ = false;  // a second signal during the quit is not needed to end it
    for (auto& bot : bots_) bot->Stop();
    co_await SleepUntil(clock_.Now() + std::chrono::milliseconds(kSwarmQuitTimeoutMs), true);
    // Stragglers (a connect that hangs, say) are closed; each then finishes at once.
    while (context_.bots_running > 0) {
      for (auto& bot : bots_) bot->Stop();
      co_await SleepUntil(clock_.Now() + std::chrono::milliseconds(100), true);
    }
    FillReport();
    done_ = true;
    tick_timer_.cancel();
    signals_.cancel();
  }

  void FillServerView(const std::optional<std::string>& before,
                      const std::optional<std::string>& after, const std::string& error) {
    ServerView& view = result_.report.server;
    if (!before || !after) {
      view.error = options_.metrics_url.empty() ? "no --metrics-url" : error;
      return;
    }
    view.scraped = true;
    const auto lag = SubtractHistogram(ParseHistogram(*after, kTickLagHistogram),
                                       ParseHistogram(*before, kTickLagHistogram));
    view.tick_samples = lag.empty() ? 0 : static_cast<uint64_t>(lag.back().cumulative_count);
    view.tick_lag_p50_ms = HistogramQuantile(0.50, lag);
    view.tick_lag_p99_ms = HistogramQuantile(0.99, lag);
    view.tick_lag_p99_bound_ms = HistogramQuantileBound(0.99, lag);
    view.occupancy = ParseSampleSum(*after, "telos_zone_occupancy");
    view.occupancy_by_zone = ParseSamplesByLabel(*after, "telos_zone_occupancy", "zone");
    view.telnet_connections = ParseSampleSum(*after, "telos_telnet_connections");
    view.gate_players = ParseSampleSum(*after, "telos_gate_players");
  }

  void FillReport() {
    Report& r = result_.report;
    for (const Target& t : options_.targets) r.targets.push_back(t.ToString());
    r.transport = std::string(TransportName(options_.transport));
    r.dialect = options_.dialect == Dialect::kTelos ? "telos" : "tinymux";
    r.bots_requested = options_.bots;
    r.ramp_per_second = options_.ramp_per_second;
    r.duration_s = options_.duration_s;
    r.mix = options_.mix.ToString();
    r.bots_connected = context_.connected_total;
    r.bots_playing = context_.playing_total;
    r.commands_sent = context_.commands_sent;
    r.commands_in_window = context_.commands_in_window;
    r.replies = context_.replies;
    r.idles = context_.idles;
    r.commands_by_behaviour = context_.commands_by_behaviour;
    r.rtt = Summarize(context_.rtt.samples());
    r.rtt_samples_dropped = context_.rtt.dropped();
    r.login = Summarize(context_.login.samples());
    r.errors = context_.errors;
    r.errors_by_kind = context_.errors_by_kind;
    r.unexpected_disconnects = context_.unexpected_disconnects;
  }

  asio::awaitable<void> Ticker() {
    int64_t second = 0;
    int64_t commands_before = 0;
    int64_t replies_before = 0;
    while (!done_) {
      ++second;
      tick_timer_.expires_after(
          std::max(Duration(0), started_ + std::chrono::seconds(second) - clock_.Now()));
      (void)co_await tick_timer_.async_wait(kTuple);
      if (done_) break;
      SeriesRow row;
      row.t_s = Seconds(clock_.Now() - started_);
      row.bots_connected = context_.connected_now;
      row.bots_playing = context_.playing_now;
      row.commands = context_.commands_sent - commands_before;
      row.replies = context_.replies - replies_before;
      commands_before = context_.commands_sent;
      replies_before = context_.replies;
      row.rtt = Summarize(std::move(context_.rtt_this_second_us));
      context_.rtt_this_second_us.clear();
      row.errors_total = context_.errors;
      row.unexpected_disconnects_total = context_.unexpected_disconnects;
      result_.series.push_back(row);
      if (progress_) progress_(Live(row));
    }
  }

  LiveStatus Live(const SeriesRow& row) const {
    LiveStatus s;
    s.phase = phase_;
    s.t_s = row.t_s;
    const Instant now = clock_.Now();
    if (phase_ == LiveStatus::Phase::kRamping) {
      s.phase_progress = static_cast<double>(context_.bots_started) /
                         static_cast<double>(std::max<int64_t>(1, options_.bots));
    } else if (phase_ == LiveStatus::Phase::kSteady) {
      s.phase_progress = std::min(1.0, Seconds(now - steady_began_) / options_.duration_s);
    } else {
      s.phase_progress = std::min(
          1.0, Seconds(now - stopping_began_) * 1000.0 / static_cast<double>(kSwarmQuitTimeoutMs));
    }
    s.bots_requested = options_.bots;
    s.bots_started = context_.bots_started;
    s.bots_connected_now = context_.connected_now;
    s.bots_playing_now = context_.playing_now;
    s.commands_sent = context_.commands_sent;
    s.errors = context_.errors;
    s.unexpected_disconnects = context_.unexpected_disconnects;
    s.rtt_p99_last_second_ms = row.rtt.p99_ms;
    return s;
  }

  const SwarmOptions& options_;
  const Clock& clock_;
  Random& random_;
  const ProgressFn& progress_;
  asio::io_context io_{1};
  BotContext context_;
  std::vector<std::unique_ptr<Bot>> bots_;
  asio::steady_timer control_timer_;
  asio::steady_timer tick_timer_;
  asio::signal_set signals_;
  LiveStatus::Phase phase_ = LiveStatus::Phase::kRamping;
  Instant started_{};
  Instant steady_began_{};
  Instant stopping_began_{};
  bool interrupted_ = false;
  bool done_ = false;
  SwarmResult result_;
};

}  // namespace

std::string Target::ToString() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<Target> ParseTarget(std::string_view host_port) {
  Target target;
  std::string_view port;
  if (!host_port.empty() && host_port.front() == '[') {
    const size_t close = host_port.find("]:");
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("target '" + std::string(host_port) + "': expected [v6]:port");
    }
    target.host = std::string(host_port.substr(1, close - 1));
    port = host_port.substr(close + 2);
  } else {
    const size_t colon = host_port.rfind(':');
    if (colon == std::string_view::npos || host_port.find(':') != colon) {
      return Status::InvalidArgument("target '" + std::string(host_port) + "': expected host:port");
    }
    target.host = std::string(host_port.substr(0, colon));
    port = host_port.substr(colon + 1);
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (target.host.empty() || port.empty() || ec != std::errc() ||
      end != port.data() + port.size() || value == 0 || value > 65535) {
    return Status::InvalidArgument("target '" + std::string(host_port) +
                                   "': expected host:port with a port from 1 to 65535");
  }
  target.port = static_cast<uint16_t>(value);
  return target;
}

Status CheckTargetAllowed(const Target& target, bool allow_remote) {
  if (target.host == "localhost") return Status::Ok();
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(target.host, ec);
  if (ec) {
    return Status::InvalidArgument("target " + target.ToString() +
                                   ": the host must be an IP address or localhost");
  }
  if (address.is_loopback() || allow_remote) return Status::Ok();
  return Status::PermissionDenied("target " + target.ToString() +
                                  " is not a loopback address; pass --allow-remote only if the "
                                  "server is yours");
}

std::string BotAccountName(std::string_view prefix, int64_t index) {
  return std::string(prefix) + "_" + std::to_string(index);
}

std::string BotCharacterName(std::string_view prefix, int64_t index) {
  std::string name;
  for (char c : prefix) {
    if (std::isalpha(static_cast<unsigned char>(c)) && name.size() < 6) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (name.empty()) name = "bot";
  name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  // The index in base 26, four letters: "aaaa" is 0, up to 456,975 bots per prefix.
  std::string digits(4, 'a');
  for (size_t i = digits.size(); i-- > 0;) {
    digits[i] = static_cast<char>('a' + index % 26);
    index /= 26;
  }
  return name + digits;
}

std::string BotPassword(std::string_view prefix) {
  return "swarm-" + std::string(prefix) + "-lantern";
}

Status ValidateSwarmOptions(const SwarmOptions& o) {
  if (o.targets.empty()) return Status::InvalidArgument("at least one target is needed");
  if (o.targets.size() > kSwarmTargetsMax) {
    return Status::InvalidArgument("at most " + std::to_string(kSwarmTargetsMax) + " targets");
  }
  for (const Target& t : o.targets) TELOS_RETURN_IF_ERROR(CheckTargetAllowed(t, o.allow_remote));
  if (!o.metrics_url.empty()) {
    auto url = ParseHttpUrl(o.metrics_url);
    if (!url.ok()) return url.status();
    TELOS_RETURN_IF_ERROR(CheckTargetAllowed(url->target, o.allow_remote));
  }
  if (o.bots < 1 || o.bots > kSwarmBotsMax) {
    return Status::InvalidArgument("bots: from 1 to " + std::to_string(kSwarmBotsMax));
  }
  if (!(o.ramp_per_second >= kSwarmRampPerSecondMin &&
        o.ramp_per_second <= kSwarmRampPerSecondMax)) {
    return Status::InvalidArgument("ramp per second: from 0.1 to 10000");
  }
  if (!(o.duration_s > 0 && o.duration_s <= kSwarmDurationSecondsMax)) {
    return Status::InvalidArgument("duration: more than 0 and at most 3600 seconds");
  }
  if (o.think_ms < kSwarmThinkMsMin || o.think_ms > 600'000) {
    return Status::InvalidArgument("think time: from 100 ms to 600000 ms");
  }
  if (o.reply_timeout_ms < 100 || o.login_timeout_ms < 100) {
    return Status::InvalidArgument("timeouts: at least 100 ms");
  }
  if (o.accounts_prefix.empty() || o.accounts_prefix.size() > 12) {
    return Status::InvalidArgument("accounts prefix: 1 to 12 characters");
  }
  for (char c : o.accounts_prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return Status::InvalidArgument("accounts prefix: letters, digits and _ only");
    }
  }
  if (o.dialect == Dialect::kTinyMux && o.transport != TransportKind::kTelnet) {
    return Status::InvalidArgument("tinymux is driven over telnet only");
  }
  if (o.fight_target.empty() || o.fight_target.find('\n') != std::string::npos) {
    return Status::InvalidArgument("fight target: one word");
  }
  if (o.spread_steps < 0 || o.spread_steps > kSwarmSpreadStepsMax) {
    return Status::InvalidArgument("spread steps: from 0 to 1000");
  }
  return Status::Ok();
}

Swarm::Swarm(SwarmOptions options, const Clock& clock, Random& random)
    : options_(std::move(options)), clock_(clock), random_(random) {}

Result<SwarmResult> Swarm::Run(const ProgressFn& progress) {
  TELOS_RETURN_IF_ERROR(ValidateSwarmOptions(options_));
  SwarmRun run(options_, clock_, random_, progress);
  TELOS_RETURN_IF_ERROR(run.Prepare());
  return run.Execute();
}

}  // namespace telos::sim
