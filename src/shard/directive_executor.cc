#include "telos/shard/directive_executor.h"

#include <chrono>
#include <utility>

#include "telos/base/assert.h"

namespace telos::shard {

DirectiveExecutor::DirectiveExecutor(DirectiveExecutorOptions options,
                                     directory::Directory& directory, ZoneLeaseKeeper& keeper,
                                     ShardDrain& drain, Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      directory_(directory),
      keeper_(keeper),
      drain_(drain),
      log_(log),
      moved_(metrics.Counter("shard_directives_total",
                             "Rebalance directives this shard handled, by outcome",
                             {{"outcome", "moved"}})),
      ignored_(metrics.Counter("shard_directives_total",
                               "Rebalance directives this shard handled, by outcome",
                               {{"outcome", "ignored"}})),
      failed_(metrics.Counter("shard_directives_total",
                              "Rebalance directives this shard handled, by outcome",
                              {{"outcome", "failed"}})) {
  RELEASE_ASSERT(!options_.shard_id.empty() && options_.poll_ms > 0,
                 "a directive executor needs a shard id and a positive poll interval");
}

DirectiveExecutor::~DirectiveExecutor() {
  Stop();
}

void DirectiveExecutor::Prune(const directory::Directive& directive, const char* why) {
  ignored_.Increment();
  log_.Info("rebalance directive ignored", {{"zone", directive.zone},
                                            {"to", directive.to},
                                            {"scope", directive.scope},
                                            {"epoch", directive.epoch},
                                            {"why", why}});
  (void)directory_.CompleteDirective(directive.zone, directive.from);
}

size_t DirectiveExecutor::Poll() {
  auto directives = directory_.ListDirectives(options_.shard_id);
  if (!directives.ok()) {
    log_.Debug("directives: cannot list", {{"error", directives.status().ToString()}});
    return 0;
  }
  size_t moved = 0;
  for (const directory::Directive& directive : *directives) {
    // The directory prunes expired ones and lists only ours; checked again, since acting on a
    // stale or foreign directive would move a zone nobody asked to move.
    if (directive.from != options_.shard_id) continue;  // not ours to retire either
    if (directive.ttl_ms <= 0) {
      Prune(directive, "expired");
      continue;
    }
    auto leader = directory_.LeaderOf(directive.scope);
    if (!leader.ok()) continue;  // cannot judge the fence now: next pass
    if (!leader->has_value() || (*leader)->term != directive.epoch) {
      Prune(directive, "fenced: its leader no longer leads at that term");
      continue;
    }
    if (directive.to == options_.shard_id) {
      Prune(directive, "the target is this shard");
      continue;
    }
    if (!keeper_.held().contains(directive.zone)) {
      Prune(directive, "the zone is not held here");
      continue;
    }
    log_.Info("placement: rebalance drain recommended", {{"zone", directive.zone},
                                                         {"from", directive.from},
                                                         {"to", directive.to},
                                                         {"scope", directive.scope},
                                                         {"epoch", directive.epoch}});
    auto result = drain_.DrainZone(directive.zone, directive.to);
    if (result.ok()) {
      ++moved;
      moved_.Increment();
      (void)directory_.StartCooldown(directive.zone, options_.cooldown_ms);
    } else {
      failed_.Increment();
      log_.Warn(
          "rebalance drain failed; the zone stays here",
          {{"zone", directive.zone}, {"to", directive.to}, {"error", result.status().ToString()}});
    }
    (void)directory_.CompleteDirective(directive.zone, directive.from);
  }
  return moved;
}

void DirectiveExecutor::Start() {
  RELEASE_ASSERT(!thread_.joinable(), "the directive executor already runs");
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      Poll();
      lock.lock();
      wake_.wait_for(lock, std::chrono::milliseconds(options_.poll_ms),
                     [this] { return stopping_; });
    }
  });
}

void DirectiveExecutor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace telos::shard
