#include "telos/gate/world_link.h"

#include "telos/world/world_host.h"

namespace telos::gate {

Status InProcessWorldLink::Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) {
  return host_.Login(std::move(request.state), std::move(sink));
}

Status InProcessWorldLink::Input(const std::string& name_key, std::string line) {
  return host_.Submit(name_key, std::move(line));
}

void InProcessWorldLink::Remove(const std::string& name_key, std::function<void()> done) {
  host_.RemovePlayer(name_key, std::move(done));
}

std::vector<world::WhoEntry> InProcessWorldLink::Who() const {
  return host_.Who();
}

size_t InProcessWorldLink::online_count() const {
  return host_.online_count();
}

}  // namespace telos::gate
