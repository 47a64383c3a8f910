// FleetWorldLink against a scripted shard: a real gRPC World service on 127.0.0.1:0 whose Play
// stream records every GateFrame and answers each Attach by a rule the test sets. The shard's
// side is what the gate must cope with (refusals, redirects, arrivals gone), so it is scripted
// rather than a WorldShard, which would never send the awkward answers on cue.
#include "telos/gate/fleet_world_link.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "telos/base/assert.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/directory/forwarding_directory.h"
#include "telos/directory/memory_directory.h"
#include "telos/rpc/channels.h"

namespace telos::gate {
namespace {

namespace asio = boost::asio;

constexpr auto kWait = std::chrono::seconds(10);
constexpr int64_t kLeaseTtlMs = 600'000;
constexpr int32_t kCodeOk = static_cast<int32_t>(StatusCode::kOk);
constexpr int32_t kCodeNotFound = static_cast<int32_t>(StatusCode::kNotFound);

bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// What a shard answers to one Attach.
struct Answer {
  telos::v1::ShardFrame frame;
};
using AttachRule = std::function<Answer(const telos::v1::Attach&)>;

telos::v1::ShardFrame Attached(uint64_t session, int32_t code, const std::string& message,
                               const std::string& zone) {
  telos::v1::ShardFrame frame;
  auto* attached = frame.add_attached();
  attached->set_session(session);
  attached->set_code(code);
  attached->set_message(message);
  attached->set_zone(zone);
  return frame;
}

// A World service whose Play streams answer Attach frames by `rule` and keep every frame seen.
class ScriptedShard final : public telos::v1::World::CallbackService {
 public:
  explicit ScriptedShard(AttachRule rule) : rule_(std::move(rule)) {}

  grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame>* Play(
      grpc::CallbackServerContext* context) override {
    {
      std::lock_guard lock(mu_);
      const auto& metadata = context->client_metadata();
      auto it = metadata.find(rpc::kAuthorizationHeader);
      authorizations_.push_back(
          it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size()));
    }
    return new Stream(*this);
  }

  std::vector<telos::v1::Attach> attaches() const {
    std::lock_guard lock(mu_);
    return attaches_;
  }
  // The authorization header of each Play stream opened, in order ("" when it had none).
  std::vector<std::string> authorizations() const {
    std::lock_guard lock(mu_);
    return authorizations_;
  }

 private:
  // One Play stream: reads until the gate closes, writes answers one at a time.
  class Stream final : public grpc::ServerBidiReactor<telos::v1::GateFrame, telos::v1::ShardFrame> {
   public:
    explicit Stream(ScriptedShard& shard) : shard_(shard) { StartRead(&in_); }

    void OnReadDone(bool ok) override {
      if (!ok) {
        std::lock_guard lock(mu_);
        reading_ = false;
        MaybeFinishLocked();
        return;
      }
      if (in_.has_attach()) {
        {
          std::lock_guard lock(shard_.mu_);
          shard_.attaches_.push_back(in_.attach());
        }
        Queue(shard_.rule_(in_.attach()).frame);
      }
      StartRead(&in_);
    }

    void OnWriteDone(bool) override {
      std::lock_guard lock(mu_);
      pending_.pop_front();
      if (!pending_.empty()) return StartWrite(&pending_.front());
      MaybeFinishLocked();
    }

    void OnDone() override { delete this; }

   private:
    void Queue(telos::v1::ShardFrame frame) {
      std::lock_guard lock(mu_);
      pending_.push_back(std::move(frame));
      if (pending_.size() == 1) StartWrite(&pending_.front());
    }
    void MaybeFinishLocked() {
      if (!reading_ && pending_.empty() && !finished_) {
        finished_ = true;
        Finish(grpc::Status::OK);
      }
    }

    ScriptedShard& shard_;
    telos::v1::GateFrame in_;
    std::mutex mu_;
    std::deque<telos::v1::ShardFrame> pending_;  // front is being written
    bool reading_ = true;
    bool finished_ = false;
  };

