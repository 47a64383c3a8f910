// World engine benchmarks: heartbeat cost per player (idle and fighting) and commands per
// second in one zone, all on the calling thread through a ManualExecutor.
// Run: scripts/build release --target world_bench && ./build/release/bench/world_bench
#include <filesystem>
#include <fstream>
#include <random>

#include <benchmark/benchmark.h>

#include "telos/base/clock.h"
#include "telos/base/limits.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/world_host.h"

namespace telos::world {
namespace {

namespace fs = std::filesystem;

constexpr const char* kZone = R"([zone]
id = "bench"
name = "Bench"
kind = "arena"
reset_minutes = 1440

[[rooms]]
id = "hall"
name = "Hall"
description = "A plain hall for measuring things."
flags = ["safe"]

  [[rooms.exits]]
  dir = "north"
  to = "pit"

[[rooms]]
id = "pit"
name = "Pit"
description = "Sand and sawdust."

  [[rooms.exits]]
  dir = "south"
  to = "hall"

[[mobs]]
id = "dummy"
name = "a training dummy"
keywords = ["dummy"]
ground = "A training dummy stands here."
level = 1
hp = 1000000
damage = "1d1"
flags = ["sentinel"]

[[resets]]
mob = "dummy"
room = "pit"
max = 100
)";

class NullSink final : public PlayerSink {
 public:
  void Deliver(PlayerOutput output) override { lines += output.line_count; }
  size_t lines = 0;
};

class NullPorts final : public CharacterPersistence, public MailPort, public PasswordPort {
 public:
  void RequestSave(CharacterSnapshot) override {}
  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    done(Status::Ok());
  }
  void List(std::string, std::function<void(Result<std::vector<MailHeader>>)> done) override {
    done(std::vector<MailHeader>{});
  }
  void Read(std::string, int64_t, std::function<void(Result<MailMessage>)> done) override {
    done(Status::NotFound("none"));
  }
  void Change(std::string, std::string, std::string, std::function<void(Status)> done) override {
    done(Status::Ok());
  }
};

