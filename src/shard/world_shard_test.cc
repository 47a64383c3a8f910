// WorldShard over real gRPC, in one process and hermetic: the default content pack, zones on
// asio strands run by two threads, an in-memory SQLite store, a MemoryDirectory, keys made here,
// and each shard's World service on 127.0.0.1:0. The tests speak the gate's side of the Play
// stream with a raw stub and wait for frames with a deadline (never a sleep to "let it happen").
#include "telos/shard/world_shard.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "telos/auth/documents.h"
#include "telos/auth/keys.h"
#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/directory/memory_directory.h"
#include "telos/rpc/channels.h"
#include "telos/rpc/in_process_play.h"
#include "telos/rpc/status_mapping.h"
#include "telos/shard/store_ports.h"
#include "telos/shard/world_peers.h"
#include "telos/shard/world_service.h"
#include "telos/store/sqlite_store.h"
#include "telos/world/asio_executor.h"
#include "telos/world/character_state.h"
#include "telos/world/content.h"
#include "telos/world/world_host.h"

namespace telos::directory {
// Readable placements in assertion failures.
void PrintTo(const Placement& p, std::ostream* os) {
  *os << "{zone " << p.zone << ", epoch " << p.epoch << ", nonce " << p.nonce << ", shard '"
      << p.shard << "'}";
}
}  // namespace telos::directory

namespace telos::shard {
namespace {

namespace asio = boost::asio;
using ::testing::HasSubstr;
using ::testing::Not;

// Every wait for something the shard does asynchronously gives up after this.
constexpr auto kWait = std::chrono::seconds(10);
constexpr int64_t kLeaseTtlMs = 600'000;
constexpr int64_t kAssertionTtlMs = 600'000;
constexpr int64_t kSnapshotTtlMs = 60'000;
constexpr size_t kIoThreads = 2;
constexpr size_t kBlockingThreads = 4;
constexpr uint64_t kSeed = 7;
constexpr std::string_view kPasswordHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";
constexpr int32_t kCodeOk = static_cast<int32_t>(StatusCode::kOk);
constexpr int32_t kCodePermissionDenied = static_cast<int32_t>(StatusCode::kPermissionDenied);
constexpr int32_t kCodeFailedPrecondition = static_cast<int32_t>(StatusCode::kFailedPrecondition);
constexpr int32_t kCodeUnavailable = static_cast<int32_t>(StatusCode::kUnavailable);
// The fleet's caller tokens, one per role (WorldShardOptions).
const std::string kGateToken = "gate-token-of-the-test-fleet";
const std::string kWorldToken = "world-token-of-the-test-fleet";

// Polls `done` until it holds or `wait` passes.
bool Eventually(const std::function<bool()>& done,
                std::chrono::steady_clock::duration wait = kWait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The system clock moved by a fixed amount: documents issued "an hour ago".
class ShiftedClock final : public Clock {
 public:
  explicit ShiftedClock(Duration shift) : shift_(shift) {}
  Instant Now() const override { return std::chrono::steady_clock::now() + shift_; }
  WallTime WallNow() const override {
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<WallTime::duration>(shift_);
  }

 private:
  Duration shift_;
};

// Keeps every log line so a test can wait for one (and a failure can print them).
class CaptureSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  bool Contains(std::string_view text) {
    std::lock_guard lock(mutex_);
    return text_.find(text) != std::string::npos;
  }
  std::string Text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    text_.append(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::string text_;  // guarded by mutex_
};

class NoPasswords final : public world::PasswordPort {
 public:
  void Change(std::string, std::string, std::string, std::function<void(Status)> done) override {
    done(Status::Unavailable("password changes are not available here"));
  }
};

// A character store whose next ownership claims are applied and then answered with `lost`, as
// when PostgreSQL goes away mid-write: the row's owner_epoch rose, the caller never heard.
class LosingClaimStore final : public store::CharacterStore {
 public:
  explicit LosingClaimStore(store::CharacterStore& inner) : inner_(inner) {}
  void LoseNextClaims(int n, Status lost) {
    std::lock_guard lock(mu_);
    losses_left_ = n;
    lost_ = std::move(lost);
  }
  Result<store::CharacterRecord> Create(const store::CharacterRecord& r) override {
    return inner_.Create(r);
  }
  Result<store::CharacterRecord> Load(std::string_view name) override { return inner_.Load(name); }
  Result<std::vector<store::CharacterRecord>> ListByAccount(int64_t account_id) override {
    return inner_.ListByAccount(account_id);
  }
  Status Delete(std::string_view name) override { return inner_.Delete(name); }
  Result<store::CharacterRecord> ClaimOwnership(std::string_view name,
                                                int64_t directory_epoch) override {
    auto claimed = inner_.ClaimOwnership(name, directory_epoch);
    std::lock_guard lock(mu_);
    if (losses_left_ == 0) return claimed;
    --losses_left_;
    return lost_;
  }
  Result<int64_t> Save(const store::CharacterRecord& r, int64_t expected_state_version,
                       int64_t writer_owner_epoch) override {
    return inner_.Save(r, expected_state_version, writer_owner_epoch);
  }
  Result<int64_t> RaiseZoneFence(std::string_view zone, int64_t lease_epoch,
                                 std::string_view shard) override {
    return inner_.RaiseZoneFence(zone, lease_epoch, shard);
  }
  Result<std::vector<store::ZoneWrite>> ListZoneWrites(int64_t after_id, size_t limit) override {
    return inner_.ListZoneWrites(after_id, limit);
  }

 private:
  store::CharacterStore& inner_;
  std::mutex mu_;
  int losses_left_ = 0;  // guarded by mu_
  Status lost_;          // guarded by mu_
};

// What every shard of the test fleet shares: clock, log, store, directory, keys and content.
struct Fleet {
  Fleet() {
    auto opened = store::SqliteStore::Open({.path = ":memory:"}, clock);
    RELEASE_ASSERT(opened.ok(), opened.status().ToString());
    db = std::move(opened).value();
    std::vector<world::Problem> problems;
    auto loaded = world::LoadPack(std::filesystem::path(TELOS_SOURCE_DIR) / "content", &problems);
    for (const auto& p : problems) ADD_FAILURE() << p.ToString();
    RELEASE_ASSERT(loaded.ok(), loaded.status().ToString());
    pack = std::make_shared<const world::Pack>(std::move(loaded).value());
  }

  SystemClock clock;  // the strand executors require the system clock
  std::shared_ptr<CaptureSink> sink = std::make_shared<CaptureSink>();
  Logger log{"world_shard_test", LogLevel::kInfo, sink};
  std::unique_ptr<store::SqliteStore> db;
  directory::MemoryDirectory directory{clock};
  const auth::SigningKey account_key = auth::SigningKey::Generate();
  const auth::SigningKey handoff_key = auth::SigningKey::Generate();
  std::shared_ptr<const world::Pack> pack;
};

struct NodeOptions {
  std::string shard_id;
  std::vector<std::string> zones;  // started before the server; the lobby must be among them
  int64_t link_dead_ms = 60'000;
  // The handoff keys the shard accepts; unset: the fleet's handoff key alone.
  std::optional<auth::KeyRing> handoff_verify_keys;
  // How the shard calls its peers: over gRPC (null) or these, in process.
  WorldPeers* peers = nullptr;
  // The character store the shard claims and loads through (null: the fleet's own).
  store::CharacterStore* characters = nullptr;
  int64_t route_refresh_ms = 1'000;  // how often the shard re-reads zone owners on its own
};

// Ends the process with a diagnosis when a blocking step of a teardown does not return in
// time: a hung teardown would otherwise stall the whole test run until ctest's timeout.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::string diagnosis)
      : thread_([this, limit, diagnosis = std::move(diagnosis)] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
            std::fprintf(stderr, "FATAL: %s\n", diagnosis.c_str());
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::thread thread_;
};

// One `telos world` process: host, shard, persistence and a gRPC server on a free port,
// registered in the fleet's directory as the owner of its zones (the lobby excepted).
class Node {
 public:
  Node(Fleet& fleet, const NodeOptions& options)
      : persistence(fleet.db->characters(), metrics, fleet.log),
        mail(fleet.db->mail(), Blocking()) {
    persistence.Start();
    for (size_t i = 0; i < kIoThreads; ++i) io_threads.emplace_back([this] { io.run(); });
    world::ZoneDeps deps;
    deps.clock = &fleet.clock;
    deps.logger = &fleet.log;
    deps.metrics = &metrics;
    deps.persistence = &persistence;
    deps.mail = &mail;
    deps.passwords = &passwords;
    host = std::make_unique<world::WorldHost>(
        fleet.pack, deps, [this](const std::string&) { return world::MakeStrandExecutor(io); },
        kSeed);

    WorldShardOptions shard_options;
    shard_options.shard_id = options.shard_id;
    // The shard learns peers' endpoints from the directory only; its own is registered below,
    // once the server has picked a port.
    shard_options.lobby_zone = fleet.pack->start_room.zone;
    shard_options.link_dead_ms = options.link_dead_ms;
    shard_options.route_refresh_ms = options.route_refresh_ms;
    shard = std::make_unique<WorldShard>(
        shard_options, *host, fleet.directory,
        options.characters != nullptr ? *options.characters : fleet.db->characters(), persistence,
        fleet.account_key.verify_key(), fleet.handoff_key,
        options.peers != nullptr ? *options.peers : grpc_peers, io, Blocking(), fleet.clock,
        fleet.log, metrics);
    service = std::make_unique<WorldService>(
        *shard, WorldServiceOptions{.gate_token = kGateToken, .world_token = kWorldToken},
        fleet.log);
    host->SetFleetHooks(shard.get());
    for (const auto& zone : options.zones) {
      const Status s = host->StartZone(zone);
      RELEASE_ASSERT(s.ok(), s.ToString());
    }

    grpc::ServerBuilder builder;
    rpc::ConfigureServer(builder);
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    RELEASE_ASSERT(server != nullptr && port != 0, "the test server did not start");
    endpoint = "127.0.0.1:" + std::to_string(port);

    RELEASE_ASSERT(fleet.directory.RegisterShard(options.shard_id, endpoint, kLeaseTtlMs).ok(),
                   "RegisterShard");
    for (const auto& zone : options.zones) {
      if (zone == shard_options.lobby_zone) continue;
      auto grant = fleet.directory.ClaimZone(zone, options.shard_id, kLeaseTtlMs);
      RELEASE_ASSERT(grant.ok(), grant.status().ToString());
    }
    if (options.handoff_verify_keys) shard->SetHandoffVerifyKeys(*options.handoff_verify_keys);
    shard->Start();
    stub = telos::v1::World::NewStub(rpc::MakeChannel(endpoint));
  }

  // The shutdown order of apps/telos/world_role.cc.
  ~Node() {
    shard->Stop();
    std::mutex mu;
    std::condition_variable cv;
    size_t zones_left = 0;
    for (const auto& zone : host->RunningZones()) {
      std::lock_guard lock(mu);
      const Status s = host->StopZone(zone, [&](std::vector<world::PlayerTransfer>) {
        std::lock_guard inner(mu);
        --zones_left;
        cv.notify_all();
      });
      if (s.ok()) ++zones_left;
    }
    {
      std::unique_lock lock(mu);
      cv.wait_for(lock, kWait, [&] { return zones_left == 0; });
    }
    (void)persistence.FlushAll(kWait);
    {
      // A Play reactor that never calls Finish makes Shutdown wait forever (see
      // BackedUpGateLostLeavesCharacterLinkDeadThenRemoved below).
      Watchdog watchdog(std::chrono::seconds(10),
                        "grpc::Server::Shutdown did not return: a Play stream was never finished "
                        "(the StreamHandle::WriteDone bug in src/shard/play_stream.cc)");
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    }
    blocking.join();
    persistence.Stop();
    work.reset();
    io.stop();
    for (auto& t : io_threads) t.join();
  }

  BlockingRunner Blocking() {
    return [this](std::function<void()> task) { asio::post(blocking, std::move(task)); };
  }

  // Declaration order is destruction order reversed: the io_context (whose queued handlers may
  // keep stopped zones alive) goes before the host and the ports those zones use.
  Metrics metrics;
  StorePersistence persistence;
  NoPasswords passwords;
  asio::thread_pool blocking{kBlockingThreads};
  StoreMail mail;
  std::unique_ptr<world::WorldHost> host;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::thread> io_threads;
  GrpcWorldPeers grpc_peers{kWorldToken};  // unless NodeOptions::peers names others
  std::unique_ptr<WorldShard> shard;
  std::unique_ptr<WorldService> service;  // the gRPC face of shard, registered with server
  std::unique_ptr<grpc::Server> server;
  std::string endpoint;
  std::unique_ptr<telos::v1::World::Stub> stub;
};

// A stub whose channel has a small, fixed receive window (no BDP growth), so that the shard's
// writes stall as soon as the gate stops reading. Messages up to rpc::kMessageBytesMax, as a
// gate's channel (rpc::MakeChannel).
std::unique_ptr<telos::v1::World::Stub> SmallWindowStub(const std::string& endpoint) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 * 1024);
  args.SetMaxReceiveMessageSize(rpc::kMessageBytesMax);
  args.SetMaxSendMessageSize(rpc::kMessageBytesMax);
  return telos::v1::World::NewStub(
      grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args));
}

