// NatsBus on nats.c.
//
// Lifetimes. nats.c calls back with a raw `void*` closure, possibly after the object that
// registered it is gone (a message already queued on the delivery pool, a connection event
// already posted). So every closure handed to nats.c is a small heap object that owns a
// shared_ptr or weak_ptr, freed by the callback nats.c guarantees to be the last one:
//   - a subscription's: freed by its completion callback (natsSubscription_SetOnCompleteCB),
//     which runs after the subscription is closed and its last message handler returned;
//   - the connection's: freed by the closed callback, the last connection event.
// User code is fenced separately by a HandlerGuard (handler_guard.h) per subscription, so "after
// ~Subscription returns, the handler is not running and never runs again" holds whatever nats.c
// still has queued.
//
// nats.c 3.4 (Debian 12) has a race: the read loop looks a subscription up, lets go of the lock,
// and only then uses it, so a subscription unsubscribed and destroyed at that moment is used
// after it was freed (fixed upstream in 3.6, nats-io/nats.c#638; valgrind shows it here). So a
// subscription's handle is not destroyed with it: it is unsubscribed at once and buried, and the
// timer thread destroys the buried handles after a PING/PONG round trip that began after they
// were buried, which proves the read loop has moved past any message it was handling for them.
// Once the connection is closed (its read loop joined) handles are destroyed at once.
//
// Locks (never nested, never held while calling user code): Core::state_mu (connection state),
// Core::subs_mu (live guards), Core::req_mu (waiting requests, the timer queue, buried handles),
// and each closure's HandlerGuard.
#include "telos/bus/nats_bus.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checks.h"
#include "handler_guard.h"
#include "pending_requests.h"
#include "telos/base/assert.h"

