#include "telos/shard/world_shard.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "play_stream.h"
#include "telos/shard/pack_reload.h"
#include "telos/world/character_state.h"

#include "transport_free.h"  // last: nothing above may bring gRPC in

namespace telos::shard {
namespace asio = boost::asio;
namespace {
constexpr size_t kControlBytes = 64;           // a reply, redirect or notice in a frame
constexpr int64_t kDescribeDeadlineMs = 1000;  // one peer's answer at boot
// A zone owner another shard can be sent to: its registration has not lapsed (an owner whose
// registration lapsed comes back from the directory without an endpoint).
bool LiveOwner(const directory::ZoneOwner& owner) {
  return !owner.shard_id.empty() && !owner.endpoint.empty();
}

// A claim whose answer was lost with the store (it went away mid-write) may or may not have
// been applied, and the character is not resident here either way: the login is retried. The
// gate retries Unavailable on its own; any other refusal would drop the player. A retried claim
// mints a newer owner_epoch, fencing whatever the lost one may have applied (nothing was saved
// under it). Other errors pass as they are.
Status LoginRetryable(const Status& claim) {
  if (claim.code() == StatusCode::kUnknownResult || claim.code() == StatusCode::kDeadlineExceeded) {
    return Status::Unavailable("the character store did not confirm the claim; try again (" +
                               claim.message() + ")");
  }
  return claim;
}
}  // namespace

WorldShard::WorldShard(WorldShardOptions options, world::WorldHost& host,
                       directory::Directory& directory, store::CharacterStore& characters,
                       StorePersistence& persistence, const auth::KeyRing& assertion_keys,
                       const auth::SigningKey& handoff_key, WorldPeers& peers, asio::io_context& io,
                       BlockingRunner blocking, const Clock& clock, Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      host_(host),
      directory_(directory),
      characters_(characters),
      persistence_(persistence),
      assertion_keys_(assertion_keys),
      handoff_key_(handoff_key),
      handoff_verify_keys_(handoff_key.verify_key()),
      peers_(peers),
      io_(io),
      blocking_(std::move(blocking)),
      clock_(clock),
      log_(log),
      placements_(directory, log, metrics),
      handoffs_out_(metrics.Counter("handoffs_out_total", "Players handed to another shard")),
      handoffs_in_(metrics.Counter("handoffs_in_total", "Players received from another shard")),
      handoffs_refused_(
          metrics.Counter("handoffs_refused_total", "Handoffs refused (stale, bad, not owner)")),
      attaches_refused_(
          metrics.Counter("attaches_refused_total", "Session attaches refused by this shard")),
      outputs_dropped_(metrics.Counter("play_outputs_dropped_total",
                                       "Output shed for a gate too far behind to take it")),
      handoff_ms_(metrics.Histogram("handoff_ms", "Source-side handoff time, freeze to redirect",
                                    {1, 2, 5, 10, 20, 50, 100, 250, 1000})),
      in_flight_(InFlightGate::Make()) {}

WorldShard::~WorldShard() {
  Stop();
}

void WorldShard::Start() {
  placements_.Start();
  blocking_(in_flight_->Wrap([this] { RefreshRoutes(); }));
  ScheduleRefresh();
}

void WorldShard::BeginDrain() {
  std::lock_guard lock(mu_);
  draining_ = true;
}

void WorldShard::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  // The tasks and timers already started finish; later ones are refused or do nothing.
  in_flight_->Close();
  placements_.Stop();
}

bool WorldShard::Spawn(std::function<void()> task) {
  // The pass is taken now, not when the pool gets to the task: a task queued before Stop()
  // still runs, and Stop() waits for it. Shared, because a BlockingRunner's task is copyable.
  auto pass = std::make_shared<InFlightGate::Pass>(in_flight_->TryEnter());
  if (!*pass) return false;
  blocking_([pass, task = std::move(task)] { task(); });
  return true;
}

size_t WorldShard::residents() const {
  std::lock_guard lock(mu_);
  return residents_.size();
}

size_t WorldShard::streams() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& weak : streams_) {
    if (auto s = weak.lock(); s && s->alive()) ++n;
  }
  return n;
}

// ------------------------------------------------------------------ routes

void WorldShard::ScheduleRefresh() {
  auto timer = std::make_shared<asio::steady_timer>(
      io_, std::chrono::milliseconds(options_.route_refresh_ms));
  timer->async_wait(in_flight_->Wrap([this, timer](boost::system::error_code ec) {
    if (ec) return;
    blocking_(in_flight_->Wrap([this] { RefreshRoutes(); }));
    ScheduleRefresh();
  }));
}

void WorldShard::RefreshRoutes() {
  std::map<std::string, directory::ZoneOwner> owners;
  const auto running = host_.RunningZones();
  const std::shared_ptr<const world::Pack> pack = host_.pack();  // a reload may swap it
  for (const auto& zone : pack->zones) {
    if (zone.id == options_.lobby_zone) continue;
    if (std::find(running.begin(), running.end(), zone.id) != running.end()) continue;
    auto owner = directory_.OwnerOfZone(zone.id);
    if (!owner.ok()) return;  // directory unreachable: keep the last view
    if (*owner && (*owner)->shard_id != options_.shard_id && LiveOwner(**owner)) {
      owners[zone.id] = **owner;
    }
  }
  std::lock_guard lock(mu_);
  remote_owners_.swap(owners);
}

bool WorldShard::IsRemote(const std::string& zone) const {
  std::lock_guard lock(mu_);
  return remote_owners_.count(zone) != 0;
}

// ------------------------------------------------------------------ residency and quit

void WorldShard::Resident(const std::string& name_key, const std::string& zone) {
  directory::Placement placement;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(name_key);
    if (it == residents_.end()) return;
    it->second.zone = zone;
    if (it->second.ephemeral) return;  // the real character's placement stays as it was
    placement = {zone, it->second.placement_epoch, it->second.nonce, options_.shard_id};
  }
  placements_.Register(name_key, std::move(placement));
}

void WorldShard::Quit(const std::string& name_key, const std::string& zone) {
  // The zone has saved the character; the disconnect output is on its way to the gate. Once
  // stopped, the shard registers nothing more (its placement writer has stopped too).
  (void)Spawn([this, name_key, zone] { Forget(name_key, zone, true); });
}

