#include "telos/bus/jetstream.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "telos/base/assert.h"
#include "telos/bus/bus.h"

namespace telos::bus {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
// One fetch waits this long for an event before looking at the stop flag again.
constexpr int64_t kFetchWaitMs = 200;
// A consumer that cannot reach the server (or create its consumer) tries again after this long.
constexpr auto kReconnectPause = std::chrono::milliseconds(200);

std::string JsError(natsStatus s, jsErrCode code) {
  std::string text = natsStatus_GetText(s);
  if (code != 0) text += " (JetStream error " + std::to_string(static_cast<int>(code)) + ")";
  return text;
}

Status FromJs(natsStatus s, jsErrCode code, std::string_view what) {
  if (s == NATS_OK) return Status::Ok();
  std::string message = std::string(what) + ": " + JsError(s, code);
  if (code == JSStreamNotFoundErr || s == NATS_NO_RESPONDERS || s == NATS_NOT_FOUND) {
    return Status::NotFound(std::move(message));
  }
  if (s == NATS_INVALID_ARG || s == NATS_INVALID_SUBJECT || s == NATS_MAX_PAYLOAD) {
    return Status::InvalidArgument(std::move(message));
  }
  if (s == NATS_NOT_PERMITTED || s == NATS_CONNECTION_AUTH_FAILED) {
    return Status::PermissionDenied(std::move(message));
  }
  // No answer from JetStream (code 0: the connection, a timeout) or a passing state of the
  // cluster is an outage; any other answer is a refusal (an invalid configuration, JetStream not
  // enabled, replicas it cannot place), which retrying the same call cannot cure.
  const bool passing = static_cast<int>(code) == 0 || code == JSClusterNoPeersErr ||
                       code == JSClusterNotAvailErr || code == JSClusterNotLeaderErr ||
                       code == JSInsufficientResourcesErr || code == JSStreamOfflineErr ||
                       code == JSConsumerOfflineErr;
  return passing ? Status::Unavailable(std::move(message))
                 : Status::FailedPrecondition(std::move(message));
}

struct StreamInfoDeleter {
  void operator()(jsStreamInfo* si) const { jsStreamInfo_Destroy(si); }
};
using StreamInfoPtr = std::unique_ptr<jsStreamInfo, StreamInfoDeleter>;

}  // namespace

struct JetStreamStreams::Core {
  Core(std::unique_ptr<NatsBus> b, jsCtx* j, const JetStreamOptions& o, Logger& l)
      : bus(std::move(b)), js(j), options(o), logger(l) {}
  ~Core() {
    jsCtx_Destroy(js);
    // The bus (and its connection) goes after the context that uses it.
  }

  Result<StreamInfoPtr> StreamInfo(const std::string& name) {
    jsStreamInfo* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&raw, js, name.c_str(), nullptr, &code);
    if (s != NATS_OK) return FromJs(s, code, "stream " + name);
    return StreamInfoPtr(raw);
  }

  // Creates or updates the durable consumer on the server (never through a subscribe, so that
  // unsubscribing cannot delete it).
  Status EnsureConsumer(const ConsumerSpec& spec, const std::string& filter) {
    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Durable = spec.durable.c_str();
    config.AckPolicy = js_AckExplicit;
    config.DeliverPolicy = js_DeliverAll;
    config.AckWait = spec.ack_wait_ms * kNsPerMs;
    config.MaxDeliver = spec.max_deliveries;
    config.MaxAckPending = 1;
    config.FilterSubject = filter.c_str();
    jsConsumerInfo* info = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_AddConsumer(&info, js, spec.stream.c_str(), &config, nullptr, &code);
    if (s != NATS_OK && code == JSConsumerNameExistErr) {
      code = static_cast<jsErrCode>(0);
      s = js_UpdateConsumer(&info, js, spec.stream.c_str(), &config, nullptr, &code);
    }
    if (info != nullptr) jsConsumerInfo_Destroy(info);
    return FromJs(s, code, "consumer " + spec.durable + " on " + spec.stream);
  }

  std::unique_ptr<NatsBus> bus;
  jsCtx* js;
  const JetStreamOptions options;
  Logger& logger;
  std::mutex mu;
  std::set<std::pair<std::string, std::string>> running;  // (stream, durable)
  // Bumped on every (re)connect: a consumer bound before it binds again, since a pull
  // subscription does not reliably resume fetching across a server restart.
  std::atomic<uint64_t> connections{0};
};

namespace {

class JetStreamConsumer final : public DurableConsumer {
 public:
  using Handler = std::function<Disposition(const DurableEvent&)>;

