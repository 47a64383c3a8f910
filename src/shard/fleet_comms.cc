#include "telos/shard/fleet_comms.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include "telos/auth/documents.h"
#include "telos/base/limits.h"
#include "telos/base/utf8.h"
#include "telos/shard/fleet_messages.h"
#include "telos/world/character_state.h"
#include "telos/world/mail_ping.h"

namespace telos::shard {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// Player text and names as bus JSON. The serializer copies invalid UTF-8 as it is and the far
// shard's parser refuses it, so a line with one bad byte would vanish on the way: repaired first.
json::string Text(std::string_view text) {
  return json::string(SanitizeUtf8(text));
}

constexpr const char* kBusDown =
    "Your words cannot reach the rest of the world right now (the message bus is down); players "
    "on this shard can still hear you.";

}  // namespace

std::string SubjectPrefixFor(const std::string& directory_namespace) {
  return "telos." + bus::SubjectToken(directory_namespace);
}

FleetComms::FleetComms(FleetCommsOptions options, bus::Bus& bus, directory::Directory& directory,
                       world::WorldHost& host, asio::io_context& io, BlockingRunner blocking,
                       Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      bus_(bus),
      directory_(directory),
      host_(host),
      io_(io),
      blocking_(std::move(blocking)),
      log_(log),
      tells_sent_(metrics.Counter("comms_tells_total", "Tells sent to players on other shards",
                                  {{"outcome", "delivered"}})),
      tells_refused_(metrics.Counter("comms_tells_total", "Tells sent to players on other shards",
                                     {{"outcome", "refused"}})),
      channel_lines_(
          metrics.Counter("comms_channel_lines_total", "Channel lines received from other shards")),
      mail_pings_(metrics.Counter("comms_mail_pings_total",
                                  "Mail pings published for connected recipients")),
      announcements_(metrics.Counter("comms_announcements_total",
                                     "Announcements received from other shards or the director")),
      party_sent_(metrics.Counter("comms_party_messages_total",
                                  "Party messages sent to players on other shards",
                                  {{"outcome", "delivered"}})),
      party_refused_(metrics.Counter("comms_party_messages_total",
                                     "Party messages sent to players on other shards",
                                     {{"outcome", "refused"}})) {}

FleetComms::~FleetComms() {
  Stop();
}

std::string FleetComms::PlayerSubject(const std::string& name) const {
  return options_.subject_prefix + ".player." + bus::SubjectToken(world::NameKey(name));
}

Status FleetComms::Start() {
  auto subscription = bus_.Subscribe(options_.subject_prefix + ".chan.>",
                                     [this](const bus::Message& m) { OnChannelMessage(m); });
  if (!subscription.ok()) return subscription.status();
  auto announce = bus_.Subscribe(AnnouncementSubject(options_.subject_prefix),
                                 [this](const bus::Message& m) { OnAnnouncement(m); });
  if (!announce.ok()) return announce.status();
  {
    std::lock_guard lock(mu_);
    channels_ = std::move(*subscription);
    announce_ = std::move(*announce);
  }
  SchedulePresenceRefresh();
  return Status::Ok();
}

void FleetComms::Stop() {
  // Presence writes, timers and replies already running finish first; later ones do nothing.
  in_flight_->Close();
  std::map<std::string, Resident> residents;
  std::unique_ptr<bus::Subscription> channels;
  std::unique_ptr<bus::Subscription> announce;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    residents.swap(residents_);
    channels = std::move(channels_);
    announce = std::move(announce_);
  }
  // Destroyed outside the lock: a subscription's destructor waits for its handler.
}

// ---------------------------------------------------------------- residency