void WorldShard::Forget(const std::string& name_key, const std::string& zone, bool tombstone) {
  ResidentEntry entry;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(name_key);
    if (it == residents_.end()) return;
    entry = std::move(it->second);
    residents_.erase(it);
  }
  if (auto [stream, session] = entry.sink->binding(); stream) stream->UnbindSession(session);
  if (comms_ != nullptr) comms_->Left(name_key);
  persistence_.Unregister(name_key);
  if (tombstone && !entry.ephemeral) {
    placements_.Tombstone(name_key, options_.shard_id, entry.placement_epoch, entry.nonce,
                          zone.empty() ? entry.zone : zone);
  }
}

void WorldShard::Remove(const std::string& name_key, std::function<void()> done) {
  // The freeze comes back on the zone's executor, maybe after Stop(): only inside the gate.
  host_.RemovePlayer(name_key, in_flight_->Wrap([this, name_key, done = std::move(done)] {
    (void)Spawn([this, name_key, done] {
      Forget(name_key, "", true);
      done();
    });
  }));
}

void WorldShard::StartLinkDeadTimer(const std::string& name_key,
                                    std::shared_ptr<SessionSink> sink) {
  const uint64_t generation = sink->generation();
  auto timer =
      std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(options_.link_dead_ms));
  timer->async_wait(
      in_flight_->Wrap([this, timer, name_key, sink, generation](boost::system::error_code ec) {
        if (ec) return;
        if (sink->generation() != generation || sink->bound()) return;  // re-attached meanwhile
        {
          std::lock_guard lock(mu_);
          auto it = residents_.find(name_key);
          if (it == residents_.end() || it->second.sink != sink) return;
        }
        log_.Info("link-dead character removed", {{"character", name_key}});
        Remove(name_key, [] {});
      }));
}

void WorldShard::Evacuate(std::vector<world::PlayerTransfer> players) {
  for (const auto& player : players) {
    const std::string key = world::NameKey(player.state.name);
    std::shared_ptr<SessionSink> sink;
    {
      std::lock_guard lock(mu_);
      auto it = residents_.find(key);
      if (it == residents_.end()) continue;
      sink = it->second.sink;
    }
    const auto binding = sink->binding();
    Forget(key, player.state.room.zone, false);
    if (!binding.first) continue;
    const uint64_t session = binding.second;
    binding.first->Send(kControlBytes, [&](telos::v1::ShardFrame& out) {
      out.add_redirects()->set_session(session);  // no endpoint: route again
    });
  }
}

// ------------------------------------------------------------------ the Play stream

std::shared_ptr<rpc::PlayShardEnd> WorldShard::OpenPlay(std::shared_ptr<rpc::PlayGateEnd> gate) {
  auto wire = std::make_shared<InProcessPlayWire>(*this, std::move(gate), io_, &outputs_dropped_);
  wire->Open();
  return wire;
}

void WorldShard::OnHello(const std::shared_ptr<StreamHandle>& stream,
                         const telos::v1::Hello& hello) {
  const std::string gate_id = hello.gate_id().substr(0, directory::kIdBytesMax);
  Status refusal;
  {
    std::lock_guard lock(mu_);
    std::erase_if(streams_, [](const auto& weak) { return weak.expired(); });
    if (!stream->gate_id().empty()) {
      refusal = Status::FailedPrecondition("a stream says hello once");
    } else if (gate_id.empty()) {
      refusal = Status::InvalidArgument("hello: the gate id is empty");
    } else {
      for (const auto& weak : streams_) {
        auto other = weak.lock();
        if (other && other != stream && other->alive() && other->gate_id() == gate_id) {
          // Another stream of this gate id is live: this one may not take over its sessions
          // or the arrivals handed over for it. A gate that lost its stream retries until
          // this shard has seen the old one end (keepalives notice a dead one in seconds).
          refusal = Status::AlreadyExists("gate " + gate_id + " already has a live stream here");
          break;
        }
      }
    }
    if (refusal.ok()) {
      // Set under mu_, so a concurrent hello with the same id sees it.
      stream->set_gate_id(gate_id);
      streams_.push_back(stream);
    }
  }
  if (!refusal.ok()) {
    log_.Warn("security: gate hello refused", {{"gate", gate_id}, {"reason", refusal.message()}});
    // Outside mu_: finishing the stream may run OnStreamGone at once.
    return stream->Refuse(std::move(refusal));
  }
  log_.Info("gate stream opened", {{"gate", gate_id}});
}

void WorldShard::OnFrame(const std::shared_ptr<StreamHandle>& stream,
                         const telos::v1::GateFrame& frame) {
  switch (frame.kind_case()) {
    case telos::v1::GateFrame::kHello: return OnHello(stream, frame.hello());
    case telos::v1::GateFrame::kAttach: {
      const auto& attach = frame.attach();
      if (!attach.handoff_token().empty()) {
        return AttachArrival(stream, attach.session(), attach.handoff_token());
      }
      const bool spawned = Spawn(
          [this, stream, session = attach.session(), assertion = attach.assertion(),
           lobby = attach.lobby_fallback()] { AttachLogin(stream, session, assertion, lobby); });
      if (!spawned) {
        SendAttached(stream, attach.session(), Status::Unavailable("shard stopping"), "");
      }
      return;
    }
    case telos::v1::GateFrame::kInput: {
      const auto& input = frame.input();
      auto name = stream->SessionCharacter(input.session());
      if (!name) return;  // handed off or removed meanwhile; the gate is being redirected
      const Status s = host_.Submit(*name, input.line());
      if (s.code() == StatusCode::kResourceExhausted) {
        stream->Send(kControlBytes, [&](telos::v1::ShardFrame& out) {
          world::PlayerOutput notice;
          notice.AddLine("The world is busy; that command was dropped.");
          AppendOutput(out, input.session(), notice);
        });
      }
      return;
    }
    case telos::v1::GateFrame::kDetach: {
      const uint64_t session = frame.detach().session();
      auto name = stream->SessionCharacter(session);
      if (!name) {
        stream->Send(kControlBytes,
                     [&](telos::v1::ShardFrame& out) { out.add_removed()->set_session(session); });
        return;
      }
      Remove(*name, [stream, session] {
        stream->Send(kControlBytes,
                     [&](telos::v1::ShardFrame& out) { out.add_removed()->set_session(session); });
      });
      return;
    }
    case telos::v1::GateFrame::KIND_NOT_SET: return;
  }
}