namespace telos::bus {
namespace {

using SteadyClock = std::chrono::steady_clock;
using Done = std::function<void(Result<std::string>)>;
using internal::CheckReply;
using internal::CheckRequest;
using internal::CheckSend;
using internal::CheckSubscribe;
using internal::HandlerGuard;
using internal::PendingRequests;
using internal::ReplySubject;
using internal::ReplyToken;
using internal::RequestDeadline;

// How long the destructor waits for nats.c to report the connection closed. It is normally
// immediate; the bound only keeps a wedged library from hanging shutdown.
constexpr auto kCloseWait = std::chrono::seconds(5);
// A server that does not answer two pings in a row is declared lost.
constexpr int kMaxPingsOut = 2;
// The round trip that lets buried subscription handles go (see above), and the pause before
// trying again when it fails.
constexpr int64_t kBurialFlushTimeoutMs = 1'000;
constexpr auto kBurialRetry = std::chrono::seconds(1);

// Accepts "nats://[user[:password]@]host[:port]" (or tls://), several separated by commas.
bool ValidUrls(std::string_view urls) {
  if (urls.empty()) return false;
  for (const char c : urls) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = urls.find(',', start);
    std::string_view url =
        urls.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (url.starts_with("nats://")) {
      url.remove_prefix(7);
    } else if (url.starts_with("tls://")) {
      url.remove_prefix(6);
    } else {
      return false;
    }
    if (const size_t at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
    if (url.empty() || url.find('/') != std::string_view::npos) return false;
    std::string_view host = url;
    std::string_view port;
    if (url.front() == '[') {  // [v6]:port
      const size_t close = url.find(']');
      if (close == std::string_view::npos || close == 1) return false;
      host = url.substr(0, close + 1);
      const std::string_view rest = url.substr(close + 1);
      if (!rest.empty()) {
        if (rest.front() != ':') return false;
        port = rest.substr(1);
        if (port.empty()) return false;
      }
    } else if (const size_t colon = url.find(':'); colon != std::string_view::npos) {
      host = url.substr(0, colon);
      port = url.substr(colon + 1);
      if (port.empty()) return false;
    }
    if (host.empty()) return false;
    if (!port.empty()) {
      if (port.size() > 5) return false;
      int value = 0;
      for (const char c : port) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + (c - '0');
      }
      if (value < 1 || value > 65'535) return false;
    }
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

// The url(s) with any credentials replaced, for logs.
std::string RedactUrls(std::string_view urls) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t comma = urls.find(',', start);
    std::string_view url =
        urls.substr(start, comma == std::string_view::npos ? comma : comma - start);
    const size_t scheme = url.find("://");
    const size_t at = url.rfind('@');
    if (scheme != std::string_view::npos && at != std::string_view::npos && at > scheme) {
      out.append(url.substr(0, scheme + 3)).append("***").append(url.substr(at));
    } else {
      out.append(url);
    }
    if (comma == std::string_view::npos) return out;
    out += ',';
    start = comma + 1;
  }
}

// At most one kind of credentials, each complete, and its files readable: a mistake here is
// an operator's, found at start-up rather than as a refusal from the server.
Status CheckCredentials(const NatsCredentials& c) {
  const int kinds = int{!c.user.empty() || !c.password.empty()} + int{!c.token.empty()} +
                    int{!c.creds_file.empty()} + int{!c.nkey.empty() || !c.nkey_seed_file.empty()};
  if (kinds > 1) {
    return Status::InvalidArgument(
        "NATS credentials of more than one kind (user and password, token, creds file, nkey): "
        "give one");
  }
  if (c.user.empty() != c.password.empty()) {
    return Status::InvalidArgument("a NATS user needs a password, and a password a user");
  }
  if (c.nkey.empty() != c.nkey_seed_file.empty()) {
    return Status::InvalidArgument("a NATS nkey needs its seed file, and a seed file its nkey");
  }
  for (const std::string* path : {&c.creds_file, &c.nkey_seed_file}) {
    if (path->empty()) continue;
    std::ifstream in(*path, std::ios::binary);
    if (!in) return Status::InvalidArgument("cannot open the NATS credentials file " + *path);
  }
  return Status::Ok();
}

natsStatus ApplyCredentials(natsOptions* opts, const NatsCredentials& c) {
  if (!c.user.empty()) return natsOptions_SetUserInfo(opts, c.user.c_str(), c.password.c_str());
  if (!c.token.empty()) return natsOptions_SetToken(opts, c.token.c_str());
  if (!c.creds_file.empty()) {
    // One file holds both the JWT and the seed.
    return natsOptions_SetUserCredentialsFromFiles(opts, c.creds_file.c_str(), nullptr);
  }
  if (!c.nkey.empty()) {
    return natsOptions_SetNKeyFromSeed(opts, c.nkey.c_str(), c.nkey_seed_file.c_str());
  }
  return NATS_OK;
}

// One connect attempt that does not retry, and goes at once. Retrying, nats.c closes a
// connection whose login the server refuses with nothing but "No server available for
// connection", which would leave a bus down for good and a log that does not say why; this
// attempt gets the server's own words. Anything but a refusal is left to the retrying
// connection (a server that is down is an outage, not an error).
Status ProbeLogin(const NatsBusOptions& o, std::string_view shown_url) {
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return Status::Internal("cannot create NATS options");
  std::unique_ptr<natsOptions, void (*)(natsOptions*)> opts(raw, &natsOptions_Destroy);
  natsStatus s = natsOptions_SetURL(opts.get(), o.url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts.get(), o.connect_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts.get(), false);
  if (s == NATS_OK) s = ApplyCredentials(opts.get(), o.credentials);
  if (s != NATS_OK) return Status::Ok();  // the real connection reports bad options
  natsConnection* nc = nullptr;
  s = natsConnection_Connect(&nc, opts.get());
  std::string detail;
  if (s != NATS_OK) {
    natsStatus last = NATS_OK;
    const char* text = nats_GetLastError(&last);
    if (text != nullptr) detail = text;
  }
  if (nc != nullptr) natsConnection_Destroy(nc);
  if (s != NATS_CONNECTION_AUTH_FAILED) return Status::Ok();
  return Status::PermissionDenied("NATS at " + std::string(shown_url) + " refused the login: " +
                                  (detail.empty() ? natsStatus_GetText(s) : detail));
}

Status FromNats(natsStatus s, std::string_view what) {
  if (s == NATS_OK) return Status::Ok();
  std::string message = std::string(what) + ": " + natsStatus_GetText(s);
  switch (s) {
    case NATS_INVALID_SUBJECT:
    case NATS_INVALID_ARG:
    case NATS_MAX_PAYLOAD: return Status::InvalidArgument(std::move(message));
    // The server refused the credentials, or this user's permissions forbid the operation.
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED: return Status::PermissionDenied(std::move(message));
    default: return Status::Unavailable(std::move(message));
  }
}

}  // namespace

struct NatsBus::Core {
  // What nats.c holds for one subscription, through a heap shared_ptr freed on completion.
  // The bus and the Subscription may both close its guard, even at once.
  struct Closure {
    explicit Closure(std::function<void(const Message&)> handler = nullptr)
        : guard(std::move(handler)) {}
    HandlerGuard guard;            // holds a user subscription's handler
    std::weak_ptr<Core> inbox_of;  // the reply inbox: answers go to this core
    bool inbox = false;
  };

