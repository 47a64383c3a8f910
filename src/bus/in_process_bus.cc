// InProcessBus: a hub with a subscription trie, and one delivery thread per client.
//
// Lock order: Hub::mu_ before Client::mu_ (Route enqueues while holding the hub). Nothing runs
// user code (handlers, completions, callbacks, or the destructors of what they captured) while
// holding either lock.
#include "telos/bus/in_process_bus.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
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

std::vector<std::string_view> SplitTokens(std::string_view subject) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  while (true) {
    const size_t dot = subject.find('.', start);
    if (dot == std::string_view::npos) {
      tokens.push_back(subject.substr(start));
      return tokens;
    }
    tokens.push_back(subject.substr(start, dot - start));
    start = dot + 1;
  }
}

}  // namespace

// ------------------------------------------------------------------ Client

class InProcessBus::Client {
 public:
  Client(std::string inbox_prefix, InProcessBusOptions options)
      : inbox_prefix_(std::move(inbox_prefix)), options_(options) {
    RELEASE_ASSERT(options_.delivery_queue_depth_max > 0, "delivery_queue_depth_max must be > 0");
  }
  ~Client() { RELEASE_ASSERT(!thread_.joinable(), "Client destroyed while running"); }

  // "_INBOX.<client>." — a reply subject is this plus a request token.
  const std::string& inbox_prefix() const { return inbox_prefix_; }
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  // Fails what is still waiting with kCancelled (on the delivery thread), drops what is queued
  // and joins. REQUIRES: not on the delivery thread.
  void Stop() {
    RELEASE_ASSERT(std::this_thread::get_id() != thread_.get_id(),
                   "an InProcessBus destroyed from its own delivery thread");
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void SetCallback(std::function<void(bool)> callback) {
    std::lock_guard lock(mu_);
    on_change_ = std::move(callback);
  }

  // Queues one message for one subscription, or drops it if the queue is full.
  void EnqueueDelivery(std::shared_ptr<HandlerGuard> guard,
                       std::shared_ptr<const Message> message) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      if (queued_deliveries_ >= options_.delivery_queue_depth_max) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      ++queued_deliveries_;
      items_.push_back(Item{Item::kDelivery, std::move(guard), std::move(message), {}});
    }
    wake_.notify_one();
  }

  // Queues `done(result)`; it runs on the delivery thread even while stopping.
  void EnqueueCompletion(Done done, Result<std::string> result) {
    {
      std::lock_guard lock(mu_);
      PushCompletionLocked(std::move(done), std::move(result));
    }
    wake_.notify_one();
  }

  // Registers a request waiting for its answer and returns its token, or returns 0 after
  // queueing the failure that ends it at once.
  uint64_t AddPending(Done done, SteadyClock::time_point deadline) {
    uint64_t token = 0;
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        PushCompletionLocked(std::move(done), Status::Cancelled("the bus is stopping"));
      } else if (!connected()) {
        PushCompletionLocked(std::move(done), Status::Unavailable("the bus is not connected"));
      } else {
        token = pending_.Add(std::move(done), deadline);
      }
    }
    wake_.notify_one();  // a failure to run, or a new deadline that may be the earliest
    return token;
  }

  // Removes a waiting request; null if it already ended (answered, timed out, failed).
  Done TakePending(uint64_t token) {
    std::lock_guard lock(mu_);
    return pending_.Take(token);
  }

  // Ends a waiting request with `status` (queued), unless it already ended.
  void FailPending(uint64_t token, Status status) {
    {
      std::lock_guard lock(mu_);
      pending_.Fail(token, std::move(status));
    }
    wake_.notify_one();
  }

  void SetConnected(bool connected) {
    {
      std::lock_guard lock(mu_);
      if (connected_.exchange(connected, std::memory_order_acq_rel) == connected) return;
      if (!connected) pending_.FailAll(Status::Unavailable("the bus lost its connection"));
      if (on_change_) {
        items_.push_back(
            Item{Item::kNotice, nullptr, nullptr, [cb = on_change_, connected] { cb(connected); }});
      }
    }
    wake_.notify_one();
  }

 private:
  struct Item {
    // Deliveries and notices are dropped once stopping; completions always run.
    enum Kind { kDelivery, kCompletion, kNotice };
    Kind kind;
    std::shared_ptr<HandlerGuard> guard;
    std::shared_ptr<const Message> message;
    std::function<void()> run;
  };

  void PushCompletionLocked(Done done, Result<std::string> result) {
    items_.push_back(Item{Item::kCompletion, nullptr, nullptr,
                          [done = std::move(done), result = std::move(result)]() mutable {
                            done(std::move(result));
                          }});
  }

  void Run() {
    std::unique_lock lock(mu_);
    while (true) {
      if (stopping_ && !pending_.empty()) {
        pending_.FailAll(Status::Cancelled("the bus was destroyed"));
      }
      if (!items_.empty()) {
        Item item = std::move(items_.front());
        items_.pop_front();
        if (item.kind == Item::kDelivery) --queued_deliveries_;
        const bool skip = stopping_ && item.kind != Item::kCompletion;
        lock.unlock();
        if (!skip) {
          if (item.kind == Item::kDelivery) {
            item.guard->Deliver(*item.message);
          } else {
            item.run();
          }
        }
        item = Item{};  // whatever it captured is released unlocked
        lock.lock();
        continue;
      }
      if (stopping_) return;
      if (pending_.FailExpired(SteadyClock::now())) continue;
      if (const std::optional<SteadyClock::time_point> next = pending_.NextDeadline()) {
        wake_.wait_until(lock, *next);
      } else {
        wake_.wait(lock);
      }
    }
  }

  const std::string inbox_prefix_;
  const InProcessBusOptions options_;
  std::atomic<bool> connected_{true};
  std::atomic<uint64_t> dropped_{0};

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> items_;
  size_t queued_deliveries_ = 0;
  PendingRequests pending_{[this](Done done, Result<std::string> result) {
    PushCompletionLocked(std::move(done), std::move(result));
  }};
  bool stopping_ = false;
  std::function<void(bool)> on_change_;
  std::thread thread_;
};

