#include "play_stream.h"

#include <boost/asio/post.hpp>

#include "transport_free.h"  // last: nothing above may bring gRPC in

namespace telos::shard {

void AppendOutput(telos::v1::ShardFrame& frame, uint64_t session,
                  const world::PlayerOutput& output) {
  auto* out = frame.add_outputs();
  out->set_session(session);
  out->set_text(output.text);
  for (const auto& event : output.events) {
    auto* e = out->add_events();
    e->set_name(event.name);
    e->set_json(event.json);
  }
  out->set_disconnect(output.disconnect);
  switch (output.echo) {
    case world::PlayerOutput::Echo::kUnchanged: break;
    case world::PlayerOutput::Echo::kOff: out->set_echo(telos::v1::Output::ECHO_OFF); break;
    case world::PlayerOutput::Echo::kOn: out->set_echo(telos::v1::Output::ECHO_ON); break;
  }
}

// ------------------------------------------------------------------ StreamHandle

size_t ApproxBytes(const world::PlayerOutput& output) {
  size_t bytes = 16;
  bytes += output.text.size() + 4;
  for (const auto& event : output.events) bytes += event.name.size() + event.json.size() + 8;
  return bytes;
}

bool StreamHandle::Send(size_t approx_bytes,
                        const std::function<void(telos::v1::ShardFrame&)>& add) {
  std::unique_lock lock(mu_);
  if (wire_ == nullptr || finished_ || reads_ended_) return false;
  if (pending_outputs_ >= bounds_.outputs_max ||
      pending_bytes_ + approx_bytes > bounds_.bytes_max) {
    // The gate is far behind: shed this output rather than grow a frame past the message
    // limit (which would end the whole stream, every session on it).
    if (dropped_ != nullptr) dropped_->Increment();
    return false;
  }
  add(pending_);
  ++pending_outputs_;
  pending_bytes_ += approx_bytes;
  if (!writing_) StartWriteLocked(lock);
  return true;
}

void StreamHandle::StartWriteLocked(std::unique_lock<std::mutex>& lock) {
  writing_frame_.Clear();
  writing_frame_.Swap(&pending_);
  pending_outputs_ = 0;
  pending_bytes_ = 0;
  writing_ = true;
  PlayWire* wire = wire_;
  lock.unlock();
  // The wire cannot finish while this write is outstanding, and writing_frame_ is not
  // touched again until WriteDone.
  wire->WriteFrame(&writing_frame_);
}

void StreamHandle::WriteDone(bool ok) {
  std::unique_lock lock(mu_);
  writing_ = false;
  if (!ok) {
    // The stream broke (or was cancelled); the read side ends too. Finish is still owed once
    // reads have ended, or OnDone never comes.
    pending_.Clear();
    pending_outputs_ = 0;
    pending_bytes_ = 0;
  } else if (pending_outputs_ > 0 && !reads_ended_) {
    return StartWriteLocked(lock);
  }
  if (reads_ended_ && !finished_) {
    finished_ = true;
    PlayWire* wire = wire_;
    const Status status = finish_status_;
    lock.unlock();
    wire->End(status);
  }
}

void StreamHandle::ReadsEnded() {
  std::unique_lock lock(mu_);
  reads_ended_ = true;
  if (writing_ || finished_) return;
  finished_ = true;
  PlayWire* wire = wire_;
  const Status status = finish_status_;
  lock.unlock();
  wire->End(status);
}

void StreamHandle::Refuse(Status status) {
  std::unique_lock lock(mu_);
  if (refused_ || finished_ || wire_ == nullptr) return;
  refused_ = true;
  finish_status_ = std::move(status);
  // Ending the reads here makes Send refuse further output and alive() false; a write in
  // flight finishes the stream when it completes (WriteDone), else it is finished now.
  reads_ended_ = true;
  pending_.Clear();
  pending_outputs_ = 0;
  pending_bytes_ = 0;
  if (writing_) return;
  finished_ = true;
  PlayWire* wire = wire_;
  const Status finish = finish_status_;
  lock.unlock();
  wire->End(finish);
}

bool StreamHandle::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

void StreamHandle::Done() {
  std::lock_guard lock(mu_);
  wire_ = nullptr;
}

bool StreamHandle::alive() const {
  std::lock_guard lock(mu_);
  return wire_ != nullptr && !reads_ended_;
}

void StreamHandle::set_gate_id(std::string id) {
  std::lock_guard lock(mu_);
  gate_id_ = std::move(id);
}

std::string StreamHandle::gate_id() const {
  std::lock_guard lock(mu_);
  return gate_id_;
}

void StreamHandle::BindSession(uint64_t session, const std::string& name_key) {
  std::lock_guard lock(mu_);
  sessions_[session] = name_key;
}

void StreamHandle::UnbindSession(uint64_t session) {
  std::lock_guard lock(mu_);
  sessions_.erase(session);
}

void StreamHandle::UnbindSession(uint64_t session, const std::string& name_key) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session);
  if (it != sessions_.end() && it->second == name_key) sessions_.erase(it);
}