  class SubscriptionImpl final : public Subscription {
   public:
    SubscriptionImpl(std::shared_ptr<Core> core, uint64_t id, std::shared_ptr<Closure> closure,
                     natsSubscription* sub)
        : core_(std::move(core)), id_(id), closure_(std::move(closure)), sub_(sub) {}
    ~SubscriptionImpl() override {
      closure_->guard.Close();
      core_->Forget(id_);
      // Fails harmlessly if the connection is already closed; nats.c keeps the connection
      // object alive until its last subscription handle is destroyed.
      natsSubscription_Unsubscribe(sub_);
      core_->Bury(sub_);
    }

   private:
    std::shared_ptr<Core> core_;
    uint64_t id_;
    std::shared_ptr<Closure> closure_;
    natsSubscription* sub_;
  };

  Core(NatsBusOptions o, Logger& l)
      : options(std::move(o)), logger(l), redacted_url(RedactUrls(options.url)) {}
  ~Core() { RELEASE_ASSERT(!timer.joinable(), "NatsBus core destroyed with its timer running"); }

  // ---------------------------------------------------------------- nats.c callbacks

  static std::shared_ptr<Core> CoreOf(void* closure) {
    return static_cast<std::weak_ptr<Core>*>(closure)->lock();
  }
  static void OnConnected(natsConnection*, void* closure) {
    if (auto core = CoreOf(closure)) core->SetUp(true, "nats connected");
  }
  static void OnReconnected(natsConnection*, void* closure) {
    if (auto core = CoreOf(closure)) core->SetUp(true, "nats reconnected");
  }
  static void OnDisconnected(natsConnection*, void* closure) {
    if (auto core = CoreOf(closure)) core->SetUp(false, "");
  }
  // Errors reported on a live connection: a permissions violation, a slow consumer. (nats.c
  // 3.4 does not report a refused login here; see ProbeLogin and LogGivingUp.)
  static void OnError(natsConnection* nc, natsSubscription*, natsStatus err, void* closure) {
    auto core = CoreOf(closure);
    if (!core) return;
    core->LogServerError(std::string(natsStatus_GetText(err)) + ": " + LastError(nc));
  }
  static void OnClosed(natsConnection* nc, void* closure) {
    if (auto core = CoreOf(closure)) {
      core->LogGivingUp(nc);
      core->SetUp(false, "");
      std::lock_guard lock(core->state_mu);
      core->closed = true;
      core->closed_cv.notify_all();
    }
    delete static_cast<std::weak_ptr<Core>*>(closure);  // no connection event comes after
  }

