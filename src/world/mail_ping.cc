#include "telos/world/mail_ping.h"

namespace telos::world {

void PingingMail::Send(std::string from, std::string to, std::string subject, std::string body,
                       std::function<void(Status)> done) {
  inner_.Send(from, to, std::move(subject), std::move(body),
              [this, from, to, done = std::move(done)](Status status) {
                // The sender hears first; the ping is best effort and must not delay that.
                const bool sent = status.ok();
                done(std::move(status));
                if (sent) ping_(to, from);
              });
}

std::string PingingMail::PingLine(const std::string& sender) {
  return "You have new mail from " + sender + ". Type 'mail' to list your letters.";
}

}  // namespace telos::world