// The gate's end of one Play stream: a reader thread files every incoming item by kind, and the
// test takes them out per session, waiting up to kWait.
class GateStream {
 public:
  GateStream(telos::v1::World::Stub& stub, const std::string& gate_id,
             const std::string& token = kGateToken) {
    rpc::AddCallerToken(context_, token);
    stream_ = stub.Play(&context_);
    reader_ = std::thread([this] { ReadLoop(); });
    telos::v1::GateFrame hello;
    hello.mutable_hello()->set_gate_id(gate_id);
    Write(hello);
  }
  ~GateStream() { Close(); }

  GateStream(const GateStream&) = delete;
  GateStream& operator=(const GateStream&) = delete;

  // Ends the call as a gate shutting down does: half-closes, reads until the shard finishes the
  // stream (so no write of the shard's is cut off), then collects the status. Cancels only if
  // the shard does not finish within kWait.
  void Close() {
    if (!reader_.joinable()) return;
    {
      std::lock_guard lock(write_mu_);
      (void)stream_->WritesDone();  // false when the stream already ended
    }
    ResumeReading();
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, kWait, [&] { return ended_; })) {
        ADD_FAILURE() << "the shard did not finish a half-closed Play stream";
        context_.TryCancel();
      }
    }
    reader_.join();
    (void)stream_->Finish();
  }

  // Ends the call abruptly, as a crashed gate (or a dropped connection) would, and waits for
  // the read side to end.
  void Cancel() {
    if (!reader_.joinable()) return;
    context_.TryCancel();
    ResumeReading();
    reader_.join();
    (void)stream_->Finish();
  }

  void Attach(uint64_t session, const std::string& assertion) {
    telos::v1::GateFrame frame;
    frame.mutable_attach()->set_session(session);
    frame.mutable_attach()->set_assertion(assertion);
    Write(frame);
  }
  void AttachWithToken(uint64_t session, const std::string& token) {
    telos::v1::GateFrame frame;
    frame.mutable_attach()->set_session(session);
    frame.mutable_attach()->set_handoff_token(token);
    Write(frame);
  }
  void Input(uint64_t session, const std::string& line) {
    telos::v1::GateFrame frame;
    frame.mutable_input()->set_session(session);
    frame.mutable_input()->set_line(line);
    Write(frame);
  }
  void Detach(uint64_t session) {
    telos::v1::GateFrame frame;
    frame.mutable_detach()->set_session(session);
    Write(frame);
  }

  std::optional<telos::v1::Attached> NextAttached(uint64_t session) {
    return Take(attached_, session);
  }
  std::optional<telos::v1::Redirect> NextRedirect(uint64_t session) {
    return Take(redirects_, session);
  }
  bool Removed(uint64_t session) { return Take(removed_, session).has_value(); }

  // Takes the session's output until a line containing `text` has arrived (or kWait passed) and
  // returns every line taken, joined by '\n'.
  std::string OutputUntil(uint64_t session, std::string_view text) {
    std::string seen;
    FindOutput(session, [&](const telos::v1::Output& out) {
      seen += out.text();
      return seen.find(text) != std::string::npos;
    });
    return seen;
  }

  // Takes the session's output until an Output with `disconnect` set has arrived.
  std::optional<telos::v1::Output> NextDisconnect(uint64_t session) {
    std::optional<telos::v1::Output> found;
    FindOutput(session, [&](const telos::v1::Output& out) {
      if (out.disconnect()) found = out;
      return out.disconnect();
    });
    return found;
  }

  // Whether the stream has ended (the shard finished it, or it broke).
  bool ended() {
    std::lock_guard lock(mu_);
    return ended_;
  }

  // Half-closes: the gate will send nothing more (the shard's reads end cleanly).
  void CloseWrites() {
    std::lock_guard lock(write_mu_);
    EXPECT_TRUE(stream_->WritesDone());
  }

  // Stops taking frames off the stream (after the one being read), as a slow gate would.
  void PauseReading() {
    std::lock_guard lock(mu_);
    paused_ = true;
  }
  void ResumeReading() {
    {
      std::lock_guard lock(mu_);
      paused_ = false;
    }
    cv_.notify_all();
  }

 private:
  void Write(const telos::v1::GateFrame& frame) {
    std::lock_guard lock(write_mu_);
    EXPECT_TRUE(stream_->Write(frame)) << "the Play stream is closed";
  }

  void ReadLoop() {
    telos::v1::ShardFrame frame;
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !paused_; });
      }
      if (!stream_->Read(&frame)) {
        std::lock_guard lock(mu_);
        ended_ = true;
        cv_.notify_all();
        return;
      }
      std::lock_guard lock(mu_);
      for (const auto& a : frame.attached()) attached_.push_back(a);
      for (const auto& o : frame.outputs()) outputs_.push_back(o);
      for (const auto& r : frame.redirects()) redirects_.push_back(r);
      for (const auto& r : frame.removed()) removed_.push_back(r);
      cv_.notify_all();
    }
  }

  template <typename T>
  std::optional<T> Take(std::deque<T>& queue, uint64_t session) {
    std::unique_lock lock(mu_);
    std::optional<T> found;
    cv_.wait_until(lock, std::chrono::steady_clock::now() + kWait, [&] {
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (it->session() != session) continue;
        found = *it;
        queue.erase(it);
        return true;
      }
      return ended_;  // nothing more will come
    });
    return found;
  }

  // Hands the session's outputs, oldest first, to `stop` until it returns true or kWait passes.
  void FindOutput(uint64_t session, const std::function<bool(const telos::v1::Output&)>& stop) {
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, std::chrono::steady_clock::now() + kWait, [&] {
      for (auto it = outputs_.begin(); it != outputs_.end();) {
        if (it->session() != session) {
          ++it;
          continue;
        }
        const telos::v1::Output out = *it;
        it = outputs_.erase(it);
        if (stop(out)) return true;
      }
      return ended_;  // nothing more will come
    });
  }

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<telos::v1::GateFrame, telos::v1::ShardFrame>> stream_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<telos::v1::Attached> attached_;   // guarded by mu_
  std::deque<telos::v1::Output> outputs_;      // guarded by mu_
  std::deque<telos::v1::Redirect> redirects_;  // guarded by mu_
  std::deque<telos::v1::Removed> removed_;     // guarded by mu_
  bool paused_ = false;                        // guarded by mu_
  bool ended_ = false;                         // guarded by mu_; Read() returned false
  std::thread reader_;
};

class WorldShardTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!HasFailure()) return;
    constexpr size_t kLogTailBytes = 16 * 1024;
    const std::string log = fleet_.sink->Text();
    if (log.empty()) return;  // a scenario that ran in a child process logged there
    std::fprintf(stderr, "---- log (last %zu bytes)\n%s", kLogTailBytes,
                 log.substr(log.size() > kLogTailBytes ? log.size() - kLogTailBytes : 0).c_str());
  }

  Node& StartNode(const NodeOptions& options) {
    nodes_.push_back(std::make_unique<Node>(fleet_, options));
    return *nodes_.back();
  }

  int64_t CreateAccount(const std::string& name) {
    auto account = fleet_.db->accounts().Create(name, kPasswordHash);
    RELEASE_ASSERT(account.ok(), account.status().ToString());
    return account->id;
  }

  // A stored character standing in `room` ("zone:room").
  void CreateCharacter(int64_t account_id, const std::string& name, const std::string& room) {
    world::CharacterState state = world::NewCharacter(name, *world::ParseRef(room, ""));
    state.colour = false;
    store::CharacterRecord record;
    record.name = name;
    record.account_id = account_id;
    record.zone_id = state.room.zone;
    record.room_id = state.room.id;
    record.state_json = world::EncodeCharacter(state);
    auto created = fleet_.db->characters().Create(record);
    RELEASE_ASSERT(created.ok(), created.status().ToString());
  }

  store::CharacterRecord Row(const std::string& name) {
    auto row = fleet_.db->characters().Load(name);
    RELEASE_ASSERT(row.ok(), row.status().ToString());
    return *row;
  }

  std::optional<directory::Placement> PlacementOf(const std::string& name_key) {
    auto placement = fleet_.directory.LookupPlacement(name_key);
    RELEASE_ASSERT(placement.ok(), placement.status().ToString());
    return *placement;
  }

  // An assertion for `character` issued for `gate_id`, the gate whose stream presents it.
  std::string Assertion(int64_t account_id, const std::string& character,
                        const std::string& gate_id = "gate-1") {
    return auth::IssueAssertion(fleet_.account_key, account_id, character, gate_id, kAssertionTtlMs,
                                fleet_.clock);
  }

  // A snapshot of a fresh character walking into `room` from another shard.
  auth::HandoffSnapshot Snapshot(int64_t account_id, const std::string& name,
                                 const std::string& room, uint64_t placement_epoch) {
    world::CharacterState state = world::NewCharacter(name, *world::ParseRef(room, ""));
    state.colour = false;
    auth::HandoffSnapshot snapshot;
    snapshot.character = name;
    snapshot.account_id = account_id;
    snapshot.state_json = world::EncodeCharacter(state);
    snapshot.zone = state.room.zone;
    snapshot.placement_epoch = placement_epoch;
    snapshot.nonce = auth::RandomToken();
    snapshot.from_shard = "elsewhere";
    snapshot.gate_id = "gate-1";
    snapshot.session = 7;
    snapshot.token = auth::RandomToken();
    snapshot.arrival = {"You step out of the mist."};
    snapshot.expires_unix_ms = NowUnixMs() + kSnapshotTtlMs;
    snapshot.assertion = Assertion(account_id, name);
    return snapshot;
  }

  // The core's Handoff, called directly (no transport; WorldMethodsAreRefusedWithoutTheWorldToken
  // covers the gRPC adapter in front of it). An accepted handoff names the shard that took it.
  static Status Handoff(Node& node, const std::string& blob) {
    telos::v1::SignedBlob request;
    RELEASE_ASSERT(request.ParseFromString(blob), "a signed snapshot parses");
    auto answer = std::make_shared<std::promise<Result<telos::v1::HandoffReply>>>();
    auto future = answer->get_future();
    node.shard->Handoff(request, [answer](Result<telos::v1::HandoffReply> reply) {
      answer->set_value(std::move(reply));
    });
    RELEASE_ASSERT(future.wait_for(kWait) == std::future_status::ready, "Handoff never answered");
    Result<telos::v1::HandoffReply> reply = future.get();
    if (!reply.ok()) return reply.status();
    EXPECT_EQ(reply->shard_id(), node.shard->Describe().shard_id());
    return Status::Ok();
  }
  // The core's Adopt, called directly, waiting for its answer.
  static Status Adopt(Node& node, const std::string& zone, uint64_t epoch) {
    telos::v1::AdoptRequest request;
    request.set_zone(zone);
    request.set_epoch(epoch);
    request.set_from_shard("elsewhere");
    auto answer = std::make_shared<std::promise<Status>>();
    auto future = answer->get_future();
    node.shard->Adopt(request, [answer](Status s) { answer->set_value(std::move(s)); });
    RELEASE_ASSERT(future.wait_for(kWait) == std::future_status::ready, "Adopt never answered");
    return future.get();
  }
  // An Adopt over gRPC with the world token, with gRPC's own status.
  static grpc::Status AdoptOverGrpc(Node& node, const std::string& zone, uint64_t epoch) {
    telos::v1::AdoptRequest request;
    request.set_zone(zone);
    request.set_epoch(epoch);
    request.set_from_shard("elsewhere");
    telos::v1::Empty reply;
    grpc::ClientContext context;
    rpc::PrepareCall(context, kWait, kWorldToken);
    return node.stub->Adopt(&context, request, &reply);
  }
  // A Handoff call presenting `token` (empty: none), with gRPC's own status.
  static grpc::Status HandoffAs(Node& node, const std::string& blob, const std::string& token) {
    telos::v1::SignedBlob request;
    RELEASE_ASSERT(request.ParseFromString(blob), "a signed snapshot parses");
    telos::v1::HandoffReply reply;
    grpc::ClientContext context;
    rpc::PrepareCall(context, kWait, token);
    return node.stub->Handoff(&context, request, &reply);
  }

  Fleet fleet_;
  // For nodes started with NodeOptions::peers = &in_process_peers_: outlives them.
  InProcessWorldPeers in_process_peers_;
  std::vector<std::unique_ptr<Node>> nodes_;  // after fleet_: stopped before it goes
};

// ------------------------------------------------------------------ login, play, detach

TEST_F(WorldShardTest, LoginAttachPlaysAndDetachSavesAndTombstones) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const int64_t version_before = Row("Alice").state_version;

  GateStream gate(*a.stub, "gate-1");
  gate.Attach(1, Assertion(account, "Alice"));
  auto attached = gate.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "lobby");
  EXPECT_THAT(gate.OutputUntil(1, "The Atrium of Arrivals"), HasSubstr("The Atrium of Arrivals"));
  EXPECT_EQ(a.host->ZoneOf("alice"), "lobby");
  EXPECT_GE(Row("Alice").owner_epoch, 1);  // claimed at login

  gate.Input(1, "look north");
  EXPECT_THAT(gate.OutputUntil(1, "compass roses"), HasSubstr("opens on the Hall of Maps"));

  // The residency is registered (a first residency starts the epoch at 1).
  EXPECT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard == "a" && p->zone == "lobby" && p->epoch == 1;
  }));

  gate.Detach(1);
  EXPECT_TRUE(gate.Removed(1));
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
  EXPECT_EQ(a.shard->residents(), 0u);
  EXPECT_TRUE(Eventually([&] { return Row("Alice").state_version > version_before; }));
  EXPECT_EQ(Row("Alice").zone_id, "lobby");
  EXPECT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard.empty() && p->zone == "lobby" && p->epoch >= 1;
  })) << "the placement was not tombstoned";
}

// The gate's end of an in-process Play stream, as `telos serve`'s gate holds it: every frame
// the shard hands over is kept, and the test waits on what it needs.
class InProcessGate final : public rpc::PlayGateEnd {
 public:
  void OnShardFrame(telos::v1::ShardFrame& frame) override {
    std::lock_guard lock(mu_);
    for (const auto& a : frame.attached()) attached_.push_back(a);
    for (const auto& out : frame.outputs()) text_ += out.text();
    for (const auto& r : frame.removed()) removed_.push_back(r.session());
  }
  void OnShardGone(const Status& why) override {
    std::lock_guard lock(mu_);
    ++gone_;
    why_ = why;
  }
  std::vector<telos::v1::Attached> attached() const {
    std::lock_guard lock(mu_);
    return attached_;
  }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }
  std::vector<uint64_t> removed() const {
    std::lock_guard lock(mu_);
    return removed_;
  }
  int gone() const {
    std::lock_guard lock(mu_);
    return gone_;
  }
  // Why the shard ended the stream (meaningful once gone() > 0).
  Status why() const {
    std::lock_guard lock(mu_);
    return why_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<telos::v1::Attached> attached_;
  std::string text_;
  std::vector<uint64_t> removed_;
  int gone_ = 0;
  Status why_;
};

// `telos serve` runs this shard with its gate in the same process: the very Play stream logic,
// carried in memory. A login attaches, plays, and a detach saves and tombstones as over gRPC;
// ending the stream from the gate's side ends it once from the shard's.
TEST_F(WorldShardTest, AGateInTheSameProcessPlaysOverAnInProcessStream) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  auto gate = std::make_shared<InProcessGate>();
  std::shared_ptr<rpc::PlayShardEnd> shard = a.shard->OpenPlay(gate);
  telos::v1::GateFrame frame;
  frame.mutable_hello()->set_gate_id("serve");
  shard->OnGateFrame(frame);
  frame.Clear();
  frame.mutable_attach()->set_session(1);
  frame.mutable_attach()->set_assertion(Assertion(account, "Alice", "serve"));
  shard->OnGateFrame(frame);
  ASSERT_TRUE(Eventually([&] { return !gate->attached().empty(); }));
  EXPECT_EQ(gate->attached()[0].code(), kCodeOk) << gate->attached()[0].message();
  EXPECT_TRUE(Eventually([&] {
    return gate->text().find("The Atrium of Arrivals") != std::string::npos;
  })) << gate->text();
  EXPECT_EQ(a.shard->streams(), 1u);

  frame.Clear();
  frame.mutable_input()->set_session(1);
  frame.mutable_input()->set_line("look north");
  shard->OnGateFrame(frame);
  EXPECT_TRUE(Eventually([&] {
    return gate->text().find("opens on the Hall of Maps") != std::string::npos;
  })) << gate->text();

  frame.Clear();
  frame.mutable_detach()->set_session(1);
  shard->OnGateFrame(frame);
  ASSERT_TRUE(Eventually([&] { return !gate->removed().empty(); }));
  EXPECT_EQ(gate->removed(), std::vector<uint64_t>{1});
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
  EXPECT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard.empty() && p->zone == "lobby";
  })) << "the placement was not tombstoned";

  shard->OnGateGone();
  ASSERT_TRUE(Eventually([&] { return gate->gone() == 1; }));
  EXPECT_TRUE(Eventually([&] { return a.shard->streams() == 0; }));
}

// The hello refusals of AHelloWithAGateIdLiveOnAnotherStreamIsRefused, on in-process streams:
// the core ends a refused stream with a telos Status and the gate's end hears why, with no gRPC
// type on the way (the in-process wire used to drop the reason).
TEST_F(WorldShardTest, AnInProcessHelloRefusalTellsTheGateWhy) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const auto hello = [](const std::string& gate_id) {
    telos::v1::GateFrame frame;
    frame.mutable_hello()->set_gate_id(gate_id);
    return frame;
  };
  auto first = std::make_shared<InProcessGate>();
  std::shared_ptr<rpc::PlayShardEnd> first_end = a.shard->OpenPlay(first);
  first_end->OnGateFrame(hello("serve"));
  ASSERT_TRUE(Eventually([&] { return a.shard->streams() == 1; }));

  const auto refused = [&](const std::vector<telos::v1::GateFrame>& frames) {
    auto gate = std::make_shared<InProcessGate>();
    std::shared_ptr<rpc::PlayShardEnd> end = a.shard->OpenPlay(gate);
    for (const auto& frame : frames) end->OnGateFrame(frame);
    EXPECT_TRUE(Eventually([&] { return gate->gone() == 1; }));
    return gate->why();
  };
  const Status impostor = refused({hello("serve")});
  EXPECT_EQ(impostor.code(), StatusCode::kAlreadyExists) << impostor.ToString();
  EXPECT_THAT(impostor.message(), HasSubstr("already has a live stream"));
  EXPECT_EQ(refused({hello("gate-3"), hello("gate-4")}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused({hello("")}).code(), StatusCode::kInvalidArgument);

  // The first stream was told nothing and ends cleanly when its gate ends it.
  EXPECT_EQ(first->gone(), 0);
  first_end->OnGateGone();
  ASSERT_TRUE(Eventually([&] { return first->gone() == 1; }));
  EXPECT_TRUE(first->why().ok()) << first->why().ToString();
}