  AttachRule rule_;
  mutable std::mutex mu_;
  std::vector<telos::v1::Attach> attaches_;
  std::vector<std::string> authorizations_;
};

// Keeps what reaches the player.
class RecordingSink final : public world::PlayerSink {
 public:
  void Deliver(world::PlayerOutput output) override {
    std::lock_guard lock(mu_);
    text_ += output.text;
    disconnected_ = disconnected_ || output.disconnect;
  }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }
  bool disconnected() const {
    std::lock_guard lock(mu_);
    return disconnected_;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
  bool disconnected_ = false;
};

// Forwards to a MemoryDirectory; when `hold` is set, the next placement lookup waits inside
// until the test releases it, then fails (so the routing step goes on inside the link).
class HoldingDirectory final : public directory::ForwardingDirectory {
 public:
  using ForwardingDirectory::ForwardingDirectory;
  Result<std::optional<directory::Placement>> LookupPlacement(std::string_view player) override {
    if (!hold.exchange(false)) return ForwardingDirectory::LookupPlacement(player);
    entered.set_value();
    release.get_future().wait();
    return Status::Unavailable("injected: the directory is slow, then gone");
  }
  std::atomic<bool> hold{false};
  std::promise<void> entered, release;
};

// One scripted shard registered in a MemoryDirectory, and a gate link routing to it.
class FleetWorldLinkTest : public ::testing::Test {
 protected:
  void StartShard(AttachRule rule) {
    shard_ = std::make_unique<ScriptedShard>(std::move(rule));
    grpc::ServerBuilder builder;
    rpc::ConfigureServer(builder);
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(shard_.get());
    server_ = builder.BuildAndStart();
    RELEASE_ASSERT(server_ != nullptr && port != 0, "the scripted shard did not start");
    endpoint_ = "127.0.0.1:" + std::to_string(port);
    RELEASE_ASSERT(directory_.RegisterShard("shard-a", endpoint_, kLeaseTtlMs).ok(),
                   "RegisterShard");
    io_thread_ = std::thread([this] { io_.run(); });
    FleetLinkOptions options;
    options.gate_id = "gate-test";
    options.gate_token = "gate-token-of-the-test";
    options.lobby_zone = "lobby";
    link_ = std::make_unique<FleetWorldLink>(
        options, holding_, io_,
        [this](std::function<void()> job) { asio::post(blocking_, std::move(job)); }, clock_, log_,
        metrics_);
  }

  void TearDown() override {
    if (link_) link_->Stop();
    blocking_.join();
    link_.reset();
    work_.reset();
    io_.stop();
    if (io_thread_.joinable()) io_thread_.join();
    if (server_) server_->Shutdown();
  }

  Status Enter(const std::shared_ptr<RecordingSink>& sink) {
    EnterRequest request;
    request.name_key = "ayla";
    request.display_name = "Ayla";
    request.assertion = "signed-assertion";
    return link_->Enter(std::move(request), sink);
  }

  std::string endpoint_;
  std::unique_ptr<ScriptedShard> shard_;

 private:
  SystemClock clock_;
  Logger log_{"fleet_world_link_test", LogLevel::kWarn};
  Metrics metrics_;
  directory::MemoryDirectory directory_{clock_};