std::shared_ptr<StreamHandle> WorldShard::GateStream(const std::string& gate_id) {
  if (gate_id.empty()) return nullptr;
  std::lock_guard lock(mu_);
  for (const auto& weak : streams_) {
    auto stream = weak.lock();
    if (stream && stream->alive() && stream->gate_id() == gate_id) return stream;
  }
  return nullptr;
}

void WorldShard::OnStreamGone(const std::shared_ptr<StreamHandle>& stream) {
  log_.Info("gate stream closed", {{"gate", stream->gate_id()}});
  for (const auto& [session, name_key] : stream->sessions()) {
    std::shared_ptr<SessionSink> sink;
    {
      std::lock_guard lock(mu_);
      auto it = residents_.find(name_key);
      if (it == residents_.end()) continue;
      sink = it->second.sink;
    }
    auto [bound_stream, bound_session] = sink->binding();
    if (bound_stream != nullptr && bound_stream != stream) continue;  // already re-attached
    sink->Unbind();
    if (comms_ != nullptr) comms_->LinkDead(name_key);
    log_.Info("character link-dead", {{"character", name_key}, {"gate", stream->gate_id()}});
    StartLinkDeadTimer(name_key, sink);
  }
}

void WorldShard::SendAttached(const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                              const Status& s, const std::string& zone) {
  if (!s.ok()) attaches_refused_.Increment();
  stream->Send(kControlBytes, [&](telos::v1::ShardFrame& out) {
    auto* attached = out.add_attached();
    attached->set_session(session);
    attached->set_code(static_cast<int32_t>(s.code()));
    attached->set_message(s.message());
    attached->set_zone(zone);
  });
}

std::string WorldShard::AssertionOf(const std::string& name_key) const {
  std::lock_guard lock(mu_);
  auto it = residents_.find(name_key);
  return it == residents_.end() ? std::string() : it->second.assertion;
}

void WorldShard::AttachLogin(std::shared_ptr<StreamHandle> stream, uint64_t session,
                             std::string assertion, bool lobby_fallback) {
  auto claim = auth::VerifyAssertion(assertion_keys_, assertion, clock_);
  if (!claim.ok()) {
    log_.Warn("security: assertion refused",
              {{"gate", stream->gate_id()}, {"error", claim.status().ToString()}});
    return SendAttached(stream, session, claim.status(), "");
  }
  if (claim->gate_id != stream->gate_id()) {
    // Issued for another gate (or presented before this stream said hello): whoever holds it
    // here did not get it from the account service for this stream.
    log_.Warn("security: assertion refused", {{"gate", stream->gate_id()},
                                              {"issued_for", claim->gate_id},
                                              {"error", "issued for another gate"}});
    return SendAttached(stream, session,
                        Status::PermissionDenied("assertion: issued for another gate"), "");
  }
  const std::string key = world::NameKey(claim->character);

  // Already playing here (link-dead, or on another connection): take the character over.
  std::shared_ptr<SessionSink> existing;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return SendAttached(stream, session, Status::Unavailable("shard stopping"), "");
    auto it = residents_.find(key);
    if (it == residents_.end() && entering_.contains(key)) {
      // Another attach of this character is loading it: a second claim would fence the first.
      // The gate tries again shortly and then takes the character over.
      return SendAttached(stream, session, Status::Unavailable("entering the world"), "");
    }
    if (draining_ && it == residents_.end()) {
      // Its zones are moving to peers: the gate tries again and finds the new owner.
      return SendAttached(stream, session, Status::Unavailable("shard draining"), "");
    }
    if (it != residents_.end()) {
      if (it->second.account_id != claim->account_id) {
        return SendAttached(stream, session, Status::PermissionDenied("not your character"), "");
      }
      if (it->second.session_nonce == claim->nonce) {
        // The session this assertion names is already here. Attached to a live stream under
        // another (stream, session), this is a replay, not a resume: a resume comes from the
        // same session, or after its stream is gone (link-dead).
        const auto [bound_stream, bound_session] = it->second.sink->binding();
        if (bound_stream && bound_stream->alive() &&
            (bound_stream != stream || bound_session != session)) {
          log_.Warn("security: assertion refused",
                    {{"gate", stream->gate_id()},
                     {"character", key},
                     {"error", "its session is attached on another stream or session"}});
          return SendAttached(
              stream, session,
              Status::PermissionDenied("assertion: its session is already attached"), "");
        }
      }
      existing = it->second.sink;
      it->second.session_nonce = claim->nonce;
      it->second.assertion = assertion;
      it->second.arrival_token.clear();
    }
  }
  if (existing) {
    // The newer assertion's signed roles rule from now on: a grant or revoke since the first
    // attach takes effect on the next one, not only after a quit.
    host_.SetRoles(key, claim->roles);
    stream->BindSession(session, key);
    SendAttached(stream, session, Status::Ok(), host_.ZoneOf(key).value_or(""));
    const auto previous = existing->Bind(stream, session);
    const std::shared_ptr<StreamHandle>& old_stream = previous.first;
    const uint64_t old_session = previous.second;
    if (old_stream && (old_stream != stream || old_session != session)) {
      UnbindPrevious(previous, stream, session, key);
      old_stream->Send(kControlBytes, [&](telos::v1::ShardFrame& out) {
        world::PlayerOutput notice;
        notice.AddLine("Your character was taken up by a new connection.");
        notice.disconnect = true;
        AppendOutput(out, old_session, notice);
      });
    }
    if (comms_ != nullptr) comms_->Attached(key, stream->gate_id());
    log_.Info("character resumed", {{"character", claim->character}, {"gate", stream->gate_id()}});
    (void)host_.Submit(key, "look");
    return;
  }

  // From here until it is resident (or refused) this attach is the only one for the character.
  {
    std::lock_guard lock(mu_);
    // Re-checked together: another attach may have made the character resident since the
    // check above, and a second claim now would fence that copy.
    if (residents_.contains(key) || !entering_.insert(key).second) {
      return SendAttached(stream, session, Status::Unavailable("entering the world"), "");
    }
  }
  struct EnteringGuard {
    WorldShard* shard;
    std::string key;
    ~EnteringGuard() {
      std::lock_guard lock(shard->mu_);
      shard->entering_.erase(key);
    }
  } entering_guard{this, key};

  // The freshest of the row and its checkpoint (invariant 8) names the room, and so the zone,
  // the character stands in. A save queued from an earlier visit here lands first.
  persistence_.AwaitSaved(key);
  auto row = characters_.Load(claim->character);
  if (!row.ok() && (row.status().code() == StatusCode::kUnavailable ||
                    row.status().code() == StatusCode::kDeadlineExceeded)) {
    return AttachEphemeral(std::move(stream), session, *claim, std::move(assertion));
  }
  if (!row.ok()) return SendAttached(stream, session, row.status(), "");
  if (row->account_id != claim->account_id) {
    return SendAttached(stream, session, Status::PermissionDenied("not your character"), "");
  }
  const std::string loaded_json = FreshestState(*row);
  auto state = world::DecodeCharacter(loaded_json);
  if (!state.ok()) {
    return SendAttached(stream, session, Status::Internal("unreadable character"), "");
  }
  state->roles = claim->roles;  // the signed roles, never the row's JSON
  std::string zone = host_.TargetZone(*state);
  const bool to_lobby = host_.FindZone(zone) == nullptr && lobby_fallback;
  if (to_lobby) {
    zone = options_.lobby_zone;  // its own zone has no owner: the lobby, which every shard runs
  } else if (host_.FindZone(zone) == nullptr) {
    // The gate routed by a stale view: tell it where the character really is.
    return SendAttached(stream, session,
                        Status::FailedPrecondition("zone " + zone + " is not hosted here"), zone);
  }

  // A first residency starts the epoch at 1; only a handoff raises it (invariant 4).
  uint64_t placement_epoch = 1;
  if (auto placement = directory_.LookupPlacement(key); placement.ok() && *placement) {
    placement_epoch = std::max<uint64_t>((*placement)->epoch, 1);
  } else if (!placement.ok()) {
    log_.Warn("placement unreadable at login",
              {{"character", key}, {"error", placement.status().ToString()}});
  }
  auto claimed =
      characters_.ClaimOwnership(claim->character, static_cast<int64_t>(placement_epoch));
  if (!claimed.ok()) return SendAttached(stream, session, LoginRetryable(claimed.status()), "");
  if (to_lobby) state->room = host_.pack()->start_room;

  ResidentEntry entry;
  entry.display_name = claimed->name;
  entry.account_id = claimed->account_id;
  entry.nonce = claim->nonce;
  entry.session_nonce = claim->nonce;
  entry.placement_epoch = placement_epoch;
  entry.assertion = std::move(assertion);
  entry.zone = zone;
  std::vector<std::string> notices;
  if (to_lobby) {
    notices.push_back(
        "The part of the world where you stood is not being served right now; you find yourself "
        "back in the lobby.");
    log_.Warn("character placed in the lobby: its zone has no owner", {{"character", key}});
  }
  const bool entered = EnterWorld(
      stream, session, key, std::move(entry), std::move(*state), std::move(notices), [&] {
        persistence_.Register(key, claimed->name, claimed->account_id, claimed->state_version,
                              claimed->owner_epoch);
      });
  if (!entered) return;
  log_.Info("character entered", {{"character", claimed->name},
                                  {"zone", zone},
                                  {"owner_epoch", claimed->owner_epoch},
                                  {"placement_epoch", static_cast<int64_t>(placement_epoch)},
                                  {"gate", stream->gate_id()}});
}

