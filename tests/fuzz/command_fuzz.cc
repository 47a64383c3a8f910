// libFuzzer target for the command dispatcher with a world loaded: the default content pack
// (content/), every zone started on a manual clock and executor as world_test_util.h does it, and
// two characters logged in at the start room. Each input line is a command typed by the first;
// the second stands beside them so that says, tells, gives and fights have someone to reach.
// After every line the clock moves one heartbeat, so combat rounds, affects and scripts run.
//
// Each input gets a fresh world (from the pack loaded once): a crash reproduces from its input
// alone, and no state or memory carries from one input to the next.
//
// Besides "never crashes" (asserts included: the dev build keeps them on), it checks that a
// player's delivered text stays within the per-flush line limit.
//
// Run locally:  build/dev/tests/fuzz/command_fuzz tests/fuzz/corpus/command \
//                 -dict=tests/fuzz/dict/command.dict -max_total_time=600
#include <spdlog/sinks/null_sink.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
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

// One world, torn down with its zones stopped, as TestWorld does.
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
  ~World() {
    for (const std::string& zone : host->RunningZones()) {
      (void)host->StopZone(zone, [](std::vector<world::PlayerTransfer>) {});
    }
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World w;
  const auto& pack = *DefaultPack();
  auto player = std::make_shared<CountingSink>();
  auto watcher = std::make_shared<CountingSink>();
  Check(w.host->Login(world::NewCharacter("Fuzzer", pack.start_room), player).ok());
  Check(w.host->Login(world::NewCharacter("Watcher", pack.start_room), watcher).ok());
  w.executor.RunReady();

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
    w.clock.Advance(std::chrono::milliseconds(telos::limits::kZoneHeartbeatMs));
    w.executor.RunDue();
  }
  return 0;
}