  static void OnMsg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    Closure& c = **static_cast<std::shared_ptr<Closure>*>(closure);
    const char* reply = natsMsg_GetReply(msg);
    const char* data = natsMsg_GetData(msg);
    Message message{natsMsg_GetSubject(msg),
                    data == nullptr
                        ? std::string()
                        : std::string(data, static_cast<size_t>(natsMsg_GetDataLength(msg))),
                    reply == nullptr ? std::string() : std::string(reply)};
    const bool no_responders = c.inbox && natsMsg_IsNoResponders(msg);
    natsMsg_Destroy(msg);
    if (!c.inbox) {
      c.guard.Deliver(message);
      return;
    }
    c.guard.Run([&] {
      if (auto core = c.inbox_of.lock()) core->OnReply(message, no_responders);
    });
  }
  static void OnComplete(void* closure) { delete static_cast<std::shared_ptr<Closure>*>(closure); }

  // ---------------------------------------------------------------- connection state

  // Applies a connection event. Logs and calls the user's callback only when the value changes,
  // and says "nats unavailable" once per outage.
  void SetUp(bool now_up, std::string_view up_message) {
    std::function<void(bool)> callback;
    {
      std::lock_guard lock(state_mu);
      if (stopping) return;
      if (up.load(std::memory_order_acquire) == now_up) return;
      up.store(now_up, std::memory_order_release);
      if (now_up) {
        logger.Info(up_message, {{"url", redacted_url}});
        outage_logged = false;
      } else {
        LogOutageLocked();
      }
      callback = on_change;
    }
    if (now_up) {
      // Buried handles may go now. Taking the lock orders this after the timer's last look at
      // `up`, so the wake-up cannot fall between that look and its wait.
      { std::lock_guard lock(req_mu); }
      req_wake.notify_all();
    } else {
      FailAllPending(Status::Unavailable("nats connection lost"));
    }
    if (callback) callback(now_up);
  }

  // nats.c closes a connection for good when the server refuses its credentials (on the
  // first connect or a reconnect): without this line the bus would just stay down.
  void LogGivingUp(natsConnection* nc) {
    {
      std::lock_guard lock(state_mu);
      if (stopping) return;  // our own Close
    }
    logger.Error(
        "nats gave up the connection (as it does when the server refuses the login): check the "
        "credentials and restart",
        {{"url", redacted_url}, {"error", LastError(nc)}});
  }

  // The connection's last error as the server worded it ("Authorization Violation").
  static std::string LastError(natsConnection* nc) {
    const char* text = nullptr;
    const natsStatus s = natsConnection_GetLastError(nc, &text);
    if (text != nullptr && *text != '\0') return text;
    return natsStatus_GetText(s);
  }

  // A flood of one error (every publish of a subject the server forbids) is logged once.
  void LogServerError(std::string text) {
    std::lock_guard lock(state_mu);
    if (stopping || text == last_error_logged) return;
    logger.Warn("nats error", {{"url", redacted_url}, {"error", text}});
    last_error_logged = std::move(text);
  }

  void LogOutageLocked() {
    if (outage_logged) return;
    outage_logged = true;
    logger.Warn("nats unavailable", {{"url", redacted_url}});
  }

  // ---------------------------------------------------------------- subscriptions

  // Subscribes `closure` (user or inbox) and returns the nats subscription, confirmed by the
  // server when connected.
  Result<natsSubscription*> SubscribeClosure(const std::string& subject,
                                             const std::shared_ptr<Closure>& closure) {
    auto* holder = new std::shared_ptr<Closure>(closure);
    natsSubscription* sub = nullptr;
    natsStatus s = natsConnection_Subscribe(&sub, conn, subject.c_str(), &Core::OnMsg, holder);
    if (s != NATS_OK) {
      delete holder;  // no subscription, so nats.c never saw it
      return FromNats(s, "nats subscribe");
    }
    s = natsSubscription_SetOnCompleteCB(sub, &Core::OnComplete, holder);
    if (s != NATS_OK) {
      // Closed under our feet (the connection closed). nats.c may still hold `holder` in a
      // queued delivery, so it is left to the process rather than freed under it.
      closure->guard.Close();
      natsSubscription_Destroy(sub);
      return FromNats(s, "nats subscribe");
    }
    if (up.load(std::memory_order_acquire)) {
      // Best effort: if the server does not confirm in time the subscription still stands
      // and is registered again on every reconnect.
      (void)natsConnection_FlushTimeout(conn, options.subscribe_flush_timeout_ms);
    }
    return sub;
  }