  JetStreamConsumer(std::shared_ptr<JetStreamStreams::Core> core, ConsumerSpec spec,
                    std::string filter, Handler handler)
      : core_(std::move(core)),
        spec_(std::move(spec)),
        filter_(std::move(filter)),
        handler_(std::move(handler)) {
    thread_ = std::thread([this] { Run(); });
  }

  ~JetStreamConsumer() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    Unbind();
    std::lock_guard lock(core_->mu);
    core_->running.erase({spec_.stream, spec_.durable});
  }

  ConsumerCounts counts() const override {
    return {acked_.load(), rejected_.load(), parked_.load(), redelivered_.load()};
  }

 private:
  bool Stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }
  void Pause(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, d, [&] { return stop_; });
  }

  // Bound to a consumer this code created, so this only drops the local interest.
  void Unbind() {
    if (sub_ == nullptr) return;
    natsSubscription_Unsubscribe(sub_);
    natsSubscription_Destroy(sub_);
    sub_ = nullptr;
  }

  Status Bind() {
    bound_at_ = core_->connections.load();
    Status s = core_->EnsureConsumer(spec_, filter_);
    if (!s.ok()) return s;
    jsSubOptions options;
    jsSubOptions_Init(&options);
    options.Stream = spec_.stream.c_str();
    options.Consumer = spec_.durable.c_str();
    options.ManualAck = true;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus st = js_PullSubscribe(&sub_, core_->js, filter_.c_str(), spec_.durable.c_str(),
                                     nullptr, &options, &code);
    if (st != NATS_OK) sub_ = nullptr;
    return FromJs(st, code, "binding consumer " + spec_.durable);
  }

  void Handle(natsMsg* msg) {
    DurableEvent event;
    event.subject = natsMsg_GetSubject(msg);
    event.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
      event.stream_sequence = meta->Sequence.Stream;
      event.deliveries = static_cast<uint32_t>(meta->NumDelivered);
      event.published_unix_ms = meta->Timestamp / kNsPerMs;
      jsMsgMetaData_Destroy(meta);
    }
    if (event.deliveries > 1) ++redelivered_;
    const Disposition answer = handler_(event);
    const bool last = event.deliveries >= spec_.max_deliveries;
    natsStatus s = NATS_OK;
    switch (answer) {
      case Disposition::kAck: {
        jsErrCode code = static_cast<jsErrCode>(0);
        s = natsMsg_AckSync(msg, nullptr, &code);
        if (s == NATS_OK) ++acked_;
        break;
      }
      case Disposition::kReject:
        s = natsMsg_Term(msg, nullptr);
        if (s == NATS_OK) ++rejected_;
        break;
      case Disposition::kRetry:
        if (last) {
          // A NAK, not a TERM: the server then finds the event out of deliveries, drops it
          // and publishes the MAX_DELIVERIES advisory that the fleet's parked count reads.
          s = natsMsg_Nak(msg, nullptr);
          if (s == NATS_OK) ++parked_;
        } else {
          s = natsMsg_NakWithDelay(msg, spec_.retry_delay_ms, nullptr);
        }
        break;
    }
    if (s != NATS_OK) {
      // The answer did not reach the server: the event comes back after AckWait, and the
      // consumer's watermark absorbs a second application.
      core_->logger.Warn("durable answer not delivered",
                         {{"consumer", spec_.durable}, {"error", natsStatus_GetText(s)}});
    }
  }

  void Run() {
    while (!Stopping()) {
      if (sub_ != nullptr && bound_at_ != core_->connections.load()) Unbind();
      if (sub_ == nullptr) {
        Status bound = Bind();
        if (!bound.ok()) {
          Pause(kReconnectPause);
          continue;
        }
      }
      natsMsgList list{};
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = natsSubscription_Fetch(&list, sub_, 1, kFetchWaitMs, &code);
      if (s == NATS_TIMEOUT) continue;
      if (s != NATS_OK) {
        // Lost the server, or the consumer: bind again from scratch once it answers.
        const std::string error = JsError(s, code);
        if (error != last_error_) {
          core_->logger.Warn("durable consumer fetch failed",
                             {{"consumer", spec_.durable}, {"error", error}});
          last_error_ = error;
        }
        Unbind();
        Pause(kReconnectPause);
        continue;
      }
      last_error_.clear();
      for (int i = 0; i < list.Count; ++i) Handle(list.Msgs[i]);
      natsMsgList_Destroy(&list);
    }
  }

  std::shared_ptr<JetStreamStreams::Core> core_;
  const ConsumerSpec spec_;
  const std::string filter_;
  Handler handler_;
  natsSubscription* sub_ = nullptr;  // the consumer thread's, until it is joined
  std::string last_error_;           // the consumer thread's: the last fetch error logged
  uint64_t bound_at_ = 0;            // the consumer thread's: core_->connections when bound
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<uint64_t> acked_{0}, rejected_{0}, parked_{0}, redelivered_{0};
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<JetStreamStreams>> JetStreamStreams::Connect(JetStreamOptions options,
                                                                    Logger& logger) {
  if (options.call_timeout_ms <= 0 || options.call_timeout_ms > limits::kDurableCallTimeoutMsMax) {
    return Status::InvalidArgument("JetStream call timeout must be in (0, " +
                                   std::to_string(limits::kDurableCallTimeoutMsMax) + "] ms");
  }
  if (options.replicas < 1) return Status::InvalidArgument("JetStream replicas must be >= 1");
  auto bus = NatsBus::Connect(options.connection, logger);
  if (!bus.ok()) return bus.status();
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = options.call_timeout_ms;
  jsCtx* js = nullptr;
  auto* conn = static_cast<natsConnection*>((*bus)->raw_connection());
  natsStatus s = natsConnection_JetStream(&js, conn, &js_options);
  if (s != NATS_OK) return FromJs(s, static_cast<jsErrCode>(0), "JetStream context");
  auto core = std::make_shared<Core>(std::move(bus).value(), js, options, logger);
  core->bus->OnConnectionChange([weak = std::weak_ptr<Core>(core)](bool up) {
    if (auto c = weak.lock(); c && up) c->connections.fetch_add(1);
  });
  return std::unique_ptr<JetStreamStreams>(new JetStreamStreams(std::move(core)));
}

