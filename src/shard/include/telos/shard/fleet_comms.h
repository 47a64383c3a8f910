// FleetComms: tells, channels and mail pings between the shards of a fleet, over the bus (NATS
// core: at-most-once, which is what a chat line wants), and the presence roster they consult.
//
// Party messages (world/party.h) travel like tells: a request on the recipient's subject.
//
// Subjects (DESIGN.md invariant 7: presence never routes):
//   <prefix>.player.<token>   one per resident player, subscribed by the shard hosting them;
//                             <token> is bus::SubjectToken(name key) — always derived from the
//                             recipient's sanitized name, never from a roster entry.
//   <prefix>.chan.<token>     channel lines; every shard subscribes to <prefix>.chan.>.
//   <prefix>.announce         scoped announcements (WorldHost::Announce), world-wide or for
//                             one zone's players; every shard subscribes. Delivered here first,
//                             like a channel line, and skipped by origin when it comes back.
// A tell to a player not on this shard is a request on their subject. The hosting shard
// delivers it and answers; "no responders" means nobody hosts them, and then the placement
// record — the existence oracle — tells "not online" (a record, tombstoned or routing elsewhere)
// from "no such player" (no record). A channel line is delivered here first and published for
// the other shards, which skip their own lines by origin. A mail ping is published to the
// recipient's subject when the presence roster shows them connected (or cannot be read).
//
// Presence: the shard writes {player, gate, shard} with a TTL when a player attaches, refreshes
// every TTL/3, and clears it when they go link-dead or leave.
//
// Degradation: while the bus is down (NATS unreachable) tells to other shards are refused with
// a message, channel lines reach this shard only (WorldHost tells the speaker), pings are
// skipped; nothing queues, and everything works again once the bus reconnects.
//
// Threading: every method is thread-safe and non-blocking; directory calls run on `blocking`,
// bus handlers on the bus's threads. Stop() before the host goes away.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "telos/auth/keys.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/bus/bus.h"
#include "telos/directory/directory.h"
#include "telos/world/world_host.h"

namespace telos::shard {

struct FleetCommsOptions {
  std::string shard_id;
  // Every subject starts with it; fleets sharing one NATS must differ (see SubjectPrefixFor).
  std::string subject_prefix = "telos.telos";
  int64_t tell_timeout_ms = 2'000;
  int64_t presence_ttl_ms = directory::kPresenceTtlMsDefault;
};

// What staff orders across worlds need. The issuing side sends the issuer's signed login
// assertion with each order; the target's side believes an order only when that assertion
// verifies under `verify_keys` (allowing kStaffAssertionStaleMsMax past its expiry, limits.h
// says why), names the issuer and carries the role the order needs (world::StaffRoleFor).
struct StaffAuth {
  // The serialized assertion the character `name_key` plays on here; empty when none.
  std::function<std::string(const std::string& name_key)> assertion_of;
  // The account service's keys; nullopt: every order from another world is refused.
  std::optional<auth::KeyRing> verify_keys;
  const Clock* clock = nullptr;  // REQUIRES: set with verify_keys; outlives the comms
};

// "telos.<token of the directory namespace>": one fleet's subjects, matching its Redis keys.
std::string SubjectPrefixFor(const std::string& directory_namespace);

class FleetComms final : public world::RemoteComms, public world::RemoteBroadcasts {
 public:
  FleetComms(FleetCommsOptions options, bus::Bus& bus, directory::Directory& directory,
             world::WorldHost& host, boost::asio::io_context& io, BlockingRunner blocking,
             Logger& log, Metrics& metrics);
  ~FleetComms() override;

  // REQUIRES: before Start(). Without it, orders go out unsigned and none is accepted.
  void SetStaffAuth(StaffAuth staff_auth) { staff_auth_ = std::move(staff_auth); }

  // Subscribes to the channels and starts refreshing presence.
  Status Start();
  // Drops every subscription; no handler runs after it returns.
  void Stop();