void WorldShard::AttachEphemeral(std::shared_ptr<StreamHandle> stream, uint64_t session,
                                 const auth::Assertion& claim, std::string assertion) {
  // The row cannot be read, so nothing may be written either: the character plays from its
  // checkpoint if Redis has one (else as new) and is never saved (degradation ladder).
  const std::string key = world::NameKey(claim.character);
  world::CharacterState state;
  state.name = claim.character;
  if (checkpoints_ != nullptr) {
    if (auto checkpoint = checkpoints_->Get(claim.character);
        checkpoint.ok() && checkpoint->account_id == claim.account_id) {
      if (auto decoded = world::DecodeCharacter(checkpoint->state_json); decoded.ok()) {
        state = std::move(*decoded);
      }
    }
  }
  state.roles = claim.roles;
  std::string zone = host_.TargetZone(state);
  if (host_.FindZone(zone) == nullptr) {
    zone = options_.lobby_zone;
    state.room = host_.pack()->start_room;
  }
  ResidentEntry entry;
  entry.display_name = claim.character;
  entry.account_id = claim.account_id;
  entry.nonce = claim.nonce;
  entry.session_nonce = claim.nonce;
  entry.placement_epoch = 0;  // registers nothing a real login could be fenced by
  entry.assertion = std::move(assertion);
  entry.zone = zone;
  entry.ephemeral = true;
  std::vector<std::string> notices = {
      "The character vault cannot be reached right now: you are playing an ephemeral copy of " +
      claim.character +
      ". Nothing this copy does will be saved; once you quit, your next login after the vault "
      "is back plays your saved character."};
  const bool entered = EnterWorld(stream, session, key, std::move(entry), std::move(state),
                                  std::move(notices), [&] { persistence_.RegisterEphemeral(key); });
  if (entered) {
    log_.Warn("character entered ephemeral: PostgreSQL unreachable",
              {{"character", claim.character}, {"zone", zone}, {"gate", stream->gate_id()}});
  }
}

bool WorldShard::EnterWorld(const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                            const std::string& key, ResidentEntry entry,
                            world::CharacterState state, std::vector<std::string> notices,
                            const std::function<void()>& register_persistence) {
  auto sink = std::make_shared<SessionSink>();
  const std::string zone = entry.zone;
  {
    std::lock_guard lock(mu_);
    if (residents_.count(key) != 0) {
      SendAttached(stream, session,
                   Status::AlreadyExists(entry.display_name + " is entering the world"), "");
      return false;
    }
    entry.sink = sink;
    residents_[key] = std::move(entry);
  }
  register_persistence();
  stream->BindSession(session, key);
  sink->Bind(stream, session);
  if (comms_ != nullptr) comms_->Arrived(key, stream->gate_id());
  SendAttached(stream, session, Status::Ok(), zone);
  if (!notices.empty()) {
    world::PlayerOutput notice;
    for (const std::string& line : notices) notice.AddLine(line);
    sink->Deliver(std::move(notice));
  }
  if (Status s = host_.Login(std::move(state), sink); !s.ok()) {
    stream->UnbindSession(session);
    Forget(key, zone, false);
    SendAttached(stream, session, s, "");
    return false;
  }
  return true;
}