  uint64_t Remember(const std::shared_ptr<Closure>& closure) {
    std::lock_guard lock(subs_mu);
    const uint64_t id = next_sub++;
    guards.emplace(id, closure);
    return id;
  }
  void Forget(uint64_t id) {
    std::lock_guard lock(subs_mu);
    guards.erase(id);
  }
  void CloseAllGuards() {
    std::vector<std::shared_ptr<Closure>> live;
    {
      std::lock_guard lock(subs_mu);
      for (auto& [id, weak] : guards) {
        if (auto closure = weak.lock()) live.push_back(std::move(closure));
      }
    }
    for (auto& closure : live) closure->guard.Close();
  }

  // Destroys an unsubscribed handle once the read loop cannot be using it (see above).
  void Bury(natsSubscription* sub) {
    {
      std::lock_guard lock(req_mu);
      if (!conn_closed) {
        graveyard.push_back(sub);
        req_wake.notify_one();
        return;
      }
    }
    natsSubscription_Destroy(sub);
  }

  // Called once the connection is closed and its read loop joined.
  void DestroyBuried() {
    std::vector<natsSubscription*> buried;
    {
      std::lock_guard lock(req_mu);
      conn_closed = true;
      buried.swap(graveyard);
    }
    for (natsSubscription* sub : buried) natsSubscription_Destroy(sub);
  }

  // ---------------------------------------------------------------- requests

  void PostCompletion(Done done, Result<std::string> result) {
    {
      std::lock_guard lock(req_mu);
      PushCompletionLocked(std::move(done), std::move(result));
    }
    req_wake.notify_one();
  }

  // Returns the request's token, or 0 after queueing the failure that ends it.
  uint64_t AddPending(Done done, SteadyClock::time_point deadline) {
    uint64_t token = 0;
    {
      std::lock_guard lock(req_mu);
      if (timer_stopping) {
        PushCompletionLocked(std::move(done), Status::Cancelled("the bus is stopping"));
      } else {
        token = pending.Add(std::move(done), deadline);
      }
    }
    req_wake.notify_one();  // a failure to run, or a new deadline that may be the earliest
    return token;
  }

  Done TakePending(uint64_t token) {
    std::lock_guard lock(req_mu);
    return pending.Take(token);
  }

  void FailPending(uint64_t token, Status status) {
    {
      std::lock_guard lock(req_mu);
      pending.Fail(token, std::move(status));
    }
    req_wake.notify_one();
  }

  void FailAllPending(const Status& status) {
    {
      std::lock_guard lock(req_mu);
      pending.FailAll(status);
    }
    req_wake.notify_one();
  }

  // A message on the inbox: the answer to one request, or the server's "no responders".
  void OnReply(const Message& reply, bool no_responders) {
    const std::optional<uint64_t> token = ReplyToken(reply.subject, inbox_prefix);
    if (!token) return;
    Done done = TakePending(*token);
    if (!done) return;  // late, duplicate or already failed
    if (no_responders) {
      done(Status::NotFound("no responders"));
    } else {
      done(reply.data);
    }
  }