// One zone with `players` players standing in `room`, driven by hand. `output_pulse_ms` 0 flushes
// after every batch; the server's default holds broadcasts for the pulse or, in a crowd, the
// heartbeat.
class Bench {
 public:
  explicit Bench(int64_t output_pulse_ms = 0) {
    std::random_device device;
    dir_ = fs::temp_directory_path() / ("telos_world_bench_" + std::to_string(device()));
    fs::create_directories(dir_ / "zones");
    std::ofstream(dir_ / "pack.toml") << "name = \"bench\"\nversion = \"1\"\n"
                                         "start_room = \"bench:hall\"\n";
    std::ofstream(dir_ / "zones" / "bench.toml") << kZone;
    std::vector<Problem> problems;
    Result<Pack> pack = LoadPack(dir_, &problems);
    RELEASE_ASSERT(pack.ok(), pack.status().ToString());
    pack_ = std::make_shared<const Pack>(std::move(pack).value());
    logger_ = std::make_unique<Logger>("bench", LogLevel::kError);
    ZoneDeps deps{&clock_, logger_.get(), &metrics_, &ports_, &ports_, &ports_, nullptr};
    deps.output_pulse_ms = output_pulse_ms;
    host_ = std::make_unique<WorldHost>(
        pack_, deps,
        [this](const std::string&) {
          return std::shared_ptr<Executor>(std::shared_ptr<Executor>(), &executor_);
        },
        1);
    RELEASE_ASSERT(host_->StartAllZones().ok(), "start");
    executor_.RunDue();
  }
  ~Bench() {
    (void)host_->StopZone("bench", [](std::vector<PlayerTransfer>) {});
    executor_.RunReady();
    host_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void AddPlayers(int count, const std::string& room, bool tough) {
    for (int i = 0; i < count; ++i) {
      CharacterState state = NewCharacter("P" + std::to_string(players_++), Ref{"bench", room});
      if (tough) state.hp = state.max_hp = 1'000'000;
      RELEASE_ASSERT(host_->Login(std::move(state), sink_).ok(), "login");
    }
    executor_.RunReady();
  }
  void Submit(const std::string& name, const std::string& line) { (void)host_->Submit(name, line); }
  void Beat() {
    clock_.Advance(Millis(limits::kZoneHeartbeatMs));
    executor_.RunDue();
  }
  ManualExecutor& executor() { return executor_; }

 private:
  fs::path dir_;
  std::shared_ptr<const Pack> pack_;
  ManualClock clock_;
  Metrics metrics_;
  NullPorts ports_;
  std::unique_ptr<Logger> logger_;
  ManualExecutor executor_{clock_};
  std::unique_ptr<WorldHost> host_;
  std::shared_ptr<NullSink> sink_ = std::make_shared<NullSink>();
  int players_ = 0;
};

// items/s = player-heartbeats per second; 1e6 / that = microseconds per player per heartbeat.
void BM_HeartbeatIdle(benchmark::State& state) {
  Bench bench;
  int players = static_cast<int>(state.range(0));
  bench.AddPlayers(players, "hall", false);
  for (auto _ : state) bench.Beat();
  state.SetItemsProcessed(state.iterations() * players);
}
BENCHMARK(BM_HeartbeatIdle)->Arg(100)->Arg(1000)->Arg(5000);

void BM_HeartbeatFighting(benchmark::State& state) {
  Bench bench;
  int players = static_cast<int>(state.range(0));
  bench.AddPlayers(players, "pit", true);
  for (int i = 0; i < players; ++i) {
    bench.Submit("P" + std::to_string(i), "kill " + std::to_string(i + 1) + ".dummy");
  }
  bench.executor().RunReady();
  for (auto _ : state) bench.Beat();
  state.SetItemsProcessed(state.iterations() * players);
}
BENCHMARK(BM_HeartbeatFighting)->Arg(100);

// Simple commands (say, look, score) from 100 players in one zone, in batches of 100.
void BM_Commands(benchmark::State& state) {
  Bench bench;
  bench.AddPlayers(100, "hall", false);
  const char* lines[] = {"say hello", "look", "score", "inventory"};
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("P" + std::to_string(i));
  size_t n = 0;
  for (auto _ : state) {
    for (const std::string& name : names) bench.Submit(name, lines[n++ % 4]);
    bench.executor().RunReady();
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_Commands);

// One player speaks in a room of `players`: the fan-out of a line to everyone else, delivered at
// the end of the batch. items/s = lines delivered to listeners per second.
void BM_SayInACrowdedRoom(benchmark::State& state) {
  Bench bench;
  const int players = static_cast<int>(state.range(0));
  bench.AddPlayers(players, "hall", false);
  bench.executor().RunReady();
  for (auto _ : state) {
    bench.Submit("P0", "say Has anyone seen the lamplighter?");
    bench.executor().RunReady();
  }
  state.SetItemsProcessed(state.iterations() * (players - 1));
}
BENCHMARK(BM_SayInACrowdedRoom)->Arg(50)->Arg(500);

// A crowd as `telos serve` runs it: ten of `players` speak, each in a batch of their own, and the
// heartbeat delivers what everyone heard since the last one. items/s = lines delivered.
void BM_ChatterInACrowdUntilTheHeartbeat(benchmark::State& state) {
  Bench bench(limits::kOutputPulseMsDefault);
  const int players = static_cast<int>(state.range(0));
  constexpr int kSpeakers = 10;
  bench.AddPlayers(players, "hall", false);
  bench.Beat();
  for (auto _ : state) {
    for (int i = 0; i < kSpeakers; ++i) {
      bench.Submit("P" + std::to_string(i), "say Has anyone seen the lamplighter?");
      bench.executor().RunReady();
    }
    bench.Beat();
  }
  state.SetItemsProcessed(state.iterations() * kSpeakers * (players - 1));
}
BENCHMARK(BM_ChatterInACrowdUntilTheHeartbeat)->Arg(500)->Arg(2000);

}  // namespace
}  // namespace telos::world

BENCHMARK_MAIN();