void FleetComms::Arrived(const std::string& name_key, const std::string& gate) {
  auto subscription =
      bus_.Subscribe(PlayerSubject(name_key),
                     [this, name_key](const bus::Message& m) { OnPlayerMessage(name_key, m); });
  if (!subscription.ok()) {
    log_.Warn("cannot subscribe a player's subject",
              {{"character", name_key}, {"error", subscription.status().ToString()}});
  }
  std::unique_ptr<bus::Subscription> replaced;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    Resident& resident = residents_[name_key];
    replaced = std::move(resident.subscription);
    resident.subscription = subscription.ok() ? std::move(*subscription) : nullptr;
    resident.gate = gate;
  }
  if (!gate.empty()) WritePresence(name_key, gate);
}

void FleetComms::Attached(const std::string& name_key, const std::string& gate) {
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(name_key);
    if (it == residents_.end()) return;
    it->second.gate = gate;
  }
  WritePresence(name_key, gate);
}

void FleetComms::LinkDead(const std::string& name_key) {
  std::string gate;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(name_key);
    if (it == residents_.end()) return;
    gate.swap(it->second.gate);
  }
  if (!gate.empty()) ClearPresence(name_key, gate);
}

void FleetComms::Left(const std::string& name_key) {
  Resident gone;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(name_key);
    if (it == residents_.end()) return;
    gone = std::move(it->second);
    residents_.erase(it);
  }
  if (!gone.gate.empty()) ClearPresence(name_key, gone.gate);
}

void FleetComms::WritePresence(const std::string& name_key, const std::string& gate) {
  blocking_(in_flight_->Wrap([this, name_key, gate] {
    const Status s =
        directory_.SetPresence(name_key, gate, options_.shard_id, options_.presence_ttl_ms);
    if (!s.ok())
      log_.Debug("presence not written", {{"character", name_key}, {"error", s.ToString()}});
  }));
}

void FleetComms::ClearPresence(const std::string& name_key, const std::string& gate) {
  blocking_(in_flight_->Wrap([this, name_key, gate] {
    // FailedPrecondition: they connected through another gate meanwhile, which owns it now.
    (void)directory_.ClearPresence(name_key, gate);
  }));
}

void FleetComms::SchedulePresenceRefresh() {
  auto timer = std::make_shared<asio::steady_timer>(
      io_, std::chrono::milliseconds(std::max<int64_t>(options_.presence_ttl_ms / 3, 1)));
  timer->async_wait(in_flight_->Wrap([this, timer](boost::system::error_code ec) {
    if (ec) return;
    std::vector<std::pair<std::string, std::string>> connected;
    {
      std::lock_guard lock(mu_);
      for (const auto& [key, resident] : residents_) {
        if (!resident.gate.empty()) connected.emplace_back(key, resident.gate);
      }
    }
    for (const auto& [key, gate] : connected) WritePresence(key, gate);
    SchedulePresenceRefresh();
  }));
}

// ---------------------------------------------------------------- tells

void FleetComms::Tell(const std::string& from, const std::string& to, const std::string& text,
                      std::function<void(std::string)> answer) {
  if (!bus_.connected()) {
    tells_refused_.Increment();
    answer(kBusDown);
    return;
  }
  json::object request{{"kind", "tell"}, {"from", Text(from)}, {"text", Text(text)}};
  bus_.Request(PlayerSubject(to), json::serialize(request),
               std::chrono::milliseconds(options_.tell_timeout_ms),
               in_flight_->Wrap([this, to, text, answer](Result<std::string> reply) {
                 if (reply.ok()) {
                   const TellReply body = DecodeTellReply(*reply);
                   const std::string name = body.name.empty() ? to : body.name;
                   if (body.delivered) {
                     tells_sent_.Increment();
                     answer("You tell " + name + ", '" + text + "'");
                   } else {
                     tells_refused_.Increment();
                     answer(name + " cannot hear you right now.");
                   }
                   return;
                 }
                 tells_refused_.Increment();
                 switch (reply.status().code()) {
                   case StatusCode::kNotFound: AnswerUnreachable(to, answer, true); return;
                   case StatusCode::kUnavailable: answer(kBusDown); return;
                   default: answer(to + " cannot hear you right now."); return;
                 }
               }));
}

// ---------------------------------------------------------------- staff orders