  void PushCompletionLocked(Done done, Result<std::string> result) {
    completions.push_back([done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }

  // The timer thread: runs queued completions and fails requests whose deadline passed.
  void RunTimer() {
    std::unique_lock lock(req_mu);
    while (true) {
      if (timer_stopping && !pending.empty()) {
        pending.FailAll(Status::Cancelled("the bus was destroyed"));
      }
      if (!completions.empty()) {
        std::function<void()> run = std::move(completions.front());
        completions.pop_front();
        lock.unlock();
        run();
        run = nullptr;  // released unlocked
        lock.lock();
        continue;
      }
      if (timer_stopping) return;
      if (!graveyard.empty() && !conn_closed && up.load(std::memory_order_acquire) &&
          SteadyClock::now() >= next_burial) {
        std::vector<natsSubscription*> batch;
        batch.swap(graveyard);
        lock.unlock();
        const bool flushed = natsConnection_FlushTimeout(conn, kBurialFlushTimeoutMs) == NATS_OK;
        if (flushed) {
          for (natsSubscription* sub : batch) natsSubscription_Destroy(sub);
          batch.clear();
        }
        lock.lock();
        if (!flushed && conn_closed) {
          // The flush was cut short by the close, which also joined the read loop.
          lock.unlock();
          for (natsSubscription* sub : batch) natsSubscription_Destroy(sub);
          lock.lock();
        } else if (!flushed) {
          graveyard.insert(graveyard.end(), batch.begin(), batch.end());
          next_burial = SteadyClock::now() + kBurialRetry;
        }
        continue;
      }
      if (pending.FailExpired(SteadyClock::now())) continue;
      std::optional<SteadyClock::time_point> wake_at = pending.NextDeadline();
      if (!graveyard.empty() && up.load(std::memory_order_acquire)) {
        wake_at = wake_at ? std::min(*wake_at, next_burial) : next_burial;
      }
      if (wake_at) {
        req_wake.wait_until(lock, *wake_at);
      } else {
        req_wake.wait(lock);
      }
    }
  }

  const NatsBusOptions options;
  Logger& logger;
  const std::string redacted_url;

  // Set once while connecting, before the bus is shared.
  natsConnection* conn = nullptr;
  std::string inbox_prefix;  // "_INBOX.<nuid>."
  natsSubscription* inbox_sub = nullptr;
  std::shared_ptr<Closure> inbox_closure;
  std::thread timer;

  std::atomic<bool> up{false};

  std::mutex state_mu;
  std::condition_variable closed_cv;
  bool outage_logged = false;
  std::string last_error_logged;  // the last error LogServerError logged
  bool stopping = false;
  bool closed = false;
  std::function<void(bool)> on_change;

  std::mutex subs_mu;
  std::unordered_map<uint64_t, std::weak_ptr<Closure>> guards;
  uint64_t next_sub = 1;

  std::mutex req_mu;
  std::condition_variable req_wake;
  std::deque<std::function<void()>> completions;
  PendingRequests pending{[this](Done done, Result<std::string> result) {
    PushCompletionLocked(std::move(done), std::move(result));
  }};
  bool timer_stopping = false;
  std::vector<natsSubscription*> graveyard;  // unsubscribed handles not yet safe to destroy
  SteadyClock::time_point next_burial;       // no burial round trip before this
  bool conn_closed = false;                  // the read loop is gone: destroy at once
};

// ------------------------------------------------------------------ NatsBus

Result<std::unique_ptr<NatsBus>> NatsBus::Connect(NatsBusOptions options, Logger& logger) {
  if (!ValidUrls(options.url)) {
    return Status::InvalidArgument("malformed NATS url: " + RedactUrls(options.url));
  }
  if (options.reconnect_wait_ms <= 0 || options.connect_timeout_ms <= 0 ||
      options.ping_interval_ms <= 0 || options.subscribe_flush_timeout_ms <= 0) {
    return Status::InvalidArgument("NATS timings must be positive");
  }
  TELOS_RETURN_IF_ERROR(CheckCredentials(options.credentials));
  TELOS_RETURN_IF_ERROR(ProbeLogin(options, RedactUrls(options.url)));
  auto core = std::make_shared<Core>(std::move(options), logger);
  const NatsBusOptions& o = core->options;

  natsOptions* raw_opts = nullptr;
  if (natsOptions_Create(&raw_opts) != NATS_OK) {
    return Status::Internal("cannot create NATS options");
  }
  std::unique_ptr<natsOptions, void (*)(natsOptions*)> opts(raw_opts, &natsOptions_Destroy);
  natsStatus s = natsOptions_SetURL(opts.get(), o.url.c_str());
  if (s == NATS_OK && !o.name.empty()) s = natsOptions_SetName(opts.get(), o.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts.get(), o.connect_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts.get(), true);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts.get(), -1);  // forever
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts.get(), o.reconnect_wait_ms);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts.get(), o.ping_interval_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts.get(), kMaxPingsOut);
  // One delivery pool for every subscription of the process instead of a thread each.
  if (s == NATS_OK) s = natsOptions_UseGlobalMessageDelivery(opts.get(), true);
  if (s == NATS_OK) s = ApplyCredentials(opts.get(), o.credentials);
  if (s != NATS_OK) return FromNats(s, "NATS options");

  // The connection's closure; freed by OnClosed, the last connection event.
  auto* conn_closure = new std::weak_ptr<Core>(core);
  s = natsOptions_SetDisconnectedCB(opts.get(), &Core::OnDisconnected, conn_closure);
  if (s == NATS_OK) {
    s = natsOptions_SetReconnectedCB(opts.get(), &Core::OnReconnected, conn_closure);
  }
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts.get(), &Core::OnClosed, conn_closure);
  if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts.get(), &Core::OnError, conn_closure);
  // With a connected callback, a first connect that fails returns NATS_NOT_YET_CONNECTED at
  // once and keeps trying in the background, with the reconnect settings.
  if (s == NATS_OK) {
    s = natsOptions_SetRetryOnFailedConnect(opts.get(), true, &Core::OnConnected, conn_closure);
  }
  if (s != NATS_OK) {
    delete conn_closure;
    return FromNats(s, "NATS options");
  }

  s = natsConnection_Connect(&core->conn, opts.get());
  if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
    // Nothing was connected, but nats.c may have posted an event that still refers to the
    // closure, so it is not freed here.
    // A refused login fails at once even with retries on, so a wrong password stops the
    // process at start-up with the server's words.
    std::string what = "NATS connect to " + core->redacted_url;
    natsStatus last = NATS_OK;
    if (const char* detail = nats_GetLastError(&last); detail != nullptr && *detail != '\0') {
      what += " (" + std::string(detail) + ")";
    }
    const Status status = FromNats(s, what);
    return status.code() == StatusCode::kInvalidArgument ||
                   status.code() == StatusCode::kPermissionDenied
               ? status
               : Status::Unavailable(status.message());
  }
  if (s == NATS_OK) {
    core->SetUp(true, "nats connected");
  } else {
    std::lock_guard lock(core->state_mu);
    if (!core->up.load()) core->LogOutageLocked();
  }

  // From here the destructor cleans up whatever follows.
  std::unique_ptr<NatsBus> bus(new NatsBus(core));
  core->timer = std::thread([raw = core.get()] { raw->RunTimer(); });

  natsInbox* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return Status::Internal("cannot create a NATS inbox");
  core->inbox_prefix = std::string(inbox) + ".";
  natsInbox_Destroy(inbox);
  core->inbox_closure = std::make_shared<Core::Closure>();
  core->inbox_closure->inbox = true;
  core->inbox_closure->inbox_of = core;
  Result<natsSubscription*> inbox_sub =
      core->SubscribeClosure(core->inbox_prefix + "*", core->inbox_closure);
  if (!inbox_sub.ok()) return inbox_sub.status();
  core->inbox_sub = *inbox_sub;
  return bus;
}

