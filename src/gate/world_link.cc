#include "telos/gate/world_link.h"

#include "telos/world/world_host.h"

namespace telos::gate {

Status InProcessWorldLink::Enter(world::CharacterState state,
                                 std::shared_ptr<world::PlayerSink> sink) {
  return host_.Login(std::move(state), std::move(sink));
}

Status InProcessWorldLink::Input(const std::string& name_key, std::string line) {
  return host_.Submit(name_key, std::move(line));
}

namespace {
// A character can change zone (walk, die and respawn) between the roster lookup and the
// freeze; the freeze then misses and is tried again where the roster now says it is.
constexpr int kRemoveAttemptsMax = 4;

void RemoveAttempt(world::WorldHost& host, const std::string& name_key,
                   std::shared_ptr<std::function<void()>> done, int attempt) {
  const Status s = host.FreezePlayer(
      name_key, [&host, name_key, done, attempt](Result<world::PlayerTransfer> transfer) {
        if (!transfer.ok() && host.ZoneOf(name_key) && attempt + 1 < kRemoveAttemptsMax) {
          return RemoveAttempt(host, name_key, done, attempt + 1);
        }
        (*done)();
      });
  if (!s.ok()) (*done)();  // not online (or its zone is gone): nothing to take out
}
}  // namespace

void InProcessWorldLink::Remove(const std::string& name_key, std::function<void()> done) {
  RemoveAttempt(host_, name_key, std::make_shared<std::function<void()>>(std::move(done)), 0);
}

std::vector<world::WhoEntry> InProcessWorldLink::Who() const {
  return host_.Who();
}

size_t InProcessWorldLink::online_count() const {
  return host_.online_count();
}

}  // namespace telos::gate