void FleetComms::Staff(const world::StaffOrder& order,
                       std::function<void(world::StaffOutcome)> done) {
  const auto fail = [&done](Status status, std::string text) {
    world::StaffOutcome outcome;
    outcome.status = std::move(status);
    outcome.text = std::move(text);
    done(std::move(outcome));
  };
  if (!bus_.connected()) return fail(Status::Unavailable("bus down"), kBusDown);
  world::StaffOrder signed_order = order;
  signed_order.origin_world = options_.shard_id;
  if (staff_auth_.assertion_of) {
    signed_order.issuer_assertion = staff_auth_.assertion_of(world::NameKey(order.issuer));
  }
  const std::string target = order.target;
  bus_.Request(PlayerSubject(target), EncodeStaffOrder(signed_order),
               std::chrono::milliseconds(options_.tell_timeout_ms),
               in_flight_->Wrap([target, done](Result<std::string> reply) {
                 world::StaffOutcome outcome;
                 if (reply.ok()) {
                   outcome = DecodeStaffOutcome(*reply);
                 } else if (reply.status().code() == StatusCode::kNotFound) {
                   // No world answers for them: nobody of that name plays anywhere now.
                   outcome.status = reply.status();
                   outcome.text = "Nobody called '" + target + "' is online.";
                 } else if (reply.status().code() == StatusCode::kDeadlineExceeded) {
                   // Their world may have applied it and its answer been lost: say so.
                   outcome.status = reply.status();
                   outcome.text = "No answer about " + target +
                                  " in time: the order may or may not have been applied.";
                 } else {
                   outcome.status = reply.status();
                   outcome.text = target + " cannot be reached right now; try again.";
                 }
                 done(std::move(outcome));
               }));
}

Status FleetComms::VerifyStaffOrder(world::StaffOrder* order) const {
  if (!staff_auth_.verify_keys || staff_auth_.clock == nullptr) {
    return Status::PermissionDenied("this world verifies no staff orders");
  }
  if (order->issuer_assertion.empty()) {
    return Status::PermissionDenied("no issuer assertion (missing, oversize or unreadable)");
  }
  // Worlds are never sent the gate's renewals, so the issuer's assertion has usually expired:
  // it proves who granted the roles, and kStaffAssertionStaleMsMax bounds how old that proof is.
  auto claim = auth::VerifyStaleAssertion(*staff_auth_.verify_keys, order->issuer_assertion,
                                          *staff_auth_.clock, limits::kStaffAssertionStaleMsMax);
  if (!claim.ok()) return claim.status();
  if (world::NameKey(claim->character) != world::NameKey(order->issuer)) {
    return Status::PermissionDenied("the assertion names " + claim->character + ", not " +
                                    order->issuer);
  }
  const Roles needed = world::StaffRoleFor(order->kind);
  if (!HasRole(claim->roles, needed)) {
    return Status::PermissionDenied("the issuer's signed roles (" + RoleNames(claim->roles) +
                                    ") do not include " + RoleNames(needed));
  }
  order->issuer = claim->character;  // the signed spelling
  order->issuer_roles = claim->roles;
  return Status::Ok();
}