// ------------------------------------------------------------------ refused attaches

TEST_F(WorldShardTest, AttachRefusals) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t alice = CreateAccount("alice");
  const int64_t bob = CreateAccount("bob");
  CreateCharacter(alice, "Alice", "lobby:atrium");
  CreateCharacter(bob, "Bram", "lobby:atrium");
  CreateCharacter(alice, "Fern", "forest:forest_edge");  // a zone shard a does not run

  GateStream gate(*a.stub, "gate-1");
  auto code_of = [&](uint64_t session) {
    auto attached = gate.NextAttached(session);
    return attached ? attached->code() : -1;
  };

  // Signed by a key the shard does not trust.
  const auth::SigningKey stranger = auth::SigningKey::Generate();
  gate.Attach(
      1, auth::IssueAssertion(stranger, alice, "Alice", "gate-1", kAssertionTtlMs, fleet_.clock));
  EXPECT_EQ(code_of(1), kCodePermissionDenied);

  // Expired: issued an hour ago for a minute.
  const ShiftedClock hour_ago(std::chrono::hours(-1));
  gate.Attach(2,
              auth::IssueAssertion(fleet_.account_key, alice, "Alice", "gate-1", 60'000, hour_ago));
  EXPECT_EQ(code_of(2), kCodePermissionDenied);

  // Not a signed document at all.
  gate.Attach(3, "\x01\x02garbage bytes");
  EXPECT_EQ(code_of(3), kCodePermissionDenied);

  // Validly signed, but issued for another gate (issue 23 item 3): a gate cannot play the
  // assertions another gate's players logged in with.
  gate.Attach(8, Assertion(alice, "Alice", "gate-2"));
  auto other_gate = gate.NextAttached(8);
  ASSERT_TRUE(other_gate.has_value());
  EXPECT_EQ(other_gate->code(), kCodePermissionDenied);
  EXPECT_EQ(other_gate->message(), "assertion: issued for another gate");

  // Validly signed, but for a character of another account.
  gate.Attach(4, Assertion(alice, "Bram"));
  EXPECT_EQ(code_of(4), kCodePermissionDenied);

  // The character stands in a zone this shard does not run: the answer names that zone.
  gate.Attach(5, Assertion(alice, "Fern"));
  auto elsewhere = gate.NextAttached(5);
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_EQ(elsewhere->code(), kCodeFailedPrecondition) << elsewhere->message();
  EXPECT_EQ(elsewhere->zone(), "forest");

  EXPECT_EQ(a.shard->residents(), 0u);
  EXPECT_EQ(a.host->online_count(), 0u);
  EXPECT_EQ(Row("Bram").owner_epoch, 0);  // never claimed
  EXPECT_EQ(Row("Fern").owner_epoch, 0);

  // Once Alice plays here, another account's assertion cannot take her over either.
  gate.Attach(6, Assertion(alice, "Alice"));
  EXPECT_EQ(code_of(6), kCodeOk);
  gate.Attach(7, Assertion(bob, "Alice"));
  EXPECT_EQ(code_of(7), kCodePermissionDenied);
}

// A login whose ownership claim was lost with the store (UnknownResult, DeadlineExceeded: the
// store went away mid-write) is answered Unavailable, which the gate retries on its own, not a
// refusal that drops the player (issue 22, the flake of chaos test_6). The retry plays.
TEST_F(WorldShardTest, ALoginWhoseClaimWasLostWithTheStoreIsRetriedNotRefused) {
  LosingClaimStore characters(fleet_.db->characters());
  NodeOptions options{"a", {"lobby", "town"}};
  options.characters = &characters;
  Node& a = StartNode(options);
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");

  GateStream gate(*a.stub, "gate-1");
  const Status lost[] = {Status::UnknownResult("connection lost during COMMIT"),
                         Status::DeadlineExceeded("statement timeout")};
  uint64_t session = 1;
  for (const Status& why : lost) {
    characters.LoseNextClaims(1, why);
    gate.Attach(session, Assertion(account, "Alice"));
    auto attached = gate.NextAttached(session);
    ASSERT_TRUE(attached.has_value()) << why.ToString();
    EXPECT_EQ(attached->code(), kCodeUnavailable) << why.ToString() << ": " << attached->message();
    EXPECT_EQ(a.shard->residents(), 0u);
    ++session;
  }
  const int64_t lost_epoch = Row("Alice").owner_epoch;  // the lost claims were applied
  gate.Attach(session, Assertion(account, "Alice"));
  auto attached = gate.NextAttached(session);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_THAT(gate.OutputUntil(session, "The Atrium of Arrivals"),
              HasSubstr("The Atrium of Arrivals"));
  EXPECT_GT(Row("Alice").owner_epoch, lost_epoch);  // the retry fences what the lost claim held
}

// ------------------------------------------------------------------ callers and gate ids

// Opens a Play stream presenting `token` (empty: none), writes `frames` and half-closes at once;
// returns the status the shard ended the stream with. A stream the shard accepted ends OK as
// soon as its reads end, so an acceptance is told from a refusal without waiting.
grpc::Status PlayFrames(telos::v1::World::Stub& stub, const std::string& token,
                        const std::vector<telos::v1::GateFrame>& frames) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kWait);
  rpc::AddCallerToken(context, token);
  auto stream = stub.Play(&context);
  for (const auto& frame : frames) {
    if (!stream->Write(frame)) break;  // a refused stream may have ended already
  }
  (void)stream->WritesDone();
  telos::v1::ShardFrame frame;
  while (stream->Read(&frame)) {
  }
  return stream->Finish();
}

telos::v1::GateFrame HelloFrame(const std::string& gate_id) {
  telos::v1::GateFrame frame;
  frame.mutable_hello()->set_gate_id(gate_id);
  return frame;
}

telos::v1::GateFrame AttachFrame(uint64_t session, const std::string& assertion) {
  telos::v1::GateFrame frame;
  frame.mutable_attach()->set_session(session);
  frame.mutable_attach()->set_assertion(assertion);
  return frame;
}

