#include "telos/gate/fleet_world_link.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <deque>

#include "telos/rpc/channels.h"
#include "telos/rpc/in_process_play.h"
#include "telos/rpc/status_mapping.h"
#include "telos/v1/fleet.grpc.pb.h"

namespace telos::gate {
namespace asio = boost::asio;

// The gate's end of one Play stream to one shard, over gRPC or in memory: the link sees only
// this. Frames written before Begin() wait and go out after the hello, in order.
class ShardStream {
 public:
  virtual ~ShardStream() = default;
  virtual const std::string& endpoint() const = 0;
  virtual void Begin(const std::string& gate_id) = 0;
  // False once the stream has ended.
  virtual bool Write(telos::v1::GateFrame frame) = 0;
  virtual bool alive() const = 0;
  // Ends the stream; the link hears OnStreamDone once it is over.
  virtual void Cancel() = 0;
};

namespace {

// The client end of one gRPC Play stream. Writes are queued and go out one at a time. A hold
// keeps the reactor alive while writes may still start from other threads; it is released once
// the stream has ended and no write is in flight (see the gRPC callback API's AddHold contract).
class GrpcShardStream final
    : public ShardStream,
      public grpc::ClientBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame>,
      public std::enable_shared_from_this<GrpcShardStream> {
 public:
  // `stub` is owned by the link and outlives every stream (a channel is never torn down from
  // inside one of its own callbacks).
  // `gate_token` goes out with the call (empty: none).
  GrpcShardStream(FleetWorldLink& link, std::string endpoint, telos::v1::World::Stub& stub,
                  const std::string& gate_token)
      : link_(link), endpoint_(std::move(endpoint)), stub_(stub) {
    rpc::AddCallerToken(context_, gate_token);  // metadata is set before the call starts
  }

  const std::string& endpoint() const override { return endpoint_; }

  // The stream is visible to other sessions as soon as the link has it, possibly before this
  // runs: frames they write meanwhile wait in the queue (a write on a reactor not yet bound to
  // its call is undefined), and go out after the hello.
  void Begin(const std::string& gate_id) override {
    self_ = shared_from_this();
    stub_.async()->Play(&context_, this);
    StartRead(&in_);
    AddHold();
    StartCall();
    telos::v1::GateFrame hello;
    hello.mutable_hello()->set_gate_id(gate_id);
    {
      MutexLock lock(mu_);
      begun_ = true;
      if (closed_) return;
      queue_.push_front(std::move(hello));
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
    }
    StartWrite(&current_);
  }

  bool Write(telos::v1::GateFrame frame) override EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (closed_) return false;
      queue_.push_back(std::move(frame));
      if (!begun_ || writing_) return true;
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
    }
    StartWrite(&current_);
    return true;
  }

  bool alive() const override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return !closed_;
  }

  void Cancel() override { context_.TryCancel(); }

  void OnReadDone(bool ok) override EXCLUDES(mu_) {
    if (!ok) {
      bool release = false;
      {
        MutexLock lock(mu_);
        if (!closed_) {
          closed_ = true;
          release = !writing_;
          if (release) released_ = true;
        }
      }
      if (release) RemoveHold();
      return;
    }
    link_.OnShardFrame(shared_from_this(), in_);
    in_.Clear();
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override EXCLUDES(mu_) {
    bool release = false;
    bool next = false;
    {
      MutexLock lock(mu_);
      if (!ok) closed_ = true;
      if (closed_ || queue_.empty()) {
        writing_ = false;
        if (closed_ && !released_) {
          released_ = true;
          queue_.clear();
          release = true;
        }
      } else {
        current_ = std::move(queue_.front());
        queue_.pop_front();
        next = true;
      }
    }
    // The read side fails too and finds the hold gone; OnDone follows.
    if (release) RemoveHold();
    if (next) StartWrite(&current_);
  }

  void OnDone(const grpc::Status& status) override EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      closed_ = true;
    }
    auto self = std::move(self_);
    link_.OnStreamDone(self, rpc::FromGrpc(status));
  }

 private:
  FleetWorldLink& link_;
  const std::string endpoint_;
  telos::v1::World::Stub& stub_;
  grpc::ClientContext context_;
  telos::v1::ShardFrame in_;
  // After the link's lock in the link's lock order, and a leaf (fleet_world_link.h).
  mutable Mutex mu_{lock_rank::kShardStream};
  std::deque<telos::v1::GateFrame> queue_ GUARDED_BY(mu_);
  telos::v1::GateFrame current_;        // touched by the writer only
  bool begun_ GUARDED_BY(mu_) = false;  // the call is bound (Begin)
  bool writing_ GUARDED_BY(mu_) = false;
  bool closed_ GUARDED_BY(mu_) = false;
  bool released_ GUARDED_BY(mu_) = false;
  std::shared_ptr<GrpcShardStream> self_;  // alive until OnDone
};