std::string WorldShard::FreshestState(const store::CharacterRecord& row) {
  if (checkpoints_ == nullptr) return row.state_json;
  auto checkpoint = checkpoints_->Get(row.name);
  if (!checkpoint.ok()) {
    if (checkpoint.status().code() != StatusCode::kNotFound) {
      log_.Warn("checkpoint unreadable: loading the row",
                {{"character", row.name}, {"error", checkpoint.status().ToString()}});
    }
    return row.state_json;
  }
  const store::FreshestChoice choice = store::ChooseFreshest(row, *checkpoint);
  if (choice.source == store::LoadSource::kRow) return row.state_json;
  log_.Info("loaded from checkpoint", {{"character", row.name},
                                       {"state_version", checkpoint->state_version},
                                       {"owner_epoch", checkpoint->owner_epoch}});
  return choice.record.state_json;
}

void WorldShard::AttachArrival(const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                               const std::string& token) {
  std::string key;
  std::shared_ptr<SessionSink> sink;
  std::string zone;
  {
    std::lock_guard lock(mu_);
    for (auto& [name_key, entry] : residents_) {
      if (!entry.arrival_token.empty() && entry.arrival_token == token) {
        key = name_key;
        sink = entry.sink;
        zone = entry.zone;
        entry.arrival_token.clear();
        break;
      }
    }
  }
  if (!sink) {
    // The same attach again (a gate retrying): the arrival is already bound to this session.
    std::optional<std::string> bound_zone;
    {
      std::lock_guard lock(mu_);
      for (const auto& [name_key, entry] : residents_) {
        if (entry.sink->binding() == std::make_pair(stream, session)) bound_zone = entry.zone;
      }
    }
    if (bound_zone) return SendAttached(stream, session, Status::Ok(), *bound_zone);
    return SendAttached(stream, session, Status::NotFound("no arrival with that token"), "");
  }
  stream->BindSession(session, key);
  // The arrival may have been bound already, on the stream its gate had here when the handoff
  // came (AcceptHandoff); attached on another stream, that binding must not keep carrying the
  // character's input. Undone before the gate hears Attached, so that from then on only this
  // session reaches the character; and again for a binding made meanwhile.
  UnbindPrevious(sink->binding(), stream, session, key);
  SendAttached(stream, session, Status::Ok(), zone);
  UnbindPrevious(sink->Bind(stream, session), stream, session, key);
  if (comms_ != nullptr) comms_->Attached(key, stream->gate_id());
}

void WorldShard::UnbindPrevious(const std::pair<std::shared_ptr<StreamHandle>, uint64_t>& previous,
                                const std::shared_ptr<StreamHandle>& stream, uint64_t session,
                                const std::string& name_key) {
  const auto& [old_stream, old_session] = previous;
  if (!old_stream || (old_stream == stream && old_session == session)) return;
  old_stream->UnbindSession(old_session, name_key);
}

// ------------------------------------------------------------------ handoff: destination

void WorldShard::Handoff(const telos::v1::SignedBlob& snapshot,
                         std::function<void(Result<telos::v1::HandoffReply>)> done) {
  // The signature covers the encoded snapshot: it is verified as it came.
  std::string blob = snapshot.SerializeAsString();
  auto answer =
      std::make_shared<std::function<void(Result<telos::v1::HandoffReply>)>>(std::move(done));
  const bool spawned = Spawn([this, answer, blob = std::move(blob)] {
    const Status s = AcceptHandoff(blob);
    if (!s.ok()) {
      handoffs_refused_.Increment();
      return (*answer)(s);
    }
    telos::v1::HandoffReply reply;
    reply.set_shard_id(options_.shard_id);
    (*answer)(std::move(reply));
  });
  if (!spawned) (*answer)(Status::Unavailable("shard stopping"));
}