// Only a gate's token opens a Play stream: without it, or with a world's, the stream ends at
// once and nothing it sent was acted on (here: a valid login that would have claimed Alice).
TEST_F(WorldShardTest, PlayIsRefusedWithoutTheGateToken) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const std::vector<telos::v1::GateFrame> login = {HelloFrame("gate-1"),
                                                   AttachFrame(1, Assertion(account, "Alice"))};

  EXPECT_EQ(PlayFrames(*a.stub, "", login).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(PlayFrames(*a.stub, "a-token-nobody-was-given", login).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(PlayFrames(*a.stub, kWorldToken, login).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(a.shard->residents(), 0u);
  EXPECT_EQ(a.host->online_count(), 0u);
  EXPECT_EQ(Row("Alice").owner_epoch, 0) << "a refused caller claimed the character";
  EXPECT_TRUE(fleet_.sink->Contains("security: caller refused"));

  // The gate's token opens it.
  GateStream gate(*a.stub, "gate-1", kGateToken);
  gate.Attach(1, Assertion(account, "Alice"));
  auto attached = gate.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
}

// Handoff, Adopt and Describe are world-to-world: a gate's token does not open them, and
// neither does no token. Refused calls change nothing.
TEST_F(WorldShardTest, WorldMethodsAreRefusedWithoutTheWorldToken) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  std::vector<std::string> adopted;  // written by the adopter, read after the RPC returned
  std::mutex adopted_mu;
  a.shard->SetAdopter([&](const std::string& zone, uint64_t) {
    std::lock_guard lock(adopted_mu);
    adopted.push_back(zone);
    return Status::Ok();
  });
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const std::string blob =
      auth::SignSnapshot(fleet_.handoff_key, Snapshot(account, "Alice", "town:square", 2));

  EXPECT_EQ(HandoffAs(a, blob, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(HandoffAs(a, blob, kGateToken).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(PlacementOf("alice"), std::nullopt) << "a refused handoff moved the placement";
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);

  auto adopt = [&](const std::string& token) {
    telos::v1::AdoptRequest request;
    request.set_zone("town");
    request.set_epoch(9);
    request.set_from_shard("elsewhere");
    telos::v1::Empty reply;
    grpc::ClientContext context;
    rpc::PrepareCall(context, kWait, token);
    return a.stub->Adopt(&context, request, &reply);
  };
  EXPECT_EQ(adopt("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(adopt(kGateToken).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  {
    std::lock_guard lock(adopted_mu);
    EXPECT_TRUE(adopted.empty()) << "a refused Adopt reached the adopter";
  }

  auto describe = [&](const std::string& token, telos::v1::ShardDescription* reply) {
    telos::v1::Empty request;
    grpc::ClientContext context;
    rpc::PrepareCall(context, kWait, token);
    return a.stub->Describe(&context, request, reply);
  };
  telos::v1::ShardDescription refused;
  EXPECT_EQ(describe("", &refused).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(describe(kGateToken, &refused).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.shard_id(), "") << "a refused Describe answered";

  // With the world token each goes through.
  telos::v1::ShardDescription described;
  const grpc::Status ok = describe(kWorldToken, &described);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(described.shard_id(), "a");
  EXPECT_TRUE(adopt(kWorldToken).ok());
  {
    std::lock_guard lock(adopted_mu);
    EXPECT_EQ(adopted, std::vector<std::string>{"town"});
  }
  const grpc::Status handed = HandoffAs(a, blob, kWorldToken);
  EXPECT_TRUE(handed.ok()) << handed.error_message();
  EXPECT_EQ(a.host->ZoneOf("alice"), "town");
}

// A world's own calls to its peers carry the world token.
TEST_F(WorldShardTest, AWorldCallsItsPeersWithTheWorldToken) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  Node& b = StartNode({"b", {"lobby", "forest"}});
  std::atomic<int> adopted{0};
  a.shard->SetAdopter([&](const std::string&, uint64_t) {
    ++adopted;
    return Status::Ok();
  });
  const Status s = b.shard->CallAdopt({"a", a.endpoint, 3, kLeaseTtlMs}, "town", 3);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(adopted.load(), 1);
  EXPECT_EQ(b.shard->FindPackDivergence(), std::nullopt);
  EXPECT_FALSE(fleet_.sink->Contains("security: caller refused")) << fleet_.sink->Text();
}

// A shard that is draining gives its zones away: it must not take one from a peer (a zone
// started here now would be neither moved by this drain nor kept after it). Refused plainly,
// and the adopter is never asked.
TEST_F(WorldShardTest, ADrainingShardRefusesToAdopt) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  std::atomic<int> adopted{0};
  a.shard->SetAdopter([&](const std::string&, uint64_t) {
    ++adopted;
    return Status::Ok();
  });
  ASSERT_TRUE(Adopt(a, "forest", 4).ok()) << "not draining: adopted";
  ASSERT_EQ(adopted.load(), 1);

  a.shard->BeginDrain();
  const Status refused = Adopt(a, "forest", 5);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("draining"));
  // The same through the gRPC adapter, with the code a peer's drain sees.
  const grpc::Status over_grpc = AdoptOverGrpc(a, "forest", 6);
  EXPECT_EQ(over_grpc.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(rpc::FromGrpc(over_grpc).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(adopted.load(), 1) << "a draining shard ran the adopter";
  EXPECT_TRUE(fleet_.sink->Contains("zone adoption refused")) << fleet_.sink->Text();
}

// A zone handed to a shard that has begun draining (the move raced its draining mark) is never
// hosted there: the drainer passes the lease on to a live, not draining peer other than the
// sender and answers Conflict ("moved"). A peer whose route still names the drainer is told
// the zone is not hosted there, re-reads the owner and hands the player to where it went.
TEST_F(WorldShardTest, ADrainingShardPassesAHandedZoneOnAndAHandoffFollowsItThere) {
  Node& c = StartNode({"c", {"lobby", "dungeon"}});
  std::mutex adopted_mu;
  std::vector<std::string> adopted_by_c;
  c.shard->SetAdopter([&](const std::string& zone, uint64_t) {
    {
      std::lock_guard lock(adopted_mu);
      adopted_by_c.push_back(zone);
    }
    return c.host->StartZone(zone);
  });
  Node& dr = StartNode({"dr", {"lobby"}});
  dr.shard->SetAdopter([](const std::string&, uint64_t) { return Status::Ok(); });
  // The sender moved forest's lease to dr before asking it to adopt.
  auto grant = fleet_.directory.ClaimZone("forest", "dr", kLeaseTtlMs);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  NodeOptions walker{"a", {"lobby", "town"}};
  walker.route_refresh_ms = 600'000;  // its route to forest stays the one read here
  Node& a = StartNode(walker);
  a.shard->RefreshRoutes();
  ASSERT_TRUE(a.shard->IsRemote("forest"));
  ASSERT_TRUE(fleet_.directory.ReportOccupancy("a", {{"town", 50}}).ok());  // c is lighter

  dr.shard->BeginDrain();
  const Status moved = Adopt(dr, "forest", grant->epoch);
  EXPECT_EQ(moved.code(), StatusCode::kConflict) << moved.ToString();
  EXPECT_THAT(moved.message(), HasSubstr("moved to c"));
  auto owner = fleet_.directory.OwnerOfZone("forest");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->shard_id, "c");
  EXPECT_GT((*owner)->epoch, grant->epoch);
  {
    std::lock_guard lock(adopted_mu);
    EXPECT_EQ(adopted_by_c, std::vector<std::string>{"forest"});
  }
  EXPECT_EQ(dr.host->FindZone("forest"), nullptr) << "the drainer started the zone";

  // a still routes forest to dr: dr refuses (not hosted), a asks the directory and goes to c.
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "town:west_gate");
  GateStream gate_a(*a.stub, "gate-1");
  gate_a.Attach(1, Assertion(account, "Alice"));
  auto attached = gate_a.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate_a.OutputUntil(1, "The West Gate");
  gate_a.Input(1, "west");
  auto redirect = gate_a.NextRedirect(1);
  ASSERT_TRUE(redirect.has_value()) << "no redirect: the walk was bounced";
  EXPECT_EQ(redirect->shard_id(), "c");
  EXPECT_EQ(redirect->endpoint(), c.endpoint);
  EXPECT_EQ(c.host->ZoneOf("alice"), "forest");
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
}

// Stop() waits for the work already in flight on the blocking pool: an Adopt being carried out
// (here held in its adopter) keeps Stop() from returning until it is done, so the shard can be
// destroyed as soon as Stop() returns. One that comes after is refused without running.
TEST_F(WorldShardTest, StopWaitsForAnAdoptionInFlight) {
  // How long Stop() is watched not returning while the adoption is held.
  constexpr auto kHeld = std::chrono::milliseconds(300);
  Node& a = StartNode({"a", {"lobby", "town"}});
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;  // guarded by mu
  std::atomic<int> adoptions{0};
  a.shard->SetAdopter([&](const std::string&, uint64_t) {
    ++adoptions;
    std::unique_lock lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lock, kWait, [&] { return release; });
    return Status::Ok();
  });
  std::future<grpc::Status> adopt =
      std::async(std::launch::async, [&] { return AdoptOverGrpc(a, "forest", 4); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return entered; })) << "the adopter never ran";
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    a.shard->Stop();
    stopped = true;
  });
  const bool returned_early = Eventually([&] { return stopped.load(); }, kHeld);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_FALSE(returned_early) << "Stop() returned while an adoption was still running";
  EXPECT_TRUE(Eventually([&] { return stopped.load(); })) << "Stop() never returned";
  stopper.join();
  const grpc::Status adopted = adopt.get();
  EXPECT_TRUE(adopted.ok()) << adopted.error_message();

  // Stopped: refused at once, and the adopter is not run.
  EXPECT_EQ(Adopt(a, "forest", 5).code(), StatusCode::kUnavailable);
  EXPECT_EQ(adoptions.load(), 1);
}

// Shards in one process reach each other through InProcessWorldPeers: a walk into a zone the
// other shard owns is handed over by calling its core, with no gRPC between the two (b's
// server is shut down first, so a handoff over gRPC could not arrive), and so are Adopt and
// Describe.
TEST_F(WorldShardTest, ShardsInOneProcessCallEachOtherDirectly) {
  Node& a = StartNode({.shard_id = "a", .zones = {"lobby", "town"}, .peers = &in_process_peers_});
  Node& b = StartNode({.shard_id = "b", .zones = {"lobby", "forest"}, .peers = &in_process_peers_});
  in_process_peers_.Add(a.endpoint, *a.shard);
  in_process_peers_.Add(b.endpoint, *b.shard);
  a.shard->RefreshRoutes();
  ASSERT_TRUE(a.shard->IsRemote("forest"));
  std::atomic<int> adopted{0};
  b.shard->SetAdopter([&](const std::string&, uint64_t) {
    ++adopted;
    return Status::Ok();
  });
  b.server->Shutdown(std::chrono::system_clock::now());

  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "town:west_gate");
  GateStream gate_a(*a.stub, "gate-1");
  gate_a.Attach(1, Assertion(account, "Alice"));
  auto attached = gate_a.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate_a.OutputUntil(1, "The West Gate");

  gate_a.Input(1, "west");
  auto redirect = gate_a.NextRedirect(1);
  ASSERT_TRUE(redirect.has_value()) << "no redirect from shard a";
  EXPECT_EQ(redirect->shard_id(), "b");
  EXPECT_EQ(redirect->endpoint(), b.endpoint);
  EXPECT_EQ(b.host->ZoneOf("alice"), "forest");
  auto placement = PlacementOf("alice");
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->shard, "b");
  EXPECT_EQ(placement->epoch, 2u);

  const Status s = a.shard->CallAdopt({"b", b.endpoint, 3, kLeaseTtlMs}, "forest", 3);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(adopted.load(), 1);
  EXPECT_EQ(a.shard->FindPackDivergence(), std::nullopt);
  // A world nobody added is not reachable in process.
  EXPECT_EQ(in_process_peers_.Adopt("nowhere:1", {}, 1000).code(), StatusCode::kUnavailable);
  in_process_peers_.Remove(b.endpoint);
  in_process_peers_.Remove(a.endpoint);
}

// Why a drain must read an Adopt that timed out at its caller as "maybe applied": the peer
// carries the adoption out all the same, after the caller stopped waiting.
TEST_F(WorldShardTest, AnAdoptionThatOutlivesItsCallersDeadlineIsStillCarriedOut) {
  constexpr int64_t kCallerDeadlineMs = 50;
  Node& a = StartNode({.shard_id = "a", .zones = {"lobby", "town"}, .peers = &in_process_peers_});
  in_process_peers_.Add(a.endpoint, *a.shard);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;  // guarded by mu
  std::atomic<int> adopted{0};
  a.shard->SetAdopter([&](const std::string&, uint64_t) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, kWait, [&] { return release; });
    ++adopted;
    return Status::Ok();
  });
  telos::v1::AdoptRequest request;
  request.set_zone("forest");
  request.set_epoch(4);
  const Status timed_out = in_process_peers_.Adopt(a.endpoint, request, kCallerDeadlineMs);
  EXPECT_EQ(timed_out.code(), StatusCode::kDeadlineExceeded) << timed_out.ToString();
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_TRUE(Eventually([&] { return adopted.load() == 1; })) << "the adoption was dropped";
  in_process_peers_.Remove(a.endpoint);
}