// The gate's end of an in-process Play stream (telos/rpc/in_process_play.h): frames to the
// shard are posted in order on a strand of their own; frames from it arrive on the shard's.
class InProcessShardStream final : public ShardStream,
                                   public rpc::PlayGateEnd,
                                   public std::enable_shared_from_this<InProcessShardStream> {
 public:
  InProcessShardStream(FleetWorldLink& link, std::string endpoint, rpc::InProcessPlay& shard,
                       asio::io_context& io)
      : link_(link),
        endpoint_(std::move(endpoint)),
        shard_(shard),
        strand_(asio::make_strand(io)) {}

  const std::string& endpoint() const override { return endpoint_; }

  void Begin(const std::string& gate_id) override EXCLUDES(mu_) {
    std::shared_ptr<rpc::PlayShardEnd> end = shard_.OpenPlay(shared_from_this());
    telos::v1::GateFrame hello;
    hello.mutable_hello()->set_gate_id(gate_id);
    MutexLock lock(mu_);
    shard_end_ = std::move(end);
    begun_ = true;
    PostLocked(std::move(hello));
    for (auto& frame : queue_) PostLocked(std::move(frame));
    queue_.clear();
    // Cancelled before it began (the link stopping as a redirect opened it): end it now, so
    // the shard ends its side and the link hears OnStreamDone.
    if (cancelled_) PostGoneLocked();
  }

  bool Write(telos::v1::GateFrame frame) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (closed_) return false;
    if (!begun_) {
      queue_.push_back(std::move(frame));
    } else {
      PostLocked(std::move(frame));
    }
    return true;
  }

  bool alive() const override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return !closed_;
  }

  void Cancel() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (closed_ || cancelled_) return;
    cancelled_ = true;
    if (begun_) PostGoneLocked();  // else Begin() does it
  }

  // rpc::PlayGateEnd
  void OnShardFrame(telos::v1::ShardFrame& frame) override {
    link_.OnShardFrame(shared_from_this(), frame);
  }
  void OnShardGone(const Status& why) override EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      closed_ = true;
      shard_end_.reset();
      queue_.clear();
    }
    link_.OnStreamDone(shared_from_this(), why);
  }

 private:
  // Frames posted in order on the strand; one posted after the shard's end is gone is dropped.
  // Under the lock, so that two writers' frames reach the strand in the order they were taken.
  void PostLocked(telos::v1::GateFrame frame) REQUIRES(mu_) {
    asio::post(strand_, [self = shared_from_this(), frame = std::move(frame)] {
      if (auto end = self->ShardEnd()) end->OnGateFrame(frame);
    });
  }
  void PostGoneLocked() REQUIRES(mu_) {
    asio::post(strand_, [self = shared_from_this()] {
      if (auto end = self->ShardEnd()) end->OnGateGone();
    });
  }
  std::shared_ptr<rpc::PlayShardEnd> ShardEnd() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return shard_end_;
  }

  FleetWorldLink& link_;
  const std::string endpoint_;
  rpc::InProcessPlay& shard_;
  asio::strand<asio::io_context::executor_type> strand_;
  // After the link's lock in the link's lock order, and a leaf (fleet_world_link.h).
  mutable Mutex mu_{lock_rank::kShardStream};
  std::shared_ptr<rpc::PlayShardEnd> shard_end_ GUARDED_BY(mu_);  // reset at OnShardGone
  std::deque<telos::v1::GateFrame> queue_ GUARDED_BY(mu_);        // written before Begin
  bool begun_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;
  bool closed_ GUARDED_BY(mu_) = false;
};