  // ---- residency, reported by WorldShard
  // The player is hosted here now, attached through `gate` (empty: waiting for a gate).
  void Arrived(const std::string& name_key, const std::string& gate);
  // Attached (again) through `gate`.
  void Attached(const std::string& name_key, const std::string& gate);
  // Their gate is gone: still hosted, not connected.
  void LinkDead(const std::string& name_key);
  // No longer hosted here (quit, handed over, removed).
  void Left(const std::string& name_key);

  // ---- world::RemoteComms
  void Tell(const std::string& from, const std::string& to, const std::string& text,
            std::function<void(std::string)> answer) override;
  bool Channel(const std::string& channel, const std::string& from,
               const std::string& text) override;
  // A staff order for a player on another world: a request on their subject, with the issuer's
  // assertion (StaffAuth), verified and bounds-checked there (WorldHost::CheckReceivedStaff),
  // applied by the world they play on (WorldHost::ApplyStaff), audited there too, and answered
  // with the outcome. No answer in time is an unknown outcome (DeadlineExceeded), not a failure.
  void Staff(const world::StaffOrder& order,
             std::function<void(world::StaffOutcome)> done) override;
  // A party message is a request on the recipient's subject, as a tell is, and fails the
  // same ways ("no responders": the placement record says whether they exist).
  void Party(const std::string& to, const std::string& message,
             std::function<void(std::string)> failed) override;
  // Guild chat is one publish on <prefix>.chan.guild naming the members it is for; each world
  // shows it to those it hosts.
  bool GuildLine(const std::string& guild, const std::string& from, const std::string& text,
                 const std::vector<std::string>& members) override;

  // ---- world::RemoteBroadcasts
  bool Broadcast(const std::string& zone, const std::string& text) override;

  // A letter to `recipient` was accepted: ping them if they are connected somewhere.
  void PingMail(const std::string& recipient, const std::string& sender);

  std::string PlayerSubject(const std::string& name) const;

 private:
  struct Resident {
    std::string gate;  // empty while link-dead
    std::unique_ptr<bus::Subscription> subscription;
  };
  void OnPlayerMessage(const std::string& name_key, const bus::Message& message);
  void OnChannelMessage(const bus::Message& message);
  void OnAnnouncement(const bus::Message& message);
  void OnStaffOrder(const std::string& name_key, world::StaffOrder order,
                    const bus::Message& message);
  // Ok when `order` carries a valid assertion of its issuer with the role its kind needs; then
  // order->issuer_roles holds the signed roles.
  Status VerifyStaffOrder(world::StaffOrder* order) const;
  // After "no responders": what the placement record says about `to`.
  // `suggest_mail`: a tell's answer points at mail; a party message's does not.
  void AnswerUnreachable(const std::string& to, const std::function<void(std::string)>& answer,
                         bool suggest_mail);
  void WritePresence(const std::string& name_key, const std::string& gate);
  void ClearPresence(const std::string& name_key, const std::string& gate);
  void SchedulePresenceRefresh();

  const FleetCommsOptions options_;
  StaffAuth staff_auth_;  // set before Start(), read-only after
  bus::Bus& bus_;
  directory::Directory& directory_;
  world::WorldHost& host_;
  boost::asio::io_context& io_;
  const BlockingRunner blocking_;
  Logger& log_;
  prometheus::Counter& tells_sent_;
  prometheus::Counter& tells_refused_;
  prometheus::Counter& channel_lines_;
  prometheus::Counter& mail_pings_;
  prometheus::Counter& announcements_;
  prometheus::Counter& party_sent_;
  prometheus::Counter& party_refused_;
  // Stop() waits for the blocking tasks, timers and bus replies in flight; later ones do nothing.
  std::shared_ptr<InFlightGate> in_flight_ = InFlightGate::Make();

  mutable std::mutex mu_;
  std::map<std::string, Resident> residents_;    // guarded by mu_; by name key
  std::unique_ptr<bus::Subscription> channels_;  // guarded by mu_
  std::unique_ptr<bus::Subscription> announce_;  // guarded by mu_
  bool stopped_ = false;                         // guarded by mu_
};

}  // namespace telos::shard
