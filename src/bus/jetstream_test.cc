// JetStreamStreams: the DurableStreams conformance suite against a real NATS with JetStream
// (TELOS_NATS; eval "$(scripts/services env)"), and an outage on a private nats-server that the
// test starts, kills and restarts on the same store.
//
// Without TELOS_NATS, or if that NATS does not answer, the suite fails (it never skips).
#include "telos/bus/jetstream.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "telos/base/log.h"
#include "telos/bus/durable_conformance.h"
#include "telos_testing/private_server.h"

namespace telos::bus {
namespace {

using testing::Recorder;
using testing::WaitUntil;

std::string RandomLetters() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  std::string out;
  for (int i = 0; i < 12; ++i) out += static_cast<char>('a' + gen() % 26);
  return out;
}

JetStreamOptions TestOptions(std::string url) {
  JetStreamOptions options;
  options.connection.url = std::move(url);
  options.connection.name = "jetstream-test";
  options.connection.reconnect_wait_ms = 50;
  options.connection.connect_timeout_ms = 1'000;
  options.call_timeout_ms = 2'000;
  return options;
}

// Deletes a stream with a connection of its own: the suite leaves nothing on the shared server.
void DeleteStream(const std::string& url, const std::string& stream) {
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return;
  jsCtx* js = nullptr;
  if (natsConnection_JetStream(&js, nc, nullptr) == NATS_OK) {
    (void)js_DeleteStream(js, stream.c_str(), nullptr, nullptr);
    jsCtx_Destroy(js);
  }
  natsConnection_Destroy(nc);
}

class JetStreamBackend {
 public:
  JetStreamBackend() : logger_("jetstream-test", LogLevel::kWarn), prefix_(RandomLetters()) {}
  ~JetStreamBackend() {
    streams_.reset();
    if (!url_.empty()) DeleteStream(url_, "S" + prefix_);
  }

  Status Ready() {
    const char* url = std::getenv("TELOS_NATS");
    if (url == nullptr || *url == '\0') {
      return Status::FailedPrecondition(
          "TELOS_NATS is not set: start the services and run eval \"$(scripts/services env)\"");
    }
    url_ = url;
    Open();
    if (streams_ == nullptr) return Status::Unavailable("cannot connect to " + url_);
    if (!WaitUntil([&] { return streams_->connected(); })) {
      return Status::Unavailable("NATS at " + url_ + " did not answer");
    }
    return Status::Ok();
  }
  DurableStreams& Streams() { return *streams_; }
  void Reopen() {
    streams_.reset();
    Open();
    ASSERT_NE(streams_, nullptr);
    ASSERT_TRUE(WaitUntil([&] { return streams_->connected(); }));
  }
  std::string Prefix() { return prefix_; }

 private:
  void Open() {
    auto streams = JetStreamStreams::Connect(TestOptions(url_), logger_);
    if (streams.ok()) streams_ = std::move(streams).value();
  }

  Logger logger_;
  std::string prefix_;
  std::string url_;
  std::unique_ptr<JetStreamStreams> streams_;
};

}  // namespace
}  // namespace telos::bus

namespace telos::bus::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(JetStream, DurableConformance, JetStreamBackend);
}  // namespace telos::bus::testing

namespace telos::bus {
namespace {

// A request JetStream itself refuses is not reported as an outage: retrying cannot help.
TEST(JetStreamErrors, AConfigurationTheServerRefusesIsAFailedPrecondition) {
  const char* url = std::getenv("TELOS_NATS");
  ASSERT_TRUE(url != nullptr && *url != '\0') << "TELOS_NATS is not set";
  Logger logger("jetstream-test", LogLevel::kWarn);
  JetStreamOptions options = TestOptions(url);
  options.replicas = 3;  // a single server cannot place three copies
  auto streams = JetStreamStreams::Connect(options, logger);
  ASSERT_TRUE(streams.ok()) << streams.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return (*streams)->connected(); }));
  const std::string name = "S" + RandomLetters();
  Status s = (*streams)->EnsureStream({.name = name, .subjects = "ev" + RandomLetters() + ".>"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  DeleteStream(url, name);
}

// Events stored before the server dies are still there after it restarts on the same store; a
// consumer that ran through the outage resumes on its own; publishing while down is refused.
TEST(JetStreamOutage, EventsAndConsumersSurviveAServerRestart) {
  const int port = ::telos::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string url = "nats://127.0.0.1:" + std::to_string(port);
  const std::filesystem::path store =
      std::filesystem::temp_directory_path() / ("telos-js-" + RandomLetters());
  ::telos::testing::PrivateServer server({"nats-server", "-js", "-sd", store.string(), "-a",
                                          "127.0.0.1", "-p", std::to_string(port), "-l",
                                          "/dev/null"});
  ASSERT_TRUE(server.Start()) << "cannot start nats-server (is it installed?)";
  Logger logger("jetstream-test", LogLevel::kWarn);
  auto connected = JetStreamStreams::Connect(TestOptions(url), logger);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  std::unique_ptr<JetStreamStreams> streams = std::move(connected).value();
  ASSERT_TRUE(WaitUntil([&] { return streams->connected(); }));
  // JetStream may take a moment after the port opens.
  ASSERT_TRUE(WaitUntil(
      [&] { return streams->EnsureStream({.name = "EVENTS", .subjects = "events.>"}).ok(); }));
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(streams->Publish("events.boss", "kill" + std::to_string(i), "").ok());
  }
  Recorder got;
  // A short AckWait: a server killed hard may have lost the last acks (it syncs its store on a
  // timer), and then delivers those events again once AckWait has passed.
  auto consumer = streams->Consume(
      {.stream = "EVENTS", .durable = "director", .ack_wait_ms = 1'000, .retry_delay_ms = 50},
      got.Handler());
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE(got.WaitForCount(3));

  server.Kill();
  ASSERT_TRUE(WaitUntil([&] { return !streams->connected(); }));
  EXPECT_EQ(streams->Publish("events.boss", "lost", "").status().code(), StatusCode::kUnavailable);

  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(WaitUntil([&] { return streams->connected(); }));
  // The stream came back from the store, and the consumer that ran through the outage gets the
  // next event. A server killed hard may have lost its latest consumer state (it syncs its
  // store on a timer), so events already answered can come again: at least once, and in
  // stream order after the restart, which a consumer's watermark absorbs.
  ASSERT_TRUE(WaitUntil([&] { return streams->Publish("events.boss", "kill4", "").ok(); }));
  ASSERT_TRUE(WaitUntil([&] { return !got.datas().empty() && got.datas().back() == "kill4"; }));
  const std::vector<DurableEvent> seen = got.seen();
  ASSERT_GE(seen.size(), 4u);
  const std::vector<std::string> datas = got.datas();
  EXPECT_EQ(std::vector<std::string>(datas.begin(), datas.begin() + 3),
            (std::vector<std::string>{"kill1", "kill2", "kill3"}));
  for (size_t i = 4; i < seen.size(); ++i) {
    EXPECT_GT(seen[i].stream_sequence, seen[i - 1].stream_sequence) << "out of order at " << i;
  }
  EXPECT_EQ(seen.back().stream_sequence, 4u);
  consumer->reset();
  streams.reset();
  server.Kill();
  std::error_code ignored;
  std::filesystem::remove_all(store, ignored);
}

}  // namespace
}  // namespace telos::bus