world::PlayerOutput Lines(std::vector<std::string> lines, bool disconnect = false) {
  world::PlayerOutput out;
  for (const std::string& line : lines) out.AddLine(line);
  out.disconnect = disconnect;
  return out;
}

uint64_t NameHash(const std::string& s) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : s) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

FleetWorldLink::FleetWorldLink(FleetLinkOptions options, directory::Directory& directory,
                               asio::io_context& io, BlockingRunner blocking, const Clock& clock,
                               Logger& log, Metrics& metrics)
    : options_(std::move(options)),
      directory_(directory),
      io_(io),
      blocking_(std::move(blocking)),
      clock_(clock),
      log_(log),
      redirects_(metrics.Counter("gate_redirects_total", "Sessions moved to another shard")),
      reroutes_(metrics.Counter("gate_reroutes_total", "Sessions routed again")),
      stream_losses_(metrics.Counter("gate_shard_streams_lost_total", "Play streams that ended")),
      in_flight_(InFlightGate::Make()) {}

FleetWorldLink::~FleetWorldLink() {
  Stop();
}

void FleetWorldLink::Stop() {
  std::map<std::string, std::shared_ptr<ShardStream>> streams;
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    streams = streams_;
    sessions_.clear();
    by_name_.clear();
  }
  // Blocking-pool steps and timers already running finish before the link can be destroyed;
  // later ones do nothing.
  in_flight_->Close();
  for (auto& [endpoint, stream] : streams) stream->Cancel();
  // gRPC finishes cancelled streams on its own threads: wait, so none outlives the link.
  MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (live_streams_ != 0 && streams_done_.WaitUntil(mu_, deadline)) {
  }
  if (live_streams_ != 0) {
    log_.Error("shard streams did not end in time",
               {{"streams", static_cast<int64_t>(live_streams_)}});
  }
}

void FleetWorldLink::AddInProcessShard(const std::string& endpoint, rpc::InProcessPlay& shard) {
  MutexLock lock(mu_);
  in_process_[endpoint] = &shard;
}

std::vector<std::string> FleetWorldLink::ConnectedShards() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [endpoint, stream] : streams_) {
    if (stream->alive()) out.push_back(endpoint);
  }
  return out;
}

Status FleetWorldLink::Enter(EnterRequest request, std::shared_ptr<world::PlayerSink> sink) {
  if (request.assertion.empty()) {
    return Status::InvalidArgument("a fleet gate needs the account service's assertion");
  }
  uint64_t id = 0;
  {
    MutexLock lock(mu_);
    if (stopped_) return Status::Cancelled("gate stopping");
    if (by_name_.count(request.name_key) != 0) {
      return Status::AlreadyExists(request.display_name + " is already in the world");
    }
    id = next_session_++;
    Session& session = sessions_[id];
    session.id = id;
    session.name_key = request.name_key;
    session.display_name = request.display_name;
    session.assertion = std::move(request.assertion);
    session.sink = std::move(sink);
    session.routing_since = clock_.Now();
    by_name_[session.name_key] = id;
  }
  OnBlocking(&FleetWorldLink::Route, id);
  return Status::Ok();
}

void FleetWorldLink::UpdateAssertion(const std::string& name_key, std::string assertion) {
  MutexLock lock(mu_);
  auto by_name = by_name_.find(name_key);
  if (by_name == by_name_.end()) return;
  if (auto it = sessions_.find(by_name->second); it != sessions_.end()) {
    it->second.assertion = std::move(assertion);
  }
}

void FleetWorldLink::OnBlocking(void (FleetWorldLink::*step)(uint64_t), uint64_t id) {
  blocking_(in_flight_->Wrap([this, step, id] { (this->*step)(id); }));
}