// ------------------------------------------------------------------ Hub

class InProcessBus::Hub {
 public:
  std::string NewInboxPrefix() {
    std::lock_guard lock(mu_);
    return "_INBOX.c" + std::to_string(next_client_++) + ".";
  }

  // REQUIRES: ValidSubject(pattern, true).
  uint64_t Add(std::string_view pattern, std::shared_ptr<Client> client,
               std::shared_ptr<HandlerGuard> guard) {
    std::lock_guard lock(mu_);
    const uint64_t id = next_id_++;
    Node* node = &root_;
    for (std::string_view token : SplitTokens(pattern)) {
      auto it = node->children.find(token);
      if (it == node->children.end()) {
        it = node->children.emplace(std::string(token), std::make_unique<Node>()).first;
      }
      node = it->second.get();
    }
    node->subs.insert(id);
    entries_.emplace(id, Entry{std::string(pattern), std::move(client), std::move(guard)});
    return id;
  }

  void Remove(uint64_t id) {
    Entry removed;
    {
      std::lock_guard lock(mu_);
      removed = RemoveLocked(id);
    }
  }

  void RemoveClient(const Client* client) {
    std::vector<Entry> removed;
    {
      std::lock_guard lock(mu_);
      std::vector<uint64_t> ids;
      for (const auto& [id, entry] : entries_) {
        if (entry.client.get() == client) ids.push_back(id);
      }
      for (uint64_t id : ids) removed.push_back(RemoveLocked(id));
    }
  }

  // Queues `message` for every matching subscription of a connected client, in subscription
  // order; returns how many there were.
  size_t Route(Message message) {
    auto shared = std::make_shared<const Message>(std::move(message));
    const std::vector<std::string_view> tokens = SplitTokens(shared->subject);
    std::lock_guard lock(mu_);
    std::vector<uint64_t> matched;
    Match(root_, tokens, 0, matched);
    std::sort(matched.begin(), matched.end());
    size_t routed = 0;
    for (uint64_t id : matched) {
      const Entry& entry = entries_.at(id);
      if (!entry.client->connected()) continue;
      ++routed;
      entry.client->EnqueueDelivery(entry.guard, shared);
    }
    return routed;
  }

 private:
  // One token of a pattern; "*" and ">" are children like any other token.
  struct Node {
    std::map<std::string, std::unique_ptr<Node>, std::less<>> children;
    std::set<uint64_t> subs;
  };
  struct Entry {
    std::string pattern;
    std::shared_ptr<Client> client;
    std::shared_ptr<HandlerGuard> guard;
  };

  static void Match(const Node& node, const std::vector<std::string_view>& tokens, size_t i,
                    std::vector<uint64_t>& out) {
    if (i == tokens.size()) {
      out.insert(out.end(), node.subs.begin(), node.subs.end());
      return;
    }
    if (auto it = node.children.find(tokens[i]); it != node.children.end()) {
      Match(*it->second, tokens, i + 1, out);
    }
    if (auto it = node.children.find("*"); it != node.children.end()) {
      Match(*it->second, tokens, i + 1, out);
    }
    if (auto it = node.children.find(">"); it != node.children.end()) {
      out.insert(out.end(), it->second->subs.begin(), it->second->subs.end());
    }
  }

  // Returns the entry so that the caller releases it (and what it holds) unlocked.
  Entry RemoveLocked(uint64_t id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return {};
    Entry entry = std::move(it->second);
    entries_.erase(it);
    // Walk down the pattern, then prune the nodes left without subscriptions or children.
    std::vector<std::pair<Node*, std::string_view>> path;
    Node* node = &root_;
    for (std::string_view token : SplitTokens(entry.pattern)) {
      auto child = node->children.find(token);
      RELEASE_ASSERT(child != node->children.end(), "subscription trie lost a node");
      path.emplace_back(node, token);
      node = child->second.get();
    }
    node->subs.erase(id);
    for (auto step = path.rbegin(); step != path.rend(); ++step) {
      auto child = step->first->children.find(step->second);
      if (!child->second->subs.empty() || !child->second->children.empty()) break;
      step->first->children.erase(child);
    }
    return entry;
  }