Status WorldShard::AcceptHandoff(const std::string& blob) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Unavailable("shard stopping");
  }
  auto snapshot = auth::VerifySnapshot(handoff_verify_keys_, blob, clock_);
  if (!snapshot.ok()) {
    log_.Warn("security: handoff snapshot refused", {{"error", snapshot.status().ToString()}});
    return snapshot.status();
  }
  if (host_.FindZone(snapshot->zone) == nullptr) {
    return Status::FailedPrecondition("zone " + snapshot->zone + " is not hosted here");
  }
  const std::string key = world::NameKey(snapshot->character);
  {
    std::lock_guard lock(mu_);
    if (residents_.count(key) != 0) return Status::AlreadyExists(key + " is already here");
  }
  // Everything that can be checked is checked before anything moves.
  auto state = world::DecodeCharacter(snapshot->state_json);
  if (!state.ok()) return Status::InvalidArgument("handoff snapshot: unreadable character");
  // Roles are not in the state's JSON: they come from the player's own assertion, which the
  // snapshot carries and the account service signed. One that no longer verifies (it lapsed
  // in transit) leaves a player, never more.
  if (auto carried = auth::VerifyAssertion(assertion_keys_, snapshot->assertion, clock_);
      carried.ok() && carried->account_id == snapshot->account_id &&
      world::NameKey(carried->character) == world::NameKey(snapshot->character)) {
    state->roles = carried->roles;
  }
  state->room.zone = snapshot->zone;
  if (host_.pack()->FindRoom(state->room) == nullptr) {
    state->room = world::Ref{};  // the zone's entry falls back to the start room rule
  }
  // The placement moves first, strictly forward: a replayed or stale snapshot stops here.
  const directory::Placement placement{snapshot->zone, snapshot->placement_epoch, snapshot->nonce,
                                       options_.shard_id};
  if (Status s = directory_.HandoffPlacement(key, placement); !s.ok()) {
    log_.Warn("handoff refused", {{"character", key},
                                  {"epoch", static_cast<int64_t>(snapshot->placement_epoch)},
                                  {"error", s.ToString()}});
    return s;
  }
  auto claimed = characters_.ClaimOwnership(snapshot->character,
                                            static_cast<int64_t>(snapshot->placement_epoch));
  if (!claimed.ok()) return claimed.status();

  auto sink = std::make_shared<SessionSink>();
  {
    std::lock_guard lock(mu_);
    ResidentEntry entry;
    entry.display_name = claimed->name;
    entry.account_id = claimed->account_id;
    entry.nonce = snapshot->nonce;
    entry.session_nonce = snapshot->nonce;
    entry.placement_epoch = snapshot->placement_epoch;
    entry.assertion = snapshot->assertion;
    entry.zone = snapshot->zone;
    entry.sink = sink;
    entry.arrival_token = snapshot->token;
    residents_[key] = std::move(entry);
  }
  persistence_.Register(key, claimed->name, claimed->account_id, claimed->state_version,
                        claimed->owner_epoch);
  // The arrival is durable at once (handoff flushes), then the zone saves as usual.
  persistence_.RequestSave({key, world::EncodeCharacter(*state), world::SaveReason::kFreeze});
  // From here the player is ours (placement and owner_epoch moved): if the zone cannot take
  // them, the lobby, which every shard runs, does.
  world::PlayerTransfer transfer{*state, sink, snapshot->reply_to, snapshot->arrival, {}};
  if (Status s = host_.Admit(std::move(transfer)); !s.ok()) {
    log_.Warn("handoff arrival refused by its zone: placed in the lobby",
              {{"character", key}, {"zone", snapshot->zone}, {"error", s.ToString()}});
    state->room = host_.pack()->start_room;
    if (Status lobby = host_.Admit({std::move(*state), sink, snapshot->reply_to, {}, {}});
        !lobby.ok()) {
      Forget(key, snapshot->zone, false);
      return Status::Internal("handoff arrival could not be admitted: " + lobby.ToString());
    }
  }
  handoffs_in_.Increment();
  log_.Info("handoff arrived", {{"character", claimed->name},
                                {"zone", snapshot->zone},
                                {"from", snapshot->from_shard},
                                {"epoch", static_cast<int64_t>(snapshot->placement_epoch)}});
  // The player's gate usually has a stream here already: bind the session to it now, so the
  // arrival reaches the player without waiting for the Redirect -> Attach round trip (the gate
  // moves the session here on this first output; the Attach with the token then confirms).
  std::string bound_gate;
  if (auto stream = GateStream(snapshot->gate_id); stream && snapshot->session != 0) {
    stream->BindSession(snapshot->session, key);
    sink->Bind(stream, snapshot->session);
    bound_gate = stream->gate_id();
  }
  if (comms_ != nullptr) comms_->Arrived(key, bound_gate);
  StartLinkDeadTimer(key, sink);  // if the gate never attaches, the character is saved and out
  return Status::Ok();
}

// ------------------------------------------------------------------ describe

telos::v1::ShardDescription WorldShard::Describe() const {
  telos::v1::ShardDescription description;
  description.set_shard_id(options_.shard_id);
  const std::shared_ptr<const world::Pack> pack = host_.pack();
  description.set_pack_name(pack->name);
  description.set_pack_hash(pack->content_hash);
  description.set_version(options_.version);
  return description;
}

