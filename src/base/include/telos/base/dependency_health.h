// DependencyHealth: which external services a process can reach right now, and what it does
// without each one (the degradation ladder, DESIGN.md section 4 and docs/operating.md).
//
// A process declares each dependency with the mode it falls back to while the dependency is
// down ("single-shard mode", "new characters are ephemeral", ...). Observations come from two
// places: probes (AddProbe; a thread runs each one every probe interval, for services whose
// outage is otherwise only noticed by whoever calls them next) and reports from components that
// see the state directly (a bus connection callback). Each transition is logged once with a
// stable line — "<name> unavailable; <mode>" (warn) and "<name> ready" (info) — counted in the
// gauge dependency_up{dependency=...}, shown in /api/health (AddHealthMembers) and passed to the
// OnChange listeners, which switch the degraded behaviour on and off. Recovery needs nothing
// from the operator: the next successful probe or report flips the state back.
//
// Thread safety: every method may be called from any thread. Listeners run on the reporting
// thread without the lock held; they must not block.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/json/fwd.hpp>

#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"

namespace telos {

class DependencyHealth {
 public:
  using Listener = std::function<void(const std::string& name, bool up)>;

  DependencyHealth(Logger& log, Metrics& metrics);
  ~DependencyHealth();  // stops the probe thread
  DependencyHealth(const DependencyHealth&) = delete;
  DependencyHealth& operator=(const DependencyHealth&) = delete;

  // Declares `name` (initially up) and what the process does while it is down.
  // REQUIRES: before any Report or probe for it; not declared twice.
  void Declare(const std::string& name, std::string degraded_mode);
  // Records one observation. Returns whether the state changed (and was logged).
  // REQUIRES: `name` declared.
  bool Report(const std::string& name, bool up, std::string_view error = {});
  bool up(const std::string& name) const;
  // Whether every declared dependency is up.
  bool all_up() const;
  // Called on every transition, after it is logged. REQUIRES: before Start and any Report.
  void OnChange(Listener listener);

  // `probe` decides `name`'s state each interval: OK = up, anything else = down.
  // REQUIRES: `name` declared; before Start.
  void AddProbe(const std::string& name, std::function<Status()> probe);
  // Runs every probe once now (on the caller's thread) and then every `interval` on a thread.
  void Start(std::chrono::milliseconds interval);
  void Stop();

  // Sets "dependencies" ({"redis":"up","nats":"down"}) and "degraded" (["single-shard mode"])
  // in `out`, the /api/health object.
  void AddHealthMembers(boost::json::object& out) const;

 private:
  struct Entry {
    std::string mode;
    bool up = true;
    prometheus::Gauge* gauge = nullptr;
  };
  void RunProbes();

  Logger& log_;
  Metrics& metrics_;
  std::vector<Listener> listeners_;                                      // fixed before use
  std::vector<std::pair<std::string, std::function<Status()>>> probes_;  // fixed before Start

  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace telos