// A gate has one live stream per shard: a second stream naming a gate id that is live on
// another is refused, and takes nothing over (a login there would have taken Alice from the
// first stream). Once the first stream has ended the id is free again.
TEST_F(WorldShardTest, AHelloWithAGateIdLiveOnAnotherStreamIsRefused) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const std::string assertion = Assertion(account, "Alice");

  auto first = std::make_unique<GateStream>(*a.stub, "gate-1");
  first->Attach(1, assertion);
  auto attached = first->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  first->OutputUntil(1, "The Atrium of Arrivals");

  const grpc::Status impostor =
      PlayFrames(*a.stub, kGateToken, {HelloFrame("gate-1"), AttachFrame(9, assertion)});
  EXPECT_EQ(impostor.error_code(), grpc::StatusCode::ALREADY_EXISTS) << impostor.error_message();
  // A stream names its gate once, and names one.
  EXPECT_EQ(
      PlayFrames(*a.stub, kGateToken, {HelloFrame("gate-3"), HelloFrame("gate-4")}).error_code(),
      grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(PlayFrames(*a.stub, kGateToken, {HelloFrame("")}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Alice still plays on the first stream, which was told nothing.
  first->Input(1, "look north");
  const std::string seen = first->OutputUntil(1, "compass roses");
  EXPECT_THAT(seen, HasSubstr("opens on the Hall of Maps"));
  EXPECT_THAT(seen, Not(HasSubstr("taken up by a new connection")));
  EXPECT_EQ(a.shard->streams(), 1u);

  first->Close();
  GateStream again(*a.stub, "gate-1");
  again.Attach(2, assertion);
  attached = again.NextAttached(2);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
}

// A handoff arrival is bound at once to its gate's stream here (AcceptHandoff); when the gate
// attaches it on another stream, the first stream's session no longer reaches the character
// (here: a Detach sent there would otherwise take her out of the world).
TEST_F(WorldShardTest, AnArrivalAttachedOnAnotherStreamIsUnboundFromTheFirst) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");

  GateStream first(*a.stub, "gate-1");
  ASSERT_TRUE(Eventually([&] { return a.shard->streams() == 1; }));  // its hello is in
  const auth::HandoffSnapshot snapshot = Snapshot(account, "Alice", "town:square", 2);
  ASSERT_EQ(snapshot.gate_id, "gate-1");
  const Status handed = Handoff(a, auth::SignSnapshot(fleet_.handoff_key, snapshot));
  ASSERT_TRUE(handed.ok()) << handed.ToString();
  // Bound to the first stream already: the arrival shows there.
  EXPECT_THAT(first.OutputUntil(snapshot.session, "You step out of the mist."),
              HasSubstr("You step out of the mist."));

  GateStream second(*a.stub, "gate-2");
  second.AttachWithToken(snapshot.session, snapshot.token);
  auto attached = second.NextAttached(snapshot.session);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();

  first.Detach(snapshot.session);
  EXPECT_TRUE(first.Removed(snapshot.session));
  EXPECT_EQ(a.host->ZoneOf("alice"), "town") << "the old stream's session still held her";
  EXPECT_EQ(a.shard->residents(), 1u);
  second.Input(snapshot.session, "look");
  EXPECT_THAT(second.OutputUntil(snapshot.session, "The Market Square"),
              HasSubstr("The Market Square"));
}

// ------------------------------------------------------------------ handoff: destination

TEST_F(WorldShardTest, HandoffAcceptedOnceAndRefusedWhenStaleForgedExpiredOrMisrouted) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");

  const auth::HandoffSnapshot snapshot = Snapshot(account, "Alice", "town:square", 2);
  const std::string blob = auth::SignSnapshot(fleet_.handoff_key, snapshot);
  {
    const Status s = Handoff(a, blob);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The placement moved before the RPC answered.
  auto placement = PlacementOf("alice");
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->epoch, 2u);
  EXPECT_EQ(placement->shard, "a");
  EXPECT_EQ(placement->zone, "town");
  EXPECT_EQ(a.host->ZoneOf("alice"), "town");

  // The gate attaches with the token and gets what was said while nobody listened.
  GateStream gate(*a.stub, "gate-1");
  gate.AttachWithToken(7, snapshot.token);
  auto attached = gate.NextAttached(7);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "town");
  const std::string arrival = gate.OutputUntil(7, "You step out of the mist.");
  EXPECT_THAT(arrival, HasSubstr("The Market Square"));
  EXPECT_THAT(arrival, HasSubstr("You step out of the mist."));
  gate.Input(7, "look");
  EXPECT_THAT(gate.OutputUntil(7, "The Market Square"), HasSubstr("The Market Square"));

  // NOTE: while the character is resident here, a replay is refused by the residency check
  // (AlreadyExists) before the placement fence is consulted, so only "refused" is asserted.
  EXPECT_FALSE(Handoff(a, blob).ok());

  // Once she has left, the fence alone refuses: a replay carries no newer epoch.
  gate.Detach(7);
  ASSERT_TRUE(gate.Removed(7));
  ASSERT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard.empty() && p->epoch == 2;
  }));
  EXPECT_EQ(Handoff(a, blob).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);

  // Stale: an older epoch than the stored one.
  EXPECT_EQ(Handoff(a, auth::SignSnapshot(fleet_.handoff_key,
                                          Snapshot(account, "Alice", "town:square", 1)))
                .code(),
            StatusCode::kFailedPrecondition);

  // Forged: signed with a key that is not the fleet's.
  const auth::SigningKey stranger = auth::SigningKey::Generate();
  EXPECT_EQ(
      Handoff(a, auth::SignSnapshot(stranger, Snapshot(account, "Alice", "town:square", 3))).code(),
      StatusCode::kPermissionDenied);

  // Expired.
  auth::HandoffSnapshot expired = Snapshot(account, "Alice", "town:square", 3);
  expired.expires_unix_ms = NowUnixMs() - 1000;
  EXPECT_EQ(Handoff(a, auth::SignSnapshot(fleet_.handoff_key, expired)).code(),
            StatusCode::kPermissionDenied);

  // Into a zone this shard does not run.
  EXPECT_EQ(Handoff(a, auth::SignSnapshot(fleet_.handoff_key,
                                          Snapshot(account, "Alice", "forest:forest_edge", 3)))
                .code(),
            StatusCode::kFailedPrecondition);

  // None of the refused snapshots moved the placement or admitted anyone.
  placement = PlacementOf("alice");
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->epoch, 2u);
  EXPECT_EQ(placement->shard, "");
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
  EXPECT_EQ(a.shard->residents(), 0u);
}

// The fleet is rotating its handoff key: this shard signs with the new key and accepts the
// previous one too, which a peer not yet restarted still signs with. A key two rotations old
// is refused, and so is the previous key on a shard that holds the new key alone.
TEST_F(WorldShardTest, AHandoffUnderThePreviousHandoffKeyIsAcceptedDuringARotation) {
  const auth::SigningKey previous = auth::SigningKey::Generate();
  const auth::SigningKey oldest = auth::SigningKey::Generate();
  Node& a = StartNode({.shard_id = "a",
                       .zones = {"lobby", "town"},
                       .handoff_verify_keys =
                           auth::KeyRing(fleet_.handoff_key.verify_key(), previous.verify_key())});
  Node& b = StartNode({.shard_id = "b", .zones = {"lobby", "arena"}});
  const int64_t alice = CreateAccount("alice");
  CreateCharacter(alice, "Alice", "lobby:atrium");
  const int64_t bram = CreateAccount("bram");
  CreateCharacter(bram, "Bram", "lobby:atrium");

  EXPECT_EQ(
      Handoff(a, auth::SignSnapshot(oldest, Snapshot(alice, "Alice", "town:square", 2))).code(),
      StatusCode::kPermissionDenied);
  const Status s =
      Handoff(a, auth::SignSnapshot(previous, Snapshot(alice, "Alice", "town:square", 2)));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(a.host->ZoneOf("alice"), "town");
  // The new key is accepted as well, by both.
  EXPECT_TRUE(
      Handoff(a, auth::SignSnapshot(fleet_.handoff_key, Snapshot(bram, "Bram", "town:square", 2)))
          .ok());

  // A shard without the previous key refuses it.
  EXPECT_EQ(Handoff(b, auth::SignSnapshot(previous, Snapshot(alice, "Alice", "arena:approach", 3)))
                .code(),
            StatusCode::kPermissionDenied);
}

// A snapshot this shard cannot read (here: a character schema newer than this build, as in a
// rolling upgrade) is refused, and the refusal leaves everything as it was: the source keeps
// the player (it bounces them back) and must stay their placement and their only writer.
//
// BUG (src/shard/world_shard.cc, AcceptHandoff): the placement is moved (HandoffPlacement, line
// 460) and the row claimed (ClaimOwnership, line 466) before the state is decoded (line 469).
// When decoding fails the shard answers InvalidArgument, but the placement now names this shard
// at the new epoch and the row's owner_epoch was raised: the source, which bounced the player
// back, has every later save fenced and its logout tombstone no longer matches, and a reconnect
// is routed to a shard that does not have the player. The same holds for the later failure
// paths (ClaimOwnership failing; host_.Admit failing at line 496, whose Unavailable the source
// even reads as "maybe applied", finds the moved placement and redirects the gate to nothing).
// Fix: decode and check everything that can be checked before HandoffPlacement, and undo (or
// never do) the move when a later step fails.
TEST_F(WorldShardTest, UnreadableSnapshotIsRefusedWithoutMovingThePlacementOrFencingTheSource) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "town:square");
  // The player lives on another shard at epoch 1, which owns the row at epoch 1.
  ASSERT_TRUE(fleet_.db->characters().ClaimOwnership("Alice", 1).ok());
  const int64_t owner_epoch = Row("Alice").owner_epoch;
  const directory::Placement at_source{"town", 1, "nonce-1", "elsewhere"};
  ASSERT_TRUE(fleet_.directory.RegisterPlacement("alice", at_source).ok());

  auth::HandoffSnapshot snapshot = Snapshot(account, "Alice", "town:square", 2);
  const std::string current = "\"schema\":" + std::to_string(world::kCharacterSchemaVersion);
  const size_t at = snapshot.state_json.find(current);
  ASSERT_NE(at, std::string::npos) << snapshot.state_json;
  snapshot.state_json.replace(at, current.size(),
                              "\"schema\":" + std::to_string(world::kCharacterSchemaVersion + 1));
  ASSERT_FALSE(world::DecodeCharacter(snapshot.state_json).ok());

  EXPECT_EQ(Handoff(a, auth::SignSnapshot(fleet_.handoff_key, snapshot)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
  EXPECT_EQ(a.shard->residents(), 0u);
  EXPECT_EQ(PlacementOf("alice"), at_source) << "a refused handoff moved the placement";
  EXPECT_EQ(Row("Alice").owner_epoch, owner_epoch) << "a refused handoff fenced the source";
}

// ------------------------------------------------------------------ gate loss

TEST_F(WorldShardTest, LostGateLeavesCharacterLinkDeadAndAnotherStreamResumesIt) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const std::string assertion = Assertion(account, "Alice");

  auto gate = std::make_unique<GateStream>(*a.stub, "gate-1");
  gate->Attach(1, assertion);
  auto attached = gate->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate->OutputUntil(1, "The Atrium of Arrivals");
  // Walk somewhere the stored row does not know about: a fresh login would not start here.
  gate->Input(1, "north");
  ASSERT_THAT(gate->OutputUntil(1, "The Hall of Maps"), HasSubstr("The Hall of Maps"));
  const int64_t owner_epoch = Row("Alice").owner_epoch;

  gate->Cancel();
  ASSERT_TRUE(Eventually([&] { return fleet_.sink->Contains("character link-dead"); }));
  EXPECT_EQ(a.host->ZoneOf("alice"), "lobby");
  EXPECT_EQ(a.shard->residents(), 1u);

  // Another gate's stream: the player logged in again through that gate.
  GateStream other(*a.stub, "gate-2");
  other.Attach(4, Assertion(account, "Alice", "gate-2"));
  attached = other.NextAttached(4);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "lobby");
  // Resumed where she stood, without a new claim: the host never saw a second login.
  EXPECT_THAT(other.OutputUntil(4, "The Hall of Maps"), HasSubstr("The Hall of Maps"));
  EXPECT_EQ(Row("Alice").owner_epoch, owner_epoch);
  other.Input(4, "south");
  EXPECT_THAT(other.OutputUntil(4, "The Atrium of Arrivals"), HasSubstr("The Atrium of Arrivals"));
}

