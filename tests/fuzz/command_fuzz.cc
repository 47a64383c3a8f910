// libFuzzer target for the command dispatcher with a world loaded: the default content pack
// (content/), every zone started on a manual clock and executor as world_test_util.h does it, and
// two characters logged in at the start room. Each input line is a command typed by the first;
// the second stands beside them so that says, tells, gives and fights have someone to reach.
// After every line the clock moves one heartbeat, so combat rounds, affects and scripts run.
//
// Speed, and what it costs: the world is built once per process, not per input. Building it
// (seven zones: rooms, the command table, scripts, the first reset) took most of an input's time
// and held the target near 50 inputs a second. Now each input logs two fresh characters in,
// runs its lines, takes both out again and restarts every zone either of them stood in, so the
// zones an input can change are as new for the next input as for the first. The trade-off: the
// zones nobody entered keep beating between inputs (their mobs wander, their timed resets run)
// and the clock, the mail boxes' letter ids and the zones' heartbeat phases move on, so an input
// meets a world that is fresh where it walks but not byte-for-byte the world of a new process
// (nor is a zone nobody entered that a mob wandered or fled into, until its own reset).
// A crash that the saved input alone does not reproduce comes from that drift; rerun it after the
// inputs before it (libFuzzer's log) to find it.
// A world that lives on also grows between inputs (timed tasks, metrics), which libFuzzer's
// per-input leak check takes for a leak and answers with a scan of the whole heap: over half the
// time of a run. LLVMFuzzerInitialize turns that check off (-detect_leaks=0 before the command
// line's flags, so a flag given by hand still wins); LeakSanitizer's check at exit stays on.
// What is left is the game under ASan: per line one command (an unknown word costs an edit
// distance to every command, for the suggestion) and a heartbeat of all seven zones, and at the
// end the restart of at least the lobby. That holds the target to a few hundred inputs a second
// (from about 50); more would need a cheaper zone reset in src/world, not a change here.
//
// Besides "never crashes" (asserts included: the dev build keeps them on), it checks that a
// player's delivered text stays within the per-flush line limit, and that both characters leave
// the world when asked.
//
// Run locally:  build/dev/tests/fuzz/command_fuzz tests/fuzz/corpus/command \
//                 -dict=tests/fuzz/dict/command.dict -max_total_time=600
#include <spdlog/sinks/null_sink.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_checks.h"
#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/ports.h"
#include "telos/world/world_host.h"
#include "telos/world/zone.h"

namespace {

namespace world = telos::world;
using telos::fuzz::Check;

// Commands read per input: enough for a fight or a shop visit, little enough to stay fast.
constexpr size_t kLinesPerInputMax = 64;

class CountingSink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput output) override {
    // Replies and what others cause are capped apart, each with one "[output truncated]".
    Check(output.line_count <= 2 * (telos::limits::kOutputLinesPerFlushMax + 1));
    if (output.disconnect) disconnected = true;
  }
  bool disconnected = false;
};

class NullPersistence final : public world::CharacterPersistence {
 public:
  void RequestSave(world::CharacterSnapshot) override {}
};

// Mail between the two players works; anyone else does not exist.
class TwoBoxMail final : public world::MailPort {
 public:
  void Send(std::string from, std::string to, std::string subject, std::string body,
            std::function<void(telos::Status)> done) override {
    auto box = boxes_.find(world::NameKey(to));
    if (box == boxes_.end() || box->second.size() >= 8) {
      done(telos::Status::NotFound("no such character"));
      return;
    }
    world::MailMessage message;
    message.header = {next_id_++, std::move(from), std::move(subject), 0, false};
    message.body = std::move(body);
    box->second.insert(box->second.begin(), std::move(message));
    done(telos::Status::Ok());
  }
  void List(std::string owner,
            std::function<void(telos::Result<std::vector<world::MailHeader>>)> done) override {
    std::vector<world::MailHeader> headers;
    for (const auto& m : boxes_[world::NameKey(owner)]) headers.push_back(m.header);
    done(std::move(headers));
  }
  void Read(std::string owner, int64_t id,
            std::function<void(telos::Result<world::MailMessage>)> done) override {
    for (const auto& m : boxes_[world::NameKey(owner)]) {
      if (m.header.id == id) return done(m);
    }
    done(telos::Status::NotFound("no such letter"));
  }
  // Empties both boxes: letters are the one thing an input leaves outside the zones.
  void Clear() {
    for (auto& [owner, box] : boxes_) box.clear();
  }