NatsBus::NatsBus(std::shared_ptr<Core> core) : core_(std::move(core)) {}

void* NatsBus::raw_connection() const {
  return core_->conn;
}

NatsBus::~NatsBus() {
  {
    std::lock_guard lock(core_->state_mu);
    core_->stopping = true;  // no more connection callbacks reach the user
  }
  // No handler of ours runs once these return.
  core_->CloseAllGuards();
  if (core_->inbox_closure) core_->inbox_closure->guard.Close();
  // Closing removes every subscription, releases a flush in progress and joins the read loop,
  // so every handle can go now.
  natsConnection_Close(core_->conn);
  core_->DestroyBuried();
  if (core_->inbox_sub != nullptr) natsSubscription_Destroy(core_->inbox_sub);
  {
    std::unique_lock lock(core_->state_mu);
    core_->closed_cv.wait_for(lock, kCloseWait, [&] { return core_->closed; });
  }
  // The timer thread uses the connection (burial round trips): stop it before destroying it.
  if (core_->timer.joinable()) {
    {
      std::lock_guard lock(core_->req_mu);
      core_->timer_stopping = true;
    }
    core_->req_wake.notify_all();
    core_->timer.join();
  }
  natsConnection_Destroy(core_->conn);
}

Status NatsBus::Send(std::string_view subject, std::string_view data) {
  if (Status checked = CheckSend(subject, data); !checked.ok()) return checked;
  // While reconnecting nats.c would buffer the message and send it later; the contract is to
  // refuse instead, so the caller knows it was not sent.
  if (!connected()) return Status::Unavailable("nats is not connected");
  const std::string subject_z(subject);
  return FromNats(natsConnection_Publish(core_->conn, subject_z.c_str(), data.data(),
                                         static_cast<int>(data.size())),
                  "nats publish");
}

