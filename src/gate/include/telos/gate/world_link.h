// WorldLink: how the gate reaches the world for one player — the Link of DESIGN.md section 3.
//
// The gate never touches a zone: it enters a character, feeds it input and finally removes it
// through this interface. Its one implementation is FleetWorldLink, over the World service's
// Play stream (gRPC in a fleet, in-process in `telos serve`): the world claims, loads and saves
// the character itself, so the gate hands it nothing but the account service's assertion.
//
// Thread safety: every method may be called from any thread and never blocks on game logic.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "telos/base/status.h"
#include "telos/world/ports.h"

namespace telos::gate {

struct EnterRequest {
  std::string name_key;
  std::string display_name;
  // The account service's signed assertion ("this account may play this character"), which
  // the world verifies before it claims the character. A link refuses a request without one.
  std::string assertion;
};

class WorldLink {
 public:
  virtual ~WorldLink() = default;
  // Puts a character into the world; its output goes to `sink`. AlreadyExists when online.
  // A fleet link answers asynchronously: a failure arrives as output with `disconnect` set.
  virtual Status Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) = 0;
  // One line of input for an online character. NotFound when not online.
  virtual Status Input(const std::string& name_key, std::string line) = 0;
  // Takes a character out of the world without a quit command (its connection is gone for
  // good); it is saved on the way out. `done` runs once it is out (on any thread).
  virtual void Remove(const std::string& name_key, std::function<void()> done) = 0;
  // The gate id this link names itself by to worlds (the Play stream's Hello): the gate id its
  // assertions must be issued for.
  virtual const std::string& gate_id() const = 0;
  // A renewed assertion for the character's session (same nonce): presented from now on
  // whenever the session is attached afresh. No-op when the character is not online here.
  virtual void UpdateAssertion(const std::string& name_key, std::string assertion) = 0;
  // Everyone online, sorted by name.
  virtual std::vector<world::WhoEntry> Who() const = 0;
  virtual size_t online_count() const = 0;
};

}  // namespace telos::gate