 private:
  std::map<std::string, std::vector<world::MailMessage>> boxes_{{"fuzzer", {}}, {"watcher", {}}};
  int64_t next_id_ = 1;
};

class RefusingPasswords final : public world::PasswordPort {
 public:
  void Change(std::string, std::string, std::string,
              std::function<void(telos::Status)> done) override {
    done(telos::Status::PermissionDenied("wrong password"));
  }
};

std::shared_ptr<const world::Pack> DefaultPack() {
  static const std::shared_ptr<const world::Pack> pack = [] {
    std::vector<world::Problem> problems;
    auto loaded = world::LoadPack(TELOS_SOURCE_DIR "/content", &problems);
    Check(loaded.ok());
    return std::make_shared<const world::Pack>(std::move(loaded).value());
  }();
  return pack;
}

// The world, built once per process (see the top of the file) and never torn down: the process
// ends with it.
struct World {
  World() {
    deps.clock = &clock;
    deps.logger = &logger;
    deps.metrics = &metrics;
    deps.persistence = &persistence;
    deps.mail = &mail;
    deps.passwords = &passwords;
    host = std::make_unique<world::WorldHost>(
        DefaultPack(), deps,
        [this](const std::string&) {
          return std::shared_ptr<world::Executor>(std::shared_ptr<world::Executor>(), &executor);
        },
        /*seed=*/42);
    Check(host->StartAllZones().ok());
    executor.RunDue();
  }

  // Takes the character out of the world; it must be gone when the executor has run.
  void Remove(const std::string& name) {
    bool removed = false;
    host->RemovePlayer(name, [&removed] { removed = true; });
    executor.RunReady();
    Check(removed && !host->ZoneOf(name).has_value());
  }

  // Stops and starts the zone again: its rooms, mobs and items as the pack made them.
  void Restart(const std::string& zone) {
    Check(host->StopZone(zone,
                         [](std::vector<world::PlayerTransfer> players) { Check(players.empty()); })
              .ok());
    executor.RunReady();
    Check(host->StartZone(zone).ok());
    executor.RunReady();
  }

  telos::ManualClock clock;
  telos::Metrics metrics;
  telos::Logger logger{"fuzz", telos::LogLevel::kError,
                       std::make_shared<spdlog::sinks::null_sink_mt>()};
  NullPersistence persistence;
  TwoBoxMail mail;
  RefusingPasswords passwords;
  world::ZoneDeps deps;
  world::ManualExecutor executor{clock};
  std::unique_ptr<world::WorldHost> host;
};

}  // namespace

// libFuzzer reads its flags after this returns: the default goes first, the caller's after it.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static std::vector<char*> args;
  static char no_leak_check[] = "-detect_leaks=0";
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, no_leak_check);
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size() - 1);
  *argv = args.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Leaked on purpose: zones still hold tasks on the executor when the process exits.
  static World& w = *new World;
  const auto& pack = *DefaultPack();
  auto player = std::make_shared<CountingSink>();
  auto watcher = std::make_shared<CountingSink>();
  Check(w.host->Login(world::NewCharacter("Fuzzer", pack.start_room), player).ok());
  Check(w.host->Login(world::NewCharacter("Watcher", pack.start_room), watcher).ok());
  w.executor.RunReady();

  // Every zone either character stood in after a line: those are restarted at the end.
  std::set<std::string> touched{pack.start_room.zone};
  const auto note_zones = [&] {
    for (const char* name : {"Fuzzer", "Watcher"}) {
      if (auto zone = w.host->ZoneOf(name)) touched.insert(*zone);
    }
  };
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (size_t n = 0; n < kLinesPerInputMax && !input.empty() && !player->disconnected; ++n) {
    const size_t end = input.find('\n');
    std::string line(input.substr(0, end));
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
    // The gate hands the world sanitized lines within the limit; so does the target.
    if (line.size() > telos::limits::kInputLineBytesMax)
      line.resize(telos::limits::kInputLineBytesMax);
    if (!w.host->Submit("Fuzzer", std::move(line)).ok()) break;
    w.executor.RunReady();
    note_zones();
    w.clock.Advance(std::chrono::milliseconds(telos::limits::kZoneHeartbeatMs));
    w.executor.RunDue();
    note_zones();
  }

  w.Remove("Fuzzer");
  w.Remove("Watcher");
  for (const std::string& zone : touched) w.Restart(zone);
  w.mail.Clear();
  return 0;
}
