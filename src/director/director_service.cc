// DirectorService: the director's thread and its drain-targets responder (see the header).
#include "telos/director/director_service.h"

#include <chrono>
#include <utility>

#include "telos/director/drain_target_messages.h"

namespace telos::director {

DirectorService::DirectorService(Director& director, bus::Bus* bus, std::string subject_prefix,
                                 Logger& logger)
    : director_(director),
      bus_(bus),
      subject_(DrainTargetsSubject(subject_prefix, director.options().leadership.scope)),
      logger_(logger) {}

DirectorService::~DirectorService() {
  Stop();
}

void DirectorService::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void DirectorService::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  Follow(false);
  director_.Stop();
}

bool DirectorService::answering() const {
  std::lock_guard lock(sub_mu_);
  return subscription_ != nullptr;
}

void DirectorService::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    const int64_t next_ms = director_.Step();
    Follow(director_.is_leader());
    lock.lock();
    // At least a millisecond, so a step that asks for "now" again cannot spin the core.
    wake_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(1, next_ms)),
                   [this] { return stop_; });
  }
}

void DirectorService::Follow(bool leading) {
  if (bus_ == nullptr) return;
  std::unique_ptr<bus::Subscription> dropped;
  {
    std::lock_guard lock(sub_mu_);
    if (leading == (subscription_ != nullptr)) return;
    if (!leading) {
      dropped = std::move(subscription_);
    } else {
      Result<std::unique_ptr<bus::Subscription>> subscribed =
          bus_->Subscribe(subject_, [this](const bus::Message& message) { Answer(message); });
      if (!subscribed.ok()) {
        // Tried again after the next step; meanwhile draining shards choose for themselves.
        logger_.Warn("director drain-targets responder not subscribed",
                     {{"subject", subject_}, {"error", subscribed.status().ToString()}});
        return;
      }
      subscription_ = std::move(*subscribed);
    }
  }
  // Destroyed outside the lock: it waits for a handler in flight.
  logger_.Info(leading ? "director answering drain targets" : "director stopped answering",
               {{"subject", subject_}});
}

void DirectorService::Answer(const bus::Message& message) {
  if (message.reply_to.empty()) return;  // a publish, not a request: nobody to answer
  Result<DrainTargetsRequest> request = DecodeDrainTargetsRequest(message.data);
  std::string reply;
  if (!request.ok()) {
    logger_.Warn("director drain-targets request refused",
                 {{"error", request.status().ToString()}});
    reply = EncodeDrainTargetsError(request.status());
  } else {
    Result<DrainTargetsReply> answer = director_.AnswerDrainTargets(*request);
    reply =
        answer.ok() ? EncodeDrainTargetsReply(*answer) : EncodeDrainTargetsError(answer.status());
  }
  if (Status sent = bus_->Reply(message, reply); !sent.ok()) {
    logger_.Warn("director drain-targets reply not sent", {{"error", sent.ToString()}});
  }
}

}  // namespace telos::director
