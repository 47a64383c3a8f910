#include "telos/base/dependency_health.h"

#include <utility>

#include <boost/json.hpp>

#include "telos/base/assert.h"
#include "telos/base/utf8.h"

namespace telos {

DependencyHealth::DependencyHealth(Logger& log, Metrics& metrics) : log_(log), metrics_(metrics) {}

DependencyHealth::~DependencyHealth() {
  Stop();
}

void DependencyHealth::Declare(const std::string& name, std::string degraded_mode) {
  prometheus::Gauge& gauge =
      metrics_.Gauge("dependency_up", "1 while the process can reach this external service",
                     {{"dependency", name}});
  gauge.Set(1);
  std::lock_guard lock(mu_);
  RELEASE_ASSERT(!entries_.contains(name), "dependency declared twice");
  entries_[name] = Entry{std::move(degraded_mode), true, &gauge};
}

bool DependencyHealth::Report(const std::string& name, bool up, std::string_view error) {
  std::string mode;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    RELEASE_ASSERT(it != entries_.end(), "report for an undeclared dependency");
    if (it->second.up == up) return false;
    it->second.up = up;
    it->second.gauge->Set(up ? 1 : 0);
    mode = it->second.mode;
  }
  if (up) {
    log_.Info(name + " ready", {{"dependency", name}});
  } else {
    log_.Warn(name + " unavailable; " + mode,
              {{"dependency", name}, {"error", std::string(error)}});
  }
  for (const Listener& listener : listeners_) listener(name, up);
  return true;
}

bool DependencyHealth::up(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(name);
  return it == entries_.end() || it->second.up;
}

bool DependencyHealth::all_up() const {
  std::lock_guard lock(mu_);
  for (const auto& [name, entry] : entries_) {
    if (!entry.up) return false;
  }
  return true;
}

void DependencyHealth::OnChange(Listener listener) {
  listeners_.push_back(std::move(listener));
}

void DependencyHealth::AddProbe(const std::string& name, std::function<Status()> probe) {
  probes_.emplace_back(name, std::move(probe));
}

void DependencyHealth::RunProbes() {
  for (const auto& [name, probe] : probes_) {
    const Status s = probe();
    Report(name, s.ok(), s.ok() ? std::string_view{} : std::string_view(s.message()));
  }
}

void DependencyHealth::Start(std::chrono::milliseconds interval) {
  RELEASE_ASSERT(!thread_.joinable(), "DependencyHealth::Start called twice");
  RunProbes();
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      RunProbes();
      lock.lock();
    }
  });
}

void DependencyHealth::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DependencyHealth::AddHealthMembers(boost::json::object& out) const {
  boost::json::object deps;
  boost::json::array degraded;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, entry] : entries_) {
      deps[SanitizeUtf8(name)] = entry.up ? "up" : "down";
      if (!entry.up) degraded.emplace_back(SanitizeUtf8(entry.mode));
    }
  }
  out["dependencies"] = std::move(deps);
  out["degraded"] = std::move(degraded);
}

}  // namespace telos
