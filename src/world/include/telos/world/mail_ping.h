// PingingMail: a MailPort that tells a letter's recipient at once that it arrived.
//
// It forwards every call to the real post office and, after a letter was accepted, calls
// `ping(recipient, sender)`. Embedded, the ping is a line to the recipient if they are online in
// this host; in a fleet it is a bus message to whichever shard hosts them (FleetComms). Someone
// not reached by the ping sees the letter at their next login (WorldHost announces unread mail).
#pragma once

#include <functional>
#include <string>

#include "telos/world/ports.h"

namespace telos::world {

class PingingMail final : public MailPort {
 public:
  using Ping = std::function<void(const std::string& recipient, const std::string& sender)>;
  // `inner` must outlive this object. `ping` runs on whatever thread `inner` completes on.
  PingingMail(MailPort& inner, Ping ping) : inner_(inner), ping_(std::move(ping)) {}

  void Send(std::string from, std::string to, std::string subject, std::string body,
            std::function<void(Status)> done) override;
  void List(std::string owner, std::function<void(Result<std::vector<MailHeader>>)> done) override {
    inner_.List(std::move(owner), std::move(done));
  }
  void Read(std::string owner, int64_t id, std::function<void(Result<MailMessage>)> done) override {
    inner_.Read(std::move(owner), id, std::move(done));
  }

  // The line a pinged recipient sees.
  static std::string PingLine(const std::string& sender);

 private:
  MailPort& inner_;
  Ping ping_;
};

}  // namespace telos::world