JetStreamStreams::JetStreamStreams(std::shared_ptr<Core> core) : core_(std::move(core)) {}

JetStreamStreams::~JetStreamStreams() {
  std::lock_guard lock(core_->mu);
  RELEASE_ASSERT(core_->running.empty(), "JetStreamStreams destroyed before its consumers");
}

bool JetStreamStreams::connected() const {
  return core_->bus->connected();
}

namespace {

// A queue subscription to one stream's MAX_DELIVERIES advisories; keeps the connection alive.
class ParkedWatch final : public Subscription {
 public:
  ParkedWatch(std::shared_ptr<JetStreamStreams::Core> core, natsSubscription* sub)
      : core_(std::move(core)), sub_(sub) {}
  ~ParkedWatch() override {
    natsSubscription_Unsubscribe(sub_);
    natsSubscription_Destroy(sub_);
  }

 private:
  std::shared_ptr<JetStreamStreams::Core> core_;
  natsSubscription* sub_;
};

void OnParkedAdvisory(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  // Any message on the advisory subject is one parked event; its body (JSON naming the
  // consumer and sequence) is not needed to count it.
  natsMsg_Destroy(msg);
  static_cast<prometheus::Counter*>(closure)->Increment();
}

}  // namespace

Result<std::unique_ptr<Subscription>> JetStreamStreams::WatchParked(const std::string& stream,
                                                                    Metrics& metrics) {
  if (!ValidStreamName(stream)) {
    return Status::InvalidArgument("stream name '" + stream + "' is not [A-Za-z0-9_-]{1,64}");
  }
  // The counter lives in `metrics`, which outlives the subscription: the callback's closure.
  prometheus::Counter& parked = metrics.Counter(
      "commbus_durable_parked_total",
      "Durable events dropped after max_deliveries, counted once fleet-wide off the broker's "
      "MAX_DELIVERIES advisory",
      {{"stream", stream}});
  const std::string subject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + ".*";
  const std::string group = "telos-parked-" + stream;
  auto* conn = static_cast<natsConnection*>(core_->bus->raw_connection());
  natsSubscription* sub = nullptr;
  natsStatus s = natsConnection_QueueSubscribe(&sub, conn, subject.c_str(), group.c_str(),
                                               &OnParkedAdvisory, &parked);
  if (s != NATS_OK) {
    return FromJs(s, static_cast<jsErrCode>(0), "watching parked events of " + stream);
  }
  // In effect once the server has it, when connected (as Bus::Subscribe promises).
  if (core_->bus->connected()) {
    (void)natsConnection_FlushTimeout(conn, core_->options.call_timeout_ms);
  }
  return std::unique_ptr<Subscription>(std::make_unique<ParkedWatch>(core_, sub));
}