TEST_F(WorldShardTest, AResumeOnANewerAssertionAppliesItsSignedRoles) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  auto gate = std::make_unique<GateStream>(*a.stub, "gate-1");
  gate->Attach(1, Assertion(account, "Alice"));
  auto attached = gate->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate->OutputUntil(1, "The Atrium of Arrivals");
  gate->Input(1, "stat alice");
  EXPECT_THAT(gate->OutputUntil(1, "staff command"), HasSubstr("staff command"));
  gate->Cancel();
  ASSERT_TRUE(Eventually([&] { return fleet_.sink->Contains("character link-dead"); }));

  // Made an admin meanwhile (telos admin grant): the reconnect's assertion says so.
  GateStream other(*a.stub, "gate-2");
  other.Attach(2, auth::IssueAssertion(fleet_.account_key, account, "Alice", "gate-2",
                                       kAssertionTtlMs, fleet_.clock, kRoleAdmin));
  attached = other.NextAttached(2);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  other.OutputUntil(2, "The Atrium of Arrivals");
  other.Input(2, "stat alice");
  EXPECT_THAT(other.OutputUntil(2, "roles admin"), HasSubstr("roles admin"));
}

TEST_F(WorldShardTest, LinkDeadCharacterIsRemovedAndSavedWhenNobodyComesBack) {
  Node& a = StartNode({"a", {"lobby", "town"}, /*link_dead_ms=*/300});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const int64_t version_before = Row("Alice").state_version;

  GateStream gate(*a.stub, "gate-1");
  gate.Attach(1, Assertion(account, "Alice"));
  auto attached = gate.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate.OutputUntil(1, "The Atrium of Arrivals");
  ASSERT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard == "a";
  }));

  gate.Cancel();
  EXPECT_TRUE(Eventually([&] { return !a.host->ZoneOf("alice").has_value(); }))
      << "the link-dead character was never removed";
  EXPECT_TRUE(Eventually([&] { return a.shard->residents() == 0; }));
  EXPECT_TRUE(Eventually([&] { return Row("Alice").state_version > version_before; }));
  EXPECT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard.empty() && p->zone == "lobby";
  })) << "the placement was not tombstoned";
}

// ------------------------------------------------------------------ takeover

TEST_F(WorldShardTest, SecondAttachTakesTheCharacterOverAndTellsTheFirstSession) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");

  GateStream first(*a.stub, "gate-1");
  first.Attach(1, Assertion(account, "Alice"));
  auto attached = first.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  first.OutputUntil(1, "The Atrium of Arrivals");
  const int64_t owner_epoch = Row("Alice").owner_epoch;

  GateStream second(*a.stub, "gate-2");
  second.Attach(2, Assertion(account, "Alice", "gate-2"));
  attached = second.NextAttached(2);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "lobby");

  auto notice = first.NextDisconnect(1);
  ASSERT_TRUE(notice.has_value()) << "the first session was not told";
  EXPECT_EQ(notice->text(), "Your character was taken up by a new connection.\n");

  EXPECT_THAT(second.OutputUntil(2, "The Atrium of Arrivals"), HasSubstr("The Atrium of Arrivals"));
  EXPECT_EQ(Row("Alice").owner_epoch, owner_epoch);
  EXPECT_EQ(a.shard->residents(), 1u);
}

// Issue 23 item 3: an assertion names one session. Presented again while that session is
// attached, from another session id or another stream, it is refused, and the session playing
// is not disturbed; the same session attaching again, on its stream or after its stream was
// lost, resumes.
TEST_F(WorldShardTest, AReplayedAssertionIsRefusedWhileItsSessionIsAttached) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "lobby:atrium");
  const std::string assertion = Assertion(account, "Alice");

  auto gate = std::make_unique<GateStream>(*a.stub, "gate-1");
  gate->Attach(1, assertion);
  auto attached = gate->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate->OutputUntil(1, "The Atrium of Arrivals");

  // The same assertion under another session id on the same stream: a replay.
  gate->Attach(2, assertion);
  attached = gate->NextAttached(2);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodePermissionDenied);
  EXPECT_EQ(attached->message(), "assertion: its session is already attached");
  // On another gate's stream it is refused as well (it was issued for gate-1).
  {
    GateStream other(*a.stub, "gate-2");
    other.Attach(1, assertion);
    attached = other.NextAttached(1);
    ASSERT_TRUE(attached.has_value());
    EXPECT_EQ(attached->code(), kCodePermissionDenied);
  }
  EXPECT_TRUE(fleet_.sink->Contains("security: assertion refused"));

  // Alice still plays on session 1, which was told nothing.
  gate->Input(1, "look north");
  const std::string seen = gate->OutputUntil(1, "compass roses");
  EXPECT_THAT(seen, HasSubstr("opens on the Hall of Maps"));
  EXPECT_THAT(seen, Not(HasSubstr("taken up by a new connection")));

  // The same session attaching again resumes (a gate retrying) ...
  gate->Attach(1, assertion);
  attached = gate->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  // ... and so does it after its stream was lost, on the gate's next stream.
  gate->Cancel();
  ASSERT_TRUE(Eventually([&] { return fleet_.sink->Contains("character link-dead"); }));
  ASSERT_TRUE(Eventually([&] { return a.shard->streams() == 0; }));
  GateStream again(*a.stub, "gate-1");
  again.Attach(1, assertion);
  attached = again.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_THAT(again.OutputUntil(1, "The Atrium of Arrivals"), HasSubstr("The Atrium of Arrivals"));
  EXPECT_EQ(a.shard->residents(), 1u);
}

// Issue 23 item 3: an assertion lives minutes and the gate renews it (same nonce). A session
// that outlives its first assertion, walks to another shard and then loses its stream there is
// taken back on the renewed assertion, and refused on the lapsed one. (The shards run on the
// system clock, which their executors need; the assertions are dated with a shifted one.)
TEST_F(WorldShardTest, ASessionPastItsFirstAssertionHandsOffAndReattachesOnTheRenewedOne) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  Node& b = StartNode({"b", {"lobby", "forest"}});
  a.shard->RefreshRoutes();
  b.shard->RefreshRoutes();
  ASSERT_TRUE(a.shard->IsRemote("forest"));
  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "town:west_gate");

  // Logged in with an assertion that is still good for a few seconds ...
  constexpr int64_t kShortTtlMs = 60'000;
  const ShiftedClock issued_then(std::chrono::milliseconds(-(kShortTtlMs - 15'000)));
  const std::string first = auth::IssueAssertion(fleet_.account_key, account, "Alice", "gate-1",
                                                 kShortTtlMs, issued_then);
  auto fields = auth::VerifyAssertion(fleet_.account_key.verify_key(), first, fleet_.clock);
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  GateStream gate_a(*a.stub, "gate-1");
  gate_a.Attach(1, first);
  auto attached = gate_a.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate_a.OutputUntil(1, "The West Gate");
  // ... which the gate renewed, and which has since lapsed (the same session, dated so).
  const std::string renewed =
      auth::RenewAssertion(fleet_.account_key, *fields, kShortTtlMs, fleet_.clock);
  const ShiftedClock lapsed_then(std::chrono::milliseconds(-2 * kShortTtlMs));
  const std::string lapsed =
      auth::RenewAssertion(fleet_.account_key, *fields, kShortTtlMs, lapsed_then);

  // The walk to b is a handoff: it needs no assertion of the gate.
  gate_a.Input(1, "west");
  auto redirect = gate_a.NextRedirect(1);
  ASSERT_TRUE(redirect.has_value()) << "no redirect from shard a";
  auto gate_b = std::make_unique<GateStream>(*b.stub, "gate-1");
  gate_b->AttachWithToken(1, redirect->handoff_token());
  attached = gate_b->NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  gate_b->OutputUntil(1, "The Edge of the Greywood");

  // The stream to b is lost; the gate routes the session again with its assertion.
  gate_b->Cancel();
  ASSERT_TRUE(Eventually([&] { return b.shard->streams() == 0; }));
  GateStream again(*b.stub, "gate-1");
  again.Attach(1, lapsed);
  attached = again.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodePermissionDenied);
  EXPECT_EQ(attached->message(), "assertion: expired");
  again.Attach(1, renewed);
  attached = again.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "forest");
  EXPECT_THAT(again.OutputUntil(1, "The Edge of the Greywood"),
              HasSubstr("The Edge of the Greywood"));
  EXPECT_EQ(b.shard->residents(), 1u);
}

// ------------------------------------------------------------------ cross-shard walk