 protected:
  HoldingDirectory holding_{directory_};
  std::unique_ptr<FleetWorldLink> link_;

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread io_thread_;
  asio::thread_pool blocking_{2};
  std::unique_ptr<grpc::Server> server_;
};

// Spec 001's handoff race: the shard redirects the session to an arrival that is gone by the
// time the gate attaches with the token (the character moved on, or its arrival timed out). The
// gate routes the session again by its placement, and the player stays connected.
TEST_F(FleetWorldLinkTest, AnArrivalGoneBeforeTheAttachIsRoutedAfresh) {
  StartShard([this](const telos::v1::Attach& attach) {
    if (!attach.handoff_token().empty()) {
      return Answer{Attached(attach.session(), kCodeNotFound, "no arrival with that token", "")};
    }
    const bool first_login = shard_->attaches().size() == 1;
    Answer answer{Attached(attach.session(), kCodeOk, "", "lobby")};
    if (first_login) {
      auto* redirect = answer.frame.add_redirects();
      redirect->set_session(attach.session());
      redirect->set_shard_id("shard-a");
      redirect->set_endpoint(endpoint_);
      redirect->set_handoff_token("token-1");
    }
    return answer;
  });
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(Enter(sink).ok());

  ASSERT_TRUE(Eventually([&] { return shard_->attaches().size() >= 3 || sink->disconnected(); }));
  ASSERT_EQ(shard_->attaches().size(), 3u) << sink->text();
  const auto attaches = shard_->attaches();
  EXPECT_EQ(attaches[0].handoff_token(), "");
  EXPECT_EQ(attaches[1].handoff_token(), "token-1");
  EXPECT_EQ(attaches[2].handoff_token(), "") << "routed again by placement, not by token";
  EXPECT_EQ(attaches[2].assertion(), "signed-assertion");
  EXPECT_FALSE(sink->disconnected()) << sink->text();
  EXPECT_EQ(sink->text().find("could not take you in"), std::string::npos) << sink->text();
}

// Issue 23 item 3: the gate renews a session's assertion while it plays; when the link routes
// the session afresh it presents the renewed one, not the assertion it entered with (which may
// have lapsed by then).
TEST_F(FleetWorldLinkTest, ASessionRoutedAfreshPresentsItsRenewedAssertion) {
  StartShard([this](const telos::v1::Attach& attach) {
    if (!attach.handoff_token().empty()) {
      return Answer{Attached(attach.session(), kCodeNotFound, "no arrival with that token", "")};
    }
    Answer answer{Attached(attach.session(), kCodeOk, "", "lobby")};
    if (shard_->attaches().size() == 1) {
      // The gate renews while the session plays here; then the character walks elsewhere and
      // its arrival is gone before the attach, so the session is routed again.
      link_->UpdateAssertion("ayla", "renewed-assertion");
      link_->UpdateAssertion("nobody", "ignored");  // not online: nothing happens
      auto* redirect = answer.frame.add_redirects();
      redirect->set_session(attach.session());
      redirect->set_shard_id("shard-a");
      redirect->set_endpoint(endpoint_);
      redirect->set_handoff_token("token-1");
    }
    return answer;
  });
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(Enter(sink).ok());
  ASSERT_TRUE(Eventually([&] { return shard_->attaches().size() >= 3 || sink->disconnected(); }));
  const auto attaches = shard_->attaches();
  ASSERT_EQ(attaches.size(), 3u) << sink->text();
  EXPECT_EQ(attaches[0].assertion(), "signed-assertion");
  EXPECT_EQ(attaches[2].handoff_token(), "");
  EXPECT_EQ(attaches[2].assertion(), "renewed-assertion");
  EXPECT_FALSE(sink->disconnected()) << sink->text();
}

// A login the shard refuses for good (no such arrival was ever asked for: a plain attach) still
// ends the session with the reason, rather than looping.
TEST_F(FleetWorldLinkTest, ARefusedLoginEndsTheSessionWithTheReason) {
  StartShard([](const telos::v1::Attach& attach) {
    return Answer{Attached(attach.session(), kCodeNotFound, "no such character", "")};
  });
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(Enter(sink).ok());

  ASSERT_TRUE(Eventually([&] { return sink->disconnected(); })) << sink->text();
  EXPECT_NE(sink->text().find("no such character"), std::string::npos) << sink->text();
  EXPECT_EQ(shard_->attaches().size(), 1u);
}

// Stop() while a routing step is inside the directory: it waits for the step to leave, so the
// link is never destroyed under a task still using it (a flag checked before the step left that
// window open).
TEST_F(FleetWorldLinkTest, StopWaitsForARoutingStepInFlight) {
  StartShard([](const telos::v1::Attach& attach) {
    return Answer{Attached(attach.session(), kCodeOk, "", "lobby")};
  });
  holding_.hold = true;
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(Enter(sink).ok());
  holding_.entered.get_future().wait();
  auto stopping = std::async(std::launch::async, [this] { link_->Stop(); });
  EXPECT_EQ(stopping.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  holding_.release.set_value();
  EXPECT_EQ(stopping.wait_for(kWait), std::future_status::ready);
}

// The worlds accept a Play stream only with the gate token: the link presents it on each.
TEST_F(FleetWorldLinkTest, EveryPlayStreamCarriesTheGateToken) {
  StartShard([](const telos::v1::Attach& attach) {
    return Answer{Attached(attach.session(), kCodeOk, "", "lobby")};
  });
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(Enter(sink).ok());
  ASSERT_TRUE(Eventually([&] { return !shard_->attaches().empty(); }));
  const auto authorizations = shard_->authorizations();
  ASSERT_EQ(authorizations.size(), 1u);
  EXPECT_EQ(authorizations[0], "Bearer gate-token-of-the-test");
}

}  // namespace
}  // namespace telos::gate