Status JetStreamStreams::EnsureStream(const StreamSpec& spec) {
  Status check = CheckStreamSpec(spec);
  if (!check.ok()) return check;
  const char* subjects[] = {spec.subjects.c_str()};
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = spec.name.c_str();
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.Replicas = core_->options.replicas;
  config.MaxAge = spec.max_age_ms * kNsPerMs;
  config.MaxMsgs = spec.max_messages > 0 ? spec.max_messages : -1;
  // The server refuses a duplicate window longer than the age bound; no event outlives that
  // bound, so none could be found a duplicate past it anyway (the SQLite log behaves the same).
  const int64_t window_ms = spec.max_age_ms > 0
                                ? std::min(spec.duplicate_window_ms, spec.max_age_ms)
                                : spec.duplicate_window_ms;
  config.Duplicates = window_ms * kNsPerMs;
  jsStreamInfo* raw = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&raw, core_->js, &config, nullptr, &code);
  StreamInfoPtr info(raw);
  if (s == NATS_OK) return Status::Ok();
  if (code != JSStreamNameExistErr) return FromJs(s, code, "creating stream " + spec.name);
  auto existing = core_->StreamInfo(spec.name);
  if (!existing.ok()) return existing.status();
  const jsStreamConfig* have = (*existing)->Config;
  if (have == nullptr || have->SubjectsLen != 1 || spec.subjects != have->Subjects[0]) {
    return Status::AlreadyExists("stream " + spec.name + " already captures other subjects");
  }
  raw = nullptr;
  code = static_cast<jsErrCode>(0);
  s = js_UpdateStream(&raw, core_->js, &config, nullptr, &code);
  info.reset(raw);
  return FromJs(s, code, "updating stream " + spec.name);
}

Result<PublishAck> JetStreamStreams::Publish(std::string_view subject, std::string_view data,
                                             std::string_view msg_id) {
  if (!ValidSubject(subject, /*allow_wildcards=*/false)) {
    return Status::InvalidArgument("malformed subject for an event: " + std::string(subject));
  }
  if (data.size() > kMessageBytesMax) {
    return Status::InvalidArgument("event of " + std::to_string(data.size()) +
                                   " bytes is over the limit");
  }
  if (msg_id.size() > limits::kDurableMsgIdBytesMax) {
    return Status::InvalidArgument("msg_id over " + std::to_string(limits::kDurableMsgIdBytesMax) +
                                   " bytes");
  }
  if (!core_->bus->connected()) return Status::Unavailable("NATS is not connected");
  const std::string subject_text(subject);
  const std::string id(msg_id);
  jsPubOptions options;
  jsPubOptions_Init(&options);
  options.MaxWait = core_->options.call_timeout_ms;
  if (!id.empty()) options.MsgId = id.c_str();
  jsPubAck* ack = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&ack, core_->js, subject_text.c_str(), data.data(),
                            static_cast<int>(data.size()), &options, &code);
  if (s != NATS_OK) {
    if (ack != nullptr) jsPubAck_Destroy(ack);
    if (s == NATS_NO_RESPONDERS) {
      return Status::NotFound("no stream captures " + subject_text);
    }
    return FromJs(s, code, "publishing on " + subject_text);
  }
  PublishAck out{ack->Sequence, ack->Duplicate};
  jsPubAck_Destroy(ack);
  return out;
}

Result<std::unique_ptr<DurableConsumer>> JetStreamStreams::Consume(
    const ConsumerSpec& spec, std::function<Disposition(const DurableEvent&)> handler) {
  Status check = CheckConsumerSpec(spec);
  if (!check.ok()) return check;
  if (!handler) return Status::InvalidArgument("a consumer needs a handler");
  // The filter is the spec's, or the stream's own subjects (a pull subscription names one).
  std::string filter = spec.filter_subject;
  if (filter.empty()) {
    auto info = core_->StreamInfo(spec.stream);
    if (!info.ok()) return info.status();
    const jsStreamConfig* config = (*info)->Config;
    if (config == nullptr || config->SubjectsLen < 1) {
      return Status::FailedPrecondition("stream " + spec.stream + " captures no subjects");
    }
    filter = config->Subjects[0];
  }
  {
    std::lock_guard lock(core_->mu);
    if (core_->running.count({spec.stream, spec.durable}) != 0) {
      return Status::AlreadyExists("consumer " + spec.durable + " already runs in this process");
    }
    core_->running.insert({spec.stream, spec.durable});
  }
  return std::unique_ptr<DurableConsumer>(
      new JetStreamConsumer(core_, spec, std::move(filter), std::move(handler)));
}

}  // namespace telos::bus