Result<std::vector<directory::ShardInfo>> FleetWorldLink::LiveShards() {
  auto shards = directory_.ListShards();
  MutexLock lock(mu_);
  if (shards.ok()) {
    last_shards_ = *shards;
    return shards;
  }
  if (last_shards_.empty()) return shards.status();
  return last_shards_;
}

Result<std::optional<directory::ZoneOwner>> FleetWorldLink::OwnerOf(const std::string& zone) {
  auto owner = directory_.OwnerOfZone(zone);
  MutexLock lock(mu_);
  if (owner.ok()) {
    if (*owner) {
      last_owners_[zone] = **owner;
    } else {
      last_owners_.erase(zone);
    }
    return owner;
  }
  auto cached = last_owners_.find(zone);
  if (cached == last_owners_.end()) return owner.status();
  return std::optional<directory::ZoneOwner>(cached->second);
}

Result<std::string> FleetWorldLink::PickLobbyShard(const std::string& name_key,
                                                   const std::string& resident_shard) {
  auto shards = LiveShards();
  if (!shards.ok()) return shards.status();
  if (shards->empty()) return Status::Unavailable("no world shard is running");
  for (const auto& shard : *shards) {
    if (!resident_shard.empty() && shard.id == resident_shard) return shard.endpoint;
  }
  return (*shards)[NameHash(name_key) % shards->size()].endpoint;
}

void FleetWorldLink::Route(uint64_t id) {
  std::string name_key;
  std::string zone;
  bool lobby_fallback = false;
  {
    MutexLock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    name_key = it->second.name_key;
    zone = it->second.zone_hint;
    lobby_fallback = it->second.lobby_fallback;
  }
  std::string resident_shard;  // where the character still lives, if it has not logged out
  if (lobby_fallback) {
    zone = options_.lobby_zone;
  } else if (zone.empty()) {
    // Unreadable: a lobby shard takes the session and names the character's zone if it is
    // hosted elsewhere.
    auto placement = directory_.LookupPlacement(name_key);
    MutexLock lock(mu_);
    if (placement.ok() && *placement) {
      zone = (*placement)->zone;
      resident_shard = (*placement)->shard;
      if (last_resident_.size() >= kLastResidentMax) last_resident_.clear();
      last_resident_[name_key] = resident_shard;
    } else if (!placement.ok()) {
      // Where it lived when last read: a link-dead copy there must not be claimed elsewhere.
      if (auto it = last_resident_.find(name_key); it != last_resident_.end()) {
        resident_shard = it->second;
      }
    }
  }
  std::string endpoint;
  if (zone.empty() || zone == options_.lobby_zone) {
    // Every shard hosts a lobby: go back to the one the character is still in (link-dead),
    // else to any live shard.
    auto picked = PickLobbyShard(name_key, resident_shard);
    if (!picked.ok()) return RetryRouteLater(id);
    endpoint = *picked;
  } else {
    auto owner = OwnerOf(zone);
    if (!owner.ok() || !*owner || (*owner)->endpoint.empty()) return RetryRouteLater(id);
    endpoint = (*owner)->endpoint;
  }
  auto stream = StreamTo(endpoint);
  telos::v1::GateFrame frame;
  {
    MutexLock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || !stream) return;
    it->second.stream = stream;
    it->second.state = State::kAttaching;
    it->second.attaching_by_token = false;
    frame.mutable_attach()->set_session(id);
    frame.mutable_attach()->set_assertion(it->second.assertion);
    frame.mutable_attach()->set_lobby_fallback(lobby_fallback);
  }
  if (!stream->Write(std::move(frame))) RetryRouteLater(id);
}

