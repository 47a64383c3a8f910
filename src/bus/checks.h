// Private to src/bus: the argument checks of the Bus contract (bus.h). Both backends call these
// before doing anything, so they refuse the same calls with the same kInvalidArgument words.
#pragma once

#include <functional>
#include <string_view>

#include "telos/base/status.h"
#include "telos/bus/bus.h"

namespace telos::bus::internal {

// A message to send (Publish, or Reply to `subject` = the request's reply_to).
Status CheckSend(std::string_view subject, std::string_view data);
// Reply needs a request: a message with a reply_to.
Status CheckReply(const Message& request);
Status CheckRequest(std::string_view subject, std::string_view data);
Status CheckSubscribe(std::string_view subject, const std::function<void(const Message&)>& handler);

}  // namespace telos::bus::internal
