// Test support for src/world: temp packs, fake ports, and a deterministic world harness.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/ports.h"
#include "telos/world/world_host.h"

namespace telos::world::testing {

// A temporary folder, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  // Writes `text` to path()/rel, creating folders.
  void Write(const std::string& rel, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

// A small, valid two-zone pack: lobby (atrium, hall) and town (square, smithy, alley, den).
void WriteSmallPack(const TempDir& dir);

class FakeSink final : public PlayerSink {
 public:
  void Deliver(PlayerOutput output) override;
  // All lines since the last Take(), joined by '\n'.
  std::string Take();
  std::vector<OutputEvent> events;
  bool disconnected = false;
  int deliveries = 0;
  // The terminal's echo as the deliveries so far have set it (on, as a connection starts).
  bool echo_on = true;
  int echo_changes = 0;  // deliveries that carried an echo change

 private:
  std::vector<std::string> lines_;
};

class FakePersistence final : public CharacterPersistence {
 public:
  void RequestSave(CharacterSnapshot snapshot) override { saves.push_back(std::move(snapshot)); }
  std::vector<CharacterSnapshot> saves;
};

class FakeMail final : public MailPort {
 public:
  void Send(std::string from, std::string to, std::string subject, std::string body,
            std::function<void(Status)> done) override;
  void List(std::string owner, std::function<void(Result<std::vector<MailHeader>>)> done) override;
  void Read(std::string owner, int64_t id, std::function<void(Result<MailMessage>)> done) override;
  std::map<std::string, std::vector<MailMessage>> boxes;  // by name key; a key must exist
  int64_t next_id = 1;
};

class FakePasswords final : public PasswordPort {
 public:
  void Change(std::string name_key, std::string old_password, std::string new_password,
              std::function<void(Status)> done) override;
  std::map<std::string, std::string> passwords;
};

// The game events zones published (GameEventPort), in order.
class FakeGameEvents final : public GameEventPort {
 public:
  struct Event {
    std::string kind, subject, actor;
    bool operator==(const Event&) const = default;
  };
  void Publish(std::string kind, std::string subject, std::string actor) override {
    events.push_back({std::move(kind), std::move(subject), std::move(actor)});
  }
  std::vector<Event> events;
};

// Records the test sets; answers at once, or Unavailable while `up` is false.
class FakeRecords final : public RecordsPort {
 public:
  void Tallies(std::function<void(Result<std::vector<RecordLine>>)> done) override {
    if (!up) return done(Status::Unavailable("the records store is down"));
    done(lines);
  }
  std::vector<RecordLine> lines;
  bool up = true;
};

// One process worth of world on a manual clock and executor: everything runs on the test's
// thread when the test says so.
class TestWorld {
 public:
  // `output_pulse_ms` is ZoneDeps::output_pulse_ms: 0 delivers everyone's output at the end
  // of each batch, which transcript tests rely on. `crowd_players` is
  // ZoneDeps::output_pulse_crowd_players.
  // `social` (may be null) is ZoneDeps::social.
  explicit TestWorld(const std::filesystem::path& pack_dir, uint64_t seed = 42,
                     int64_t output_pulse_ms = 0,
                     size_t crowd_players = limits::kOutputPulseCrowdPlayersDefault,
                     SocialPort* social = nullptr, ArcadePort* arcade = nullptr);
  ~TestWorld();

  // Logs in a fresh character (or `state` if given) and returns its sink.
  std::shared_ptr<FakeSink> Login(const std::string& name, const std::string& room = "");
  std::shared_ptr<FakeSink> LoginState(CharacterState state);
  // Submits a line, runs everything ready, returns the player's output.
  std::string Do(const std::string& name, const std::string& line);
  // Advances the clock by `count` heartbeats, running every due task.
  void Beat(int count = 1);
  void Run() { executor.RunDue(); }
  std::string LogText() const { return log_stream_.str(); }
  std::shared_ptr<FakeSink> sink(const std::string& name) { return sinks_.at(name); }

 private:
  std::ostringstream log_stream_;  // declared first: outlives the logger

 public:
  // Declaration order is destruction order reversed: the executor (whose queued tasks keep
  // zones alive) goes before the metrics, logger and fakes the zones use.
  std::shared_ptr<const Pack> pack;
  ManualClock clock;
  Metrics metrics;
  FakePersistence persistence;
  FakeMail mail;
  FakePasswords passwords;
  FakeGameEvents game_events;
  FakeRecords records;
  std::unique_ptr<Logger> logger;
  ManualExecutor executor{clock};
  std::unique_ptr<WorldHost> host;

 private:
  std::map<std::string, std::shared_ptr<FakeSink>> sinks_;
};

}  // namespace telos::world::testing