Status NatsBus::Publish(std::string_view subject, std::string_view data) {
  return Send(subject, data);
}

Status NatsBus::Reply(const Message& request, std::string_view data) {
  if (Status checked = CheckReply(request); !checked.ok()) return checked;
  return Send(request.reply_to, data);
}

void NatsBus::Request(std::string subject, std::string data, std::chrono::milliseconds timeout,
                      Done done) {
  RELEASE_ASSERT(done != nullptr, "Request needs a completion");
  if (Status checked = CheckRequest(subject, data); !checked.ok()) {
    core_->PostCompletion(std::move(done), std::move(checked));
    return;
  }
  if (!connected()) {
    core_->PostCompletion(std::move(done), Status::Unavailable("nats is not connected"));
    return;
  }
  const uint64_t token = core_->AddPending(std::move(done), RequestDeadline(timeout));
  if (token == 0) return;  // already failed
  const std::string reply_to = ReplySubject(core_->inbox_prefix, token);
  const natsStatus s = natsConnection_PublishRequest(core_->conn, subject.c_str(), reply_to.c_str(),
                                                     data.data(), static_cast<int>(data.size()));
  if (s != NATS_OK) core_->FailPending(token, FromNats(s, "nats request"));
}

Result<std::unique_ptr<Subscription>> NatsBus::Subscribe(
    std::string subject, std::function<void(const Message&)> handler) {
  if (Status checked = CheckSubscribe(subject, handler); !checked.ok()) return checked;
  auto closure = std::make_shared<Core::Closure>(std::move(handler));
  Result<natsSubscription*> sub = core_->SubscribeClosure(subject, closure);
  if (!sub.ok()) return sub.status();
  const uint64_t id = core_->Remember(closure);
  return std::unique_ptr<Subscription>(
      std::make_unique<Core::SubscriptionImpl>(core_, id, std::move(closure), *sub));
}

bool NatsBus::connected() const {
  return core_->up.load(std::memory_order_acquire);
}

void NatsBus::OnConnectionChange(std::function<void(bool connected)> callback) {
  std::lock_guard lock(core_->state_mu);
  core_->on_change = std::move(callback);
}

}  // namespace telos::bus