void FleetWorldLink::RetryRouteLater(uint64_t id) {
  std::shared_ptr<world::PlayerSink> tell;
  bool give_up = false;
  {
    MutexLock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    Session& session = it->second;
    session.state = State::kRouting;
    session.stream.reset();
    const int64_t waited_ms = ElapsedMs(session.routing_since, clock_.Now());
    if (!session.lobby_fallback && waited_ms >= options_.route_wait_ms) {
      // The zone has had no owner for too long: any shard puts the character in its lobby.
      session.lobby_fallback = true;
      session.zone_hint.clear();
    }
    give_up = waited_ms >= 2 * options_.route_wait_ms;
    if (!give_up && !session.told_waiting) {
      session.told_waiting = true;
      tell = session.sink;
    }
  }
  if (give_up) {
    return Fail(id, "Your part of the world is not being served right now; please try again soon.");
  }
  if (tell) tell->Deliver(Lines({"The world shifts around you... hold on a moment."}));
  auto timer =
      std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(options_.route_retry_ms));
  timer->async_wait(in_flight_->Wrap([this, timer, id](boost::system::error_code ec) {
    if (!ec) OnBlocking(&FleetWorldLink::Route, id);
  }));
}

void FleetWorldLink::Fail(uint64_t id, const std::string& message) {
  std::shared_ptr<world::PlayerSink> sink;
  std::function<void()> remove_done;
  {
    MutexLock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    sink = std::move(it->second.sink);
    remove_done = std::move(it->second.remove_done);
    by_name_.erase(it->second.name_key);
    sessions_.erase(it);
  }
  log_.Warn("session could not be placed",
            {{"session", static_cast<int64_t>(id)}, {"reason", message}});
  if (remove_done) return remove_done();
  sink->Deliver(Lines({message}, true));
}

std::shared_ptr<ShardStream> FleetWorldLink::StreamTo(const std::string& endpoint) {
  std::shared_ptr<ShardStream> stream;
  {
    MutexLock lock(mu_);
    if (stopped_) return nullptr;
    auto it = streams_.find(endpoint);
    if (it != streams_.end() && it->second->alive()) return it->second;
    if (auto local = in_process_.find(endpoint); local != in_process_.end()) {
      stream = std::make_shared<InProcessShardStream>(*this, endpoint, *local->second, io_);
    } else {
      auto& stub = stubs_[endpoint];
      if (!stub) stub = telos::v1::World::NewStub(rpc::MakeChannel(endpoint));
      stream = std::make_shared<GrpcShardStream>(*this, endpoint, *stub, options_.gate_token);
    }
    streams_[endpoint] = stream;
    ++live_streams_;
  }
  stream->Begin(options_.gate_id);
  log_.Info("shard stream opened", {{"endpoint", endpoint}});
  return stream;
}

Status FleetWorldLink::Input(const std::string& name_key, std::string line) {
  std::shared_ptr<ShardStream> stream;
  telos::v1::GateFrame frame;
  {
    MutexLock lock(mu_);
    auto it = by_name_.find(name_key);
    if (it == by_name_.end()) return Status::NotFound(name_key + " is not online");
    Session& session = sessions_[it->second];
    if (session.state != State::kAttached || !session.stream) {
      if (session.queued.size() >= options_.queued_lines_max) {
        return Status::ResourceExhausted("too many lines while between shards");
      }
      session.queued.push_back(std::move(line));
      return Status::Ok();
    }
    stream = session.stream;
    frame.mutable_input()->set_session(session.id);
    frame.mutable_input()->set_line(std::move(line));
  }
  (void)stream->Write(std::move(frame));  // a dead stream re-routes the session on its own
  return Status::Ok();
}

void FleetWorldLink::Remove(const std::string& name_key, std::function<void()> done) {
  std::shared_ptr<ShardStream> stream;
  telos::v1::GateFrame frame;
  {
    MutexLock lock(mu_);
    auto it = by_name_.find(name_key);
    if (it == by_name_.end()) {
      // Not ours any more.
    } else {
      Session& session = sessions_[it->second];
      if (session.state == State::kAttached && session.stream && session.stream->alive()) {
        session.remove_done = std::move(done);
        stream = session.stream;
        frame.mutable_detach()->set_session(session.id);
      } else {
        // Not attached anywhere: the shard that had it keeps it link-dead and saves it.
        by_name_.erase(it);
        sessions_.erase(session.id);
      }
    }
  }
  if (stream) {
    if (stream->Write(std::move(frame))) return;
    MutexLock lock(mu_);
    auto it = by_name_.find(name_key);
    if (it != by_name_.end()) {
      done = std::move(sessions_[it->second].remove_done);
      sessions_.erase(it->second);
      by_name_.erase(it);
    }
  }
  if (done) done();
}

