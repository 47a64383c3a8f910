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

void InProcessWorldLink::Remove(const std::string& name_key, std::function<void()> done) {
  auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
  const Status s = host_.FreezePlayer(
      name_key, [shared_done](Result<world::PlayerTransfer>) { (*shared_done)(); });
  if (!s.ok()) (*shared_done)();  // not online: nothing to take out
}

std::vector<world::WhoEntry> InProcessWorldLink::Who() const {
  return host_.Who();
}

size_t InProcessWorldLink::online_count() const {
  return host_.online_count();
}

}  // namespace telos::gate
