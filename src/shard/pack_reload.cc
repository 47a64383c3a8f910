// Content hot reload across a fleet: the world's agent and the coordinator (pack_reload.h).
#include "telos/shard/pack_reload.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>

#include "telos/base/limits.h"
#include "telos/world/pack_diff.h"

namespace telos::shard {
namespace {

std::string Short(const std::string& hash) {
  return hash.substr(0, 12);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string ReloadSubject(const std::string& subject_prefix, const std::string& shard_id) {
  return subject_prefix + ".reload." + bus::SubjectToken(shard_id);
}

std::string PackRefusal(const std::string& ours,
                        const std::optional<directory::PackVersion>& version,
                        const std::vector<std::string>& peers, bool alone) {
  const bool reloading = version && version->reloading();
  auto in_reload = [&](const std::string& hash) {
    return reloading && (hash == version->hash || hash == version->previous_hash);
  };
  if (version && !alone) {
    if (reloading && !in_reload(ours)) {
      return "the fleet is reloading from pack " + version->previous_hash + " to " + version->hash +
             ", and this world's pack is neither";
    }
    if (!reloading && ours != version->hash) {
      return "the fleet runs pack " + version->hash + " (recorded by its last reload)";
    }
  }
  for (const std::string& peer : peers) {
    if (peer == ours) continue;
    // Mid-reload, worlds on the old pack and the new one run side by side for a moment.
    if (in_reload(peer) && in_reload(ours)) continue;
    return "a live world runs pack " + peer;
  }
  return "";
}

// ------------------------------------------------------------------ the world's agent

PackReloadAgent::PackReloadAgent(PackReloadAgentOptions options, bus::Bus& bus,
                                 world::WorldHost& host, BlockingRunner blocking, Refusal refusal,
                                 Logger& log)
    : options_(std::move(options)),
      bus_(bus),
      host_(host),
      blocking_(std::move(blocking)),
      refusal_(std::move(refusal)),
      log_(log) {}

PackReloadAgent::~PackReloadAgent() {
  Stop();
}

Status PackReloadAgent::Start() {
  auto subscription = bus_.Subscribe(
      ReloadSubject(options_.subject_prefix, options_.shard_id), [this](const bus::Message& m) {
        if (m.reply_to.empty()) return;  // a request always wants its answer
        Handle(DecodeReloadRequest(m.data), [&bus = bus_, m](ReloadAnswer answer) {
          (void)bus.Reply(m, EncodeReloadAnswer(answer));
        });
      });
  if (!subscription.ok()) return subscription.status();
  std::lock_guard lock(mu_);
  subscription_ = std::move(*subscription);
  return Status::Ok();
}

void PackReloadAgent::Stop() {
  std::unique_ptr<bus::Subscription> subscription;
  {
    std::lock_guard lock(mu_);
    subscription = std::move(subscription_);
  }
  subscription.reset();  // outside the lock: it waits for a handler in flight
  // Then for the work those handlers handed to the blocking runner: a check or an apply that
  // is still to call WorldHost::Reload would otherwise start a rebuild after the caller began
  // stopping zones.
  in_flight_->Close();
}

ReloadAnswer PackReloadAgent::Check(const ReloadRequest& request,
                                    std::shared_ptr<const world::Pack>* pack) {
  const std::shared_ptr<const world::Pack> running = host_.pack();
  ReloadAnswer answer;
  answer.shard = options_.shard_id;
  answer.running = running->content_hash;
  if (std::string why = refusal_ ? refusal_() : ""; !why.empty()) {
    answer.error = why;
    return answer;
  }
  std::vector<world::Problem> problems;
  Result<world::Pack> loaded = world::LoadPack(options_.content_dir, &problems);
  if (!loaded.ok()) {
    answer.error = "the pack in " + options_.content_dir + " is invalid";
    for (const world::Problem& problem : problems) answer.problems.push_back(problem.ToString());
    if (problems.empty()) answer.problems.push_back(loaded.status().ToString());
    return answer;
  }
  if (loaded->content_hash != request.hash) {
    answer.error = "the pack in " + options_.content_dir + " here is " + loaded->content_hash +
                   ", not the requested " + request.hash +
                   ": every world must have the same pack on its disk first";
    return answer;
  }
  if (auto diff = world::DiffPacks(*running, *loaded); !diff.ok()) {
    answer.error = diff.status().message();
    return answer;
  }
  *pack = std::make_shared<const world::Pack>(std::move(loaded).value());
  answer.ok = true;
  return answer;
}

void PackReloadAgent::Handle(const ReloadRequest& request,
                             std::function<void(ReloadAnswer)> answer) {
  if (request.op == ReloadRequest::Op::kUnknown) {
    answer(
        ReloadAnswer{.ok = false, .shard = options_.shard_id, .error = "unknown reload request"});
    return;
  }
  // Reading and validating a pack is file I/O: never on the bus's thread.
  blocking_([this, gate = in_flight_, shard = options_.shard_id, request,
             answer = std::move(answer)] {
    const InFlightGate::Pass pass = gate->TryEnter();
    if (!pass) {  // Stop() has begun (the agent may be gone): touch nothing of it
      return answer(ReloadAnswer{.ok = false, .shard = shard, .error = "this world is stopping"});
    }
    std::shared_ptr<const world::Pack> pack;
    ReloadAnswer checked = Check(request, &pack);
    if (!checked.ok || request.op == ReloadRequest::Op::kCheck) {
      if (!checked.ok) {
        log_.Warn("reload: refused", {{"hash", request.hash}, {"reason", checked.error}});
      }
      return answer(std::move(checked));
    }
    log_.Info("reload: applying", {{"from", checked.running}, {"to", pack->content_hash}});
    const std::string hash = pack->content_hash;
    Status reloading =
        // The rebuild may finish after Stop() (the host's zones run it): only the logger,
        // which outlives the agent, is used then.
        host_.Reload(pack,
                     [&log = log_, checked, hash, answer](world::WorldHost::ReloadReport report) {
                       ReloadAnswer done = checked;
                       done.running = hash;
                       done.rebuilt = report.rebuilt;
                       done.players = static_cast<int64_t>(report.players);
                       done.relocated = static_cast<int64_t>(report.relocated);
                       log.Info("reload: done", {{"hash", hash},
                                                 {"rebuilt", Join(report.rebuilt)},
                                                 {"players", done.players},
                                                 {"relocated", done.relocated}});
                       answer(std::move(done));
                     });
    if (!reloading.ok()) {
      checked.ok = false;
      checked.error = reloading.message();
      answer(std::move(checked));
    }
  });
}

// ------------------------------------------------------------------ the coordinator

namespace {

// Asks every shard at once and waits for every answer (each request ends by its timeout).
std::vector<ReloadAnswer> AskAll(bus::Bus& bus, const std::vector<directory::ShardInfo>& shards,
                                 const std::string& prefix, const ReloadRequest& request,
                                 int64_t timeout_ms) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
    std::vector<ReloadAnswer> answers;
  };
  auto waiter = std::make_shared<Waiter>();
  waiter->left = shards.size();
  waiter->answers.resize(shards.size());
  const std::string body = EncodeReloadRequest(request);
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string shard = shards[i].id;
    bus.Request(ReloadSubject(prefix, shard), body, std::chrono::milliseconds(timeout_ms),
                [waiter, i, shard](Result<std::string> reply) {
                  ReloadAnswer answer;
                  if (reply.ok()) {
                    answer = DecodeReloadAnswer(*reply);
                  } else if (reply.status().code() == StatusCode::kNotFound) {
                    answer.error =
                        "no reload agent answers (is it a world of this fleet, "
                        "connected to NATS?)";
                  } else {
                    answer.error = "no answer: " + reply.status().ToString();
                  }
                  if (answer.shard.empty()) answer.shard = shard;
                  std::lock_guard lock(waiter->mu);
                  waiter->answers[i] = std::move(answer);
                  if (--waiter->left == 0) waiter->cv.notify_all();
                });
  }
  std::unique_lock lock(waiter->mu);
  waiter->cv.wait(lock, [&] { return waiter->left == 0; });
  return waiter->answers;
}

void Describe(const ReloadAnswer& answer, bool apply, std::vector<std::string>* lines) {
  if (!answer.ok) {
    lines->push_back(answer.shard + ": refused: " + answer.error);
    for (const std::string& problem : answer.problems) lines->push_back("  " + problem);
    return;
  }
  if (!apply) {
    lines->push_back(answer.shard + ": ready (runs " + Short(answer.running) + ")");
    return;
  }
  lines->push_back(answer.shard + ": now runs " + Short(answer.running) + "; rebuilt " +
                   (answer.rebuilt.empty() ? std::string("no zone") : Join(answer.rebuilt)) + "; " +
                   std::to_string(answer.players) + " player(s) kept in place, " +
                   std::to_string(answer.relocated) + " moved to a start room");
}

}  // namespace

