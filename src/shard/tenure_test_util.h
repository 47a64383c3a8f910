// What the zone-tenure and drain tests share: the default content pack, a WorldHost whose zones
// all run on one ManualExecutor (the test pumps it), and ports that do nothing.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/shard/zone_lease_keeper.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/executor.h"
#include "telos/world/ports.h"
#include "telos/world/world_host.h"

namespace telos::shard::testing_util {

class NoMail final : public world::MailPort {
 public:
  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    done(Status::Unavailable("no mail in this test"));
  }
  void List(std::string,
            std::function<void(Result<std::vector<world::MailHeader>>)> done) override {
    done(std::vector<world::MailHeader>{});
  }
  void Read(std::string, int64_t, std::function<void(Result<world::MailMessage>)> done) override {
    done(Status::NotFound("no mail in this test"));
  }
};

class NoPasswords final : public world::PasswordPort {
 public:
  void Change(std::string, std::string, std::string, std::function<void(Status)> done) override {
    done(Status::Unavailable("no passwords in this test"));
  }
};

class NoPersistence final : public world::CharacterPersistence {
 public:
  void RequestSave(world::CharacterSnapshot) override {}
};

class NullSink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput) override {}
};

// The default content pack and one manual executor for every zone of a host.
struct TestWorld {
  explicit TestWorld(const Clock& clock) : executor(clock) {
    std::vector<world::Problem> problems;
    auto loaded = world::LoadPack(std::filesystem::path(TELOS_SOURCE_DIR) / "content", &problems);
    RELEASE_ASSERT(loaded.ok() && problems.empty(), "the default content pack does not load");
    pack = std::make_shared<const world::Pack>(std::move(loaded).value());
  }
  std::shared_ptr<const world::Pack> pack;
  world::ManualExecutor executor;
  NoMail mail;
  NoPasswords passwords;
};

inline std::unique_ptr<world::WorldHost> MakeHost(TestWorld& world, const Clock& clock, Logger& log,
                                                  Metrics& metrics,
                                                  world::CharacterPersistence& persistence) {
  world::ZoneDeps deps;
  deps.clock = &clock;
  deps.logger = &log;
  deps.metrics = &metrics;
  deps.persistence = &persistence;
  deps.mail = &world.mail;
  deps.passwords = &world.passwords;
  return std::make_unique<world::WorldHost>(
      world.pack, deps,
      [&world](const std::string&) {
        return std::shared_ptr<world::Executor>(std::shared_ptr<world::Executor>(),
                                                &world.executor);
      },
      7);
}

// Logs a new character in at `room` ("zone:room").
inline Status LoginAt(world::WorldHost& host, const std::string& name, const std::string& room) {
  auto ref = world::ParseRef(room, "");
  RELEASE_ASSERT(ref.has_value(), "bad room reference");
  return host.Login(world::NewCharacter(name, *ref), std::make_shared<NullSink>());
}

// Starts what a lease keeper wins straight in the host (no store: the fence is ZoneTenure's job).
class HostHosting final : public ZoneHosting {
 public:
  explicit HostHosting(world::WorldHost& host) : host_(host) {}
  Status StartZone(const std::string& zone, uint64_t) override { return host_.StartZone(zone); }
  void StopZone(const std::string& zone, const std::string&) override {
    (void)host_.StopZone(zone, [](std::vector<world::PlayerTransfer>) {});
  }
  void SuspendZone(const std::string&, const std::string&) override {}
  Status ResumeZone(const std::string&, uint64_t) override { return Status::Ok(); }

 private:
  world::WorldHost& host_;
};

}  // namespace telos::shard::testing_util