void FleetComms::OnStaffOrder(const std::string& name_key, world::StaffOrder order,
                              const bus::Message& message) {
  order.target = name_key;
  const auto refuse = [&](const Status& why, std::string text) {
    log_.Warn("security: staff order refused",
              {{"character", name_key},
               {"order", std::string(world::StaffKindName(order.kind))},
               {"from", order.issuer},
               {"world", order.origin_world},
               {"error", why.ToString()}});
    host_.AuditReceivedStaff(order, name_key, why);
    world::StaffOutcome refused;
    refused.status = why;
    refused.text = std::move(text);
    (void)bus_.Reply(message, EncodeStaffOutcome(refused));
  };
  // Nothing in the order is believed before its assertion is: a forger's order is refused
  // whatever it claims, and audited here as refused.
  if (Status s = VerifyStaffOrder(&order); !s.ok()) {
    return refuse(s, "That order was refused: it did not come from staff.");
  }
  if (Status s = host_.CheckReceivedStaff(&order); !s.ok()) {
    return refuse(s, "That order was refused by " + name_key + "'s world: " + s.message() + ".");
  }
  log_.Info("staff order from another world",
            {{"character", name_key},
             {"order", std::string(world::StaffKindName(order.kind))},
             {"from", order.issuer},
             {"world", order.origin_world}});
  // The outcome is sent from the target's zone once applied, and audited here as applied; a
  // target who left in the meantime is answered at once.
  const bus::Message request = message;
  const Status s = host_.ApplyStaff(
      order, in_flight_->Wrap([this, request, order, name_key](world::StaffOutcome outcome) {
        host_.AuditReceivedStaff(
            order, outcome.target_name.empty() ? name_key : outcome.target_name, outcome.status);
        (void)bus_.Reply(request, EncodeStaffOutcome(outcome));
      }));
  if (!s.ok()) {
    host_.AuditReceivedStaff(order, name_key, s);
    world::StaffOutcome outcome;
    outcome.status = s;
    outcome.text = name_key + " cannot be reached right now; try again.";
    (void)bus_.Reply(request, EncodeStaffOutcome(outcome));
  }
}

void FleetComms::Party(const std::string& to, const std::string& message,
                       std::function<void(std::string)> failed) {
  if (!bus_.connected()) {
    party_refused_.Increment();
    failed(to + " cannot be reached right now (the message bus is down).");
    return;
  }
  json::object request{{"kind", "party"}, {"from", ""}, {"text", Text(message)}};
  bus_.Request(PlayerSubject(to), json::serialize(request),
               std::chrono::milliseconds(options_.tell_timeout_ms),
               in_flight_->Wrap([this, to, failed](Result<std::string> reply) {
                 if (reply.ok()) {
                   const TellReply body = DecodeTellReply(*reply);
                   if (body.delivered) {
                     party_sent_.Increment();
                   } else {
                     party_refused_.Increment();
                     failed((body.name.empty() ? to : body.name) + " cannot be reached right now.");
                   }
                   return;
                 }
                 party_refused_.Increment();
                 switch (reply.status().code()) {
                   case StatusCode::kNotFound: AnswerUnreachable(to, failed, false); return;
                   case StatusCode::kUnavailable:
                     failed(to + " cannot be reached right now (the message bus is down).");
                     return;
                   default: failed(to + " cannot be reached right now."); return;
                 }
               }));
}

void FleetComms::AnswerUnreachable(const std::string& to,
                                   const std::function<void(std::string)>& answer,
                                   bool suggest_mail) {
  blocking_(in_flight_->Wrap([this, to, answer, suggest_mail] {
    auto placement = directory_.LookupPlacement(world::NameKey(to));
    if (!placement.ok()) {
      answer("Nobody called '" + to + "' can be reached right now.");
    } else if (!placement->has_value()) {
      answer("There is no player called '" + to + "'.");
    } else if (suggest_mail) {
      answer(to + " is not online. ('mail send " + to + " <message>' reaches them later.)");
    } else {
      answer(to + " is not online.");
    }
  }));
}