std::optional<std::string> WorldShard::FindPackDivergence() {
  auto shards = directory_.ListShards();
  if (!shards.ok()) return std::nullopt;
  const std::string ours = host_.pack()->content_hash;
  struct PeerPack {
    std::string shard, name, hash;
  };
  std::vector<PeerPack> peers;
  bool alone = true;
  for (const auto& shard : *shards) {
    if (shard.id == options_.shard_id || shard.endpoint.empty()) continue;
    alone = false;
    auto peer = peers_.Describe(shard.endpoint, kDescribeDeadlineMs);
    if (!peer.ok() && peer.status().code() == StatusCode::kPermissionDenied) {
      // Not a pack divergence, but every handoff and drain between the two will fail too.
      log_.Warn("security: a peer world refused this world's TELOS_WORLD_TOKEN",
                {{"peer", shard.id}, {"reason", peer.status().message()}});
      continue;
    }
    if (!peer.ok()) continue;  // gone or not answering
    peers.push_back({shard.id, peer->pack_name(), peer->pack_hash()});
  }
  auto version = directory_.ReadPackVersion();
  if (!version.ok()) {
    log_.Warn("cannot read the fleet's pack version; checking the peers' packs only",
              {{"error", version.status().ToString()}});
  }
  const std::optional<directory::PackVersion> recorded =
      version.ok() ? *version : std::optional<directory::PackVersion>();
  for (const PeerPack& peer : peers) {
    // `alone` true: only the pair is judged here, the record against ours below.
    if (!PackRefusal(ours, recorded, {peer.hash}, /*alone=*/true).empty()) {
      return "shard " + peer.shard + " runs pack " + peer.name + " " + peer.hash;
    }
  }
  if (std::string refusal = PackRefusal(ours, recorded, {}, alone); !refusal.empty()) {
    return refusal;
  }
  if (alone && recorded && recorded->hash != ours) {
    // No world runs the recorded pack: this one is the fleet now.
    const Status s = directory_.SwapPackVersion(recorded->hash, {ours, ""});
    log_.Info("content pack recorded for the fleet replaced: no live world runs the old one",
              {{"old", recorded->hash}, {"new", ours}, {"status", s.ToString()}});
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ handoff: source

void WorldShard::EvictStale(const std::string& name_key) {
  {
    std::lock_guard lock(mu_);
    if (!residents_.contains(name_key)) return;
  }
  log_.Warn("character owned by another shard: removing the stale copy here",
            {{"character", name_key}});
  host_.RemovePlayer(name_key, in_flight_->Wrap([this, name_key] {
    (void)Spawn([this, name_key] { Forget(name_key, "", /*tombstone=*/false); });
  }));
}

void WorldShard::Depart(world::PlayerTransfer transfer) {
  // A std::function must be copyable; the transfer (and its sink) moves through it once.
  auto moving = std::make_shared<world::PlayerTransfer>(std::move(transfer));
  if (Spawn([this, moving] { ShipPlayer(std::move(*moving)); })) return;
  // Stopped: no handoff starts now, and the host's lock is held here, so the player cannot be
  // admitted back. Saved as they stood and forgotten; their gate routes them again.
  const std::string key = world::NameKey(moving->state.name);
  log_.Warn("handoff refused: the shard is stopping; the player is saved and routed again",
            {{"character", key}});
  persistence_.RequestSave(
      {key, world::EncodeCharacter(moving->state), world::SaveReason::kFreeze});
  std::vector<world::PlayerTransfer> one;
  one.push_back(std::move(*moving));
  Evacuate(std::move(one));
}

void WorldShard::Bounce(world::PlayerTransfer transfer, std::string why) {
  transfer.state.room = transfer.from_room;
  transfer.arrival = {std::move(why)};
  const std::string key = world::NameKey(transfer.state.name);
  if (Status s = host_.Admit(std::move(transfer)); !s.ok()) {
    log_.Error("handoff bounce failed: character removed",
               {{"character", key}, {"error", s.ToString()}});
    Forget(key, "", true);
  }
}

Status WorldShard::CallHandoff(const std::string& endpoint, const std::string& blob) {
  telos::v1::SignedBlob request;
  if (!request.ParseFromString(blob)) return Status::Internal("snapshot did not serialize");
  auto reply = peers_.Handoff(endpoint, request, options_.handoff_deadline_ms);
  return reply.ok() ? Status::Ok() : reply.status();
}

void WorldShard::ShipPlayer(world::PlayerTransfer transfer) {
  const std::string zone = transfer.state.room.zone;
  bool ephemeral = false;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(world::NameKey(transfer.state.name));
    ephemeral = it != residents_.end() && it->second.ephemeral;
  }
  if (ephemeral) {
    // Another shard would claim the character in PostgreSQL and save the copy over it.
    return Bounce(std::move(transfer),
                  "An ephemeral character cannot travel to another part of the world.");
  }
  if (sealed_.load()) {
    return Bounce(std::move(transfer),
                  "The way there is sealed: this part of the world is cut off from the rest for "
                  "now.");
  }
  // The route cache (re-read every route_refresh_ms) names the owner; a stale entry costs at
  // most a refused handoff, since the destination checks that it hosts the zone.
  std::optional<directory::ZoneOwner> owner;
  {
    std::lock_guard lock(mu_);
    if (auto it = remote_owners_.find(zone); it != remote_owners_.end()) owner = it->second;
  }
  if (!owner) {
    log_.Warn("handoff impossible: no live owner",
              {{"character", transfer.state.name}, {"zone", zone}});
    return Bounce(std::move(transfer));
  }
  if (!SendPlayer(transfer, *owner).ok()) Bounce(std::move(transfer));
}

std::optional<directory::ZoneOwner> WorldShard::MovedOwner(const std::string& zone,
                                                           const directory::ZoneOwner& asked,
                                                           const Status& answer) {
  // "Not hosted here" (FailedPrecondition) or "moved" (Conflict): the zone went on.
  if (answer.code() != StatusCode::kFailedPrecondition && answer.code() != StatusCode::kConflict) {
    return std::nullopt;
  }
  auto owner = directory_.OwnerOfZone(zone);
  if (!owner.ok() || !*owner) return std::nullopt;
  if (!LiveOwner(**owner) || (*owner)->shard_id == asked.shard_id ||
      (*owner)->shard_id == options_.shard_id) {
    return std::nullopt;
  }
  return **owner;
}

Status WorldShard::SendPlayer(const world::PlayerTransfer& transfer,
                              const directory::ZoneOwner& owner) {
  const Instant started = clock_.Now();
  const std::string key = world::NameKey(transfer.state.name);
  const std::string zone = transfer.state.room.zone;
  ResidentEntry entry;
  {
    std::lock_guard lock(mu_);
    auto it = residents_.find(key);
    if (it == residents_.end()) return Status::NotFound(key + " is not resident here");
    entry = it->second;
  }
  const auto binding = entry.sink->binding();
  const std::shared_ptr<StreamHandle>& stream = binding.first;
  const uint64_t session = binding.second;
  auth::HandoffSnapshot snapshot;
  snapshot.character = transfer.state.name;
  snapshot.account_id = entry.account_id;
  snapshot.state_json = world::EncodeCharacter(transfer.state);
  snapshot.zone = zone;
  snapshot.placement_epoch = entry.placement_epoch + 1;
  snapshot.nonce = entry.nonce;
  snapshot.from_shard = options_.shard_id;
  snapshot.gate_id = stream ? stream->gate_id() : "";
  snapshot.session = session;
  snapshot.token = auth::RandomToken();
  snapshot.reply_to = transfer.reply_to;
  snapshot.arrival = transfer.arrival;
  snapshot.expires_unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count() +
      options_.handoff_ttl_ms;
  snapshot.assertion = entry.assertion;
  const std::string blob = auth::SignSnapshot(handoff_key_, snapshot);

  Status s = CallHandoff(owner.endpoint, blob);
  directory::ZoneOwner to = owner;
  if (auto next = MovedOwner(zone, owner, s)) {
    // The zone moved on since the route was read (a draining owner passed it on): once more,
    // at the owner the directory names now. The snapshot is the same; its epoch still fences.
    log_.Info(
        "handoff: the zone moved on; trying its new owner",
        {{"character", key}, {"zone", zone}, {"was", owner.shard_id}, {"to", next->shard_id}});
    to = *next;
    s = CallHandoff(to.endpoint, blob);
  }
  if (!s.ok() && (s.code() == StatusCode::kDeadlineExceeded ||
                  s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnknownResult)) {
    // Maybe applied: the placement record says whether the destination took the player.
    auto placement = directory_.LookupPlacement(key);
    if (placement.ok() && *placement && (*placement)->epoch >= snapshot.placement_epoch &&
        (*placement)->shard == to.shard_id) {
      s = Status::Ok();
    }
  }
  if (!s.ok()) {
    handoffs_refused_.Increment();
    log_.Warn("handoff failed: player stays",
              {{"character", key}, {"zone", zone}, {"error", s.ToString()}});
    return s;
  }
  {
    std::lock_guard lock(mu_);
    residents_.erase(key);
  }
  if (comms_ != nullptr) comms_->Left(key);
  persistence_.Unregister(key);
  if (stream) {
    stream->UnbindSession(session);
    stream->Send(kControlBytes, [&](telos::v1::ShardFrame& out) {
      auto* redirect = out.add_redirects();
      redirect->set_session(session);
      redirect->set_shard_id(to.shard_id);
      redirect->set_endpoint(to.endpoint);
      redirect->set_handoff_token(snapshot.token);
    });
  }
  handoffs_out_.Increment();
  handoff_ms_.Observe(static_cast<double>(ElapsedMs(started, clock_.Now())));
  log_.Info("handoff sent", {{"character", transfer.state.name},
                             {"zone", zone},
                             {"to", to.shard_id},
                             {"epoch", static_cast<int64_t>(snapshot.placement_epoch)}});
  return Status::Ok();
}

void WorldShard::HandOver(std::vector<world::PlayerTransfer> players, directory::ZoneOwner to,
                          std::function<void(size_t, size_t)> done) {
  struct Tally {
    std::mutex mu;
    size_t left = 0, redirected = 0, reclaimed = 0;
    std::function<void(size_t, size_t)> done;
  };
  auto tally = std::make_shared<Tally>();
  tally->left = players.size();
  tally->done = std::move(done);
  if (players.empty()) return tally->done(0, 0);
  // Counts one player settled; the last one reports the tally.
  auto settle = [tally](bool sent) {
    std::function<void(size_t, size_t)> finish;
    size_t redirected = 0, reclaimed = 0;
    {
      std::lock_guard lock(tally->mu);
      (sent ? tally->redirected : tally->reclaimed) += 1;
      if (--tally->left == 0) {
        finish = std::move(tally->done);
        redirected = tally->redirected;
        reclaimed = tally->reclaimed;
      }
    }
    if (finish) finish(redirected, reclaimed);
  };
  for (auto& player : players) {
    auto moving = std::make_shared<world::PlayerTransfer>(std::move(player));
    const bool spawned = Spawn([this, settle, to, moving] {
      const bool sent = SendPlayer(*moving, to).ok();
      if (!sent) {
        // Not handed over: its state is saved (frozen); its gate routes it to the new owner.
        std::vector<world::PlayerTransfer> one;
        one.push_back(std::move(*moving));
        Evacuate(std::move(one));
      }
      settle(sent);
    });
    if (!spawned) {
      // Stopped: frozen (so saved) but not handed over; its gate routes it again.
      std::vector<world::PlayerTransfer> one;
      one.push_back(std::move(*moving));
      Evacuate(std::move(one));
      settle(false);
    }
  }
}

Status WorldShard::CallAdopt(const directory::ZoneOwner& to, const std::string& zone,
                             uint64_t epoch) {
  telos::v1::AdoptRequest request;
  request.set_zone(zone);
  request.set_epoch(epoch);
  request.set_from_shard(options_.shard_id);
  return peers_.Adopt(to.endpoint, request, options_.handoff_deadline_ms);
}

void WorldShard::Adopt(const telos::v1::AdoptRequest& request, std::function<void(Status)> done) {
  auto answer = std::make_shared<std::function<void(Status)>>(std::move(done));
  const bool spawned = Spawn([this, answer, request] { (*answer)(AdoptZone(request)); });
  if (!spawned) (*answer)(Status::Unavailable("shard stopping"));
}

Status WorldShard::AdoptZone(const telos::v1::AdoptRequest& request) {
  bool draining = false;
  {
    std::lock_guard lock(mu_);
    draining = draining_;
  }
  Status s;
  if (draining) {
    // Its own zones are moving to peers: a zone started here now would have to be moved again,
    // and this drain would not move it (it walks the leases it held when it began). The lease
    // is this shard's now (the sender moved it before asking): it goes on, never started here.
    s = PassOn(request.zone(), request.epoch(), request.from_shard());
  } else {
    s = adopter_ ? adopter_(request.zone(), request.epoch())
                 : Status::Unavailable("not adopting zones");
  }
  log_.Info(s.ok() ? "zone adopted from a draining peer" : "zone adoption refused",
            {{"zone", request.zone()},
             {"epoch", static_cast<int64_t>(request.epoch())},
             {"from", request.from_shard()},
             {"status", s.ToString()}});
  if (s.ok() || s.code() == StatusCode::kConflict) RefreshRoutes();
  return s;
}

Status WorldShard::PassOn(const std::string& zone, uint64_t epoch, const std::string& from) {
  const std::string refusal = "shard " + options_.shard_id + " is draining: it adopts no zones";
  directory::DrainTargetRequest pick;
  pick.exclude = {options_.shard_id};
  if (!from.empty()) pick.exclude.push_back(from);  // it is giving the zone away
  pick.amount = 1;
  pick.holder = options_.shard_id;
  auto target = directory_.SelectDrainTarget(pick);
  if (!target.ok()) {
    log_.Warn("zone needs (re)assignment", {{"zone", zone},
                                            {"owner", options_.shard_id},
                                            {"epoch", static_cast<int64_t>(epoch)},
                                            {"error", target.status().ToString()}});
    return Status::FailedPrecondition(refusal + "; no live peer to pass it on to");
  }
  const std::string next = target->reservation.target;
  auto moved =
      directory_.TransferZone(zone, options_.shard_id, epoch, next, options_.zone_lease_ttl_ms);
  if (!moved.ok()) {
    (void)directory_.ReleaseReservation(next, target->reservation.id);
    return Status::FailedPrecondition(refusal +
                                      "; passing it on failed: " + moved.status().ToString());
  }
  auto owner = directory_.OwnerOfZone(zone);
  const std::string endpoint =
      owner.ok() && *owner && (*owner)->shard_id == next && LiveOwner(**owner) ? (*owner)->endpoint
                                                                               : "";
  Status adopted = Status::Unavailable("the next owner has no endpoint");
  if (!endpoint.empty()) {
    adopted = CallAdopt({next, endpoint, moved->epoch, moved->ttl_ms}, zone, moved->epoch);
  }
  log_.Info("draining: a zone handed here was passed on",
            {{"zone", zone},
             {"from", from},
             {"to", next},
             {"epoch", static_cast<int64_t>(moved->epoch)},
             {"adopt", adopted.ToString()}});
  // The lease is the next owner's whatever its Adopt said: the sender re-reads it from there.
  return Status::Conflict("zone " + zone + " moved to " + next + ": " + refusal);
}

}  // namespace telos::shard