FleetReloadReport ReloadFleet(bus::Bus& bus, directory::Directory& directory,
                              const world::Pack& pack, const std::string& subject_prefix,
                              Logger& log) {
  FleetReloadReport report;
  if (!bus.connected()) {
    report.status = Status::Unavailable(
        "hot reload refused: the bus (NATS) is down, and hot reload is disabled until it is "
        "back; nothing changed");
    return report;
  }
  auto shards = directory.ListShards();
  auto version = shards.ok() ? directory.ReadPackVersion()
                             : Result<std::optional<directory::PackVersion>>(shards.status());
  if (!shards.ok() || !version.ok()) {
    report.status =
        Status::Unavailable("hot reload refused: the directory cannot be read (" +
                            (shards.ok() ? version.status() : shards.status()).ToString() +
                            "), and hot reload is disabled until it can; nothing changed");
    return report;
  }
  std::erase_if(*shards, [](const directory::ShardInfo& s) { return s.endpoint.empty(); });
  if (shards->empty()) {
    report.status = Status::FailedPrecondition("no live world to reload");
    return report;
  }
  if (shards->size() > limits::kReloadShardsMax) {
    report.status = Status::FailedPrecondition("more live worlds than one reload asks (" +
                                               std::to_string(limits::kReloadShardsMax) + ")");
    return report;
  }

  // 1. Every world checks; one refusal and nothing changes anywhere.
  const std::vector<ReloadAnswer> checked =
      AskAll(bus, *shards, subject_prefix, {ReloadRequest::Op::kCheck, pack.content_hash},
             limits::kReloadCheckTimeoutMs);
  size_t refused = 0;
  std::string previous;
  for (const ReloadAnswer& answer : checked) {
    Describe(answer, false, &report.lines);
    if (!answer.ok) ++refused;
    if (answer.ok && answer.running != pack.content_hash && previous.empty()) {
      previous = answer.running;
    }
  }
  if (refused > 0) {
    report.status = Status::FailedPrecondition(
        "hot reload refused: " + std::to_string(refused) + " of " + std::to_string(checked.size()) +
        " world(s) refused pack " + pack.content_hash + "; nothing changed");
    return report;
  }

  // 2. The directory names both packs: worlds on either are accepted while the reload runs.
  const std::string expected = *version ? (*version)->hash : "";
  if (previous.empty() && *version && (*version)->hash != pack.content_hash) {
    previous = (*version)->hash;
  }
  if (Status s = directory.SwapPackVersion(expected, {pack.content_hash, previous}); !s.ok()) {
    report.status = Status::FailedPrecondition(
        "hot reload refused: cannot record the reload in the directory: " + s.ToString() +
        "; nothing changed");
    return report;
  }
  log.Info("reload: fleet applying", {{"from", previous},
                                      {"to", pack.content_hash},
                                      {"worlds", static_cast<int64_t>(shards->size())}});

  // 3. Every world applies. A world that joined meanwhile (on the old pack, accepted while the
  // directory names both) is asked too: the shards are listed again after each round, and the
  // new pack alone is recorded only once every live world said it runs it — else that world
  // would keep the old pack and every world booting later would be refused.
  std::map<std::string, ReloadAnswer> answered;  // by shard id
  std::vector<directory::ShardInfo> to_ask = *shards;
  size_t failed = 0;
  for (size_t round = 0; !to_ask.empty(); ++round) {
    if (round > limits::kReloadJoinRoundsMax ||
        answered.size() + to_ask.size() > limits::kReloadShardsMax) {
      report.status = Status::Internal(
          "worlds kept joining while pack " + pack.content_hash +
          " was applied; the directory still records the reload as under way (both packs "
          "accepted): reload again");
      return report;
    }
    const std::vector<ReloadAnswer> applied =
        AskAll(bus, to_ask, subject_prefix, {ReloadRequest::Op::kApply, pack.content_hash},
               limits::kReloadApplyTimeoutMs);
    for (size_t i = 0; i < applied.size(); ++i) {
      const ReloadAnswer& answer = applied[i];
      Describe(answer, true, &report.lines);
      if (!answer.ok || answer.running != pack.content_hash) ++failed;
      answered[to_ask[i].id] = answer;
    }
    auto live = directory.ListShards();
    if (!live.ok()) {
      report.status = Status::Internal(
          "cannot list the worlds to confirm they all run pack " + pack.content_hash + " (" +
          live.status().ToString() +
          "); the directory still records the reload as under way (both packs accepted): "
          "reload again");
      return report;
    }
    to_ask.clear();
    for (directory::ShardInfo& shard : *live) {
      if (!shard.endpoint.empty() && answered.count(shard.id) == 0) to_ask.push_back(shard);
    }
  }
  if (failed > 0) {
    report.status = Status::Internal(
        std::to_string(failed) + " of " + std::to_string(answered.size()) +
        " world(s) did not apply pack " + pack.content_hash +
        "; the directory still records the reload as under way (both packs accepted): fix "
        "them and reload again");
    return report;
  }
  if (Status s = directory.SwapPackVersion(pack.content_hash, {pack.content_hash, ""}); !s.ok()) {
    report.status = Status::Internal("every world runs pack " + pack.content_hash +
                                     ", but the directory could not record it: " + s.ToString() +
                                     "; reload again");
    return report;
  }
  report.status = Status::Ok();
  return report;
}

}  // namespace telos::shard
