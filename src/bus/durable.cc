// The spec checks shared by both durable backends (durable.h).
#include "telos/bus/durable.h"

#include <string>

#include "telos/base/limits.h"
#include "telos/bus/bus.h"

namespace telos::bus {

bool ValidStreamName(std::string_view name) {
  if (name.empty() || name.size() > limits::kDurableNameBytesMax) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckStreamSpec(const StreamSpec& spec) {
  if (!ValidStreamName(spec.name)) {
    return Status::InvalidArgument("stream name '" + spec.name + "' is not [A-Za-z0-9_-]{1,64}");
  }
  if (!ValidSubject(spec.subjects, /*allow_wildcards=*/true)) {
    return Status::InvalidArgument("stream " + spec.name + ": malformed subjects '" +
                                   spec.subjects + "'");
  }
  if (spec.max_age_ms < 0 || spec.max_messages < 0 || spec.duplicate_window_ms <= 0) {
    return Status::InvalidArgument("stream " + spec.name +
                                   ": max_age_ms and max_messages must be >= 0 and "
                                   "duplicate_window_ms > 0");
  }
  return Status::Ok();
}

Status CheckConsumerSpec(const ConsumerSpec& spec) {
  if (!ValidStreamName(spec.stream) || !ValidStreamName(spec.durable)) {
    return Status::InvalidArgument("consumer '" + spec.durable + "' on '" + spec.stream +
                                   "': names are [A-Za-z0-9_-]{1,64}");
  }
  if (!spec.filter_subject.empty() && !ValidSubject(spec.filter_subject, true)) {
    return Status::InvalidArgument("consumer " + spec.durable + ": malformed filter subject '" +
                                   spec.filter_subject + "'");
  }
  if (spec.ack_wait_ms <= 0 || spec.retry_delay_ms < 0 || spec.retry_delay_ms >= spec.ack_wait_ms ||
      spec.max_deliveries < 1) {
    return Status::InvalidArgument("consumer " + spec.durable +
                                   ": want ack_wait_ms > retry_delay_ms >= 0 and "
                                   "max_deliveries >= 1");
  }
  return Status::Ok();
}

}  // namespace telos::bus