  std::mutex mu_;
  Node root_;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t next_id_ = 1;
  uint64_t next_client_ = 1;
};

// ------------------------------------------------------------------ Subscription

namespace {

class InProcessSubscription final : public Subscription {
 public:
  InProcessSubscription(std::shared_ptr<InProcessBus::Hub> hub, uint64_t id,
                        std::shared_ptr<HandlerGuard> guard)
      : hub_(std::move(hub)), id_(id), guard_(std::move(guard)) {}
  ~InProcessSubscription() override {
    hub_->Remove(id_);  // no new deliveries...
    guard_->Close();    // ...and none queued or in flight runs after this
  }

 private:
  std::shared_ptr<InProcessBus::Hub> hub_;
  uint64_t id_;
  std::shared_ptr<HandlerGuard> guard_;
};

}  // namespace

// ------------------------------------------------------------------ InProcessBus

std::shared_ptr<InProcessBus::Hub> InProcessBus::NewHub() {
  return std::make_shared<Hub>();
}

InProcessBus::InProcessBus() : InProcessBus(NewHub()) {}

InProcessBus::InProcessBus(std::shared_ptr<Hub> hub, InProcessBusOptions options)
    : hub_(std::move(hub)) {
  RELEASE_ASSERT(hub_ != nullptr, "InProcessBus needs a hub");
  client_ = std::make_shared<Client>(hub_->NewInboxPrefix(), options);
  // Replies come back through an ordinary wildcard subscription on this client's inbox, so they
  // are delivered on this client's thread like any message. The handler only runs on that
  // thread, which the client outlives.
  Client* const client = client_.get();
  auto guard = std::make_shared<HandlerGuard>([client](const Message& reply) {
    const std::optional<uint64_t> token = ReplyToken(reply.subject, client->inbox_prefix());
    if (!token) return;
    if (Done done = client->TakePending(*token)) done(reply.data);
  });
  const uint64_t id = hub_->Add(client_->inbox_prefix() + "*", client_, guard);
  inbox_ = std::make_unique<InProcessSubscription>(hub_, id, std::move(guard));
  client_->Start();
}

InProcessBus::~InProcessBus() {
  hub_->RemoveClient(client_.get());
  client_->Stop();
  inbox_.reset();
}

Status InProcessBus::Send(std::string_view subject, std::string_view data,
                          std::string_view reply_to) {
  if (Status checked = CheckSend(subject, data); !checked.ok()) return checked;
  if (!client_->connected()) return Status::Unavailable("the bus is not connected");
  hub_->Route(Message{std::string(subject), std::string(data), std::string(reply_to)});
  return Status::Ok();
}

Status InProcessBus::Publish(std::string_view subject, std::string_view data) {
  return Send(subject, data, {});
}

Status InProcessBus::Reply(const Message& request, std::string_view data) {
  if (Status checked = CheckReply(request); !checked.ok()) return checked;
  return Send(request.reply_to, data, {});
}

void InProcessBus::Request(std::string subject, std::string data, std::chrono::milliseconds timeout,
                           Done done) {
  RELEASE_ASSERT(done != nullptr, "Request needs a completion");
  if (Status checked = CheckRequest(subject, data); !checked.ok()) {
    client_->EnqueueCompletion(std::move(done), std::move(checked));
    return;
  }
  const uint64_t token = client_->AddPending(std::move(done), RequestDeadline(timeout));
  if (token == 0) return;  // already failed
  const size_t routed =
      hub_->Route(Message{subject, std::move(data), ReplySubject(client_->inbox_prefix(), token)});
  if (routed == 0) client_->FailPending(token, Status::NotFound("no responders on " + subject));
}

Result<std::unique_ptr<Subscription>> InProcessBus::Subscribe(
    std::string subject, std::function<void(const Message&)> handler) {
  if (Status checked = CheckSubscribe(subject, handler); !checked.ok()) return checked;
  auto guard = std::make_shared<HandlerGuard>(std::move(handler));
  const uint64_t id = hub_->Add(subject, client_, guard);
  return std::unique_ptr<Subscription>(
      std::make_unique<InProcessSubscription>(hub_, id, std::move(guard)));
}

bool InProcessBus::connected() const {
  return client_->connected();
}

void InProcessBus::OnConnectionChange(std::function<void(bool connected)> callback) {
  client_->SetCallback(std::move(callback));
}

void InProcessBus::SetConnected(bool connected) {
  client_->SetConnected(connected);
}

uint64_t InProcessBus::dropped_messages() const {
  return client_->dropped();
}

}  // namespace telos::bus