std::optional<std::string> StreamHandle::SessionCharacter(uint64_t session) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return std::nullopt;
  return it->second;
}

std::map<uint64_t, std::string> StreamHandle::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_;
}

// ------------------------------------------------------------------ InProcessPlayWire

InProcessPlayWire::InProcessPlayWire(WorldShard& shard, std::shared_ptr<rpc::PlayGateEnd> gate,
                                     boost::asio::io_context& io, prometheus::Counter* dropped)
    : shard_(shard),
      dropped_(dropped),
      strand_(boost::asio::make_strand(io)),
      gate_(std::move(gate)) {}

void InProcessPlayWire::Open() {
  // One stream carries every player of the process, with no message size to keep under.
  handle_ = std::make_shared<StreamHandle>(
      this, dropped_,
      StreamBounds{.outputs_max = limits::kInProcessPlayPendingOutputsMax,
                   .bytes_max = limits::kInProcessPlayPendingBytesMax});
}

void InProcessPlayWire::WriteFrame(const telos::v1::ShardFrame* frame) {
  // The frame stays the handle's, untouched, until WriteDone: the gate may take its strings.
  boost::asio::post(strand_, [self = shared_from_this(), frame] {
    self->gate_->OnShardFrame(*const_cast<telos::v1::ShardFrame*>(frame));
    self->handle_->WriteDone(true);
  });
}

void InProcessPlayWire::End(Status status) {
  boost::asio::post(strand_, [self = shared_from_this(), status = std::move(status)] {
    self->handle_->Done();
    self->shard_.OnStreamGone(self->handle_);
    // Dropping the gate's end here, and the gate dropping ours at OnShardGone, ends the cycle.
    std::shared_ptr<rpc::PlayGateEnd> gate = std::move(self->gate_);
    gate->OnShardGone(status);
  });
}

void InProcessPlayWire::OnGateFrame(const telos::v1::GateFrame& frame) {
  // Called on the gate's strand, in order. A refused or ended stream reads nothing more.
  if (handle_->refused() || !handle_->alive()) return;
  shard_.OnFrame(handle_, frame);
}

void InProcessPlayWire::OnGateGone() {
  handle_->ReadsEnded();
}

// ------------------------------------------------------------------ SessionSink

void SessionSink::Deliver(world::PlayerOutput output) {
  std::shared_ptr<StreamHandle> stream;
  uint64_t session = 0;
  {
    std::lock_guard lock(mu_);
    stream = stream_.lock();
    session = session_;
    if (!stream) {
      if (buffer_.size() >= kBufferedOutputsMax) buffer_.pop_front();
      buffer_.push_back(std::move(output));
      return;
    }
  }
  const bool sent = stream->Send(ApproxBytes(output), [&](telos::v1::ShardFrame& frame) {
    AppendOutput(frame, session, output);
  });
  if (!sent && !stream->alive()) {
    // The gate went away just now: keep it for whoever attaches next. (A live stream that
    // refused it was too far behind, and the output is shed.)
    std::lock_guard lock(mu_);
    if (buffer_.size() >= kBufferedOutputsMax) buffer_.pop_front();
    buffer_.push_back(std::move(output));
  }
}

std::pair<std::shared_ptr<StreamHandle>, uint64_t> SessionSink::Bind(
    std::shared_ptr<StreamHandle> stream, uint64_t session) {
  std::deque<world::PlayerOutput> buffered;
  std::pair<std::shared_ptr<StreamHandle>, uint64_t> previous;
  {
    std::lock_guard lock(mu_);
    previous = {stream_.lock(), session_};
    stream_ = stream;
    session_ = session;
    ++generation_;
    buffered.swap(buffer_);
  }
  for (const auto& output : buffered) {
    stream->Send(ApproxBytes(output),
                 [&](telos::v1::ShardFrame& frame) { AppendOutput(frame, session, output); });
  }
  return previous;
}

void SessionSink::Unbind() {
  std::lock_guard lock(mu_);
  stream_.reset();
  session_ = 0;
  ++generation_;
}

bool SessionSink::bound() const {
  std::lock_guard lock(mu_);
  return !stream_.expired();
}

std::pair<std::shared_ptr<StreamHandle>, uint64_t> SessionSink::binding() const {
  std::lock_guard lock(mu_);
  return {stream_.lock(), session_};
}

uint64_t SessionSink::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace telos::shard