void FleetComms::OnPlayerMessage(const std::string& name_key, const bus::Message& message) {
  const PlayerMessage body = DecodePlayerMessage(message.data);
  if (body.kind == PlayerMessage::Kind::kTell) {
    std::string name;
    bool connected = false;
    {
      std::lock_guard lock(mu_);
      auto it = residents_.find(name_key);
      connected = it != residents_.end() && !it->second.gate.empty();
    }
    Status s = connected ? host_.DeliverTell(body.from, name_key, body.text, &name)
                         : Status::Unavailable("link-dead");
    if (name.empty()) name = name_key;
    json::object reply{{"outcome", s.ok() ? "delivered" : "unavailable"}, {"name", Text(name)}};
    if (!message.reply_to.empty()) (void)bus_.Reply(message, json::serialize(reply));
  } else if (body.kind == PlayerMessage::Kind::kStaff) {
    if (message.reply_to.empty()) return;
    OnStaffOrder(name_key, body.staff, message);
  } else if (body.kind == PlayerMessage::Kind::kParty) {
    // Delivered while they are hosted here, link-dead or not: a party message changes their
    // copy of the party, which must not wait for their gate.
    Status s = host_.DeliverParty(name_key, world::DecodePartyMessage(body.text));
    json::object reply{{"outcome", s.ok() ? "delivered" : "unavailable"}, {"name", ""}};
    if (!message.reply_to.empty()) (void)bus_.Reply(message, json::serialize(reply));
  } else if (body.kind == PlayerMessage::Kind::kMail) {
    bool connected = false;
    {
      std::lock_guard lock(mu_);
      auto it = residents_.find(name_key);
      connected = it != residents_.end() && !it->second.gate.empty();
    }
    // A link-dead or still-arriving character sees it at their next login instead.
    if (connected) (void)host_.Notify(name_key, world::PingingMail::PingLine(body.from));
  }
}

// ---------------------------------------------------------------- channels

bool FleetComms::Channel(const std::string& channel, const std::string& from,
                         const std::string& text) {
  json::object line{{"origin", Text(options_.shard_id)},
                    {"channel", Text(channel)},
                    {"from", Text(from)},
                    {"text", Text(text)}};
  return bus_
      .Publish(options_.subject_prefix + ".chan." + bus::SubjectToken(channel),
               json::serialize(line))
      .ok();
}

bool FleetComms::GuildLine(const std::string& guild, const std::string& from,
                           const std::string& text, const std::vector<std::string>& members) {
  json::array to;
  for (const std::string& key : members) to.emplace_back(Text(key));
  json::object line{{"origin", Text(options_.shard_id)},
                    {"channel", "guild"},
                    {"guild", Text(guild)},
                    {"from", Text(from)},
                    {"text", Text(text)},
                    {"to", std::move(to)}};
  return bus_.Publish(options_.subject_prefix + ".chan.guild", json::serialize(line)).ok();
}

void FleetComms::OnChannelMessage(const bus::Message& message) {
  const ChannelLine line = DecodeChannelLine(message.data);
  if (line.origin == options_.shard_id) return;  // delivered here when it was said
  if (line.channel.empty()) return;
  channel_lines_.Increment();
  if (line.channel == "guild") {
    // For the members named, wherever they are; a world hosting none of them shows nothing.
    if (!line.guild.empty()) host_.DeliverGuildLine(line.guild, line.from, line.text, line.to);
    return;
  }
  host_.DeliverChannel(line.channel, line.from, line.text);
}

// ---------------------------------------------------------------- announcements

bool FleetComms::Broadcast(const std::string& zone, const std::string& text) {
  const std::string data = EncodeAnnouncement({options_.shard_id, zone, text});
  return bus_.Publish(AnnouncementSubject(options_.subject_prefix), data).ok();
}

void FleetComms::OnAnnouncement(const bus::Message& message) {
  const Announcement announcement = DecodeAnnouncement(message.data);
  if (announcement.origin == options_.shard_id) return;  // delivered here when it was made
  if (announcement.text.empty()) return;
  announcements_.Increment();
  host_.DeliverAnnouncement(announcement.zone, announcement.text);
}

// ---------------------------------------------------------------- mail pings

void FleetComms::PingMail(const std::string& recipient, const std::string& sender) {
  blocking_(in_flight_->Wrap([this, recipient, sender] {
    // Sent whether or not the directory shows them present: a presence write lost to a
    // directory blip would otherwise cost a connected player the ping. The shard hosting them
    // decides (OnPlayerMessage); nobody hosting them, nobody hears it, and the letter is
    // announced at their next login.
    json::object ping{{"kind", "mail"}, {"from", Text(sender)}};
    if (bus_.Publish(PlayerSubject(recipient), json::serialize(ping)).ok()) {
      mail_pings_.Increment();
    }
  }));
}

}  // namespace telos::shard
