// DirectorService: runs one Director on a thread of its own and, while it leads, answers the
// drain-targets requests of its scope on the bus.
//
// The thread calls Director::Step() and waits the delay it returns (or until Stop()). After each
// step it subscribes to DrainTargetsSubject(prefix, scope) when the director has become leader
// and drops the subscription when it no longer leads, so only a leader answers: a draining
// shard that gets "no responders" knows no director leads and chooses its targets itself.
// A request is decoded, answered by Director::AnswerDrainTargets (serialized there) and replied
// to on the bus thread that delivered it; a malformed request gets an error reply. That handler
// blocks on the directory (a Redis round trip per zone), which the bus allows of a handler only
// because a director's bus carries nothing else of its own; in `telos serve` the directory is
// in memory.
//
// Ownership: borrows the director, the bus (may be null: no responder) and the logger, which
// must outlive it. Threads: Start() and Stop() from the owner's thread.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "telos/base/log.h"
#include "telos/bus/bus.h"
#include "telos/director/director.h"

namespace telos::director {

class DirectorService {
 public:
  DirectorService(Director& director, bus::Bus* bus, std::string subject_prefix, Logger& logger);
  ~DirectorService();

  DirectorService(const DirectorService&) = delete;
  DirectorService& operator=(const DirectorService&) = delete;

  void Start();
  // Stops the thread and the responder, then stops the director (tally, lease).
  void Stop();

  const std::string& subject() const { return subject_; }
  bool answering() const;

 private:
  void Run();
  void Follow(bool leading);
  void Answer(const bus::Message& message);

  Director& director_;
  bus::Bus* const bus_;
  const std::string subject_;
  Logger& logger_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;

  mutable std::mutex sub_mu_;
  std::unique_ptr<bus::Subscription> subscription_;  // GUARDED_BY(sub_mu_)
};

}  // namespace telos::director
