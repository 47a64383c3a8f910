#include "checks.h"

#include <string>

namespace telos::bus::internal {

Status CheckSend(std::string_view subject, std::string_view data) {
  if (!ValidSubject(subject, /*allow_wildcards=*/false)) {
    return Status::InvalidArgument("malformed subject for a message: " + std::string(subject));
  }
  if (data.size() > kMessageBytesMax) {
    return Status::InvalidArgument("message of " + std::to_string(data.size()) +
                                   " bytes is over the limit");
  }
  return Status::Ok();
}

Status CheckReply(const Message& request) {
  if (request.reply_to.empty()) {
    return Status::InvalidArgument("the message on " + request.subject + " is not a request");
  }
  return Status::Ok();
}

Status CheckRequest(std::string_view subject, std::string_view data) {
  if (!ValidSubject(subject, /*allow_wildcards=*/false)) {
    return Status::InvalidArgument("malformed subject for a request: " + std::string(subject));
  }
  if (data.size() > kMessageBytesMax) {
    return Status::InvalidArgument("request over the message size limit");
  }
  return Status::Ok();
}

Status CheckSubscribe(std::string_view subject,
                      const std::function<void(const Message&)>& handler) {
  if (!ValidSubject(subject, /*allow_wildcards=*/true)) {
    return Status::InvalidArgument("malformed subject to subscribe to: " + std::string(subject));
  }
  if (!handler) return Status::InvalidArgument("a subscription needs a handler");
  return Status::Ok();
}

}  // namespace telos::bus::internal