// Shard a runs lobby and town, shard b lobby and forest; town:west_gate leads west to
// forest:forest_edge and back east.
TEST_F(WorldShardTest, WalkingIntoARemoteZoneRedirectsTheGateAndRaisesTheEpoch) {
  Node& a = StartNode({"a", {"lobby", "town"}});
  Node& b = StartNode({"b", {"lobby", "forest"}});
  a.shard->RefreshRoutes();
  b.shard->RefreshRoutes();
  ASSERT_TRUE(a.shard->IsRemote("forest"));
  ASSERT_FALSE(a.shard->IsRemote("town"));
  ASSERT_TRUE(b.shard->IsRemote("town"));

  const int64_t account = CreateAccount("alice");
  CreateCharacter(account, "Alice", "town:west_gate");

  GateStream gate_a(*a.stub, "gate-1");
  gate_a.Attach(1, Assertion(account, "Alice"));
  auto attached = gate_a.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "town");
  gate_a.OutputUntil(1, "The West Gate");
  ASSERT_TRUE(Eventually([&] {
    auto p = PlacementOf("alice");
    return p && p->shard == "a" && p->epoch == 1;
  }));

  // Out of the west gate: a hands her to b and tells the gate where to go.
  gate_a.Input(1, "west");
  auto redirect = gate_a.NextRedirect(1);
  ASSERT_TRUE(redirect.has_value()) << "no redirect from shard a";
  EXPECT_EQ(redirect->shard_id(), "b");
  EXPECT_EQ(redirect->endpoint(), b.endpoint);
  ASSERT_FALSE(redirect->handoff_token().empty());
  auto placement = PlacementOf("alice");
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->epoch, 2u);
  EXPECT_EQ(placement->shard, "b");
  EXPECT_EQ(placement->zone, "forest");
  EXPECT_EQ(a.host->ZoneOf("alice"), std::nullopt);
  EXPECT_EQ(a.shard->residents(), 0u);
  EXPECT_EQ(b.host->ZoneOf("alice"), "forest");

  GateStream gate_b(*b.stub, "gate-1");
  gate_b.AttachWithToken(1, redirect->handoff_token());
  attached = gate_b.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "forest");
  EXPECT_THAT(gate_b.OutputUntil(1, "The Edge of the Greywood"),
              HasSubstr("The Edge of the Greywood"));
  // The arrival is durable at once.
  EXPECT_TRUE(Eventually([&] { return Row("Alice").zone_id == "forest"; }));

  // And back east: b hands her to a, one epoch higher again.
  gate_b.Input(1, "east");
  redirect = gate_b.NextRedirect(1);
  ASSERT_TRUE(redirect.has_value()) << "no redirect from shard b";
  EXPECT_EQ(redirect->shard_id(), "a");
  EXPECT_EQ(redirect->endpoint(), a.endpoint);
  placement = PlacementOf("alice");
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->epoch, 3u);
  EXPECT_EQ(placement->shard, "a");
  EXPECT_EQ(placement->zone, "town");
  EXPECT_EQ(b.host->ZoneOf("alice"), std::nullopt);

  gate_a.AttachWithToken(1, redirect->handoff_token());
  attached = gate_a.NextAttached(1);
  ASSERT_TRUE(attached.has_value());
  ASSERT_EQ(attached->code(), kCodeOk) << attached->message();
  EXPECT_EQ(attached->zone(), "town");
  EXPECT_THAT(gate_a.OutputUntil(1, "The West Gate"), HasSubstr("The West Gate"));
  gate_a.Input(1, "look");
  EXPECT_THAT(gate_a.OutputUntil(1, "The West Gate"), HasSubstr("The West Gate"));
  EXPECT_EQ(a.host->ZoneOf("alice"), "town");
}

// ------------------------------------------------------------------ backed-up gates

// Attaches `session` with `assertion` and waits for the room it enters. False (with the reason
// on stderr) when the attach is refused.
bool AttachAndLook(GateStream& gate, uint64_t session, const std::string& assertion) {
  gate.Attach(session, assertion);
  auto attached = gate.NextAttached(session);
  if (!attached || attached->code() != kCodeOk) {
    std::fprintf(stderr, "session %llu was not attached: %s\n",
                 static_cast<unsigned long long>(session),
                 attached ? attached->message().c_str() : "no answer");
    return false;
  }
  return gate.OutputUntil(session, "The Atrium of Arrivals").find("The Atrium") !=
         std::string::npos;
}

// The speaker says `batches` times 100 lines of ~1.9 KB; after each batch the listener, in the
// same room, must hear its marker, so the speaker's own output has been produced by then. A
// batch stays under kOutputLinesPerFlushMax, so nothing is shed by the zone.
bool SayInBatches(GateStream& speaker, uint64_t speaker_session, GateStream& listener,
                  uint64_t listener_session, int batches) {
  constexpr int kSaysPerBatch = 100;
  const std::string long_line = "say " + std::string(1900, 'x');
  for (int batch = 0; batch < batches; ++batch) {
    for (int i = 0; i < kSaysPerBatch; ++i) speaker.Input(speaker_session, long_line);
    const std::string marker = "marker " + std::to_string(batch);
    speaker.Input(speaker_session, "say " + marker);
    if (listener.OutputUntil(listener_session, marker).find(marker) == std::string::npos) {
      std::fprintf(stderr, "the listener never heard %s\n", marker.c_str());
      return false;
    }
  }
  return true;
}

// The two scenarios below run in a child process (gtest's death-test machinery, in a freshly
// started process because gRPC does not fork well) that exits without tearing down: while the
// StreamHandle::WriteDone bug below is present, a Play stream that broke during a write may
// never finish, and the server's Shutdown in the teardown would then wait for it forever.
using WorldShardDeathTest = WorldShardTest;

// A gate that fell far behind loses output (play_stream.h: "a gate that cannot keep up loses
// output beyond it, counted"), not its stream.
//
// BUG (src/shard/play_stream.cc, StreamHandle::Send, lines 20-28, with StartWriteLocked): the
// pending frame is bounded only by its number of Outputs (kPendingOutputsMax = 65,536), never
// by bytes. While one write is stalled everything else coalesces into one ShardFrame; once that
// frame is larger than rpc::kMessageBytesMax (4 MiB, the server's max send size set by
// rpc::ConfigureServer) the next write fails and gRPC ends the whole Play stream, so every
// session of that gate goes link-dead at once. Here ~5.7 MB of `say` output piles up behind a
// gate that stopped reading; when it reads again, the shard has ended the stream (with both
// message limits raised to 64 MiB the same run passes). Fix: bound pending_ by bytes too (well
// under kMessageBytesMax), shedding and counting beyond it.
bool GateFarBehindKeepsItsStream(Node& a, const std::string& alice_assertion,
                                 const std::string& bob_assertion) {
  auto small_window = SmallWindowStub(a.endpoint);
  GateStream gate(*small_window, "gate-1");
  GateStream watcher(*a.stub, "gate-2");
  if (!AttachAndLook(gate, 1, alice_assertion) || !AttachAndLook(watcher, 2, bob_assertion)) {
    return false;
  }
  gate.PauseReading();
  if (!SayInBatches(gate, 1, watcher, 2, 30)) return false;
  gate.ResumeReading();
  // (Megabytes come before it: only whether it arrived is reported.) A say made while the
  // backlog is still draining may itself be shed, as the gate is still behind; on a busy box
  // that can take a while, so a few are tried.
  bool caught_up = false;
  for (int attempt = 0; attempt < 3 && !caught_up && !gate.ended(); ++attempt) {
    const std::string said = "caught up " + std::to_string(attempt);
    gate.Input(1, "say " + said);
    caught_up = gate.OutputUntil(1, said).find(said) != std::string::npos;
  }
  if (!caught_up || gate.ended() || a.shard->streams() != 2) {
    std::fprintf(stderr,
                 "the shard ended the Play stream of a gate that fell behind instead of shedding "
                 "its output (output arrived: %s, stream ended: %s, live streams: %zu)\n",
                 caught_up ? "yes" : "no", gate.ended() ? "yes" : "no", a.shard->streams());
    return false;
  }
  return true;
}

TEST_F(WorldShardDeathTest, GateFarBehindLosesOutputButKeepsItsStream) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Node& a = StartNode({"a", {"lobby", "town"}});
        const int64_t account = CreateAccount("alice");
        CreateCharacter(account, "Alice", "lobby:atrium");
        CreateCharacter(account, "Bob", "lobby:atrium");
        const bool ok = GateFarBehindKeepsItsStream(a, Assertion(account, "Alice"),
                                                    Assertion(account, "Bob", "gate-2"));
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The gate's stream is backed up (a write stalled on flow control: the gate stopped reading, as
// a slow or wedged gate does), the gate half-closes and then its connection dies. The shard
// must still end the stream: the character goes link-dead and, nobody coming back, is removed.
//
// BUG (src/shard/play_stream.cc, StreamHandle::WriteDone, the `if (!ok) { ...; return; }` at
// lines 45-50): when the read side has already ended (ReadsEnded() saw writing_ and left the
// Finish to WriteDone) and the in-flight write then fails because the call was cancelled,
// WriteDone returns without calling Finish. gRPC requires Finish even on a cancelled RPC, so
// OnDone never runs: OnStreamGone never starts the link-dead timer (the character stays in the
// world, bound to a dead stream, forever), the reactor leaks, and grpc::Server::Shutdown waits
// for it forever (so `telos world` cannot stop either). Any gate that disconnects while a write
// to it is in flight can hit it, whenever gRPC reports the failed read before the failed write
// (about one plain cancel in six with a stalled write here, and now and then even a cancel
// right after a burst of ordinary output); the half-close makes the order deterministic.
// Fix: in the !ok branch, fall through to the `reads_ended_ && !finished_` Finish (with that
// change applied to a scratch copy of play_stream.cc, this test passes).
bool BackedUpGateLostLeavesCharacterLinkDeadThenRemoved(Fleet& fleet, Node& a,
                                                        const std::string& alice_assertion,
                                                        const std::string& bob_assertion) {
  auto small_window = SmallWindowStub(a.endpoint);
  GateStream gate(*small_window, "gate-1");
  // Bob stands in the same room on a gate that reads: what he hears tells when Alice's (much
  // the same) output has been produced.
  GateStream watcher(*a.stub, "gate-2");
  if (!AttachAndLook(gate, 1, alice_assertion) || !AttachAndLook(watcher, 2, bob_assertion)) {
    return false;
  }
  gate.PauseReading();
  if (!SayInBatches(gate, 1, watcher, 2, 3)) return false;
  // ~570 KB are waiting for a gate that reads nothing: a write is in flight.
  gate.CloseWrites();
  if (!Eventually([&] { return a.shard->streams() == 1; })) return false;  // reads ended
  gate.Cancel();

  // link_dead_ms is 300: removed well within a few seconds.
  if (!Eventually([&] { return !a.host->ZoneOf("alice").has_value(); }, std::chrono::seconds(4))) {
    std::fprintf(stderr,
                 "the link-dead character was never removed: the Play reactor never finished "
                 "(still in zone %s; a stream-closed line was logged: %s)\n",
                 a.host->ZoneOf("alice").value_or("-").c_str(),
                 fleet.sink->Contains("gate stream closed") ? "yes" : "no");
    return false;
  }
  return true;
}

TEST_F(WorldShardDeathTest, BackedUpGateLostStillEndsItsStreamAndTheCharacterLeaves) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Node& a = StartNode({"a", {"lobby", "town"}, /*link_dead_ms=*/300});
        const int64_t account = CreateAccount("alice");
        CreateCharacter(account, "Alice", "lobby:atrium");
        CreateCharacter(account, "Bob", "lobby:atrium");
        const bool ok = BackedUpGateLostLeavesCharacterLinkDeadThenRemoved(
            fleet_, a, Assertion(account, "Alice"), Assertion(account, "Bob", "gate-2"));
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace telos::shard