std::vector<world::WhoEntry> FleetWorldLink::Who() const {
  MutexLock lock(mu_);
  std::vector<world::WhoEntry> who;
  for (const auto& [key, id] : by_name_) {
    auto it = sessions_.find(id);
    if (it != sessions_.end()) who.push_back({it->second.display_name, 0, it->second.zone_hint});
  }
  return who;
}

size_t FleetWorldLink::online_count() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

void FleetWorldLink::OnShardFrame(const std::shared_ptr<ShardStream>& stream,
                                  telos::v1::ShardFrame& frame) {
  // Replies first: an Attached answer must be seen before the output that follows it.
  for (const auto& attached : frame.attached()) {
    const uint64_t id = attached.session();
    if (attached.code() == 0) {
      std::vector<std::string> queued;
      {
        MutexLock lock(mu_);
        auto it = sessions_.find(id);
        if (it == sessions_.end() || it->second.stream != stream) continue;
        it->second.state = State::kAttached;
        it->second.attaching_by_token = false;
        it->second.lobby_fallback = false;
        it->second.reroutes = 0;
        it->second.told_waiting = false;
        it->second.zone_hint = attached.zone();
        queued.swap(it->second.queued);
      }
      for (auto& line : queued) {
        telos::v1::GateFrame input;
        input.mutable_input()->set_session(id);
        input.mutable_input()->set_line(std::move(line));
        (void)stream->Write(std::move(input));
      }
      continue;
    }
    const auto code = static_cast<StatusCode>(attached.code());
    bool reroute = false;
    {
      MutexLock lock(mu_);
      auto it = sessions_.find(id);
      // A refusal from a shard this session has since left (an older attempt answering late)
      // says nothing about where it is now.
      if (it == sessions_.end() || it->second.stream != stream) continue;
      Session& session = it->second;
      if (session.reroutes < options_.reroutes_max) {
        if (code == StatusCode::kFailedPrecondition && !attached.zone().empty()) {
          session.zone_hint = attached.zone();
          reroute = true;
        } else if (code == StatusCode::kNotFound && session.attaching_by_token) {
          // The arrival is gone from there: the placement record says where the character is.
          session.zone_hint.clear();
          session.attaching_by_token = false;
          session.routing_since = clock_.Now();  // waiting for an owner starts now, not at login
          reroute = true;
        }
      }
      if (reroute) {
        ++session.reroutes;
        session.state = State::kRouting;
      }
    }
    if (reroute) {
      reroutes_.Increment();
      OnBlocking(&FleetWorldLink::Route, id);
      continue;
    }
    if (code == StatusCode::kUnavailable) {
      // The shard is draining or stopping: its zones are about to have a new owner.
      OnBlocking(&FleetWorldLink::RetryRouteLater, id);
      continue;
    }
    Fail(id, "The world could not take you in: " + attached.message());
  }
  // Outputs: every session looked up under one hold of the lock, delivered outside it.
  std::vector<std::pair<std::shared_ptr<world::PlayerSink>, telos::v1::Output*>> deliveries;
  deliveries.reserve(static_cast<size_t>(frame.outputs_size()));
  {
    MutexLock lock(mu_);
    for (auto& output : *frame.mutable_outputs()) {
      auto it = sessions_.find(output.session());
      if (it == sessions_.end()) continue;
      Session& session = it->second;
      deliveries.emplace_back(session.sink, &output);
      if (session.state == State::kAttached && session.stream && session.stream != stream &&
          !output.disconnect()) {
        // The character's new shard bound this session on its own stream ahead of the old
        // shard's Redirect: input goes there from now on, queued until the Redirect's Attach
        // confirms (never back to the old shard, which no longer has the character).
        session.stream = stream;
        session.state = State::kAttaching;
      }
      if (output.disconnect()) {
        by_name_.erase(session.name_key);
        sessions_.erase(it);
      }
    }
  }
  for (auto& [sink, output] : deliveries) {
    world::PlayerOutput out;
    out.text = std::move(*output->mutable_text());
    for (auto& event : *output->mutable_events()) {
      out.events.push_back({std::move(*event.mutable_name()), std::move(*event.mutable_json())});
    }
    out.disconnect = output->disconnect();
    if (output->echo() == telos::v1::Output::ECHO_OFF) out.echo = world::PlayerOutput::Echo::kOff;
    if (output->echo() == telos::v1::Output::ECHO_ON) out.echo = world::PlayerOutput::Echo::kOn;
    sink->Deliver(std::move(out));
  }
  for (const auto& redirect : frame.redirects()) {
    const uint64_t id = redirect.session();
    if (redirect.endpoint().empty()) {
      // The shard stopped hosting the zone: find its next owner.
      {
        MutexLock lock(mu_);
        auto it = sessions_.find(id);
        if (it == sessions_.end()) continue;
        it->second.stream.reset();
        it->second.state = State::kRouting;
        it->second.routing_since = clock_.Now();
        it->second.zone_hint.clear();
      }
      reroutes_.Increment();
      OnBlocking(&FleetWorldLink::RetryRouteLater, id);
      continue;
    }
    auto target = StreamTo(redirect.endpoint());
    telos::v1::GateFrame attach;
    {
      MutexLock lock(mu_);
      auto it = sessions_.find(id);
      if (it == sessions_.end() || !target) continue;
      it->second.stream = target;
      it->second.state = State::kAttaching;
      it->second.attaching_by_token = true;
      it->second.zone_hint.clear();
      attach.mutable_attach()->set_session(id);
      attach.mutable_attach()->set_handoff_token(redirect.handoff_token());
      attach.mutable_attach()->set_assertion(it->second.assertion);
    }
    redirects_.Increment();
    if (!target->Write(std::move(attach))) {
      OnBlocking(&FleetWorldLink::Route, id);
    }
  }
  for (const auto& removed : frame.removed()) {
    std::function<void()> done;
    {
      MutexLock lock(mu_);
      auto it = sessions_.find(removed.session());
      if (it == sessions_.end()) continue;
      done = std::move(it->second.remove_done);
      by_name_.erase(it->second.name_key);
      sessions_.erase(it);
    }
    if (done) done();
  }
}

