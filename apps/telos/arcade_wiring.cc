#include "arcade_wiring.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "telos/store/sqlite_ledger.h"

namespace telos::app {
namespace {

constexpr const char* kSecretFile = "arcade-house.secret";

// world::ArcadePort over the casino: the balance read runs on the blocking pool (the ledger
// blocks), the wagers go to the casino's own thread.
class CasinoPort final : public world::ArcadePort {
 public:
  CasinoPort(arcade::Casino& casino, BlockingRunner blocking)
      : casino_(casino), blocking_(std::move(blocking)) {}

  void Chips(std::string player, std::function<void(Result<int64_t>)> done) override {
    blocking_([this, player = std::move(player), done = std::move(done)] {
      done(casino_.Chips(player));
    });
  }
  void Buy(std::string player, int64_t chips, std::string key,
           std::function<void(Result<world::ArcadeWager>)> done) override {
    casino_.Buy(std::move(player), chips, std::move(key),
                [done = std::move(done)](Result<arcade::WagerAnswer> a) {
                  if (!a.ok()) return done(a.status());
                  done(world::ArcadeWager{.stake = a->stake, .chips = a->payout});
                });
  }
  void Bet(std::string player, std::string game, int64_t stake, int64_t target, std::string key,
           std::function<void(Result<world::ArcadeWager>)> done) override {
    casino_.Bet(std::move(game), std::move(player), stake, target, std::move(key),
                [done = std::move(done)](Result<arcade::WagerAnswer> a) {
                  if (!a.ok()) return done(a.status());
                  done(world::ArcadeWager{.round = a->position, .stake = a->stake});
                });
  }
  void CashOut(std::string player, std::string key,
               std::function<void(Result<world::ArcadeWager>)> done) override {
    casino_.CashOut("crash", std::move(player), std::move(key),
                    [done = std::move(done)](Result<arcade::WagerAnswer> a) {
                      if (!a.ok()) return done(a.status());
                      done(world::ArcadeWager{.round = a->position,
                                              .stake = a->stake,
                                              .cashout_x100 = a->cashout_x100,
                                              .chips = a->payout});
                    });
  }

 private:
  arcade::Casino& casino_;
  const BlockingRunner blocking_;
};

}  // namespace

Result<ArcadeSettings> ReadArcadeSettings(const Config& config) {
  ArcadeSettings s;
  auto enabled = config.Bool("TELOS_ARCADE", s.enabled);
  if (!enabled.ok()) return enabled.status();
  s.enabled = *enabled;
  auto seed = config.String("TELOS_ARCADE_SEED", s.public_seed);
  if (!seed.ok()) return seed.status();
  s.public_seed = *seed;
  if (s.public_seed.empty() || s.public_seed.size() > limits::kArcadeSeedBytesMax) {
    return Status::InvalidArgument("TELOS_ARCADE_SEED must be 1.." +
                                   std::to_string(limits::kArcadeSeedBytesMax) + " bytes");
  }
  return s;
}

Result<std::string> LoadOrCreateHouseSecret(const std::string& data_dir) {
  const std::filesystem::path path = std::filesystem::path(data_dir) / kSecretFile;
  if (std::ifstream in(path); in) {
    std::stringstream text;
    text << in.rdbuf();
    std::string secret = text.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty()) {
      return Status::FailedPrecondition(path.string() + " is empty: restore it or remove it");
    }
    return secret;
  }
  std::random_device device;  // the OS's entropy source
  std::string secret;
  char hex[3];
  for (int i = 0; i < 32; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(device() & 0xff));
    secret += hex;
  }
  // Created 0600 from the first byte (never readable by others, even for a moment), synced,
  // then renamed into place and the directory synced: whoever holds the secret can compute
  // every future round, and a torn file would start a different chain after a crash.
  const std::string partial = path.string() + ".new";
  ::unlink(partial.c_str());  // a leftover from a crash mid-write
  const int fd = ::open(partial.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot create " + partial + ": " + std::strerror(errno));
  const std::string line = secret + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!written) {
    ::unlink(partial.c_str());
    return Status::Unavailable("cannot write " + partial + ": " + std::strerror(write_errno));
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(partial.c_str());
    return Status::Unavailable("cannot create " + path.string() + ": " +
                               std::strerror(rename_errno));
  }
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  if (const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
  return secret;
}

arcade::CasinoOptions ServeCasinoOptions(const ArcadeSettings& settings, std::string house_secret) {
  arcade::CasinoOptions options;
  options.games = {
      {.game = "crash", .kind = arcade::GameKind::kCrash, .public_seed = settings.public_seed},
      {.game = "dice", .kind = arcade::GameKind::kDice, .public_seed = settings.public_seed}};
  options.house_secret = std::move(house_secret);
  return options;
}

Result<std::unique_ptr<ArcadeWiring>> ArcadeWiring::Open(const ArcadeSettings& settings,
                                                         const std::string& db_path,
                                                         const std::string& data_dir,
                                                         BlockingRunner blocking,
                                                         const Clock& clock, Logger& log) {
  Result<std::string> secret = LoadOrCreateHouseSecret(data_dir);
  if (!secret.ok()) return secret.status();
  std::unique_ptr<ArcadeWiring> w(new ArcadeWiring());
  w->clock_ = &clock;
  auto ledger = store::SqliteLedger::Open({.path = db_path}, clock);
  if (!ledger.ok()) return ledger.status();
  w->ledger_ = std::move(*ledger);
  arcade::CasinoOptions options = ServeCasinoOptions(settings, std::move(*secret));
  options.logger = &log;  // a used-up chain is an error line
  for (const arcade::GameConfig& game : options.games) {
    w->texts_.emplace(game.game, arcade::FrameText(game.kind));
  }
  ArcadeWiring* raw = w.get();
  auto casino = arcade::Casino::Create(*w->ledger_, clock, std::move(options),
                                       [raw](const arcade::Frame& f) { raw->OnFrame(f); });
  if (!casino.ok()) return casino.status();
  w->casino_ = std::move(*casino);
  w->port_ = std::make_unique<CasinoPort>(*w->casino_, std::move(blocking));
  log.Info("arcade ready", {{"games", "crash dice"}, {"ledger", db_path}});
  return w;
}

ArcadeWiring::~ArcadeWiring() {
  Stop();
}

void ArcadeWiring::Start(CasinoSink to_casino) {
  to_casino_ = std::move(to_casino);
  casino_->Start();
}

void ArcadeWiring::Stop() {
  if (casino_) casino_->Stop();
}

void ArcadeWiring::OnFrame(const arcade::Frame& frame) {
  auto it = texts_.find(frame.game);
  if (it == texts_.end() || !to_casino_) return;
  arcade::FrameNews news = it->second.Next(frame, clock_->Now());
  if (news.text.empty() && news.gmcp.empty()) return;
  to_casino_(news.text, world::OutputEvent{.name = news.gmcp.empty() ? "" : "Arcade.Frame",
                                           .json = std::move(news.gmcp)});
}

}  // namespace telos::app