void FleetWorldLink::OnStreamDone(const std::shared_ptr<ShardStream>& stream, const Status& why) {
  std::vector<uint64_t> reroute;
  std::vector<std::function<void()>> removed;
  {
    MutexLock lock(mu_);
    auto it = streams_.find(stream->endpoint());
    if (it != streams_.end() && it->second == stream) streams_.erase(it);
    --live_streams_;
    streams_done_.NotifyAll();
    if (stopped_) return;
    for (auto s = sessions_.begin(); s != sessions_.end();) {
      Session& session = s->second;
      if (session.stream != stream) {
        ++s;
        continue;
      }
      if (session.remove_done) {
        removed.push_back(std::move(session.remove_done));
        by_name_.erase(session.name_key);
        s = sessions_.erase(s);
        continue;
      }
      session.stream.reset();
      session.state = State::kRouting;
      session.routing_since = clock_.Now();
      session.zone_hint.clear();
      reroute.push_back(session.id);
      ++s;
    }
  }
  stream_losses_.Increment();
  log_.Warn("shard stream lost", {{"endpoint", stream->endpoint()},
                                  {"sessions", static_cast<int64_t>(reroute.size())},
                                  {"reason", why.ToString()}});
  for (auto& done : removed) done();
  for (uint64_t id : reroute) {
    OnBlocking(&FleetWorldLink::RetryRouteLater, id);
  }
}

}  // namespace telos::gate
